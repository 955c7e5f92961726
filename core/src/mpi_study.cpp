#include "poems/core/mpi_study.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include <dlfcn.h>
#include <unistd.h>

#include "poems/base/child_process.h"
#include "poems/base/executable_path.h"
#include "poems/core/error.h"
#include "poems/core/evaluators.h"
#include "poems/core/mpi_transport.h"
#include "poems/core/system.h"
#include "poems/measure/mpirun.h"

namespace poems::core {

namespace {

enum Tag : int { kTask = 1, kResult = 2, kStop = 3 };

// Open MPI's blocking calls spin a core while they wait: every wait here is
// a non-blocking probe and a short sleep, so an idle rank leaves the cores to
// the evaluations.
constexpr auto kIdlePause = std::chrono::milliseconds(1);

void check(const poems_mpi_transport& t, int code, const std::string& what) {
  if (code != 0) throw EvaluationError("the distributed study runner: " + what + ": " + t.last_error());
}

std::filesystem::path plugin_path() {
  if (const char* given = std::getenv("POEMS_MPI_RUNNER"); given && *given) return given;
  const std::filesystem::path exe = base::executable_path();
  return (exe.empty() ? std::filesystem::current_path() : exe.parent_path()) / ".." / "lib" / "libpoems_mpi_runner.so";
}

// A message from `rank` (any rank for -1) with `tag`, waited for without spinning.
struct Message {
  int rank = 0, tag = 0;
  std::vector<std::uint8_t> bytes;
};
std::optional<Message> poll_message(const poems_mpi_transport& t) {
  int found = 0, rank = 0, tag = 0;
  std::uint64_t size = 0;
  check(t, t.probe(&found, &rank, &tag, &size), "probing for messages");
  if (!found) return std::nullopt;
  Message m{rank, tag, std::vector<std::uint8_t>(size)};
  check(t, t.receive(rank, tag, m.bytes.data(), size), "receiving from rank " + std::to_string(rank));
  return m;
}

void send_task(const poems_mpi_transport& t, int rank, std::size_t index, const std::string& key) {
  const std::vector<std::uint8_t> task = task_bytes(index, key);
  check(t, t.send(rank, kTask, task.data(), task.size()), "sending a cell to rank " + std::to_string(rank));
}

class MpiWorkers final : public CellWorkers {
 public:
  MpiWorkers(MpiWorld& world, Session& session, const StudyPlan& plan)
      : world_(world), t_(world.transport()), size_(world.size()), local_(fork_workers(session, plan, 1)) {}

  // Every rank finishes what it has, then stops (also when the study stopped early).
  ~MpiWorkers() override {
    try {
      while (!remote_.empty())
        if (auto m = poll_message(t_)) {
          remote_.erase(m->rank);
        } else {
          std::this_thread::sleep_for(kIdlePause);
        }
      world_.stop_others();
    } catch (const std::exception&) {
      t_.abort(3);  // a rank that cannot be told to stop would wait forever
    }
  }

  std::size_t slots() const override { return static_cast<std::size_t>(size_ - 1) + local_->slots(); }
  std::size_t busy() const override { return remote_.size() + local_->busy(); }

  void start(std::size_t index, const std::string& key) override {
    for (int r = 1; r < size_; ++r)
      if (!remote_.count(r)) {
        send_task(t_, r, index, key);
        remote_[r] = index;
        return;
      }
    local_->start(index, key);
  }

  std::optional<std::pair<std::size_t, Session::Computed>> next_within(int timeout_ms) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      if (auto m = poll_message(t_)) {
        const auto it = remote_.find(m->rank);
        if (m->tag != kResult || it == remote_.end())
          throw EvaluationError("the distributed study runner: an unexpected message from rank " +
                                std::to_string(m->rank));
        const std::size_t index = it->second;
        remote_.erase(it);
        try {
          return std::pair{index, computed_of_bytes(m->bytes)};
        } catch (const std::exception& x) {
          Session::Computed c;
          c.error = "rank " + std::to_string(m->rank) + ": " + x.what();
          return std::pair{index, c};
        }
      }
      if (local_->busy()) {
        if (auto r = local_->next_within(static_cast<int>(kIdlePause.count()))) return r;
      } else {
        std::this_thread::sleep_for(kIdlePause);
      }
      if (timeout_ms >= 0 && std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    }
  }

 private:
  MpiWorld& world_;
  const poems_mpi_transport& t_;
  int size_;
  std::unique_ptr<CellWorkers> local_;
  std::map<int, std::size_t> remote_;  // rank -> the cell it evaluates
};

}  // namespace

bool under_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* size = std::getenv(name); size && std::atoi(size) > 1) return true;
  return false;
}

MpiWorld::MpiWorld() {
  const std::filesystem::path path = plugin_path();
  library_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_)
    throw EvaluationError("the distributed study runner needs " + path.string() + ": " + ::dlerror() +
                          " (build the poems_mpi_runner target; POEMS_MPI_RUNNER names another file)");
  const auto entry = reinterpret_cast<poems_mpi_transport_function>(::dlsym(library_, POEMS_MPI_TRANSPORT_SYMBOL));
  transport_ = entry ? entry() : nullptr;
  if (!transport_ || transport_->version != POEMS_MPI_TRANSPORT_VERSION) {
    ::dlclose(library_);
    throw EvaluationError(path.string() + " is not the MPI runner plugin of this poems");
  }
  check(*transport_, transport_->init(&rank_, &size_), "MPI_Init");
}

