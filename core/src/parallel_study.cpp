#include "poems/core/parallel_study.h"
#include "poems/core/handout_order.h"
#include "poems/core/progress.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace poems::core {

namespace {

// Whole reads and writes on a stream socket; false at end of stream or on an error.
bool write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

Session::Computed failed(const std::string& error, ErrorKind kind = ErrorKind::Evaluation) {
  Session::Computed c;
  c.error = error;
  c.error_kind = kind;
  return c;
}

class ForkWorkers final : public CellWorkers {
 public:
  ForkWorkers(TaskCompute compute, std::size_t jobs) : compute_(std::move(compute)), jobs_(jobs < 1 ? 1 : jobs) {}
  ~ForkWorkers() override {
    for (Worker& w : workers_) {
      ::close(w.fd);                       // end of stream: an idle worker exits
      if (w.cell) ::kill(w.pid, SIGKILL);  // a busy one is not waited for (the study stopped early)
    }
    for (Worker& w : workers_) reap(w.pid);
  }

  std::size_t slots() const override { return jobs_; }

  void start(std::size_t index, const std::string& key) override {
    Worker* free = nullptr;
    for (Worker& w : workers_)
      if (!w.cell) free = &w;
    if (!free) {
      workers_.push_back(spawn());
      free = &workers_.back();
    }
    free->cell = index;
    const std::vector<std::uint8_t> task = task_bytes(index, key);
    const std::uint64_t size = task.size();
    if (!write_all(free->fd, &size, sizeof size) || !write_all(free->fd, task.data(), task.size()))
      free->broken = true;  // next_within() reports it
  }

  std::size_t busy() const override {
    std::size_t n = 0;
    for (const Worker& w : workers_) n += w.cell.has_value();
    return n;
  }

  std::optional<std::pair<std::size_t, Session::Computed>> next_within(int timeout_ms) override {
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<std::size_t> which;
      for (std::size_t i = 0; i < workers_.size(); ++i) {
        if (!workers_[i].cell) continue;
        if (workers_[i].broken) return lost(i);
        fds.push_back({workers_[i].fd, POLLIN, 0});
        which.push_back(i);
      }
      if (fds.empty()) throw std::logic_error("no cell under way");  // a caller's mistake
      const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
      if (ready < 0) {
        if (errno == EINTR) continue;
        throw EvaluationError(std::string("waiting for the study's workers: ") + std::strerror(errno));
      }
      if (ready == 0) return std::nullopt;
      for (std::size_t k = 0; k < fds.size(); ++k) {
        if (!fds[k].revents) continue;
        Worker& w = workers_[which[k]];
        std::uint64_t size = 0;
        std::vector<std::uint8_t> bytes;
        if (!read_all(w.fd, &size, sizeof size) || size > (std::uint64_t{1} << 32)) return lost(which[k]);
        bytes.resize(size);
        if (!read_all(w.fd, bytes.data(), bytes.size())) return lost(which[k]);
        const std::size_t index = *w.cell;
        w.cell.reset();
        try {
          return std::pair{index, computed_of_bytes(bytes)};
        } catch (const std::exception& x) {
          return std::pair{index, failed(x.what())};
        }
      }
    }
  }

 private:
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
    std::optional<std::size_t> cell;
    bool broken = false;
  };

  static std::string reap(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) return "";
    if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  }

  // The worker of cell `i` died: the cell fails, the worker is dropped (the next start forks another).
  std::pair<std::size_t, Session::Computed> lost(std::size_t i) {
    Worker w = workers_[i];
    workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(i));
    ::close(w.fd);
    ::kill(w.pid, SIGKILL);
    const std::string how = reap(w.pid);
    return {*w.cell, failed("the worker process evaluating it died (" + how + ")")};
  }

  Worker spawn() {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      throw EvaluationError(std::string("cannot start a study worker: ") + std::strerror(errno));
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(pair[0]);
      ::close(pair[1]);
      throw EvaluationError(std::string("cannot start a study worker: ") + std::strerror(errno));
    }
    if (pid == 0) {
      // The worker: dies with its parent; never touches the parent's
      // knowledge base connection, never runs the parent's destructors.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      for (const Worker& w : workers_) ::close(w.fd);
      ::close(pair[0]);
      const ProgressScope silent{sim::ProgressHook{}};  // only the parent draws on the terminal
      serve(pair[1]);
      ::_exit(0);
    }
    ::close(pair[1]);
    Worker w;
    w.pid = pid;
    w.fd = pair[0];
    return w;
  }

  [[noreturn]] void serve(int fd) {
    for (;;) {
      std::uint64_t size = 0;
      if (!read_all(fd, &size, sizeof size) || size > 4096) ::_exit(0);
      std::vector<std::uint8_t> task(size);
      if (!read_all(fd, task.data(), task.size())) ::_exit(0);
      Session::Computed computed;
      try {
        const auto [index, key] = task_of_bytes(task);
        computed = compute_(index, key);
      } catch (const std::exception& x) {
        computed = failed(x.what());
      }
      const std::vector<std::uint8_t> bytes = computed_bytes(computed);
      size = bytes.size();
      if (!write_all(fd, &size, sizeof size) || !write_all(fd, bytes.data(), bytes.size())) ::_exit(1);
    }
  }

  TaskCompute compute_;
  std::size_t jobs_;
  std::vector<Worker> workers_;
};

CellRequest request_of(const Session& session, const StudyPlan& plan, std::size_t index) {
  const std::size_t p = plan.paradigms.size();
  CellRequest request = cell_request(const_cast<Session&>(session).system(), plan.bindings.at(index / p));
  request.paradigm = plan.paradigms.at(index % p);
  return request;
}

}  // namespace

Session::Computed compute_cell(Session& session, const StudyPlan& plan, std::size_t index, const std::string& key) {
  try {
    if (index >= plan.bindings.size() * plan.paradigms.size())  // the processes disagree on the plan
      return failed("a worker has no cell " + std::to_string(index) + " (its study has " +
                    std::to_string(plan.bindings.size() * plan.paradigms.size()) +
                    "): do all nodes read the same files?");
    const Session::Prepared prepared = session.prepare(request_of(session, plan, index));
    if (!prepared.cell.ok()) return failed(prepared.cell.error, prepared.cell.error_kind);
    if (prepared.key.digest() != key)
      return failed(
          "a worker prepared this cell differently from the writer (another run key: compute rates "
          "timed on another node, or other files); not evaluated");
    return session.compute(prepared);
  } catch (const UsageError& x) {
    Session::Computed c = failed(x.what(), ErrorKind::Usage);
    c.usage = true;
    c.usage_option = x.option();
    return c;
  } catch (const Error& x) {
    return failed(x.what(), x.kind());
  } catch (const std::exception& x) {
    return failed(x.what());
  }
}

std::vector<std::uint8_t> task_bytes(std::size_t index, const std::string& key) {
  return nlohmann::json::to_msgpack(nlohmann::json{{"cell", index}, {"key", key}});
}

std::pair<std::size_t, std::string> task_of_bytes(const std::vector<std::uint8_t>& bytes) {
  try {
    const nlohmann::json j = nlohmann::json::from_msgpack(bytes);
    return {j.at("cell").get<std::size_t>(), j.at("key").get<std::string>()};
  } catch (const std::exception& x) {
    throw std::runtime_error(std::string("a garbled task: ") + x.what());
  }
}

std::unique_ptr<CellWorkers> fork_workers(TaskCompute compute, std::size_t jobs) {
  return std::make_unique<ForkWorkers>(std::move(compute), jobs);
}

std::unique_ptr<CellWorkers> fork_workers(Session& session, const StudyPlan& plan, std::size_t jobs) {
  return fork_workers(
      [&session, &plan](std::size_t index, const std::string& key) { return compute_cell(session, plan, index, key); },
      jobs);
}