void MpiWorld::stop_others() {
  if (rank_ != 0 || stopped_) return;
  stopped_ = true;
  for (int r = 1; r < size_; ++r)
    check(*transport_, transport_->send(r, kStop, nullptr, 0), "stopping rank " + std::to_string(r));
}

MpiWorld::~MpiWorld() {
  try {
    stop_others();
  } catch (const std::exception&) {
    transport_->abort(3);  // a rank that cannot be told to stop would wait forever
  }
  transport_->finalize();
  // The library stays loaded: Open MPI does not support being unloaded.
}

std::unique_ptr<CellWorkers> mpi_workers(MpiWorld& world, Session& session, const StudyPlan& plan) {
  return std::make_unique<MpiWorkers>(world, session, plan);
}

void serve_study(MpiWorld& world, Session* session, const StudyPlan* plan, const std::string& cannot) {
  const poems_mpi_transport& t = world.transport();
  const std::unique_ptr<CellWorkers> local = session && plan ? fork_workers(*session, *plan, 1) : nullptr;
  for (;;) {
    std::optional<Message> m = poll_message(t);
    if (!m) {
      std::this_thread::sleep_for(kIdlePause);
      continue;
    }
    if (m->tag == kStop) return;
    if (m->tag != kTask)
      throw EvaluationError("the distributed study runner: an unexpected message from rank " + std::to_string(m->rank));
    Session::Computed computed;
    if (!local) {
      computed.error = "rank " + std::to_string(world.rank()) + " cannot evaluate: " + cannot;
    } else {
      try {
        const auto [index, key] = task_of_bytes(m->bytes);
        local->start(index, key);
        computed = local->next().second;
      } catch (const std::exception& x) {
        computed.error = "rank " + std::to_string(world.rank()) + ": " + x.what();
      }
    }

    const std::vector<std::uint8_t> bytes = computed_bytes(computed);
    check(t, t.send(0, kResult, bytes.data(), bytes.size()), "sending a result to rank 0");
  }
}

void serve_study_rank(MpiWorld& world, const SystemRequest& request,
                      const std::function<SessionOptions(const System&)>& options,
                      const std::vector<std::string>& paradigms) {
  std::unique_ptr<System> system;
  std::unique_ptr<Store> store;
  std::unique_ptr<Session> session;
  StudyPlan plan;
  std::string cannot;
  try {
    system = load_system(request);
    StoreOptions no_store;
    no_store.disabled = true;
    store = std::make_unique<Store>(no_store);
    session = std::make_unique<Session>(*system, options(*system), *store);
    plan = plan_study(*system, paradigms);
  } catch (const std::exception& e) {
    cannot = e.what();
    session.reset();
  }
  serve_study(world, session.get(), session ? &plan : nullptr, cannot);
}

void check_distributable(const StudyPlan& plan) {
  for (const std::string& p : plan.paradigms)
    if (!evaluator_named(p, "--paradigm").modelled)
      throw UsageError("--ranks", p + " measures this host: run it without mpirun (its measured runs never "
                                      "overlap other work; --jobs shares the rest of the study)");
}

std::vector<std::string> arguments_without_ranks() {
  const std::filesystem::path exe = base::executable_path();
  if (exe.empty() || exe.filename() != "poems")
    throw UsageError("--ranks",
                     "starts mpirun on the poems executable; run it from poems itself, or run "
                     "mpirun -np R poems run ...");
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string a; std::getline(in, a, '\0');) args.push_back(a);
  std::vector<std::string> out;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") {  // nothing after it is an option
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (args[i] == "--ranks") {
      ++i;
      continue;
    }
    if (!args[i].starts_with("--ranks=")) out.push_back(args[i]);
  }
  return out;
}

int run_under_mpirun(int ranks, const std::vector<std::string>& args) {
  std::error_code ec;
  const std::filesystem::path exe = base::executable_path(ec);
  if (ec) throw EvaluationError("--ranks: cannot find this executable: " + ec.message());
  std::vector<std::string> argv = {"mpirun"};
  if (::geteuid() == 0) argv.push_back("--allow-run-as-root");
  // More ranks than cores is allowed (a study's load balancing shows with
  // it); no binding, so that each rank's evaluations use any core.
  for (const char* a : {"--oversubscribe", "--bind-to", "none", "-np"}) argv.push_back(a);
  argv.push_back(std::to_string(ranks));
  argv.push_back(exe.string());
  argv.insert(argv.end(), args.begin(), args.end());
  // mpirun's ranks print what a serial run prints: stdin, stdout and stderr
  // are this process's, and Ctrl-C reaches mpirun as it does under a shell.
  const measure::MpiSessionBase session;
  base::ChildOptions o;
  o.argv = std::move(argv);
  o.environment = session.environment();
  o.reset_signals = false;
  o.input = base::ChildInput::inherit;
  o.out = base::ChildStream::inherit();
  o.err = base::ChildStream::inherit();
  std::fflush(nullptr);
  const base::ChildResult r = base::run_child(o);
  if (!r.started) {
    if (r.start_errno == ENOENT) throw EvaluationError("--ranks: mpirun could not be run (is Open MPI installed?)");
    throw EvaluationError("--ranks: cannot start mpirun: " + r.error);
  }
  if (r.signal) return 128 + r.signal;
  const int code = r.exit_code;
  if (code == 127) throw EvaluationError("--ranks: mpirun could not be run (is Open MPI installed?)");
  return code;
}

}  // namespace poems::core