StudyTable run_study(Session& session, const StudyPlan& plan, CellWorkers& workers,
                     const std::function<void(const StudyProgress&)>& progress) {
  StudyTable table = study_table(session, plan);
  const std::size_t per_row = plan.paradigms.size();
  const std::size_t total = plan.bindings.size() * per_row;
  std::vector<std::optional<Cell>> cells(total);
  std::map<std::size_t, Session::Pending> under_way;
  std::size_t next_report = 0;
  std::exception_ptr failure;

  // A failure at cell `failed_at` ends the study there, as in a serial run:
  // cells after it are not started; those before it still are.
  std::size_t failed_at = total;
  auto fail_at = [&](std::size_t index) {
    if (index < failed_at) {
      failure = std::current_exception();
      failed_at = index;
    }
  };

  // Cells reach the table and `progress` in plan order, as a serial run's.
  auto report = [&] {
    while (next_report < total && cells[next_report]) {
      const std::size_t i = next_report++;
      const StudyBinding& binding = plan.bindings[i / per_row];
      if (i % per_row == 0) {
        table.rows.emplace_back();
        table.rows.back().binding = binding;
      }
      if (progress) progress({i + 1, total, &binding, &*cells[i]});
      add_cell(table, table.rows.back(), plan.paradigms[i % per_row], *cells[i]);
      cells[i].reset();
    }
  };
  // Stores what a worker computed, as soon as it arrives.
  auto collect = [&] {
    auto [index, computed] = workers.next();
    auto it = under_way.find(index);
    Session::Pending pending = std::move(it->second);
    under_way.erase(it);
    try {
      cells[index] = session.finish(std::move(pending), std::move(computed));
    } catch (...) {
      fail_at(index);
    }
  };

  // Every cell prepared once before any worker starts: compute rates that
  // processor[measured] times on this host are timed now, with the machine
  // idle, and forked workers inherit them. A cell that cannot be prepared
  // fails at its turn below, as in a serial run. Each cell's estimated work
  // orders the hand-out (core/handout_order.h).
  std::vector<double> work(total, 0.0);
  for (std::size_t i = 0; i < total; ++i) try {
      work[i] = estimated_work(session.prepare(request_of(session, plan, i)));
    } catch (const std::exception&) {
    }
  HandOutOrder order(work, workers.slots());

  // Runs are claimed in plan order, so that stored runs get a serial run's
  // ids: a cell handed out early claims every cell before it first.
  std::map<std::size_t, Session::Pending> claimed;
  // Cells claimed ahead of a failure that ends the study are never started:
  // their claims are given back, so the knowledge base holds what a serial
  // run's would (it never claims past the failing cell). Also when an
  // exception leaves this function.
  struct GiveBackUnstarted {
    std::map<std::size_t, Session::Pending>& claimed;
    ~GiveBackUnstarted() {
      for (auto& [index, pending] : claimed)
        if (pending.record) pending.record->abandon();
    }
  } give_back{claimed};
  std::size_t next_claim = 0;
  auto claim_through = [&](std::size_t index) {
    while (next_claim <= index && next_claim < failed_at) {
      const std::size_t k = next_claim++;
      try {
        Session::Pending pending = session.begin(request_of(session, plan, k), plan.study);
        if (pending.done)
          cells[k] = std::move(pending.prepared.cell);
        else
          claimed.emplace(k, std::move(pending));
      } catch (...) {
        fail_at(k);
      }
    }
  };

  while (true) {
    while (under_way.size() < workers.slots()) {
      const std::optional<std::size_t> next = order.next(failed_at);
      if (!next) break;
      const std::size_t index = *next;
      claim_through(index);
      const auto it = claimed.find(index);
      if (it == claimed.end()) {  // reused, skipped, not evaluable, or a failure before it
        report();
        continue;
      }
      Session::Pending pending = std::move(it->second);
      claimed.erase(it);
      try {
        if (!pending.prepared.evaluator->modelled) {  // it measures this host: alone, every worker idle
          while (!under_way.empty()) collect();
          report();
          if (failed_at < index) break;
          Session::Computed computed = session.compute(pending.prepared);
          cells[index] = session.finish(std::move(pending), std::move(computed));
        } else {
          const std::string key = pending.prepared.key.digest();
          under_way.emplace(index, std::move(pending));
          workers.start(index, key);
        }
      } catch (...) {
        fail_at(index);
      }
      report();
    }
    if (under_way.empty()) break;
    collect();
    report();
  }
  if (failure) std::rethrow_exception(failure);
  return table;
}

StudyTable run_study_jobs(Session& session, const StudyPlan& plan, std::size_t jobs,
                          const std::function<void(const StudyProgress&)>& progress) {
  if (jobs <= 1) return run_study(session, plan, progress);
  const std::unique_ptr<CellWorkers> workers = fork_workers(session, plan, jobs);
  return run_study(session, plan, *workers, progress);
}

std::size_t default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

}  // namespace poems::core
