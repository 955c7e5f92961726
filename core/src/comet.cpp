// `poems comet` (docs/comet.md): CoMet measured and predicted side by side.
#include "poems/core/comet.h"
#include "poems/base/file_bytes.h"

#include <stdlib.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "poems/base/last_lines.h"
#include "poems/base/suggest.h"
#include "poems/base/temporary_directory.h"
#include "poems/components/collective_models.h"
#include "poems/core/comet_simulation.h"
#include "poems/core/direct_program.h"
#include "poems/core/error.h"
#include "poems/db/run_key.h"
#include "poems/measure/mpirun.h"

namespace poems::core {

namespace {

std::string& source_path() {
  static std::string path;
  return path;
}

constexpr std::uint64_t kMaxSize = 16ull << 20;
constexpr std::size_t kMaxListed = 64;

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(list);
  while (std::getline(in, item, ',')) out.push_back(item);
  if (!list.empty() && list.back() == ',') out.push_back("");
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

// A repetition's figures in comet.c's JSON output, per kernel and size; a
// skipped kernel's reason in `skipped`.
struct ProgramFigures {
  std::map<std::string, std::map<std::uint64_t, CometFigure>> figures;
  std::map<std::string, std::string> skipped;
};

ProgramFigures parse_output(const std::string& output, const std::string& what) {
  // The JSON document starts at the first '{' at the start of a line (the
  // runtime may print before it).
  std::size_t start = output.rfind("\n{");
  start = output.rfind("{", 0) == 0 ? 0 : (start == std::string::npos ? std::string::npos : start + 1);
  if (start == std::string::npos)
    throw EvaluationError(what + ": no JSON document in its output: " + base::last_lines(output, 6));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(output.substr(start));
  } catch (const nlohmann::json::exception& e) {
    throw EvaluationError(what + ": its output is not CoMet's JSON (" + e.what() + ")");
  }
  ProgramFigures out;
  for (const nlohmann::json& r : doc.value("results", nlohmann::json::array())) {
    const std::string kernel = r.value("kernel", "");
    if (r.contains("skipped")) {
      out.skipped[kernel] = r.value("skipped", "");
      continue;
    }
    CometFigure f;
    f.min_ns = r.value("min_ns", 0.0);
    f.median_ns = r.value("median_ns", 0.0);
    f.max_ns = r.value("max_ns", 0.0);
    out.figures[kernel][r.value("bytes", std::uint64_t{0})] = f;
  }
  return out;
}

std::vector<std::string> program_args(const std::string& kernel, const std::vector<std::uint64_t>& sizes,
                                      std::uint32_t reps) {
  return {"--kernels", kernel, "--sizes", comet_sizes_text(sizes), "--reps", std::to_string(reps), "--json"};
}

// Builds comet.c with `compiler` (Open MPI's mpicc, or this build's
// poems-mpicc) into `dir`: comet.c needs libm, which the direct build of
// prepare_program does not link.
std::string build_comet(const std::string& compiler, const std::string& source, const base::TemporaryDirectory& dir,
                        const std::string& name, double timeout) {
  const std::string binary = (std::filesystem::path(dir.path()) / name).string();
  std::vector<std::string> argv = {compiler};
  if (compiler == "mpicc") argv.push_back("-std=c99");
  argv.insert(argv.end(), {"-O2", source, "-o", binary, "-lm"});
  const measure::ProcessResult r = measure::run_process(argv, timeout);
  if (!r.ok())
    throw EvaluationError("cannot build " + source + " with " + compiler + " (" + r.status_text() +
                          "): " + base::last_lines(r.err.empty() ? r.out : r.err, 12));
  return binary;
}

class CometStore {
 public:
  CometStore(Store& store, const std::string& source_hash, CometReport& report)
      : store_(store), hash_(source_hash), report_(report) {}

  // `spec_hash`: what the figure was computed from ("" = comet.c's hash).
  void put(const std::string& evaluator, const std::string& kernel, std::uint64_t bytes, nlohmann::json binding,
           const db::Result& result, const std::string& spec_hash = "") {
    if (!store_.enabled()) return;
    db::RunKey key;
    key.model = "comet." + kernel;
    key.evaluator = evaluator;
    key.spec_hash = spec_hash.empty() ? hash_ : spec_hash;
    key.tool_version = POEMS_VERSION;
    binding["bytes"] = bytes;
    key.binding = std::move(binding);
    RunRecord record(store_, key);
    const RunRecord::State s = record.finish(result);
    if (s == RunRecord::State::Stored) ++report_.stored;
    if (s == RunRecord::State::AlreadyStored) ++report_.already_stored;
  }

 private:
  Store& store_;
  std::string hash_;
  CometReport& report_;
};

db::Result figure_result(const CometFigure& f, bool measured, std::uint32_t reps) {
  db::Result r;
  r.kind = measured ? db::ResultKind::kMeasured : db::ResultKind::kPredicted;
  r.time_ns = f.median_ns;
  r.extra = {{"min_ns", f.min_ns}, {"median_ns", f.median_ns}, {"max_ns", f.max_ns}, {"reps", reps}};
  return r;
}

CometPoint& point(CometKernelResult& k, std::uint64_t bytes) {
  for (CometPoint& p : k.points)
    if (p.bytes == bytes) return p;
  k.points.push_back({});
  k.points.back().bytes = bytes;
  std::sort(k.points.begin(), k.points.end(),
            [](const CometPoint& a, const CometPoint& b) { return a.bytes < b.bytes; });
  for (CometPoint& p : k.points)
    if (p.bytes == bytes) return p;
  return k.points.back();
}

std::string command_text(const std::vector<std::string>& argv) { return join(argv, " "); }

}  // namespace

std::string comet_file_hash(const std::string& path) {
  return db::sha256_hex(base::read_file_bytes(path).value_or(""));
}

void set_comet_source(std::string path) { source_path() = std::move(path); }
const std::string& comet_source() { return source_path(); }

const std::vector<std::string>& comet_kernel_names() {
  static const std::vector<std::string> names = {"echo",      "pairwise",   "broadcast", "reduce", "allreduce",
                                                 "barrier",   "contention", "overlap",   "guard",  "shift",
                                                 "transpose", "rowbcast",   "colbcast"};
  return names;
}

std::vector<std::string> parse_comet_kernels(const std::string& list) {
  const std::vector<std::string>& known = comet_kernel_names();
  if (list == "all") return known;
  const std::vector<std::string> items = split(list);
  if (items.empty() || items.size() > kMaxListed)
    throw UsageError("--kernels", "'" + list + "' is not allowed; allowed: all, or 1 to 64 of " +
                                      base::name_list(known) + ", comma-separated");
  for (const std::string& k : items)
    if (std::find(known.begin(), known.end(), k) == known.end())
      throw UsageError("--kernels", "'" + k + "' is not a CoMet kernel" + base::did_you_mean(k, known) +
                                        "; allowed: all, or " + base::name_list(known) + ", comma-separated");
  return items;
}

std::vector<std::uint64_t> parse_comet_sizes(const std::string& list) {
  const std::vector<std::string> items = split(list);
  const std::string allowed =
      "; allowed: 1 to 64 sizes in bytes from 0 to 16M (suffix K = 1024, M = 1024K), "
      "comma-separated, e.g. 0,8,1K,64K";
  if (items.empty() || items.size() > kMaxListed)
    throw UsageError("--sizes", "'" + list + "' is not allowed" + allowed);
  std::vector<std::uint64_t> out;
  for (const std::string& item : items) {
    std::size_t digits = 0;
    while (digits < item.size() && std::isdigit(static_cast<unsigned char>(item[digits]))) ++digits;
    const std::string suffix = item.substr(digits);
    bool ok = digits > 0 && digits <= 9 && (suffix.empty() || suffix == "K" || suffix == "M");
    std::uint64_t v = 0;
    if (ok) {
      v = std::stoull(item.substr(0, digits)) * (suffix == "K" ? 1024 : suffix == "M" ? 1024 * 1024 : 1);
      ok = v <= kMaxSize;
    }
    if (!ok) throw UsageError("--sizes", "'" + item + "' is not allowed" + allowed);
    out.push_back(v);
  }
  return out;
}

namespace {
// A whole number from 1 to `max` (digits only, no more than `max` has), or a
// UsageError naming the option.
std::uint32_t parse_count(const char* option, const std::string& text, unsigned long max) {
  const bool digits =
      !text.empty() && text.size() <= std::to_string(max).size() &&
      std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  const unsigned long n = digits ? std::stoul(text) : 0;
  if (n < 1 || n > max)
    throw UsageError(option, "'" + text + "' is not allowed; allowed: an integer from 1 to " + std::to_string(max));
  return static_cast<std::uint32_t>(n);
}
}  // namespace

std::uint32_t parse_comet_procs(const std::string& text) { return parse_count("--procs", text, 1024); }

std::uint32_t parse_comet_reps(const std::string& text) { return parse_count("--reps", text, 100000); }

std::string comet_sizes_text(const std::vector<std::uint64_t>& sizes) {
  std::vector<std::string> items;
  for (std::uint64_t s : sizes) items.push_back(std::to_string(s));
  return join(items, ",");
}

bool comet_machine_is_this_host(const std::string& machine) { return machine.empty() || machine == "local"; }

std::optional<double> comet_closed_form_ns(const std::string& kernel, std::uint64_t bytes, std::uint32_t procs,
                                           const Machine& machine, std::string* form) {
  if (!machine.flat() || machine.noisy() || procs < 2) return std::nullopt;
  const components::LogGOPS& p = machine.params;
  const taskgraph::Picoseconds sync = components::rendezvous_sync(p, machine.rendezvous_handshake);
  taskgraph::CollectiveCall call;
  call.procs = procs;
  call.bytes = bytes;
  std::string text;
  // Pairwise and shift on P not a power of two: the barrier between
  // repetitions (dissemination) leaves skew whose size this form does not follow.
  if ((kernel == "pairwise" || kernel == "shift") && !std::has_single_bit(procs)) return std::nullopt;
  if (kernel == "echo") {
    // One message (half a round trip): 2o + L + max{(s-1)O, (s-1)G}, + the
    // rendezvous sync above S.
    const taskgraph::Picoseconds so = components::LogGOPS::per_byte(bytes, p.O),
                                 sg = components::LogGOPS::per_byte(bytes, p.G);
    if (form) *form = "o + L + max{(s-1)O, (s-1)G} + o, + the rendezvous sync above S (LogGOPS, one message)";
    return static_cast<double>(2 * p.o + p.L + std::max(so, sg) + (p.rendezvous(bytes) ? sync : 0)) / 1000.0;
  }
  // Every other form starts when the barrier before the repetition ends; a
  // NIC gap longer than the barrier's round (g > 2o + L) still holds the
  // first send back then, which no form here follows.
  if (p.g > 2 * p.o + p.L) return std::nullopt;
  if (kernel == "pairwise" || kernel == "shift") {
    // Every rank sends one message and receives one at once: one round of
    // the dissemination form, delta + 2o + L + max{sO, sG} (+ the sync above
    // S), delta = max{0, sO - L} (the CPU busy sending before it receives).
    const std::optional<taskgraph::Picoseconds> t = components::dissemination_time(p, 2, bytes, sync);
    if (!t) return std::nullopt;
    if (form) *form = "one dissemination round, max{0, sO - L} + 2o + L + max{sO, sG}, + the rendezvous sync above S";
    return static_cast<double>(*t) / 1000.0;
  }
  if (kernel == "broadcast") {
    call.op = taskgraph::CollectiveOp::Bcast;
    call.algorithm = taskgraph::CollectiveAlgorithm::Binomial;
    text = "binomial broadcast, log2 P levels of 2o + L + max{sO, sG} (the collective closed forms, eq. 3)";
  } else if (kernel == "reduce") {
    call.op = taskgraph::CollectiveOp::Reduce;
    call.algorithm = taskgraph::CollectiveAlgorithm::Binomial;
    call.bytes = (bytes + 7) / 8 * 8;  // ceil(s / 8) doubles
    text = "binomial reduce of ceil(s/8) doubles, log2 P levels of 2o + L + max{sO, sG} (eq. 3 mirrored)";
  } else if (kernel == "allreduce") {
    call.op = taskgraph::CollectiveOp::Allreduce;
    call.algorithm = taskgraph::CollectiveAlgorithm::RecursiveDoubling;
    call.bytes = (bytes + 7) / 8 * 8;  // ceil(s / 8) doubles
    text = "recursive-doubling allreduce of ceil(s/8) doubles, log2 P rounds (the collective closed forms)";
  } else if (kernel == "barrier") {
    call.op = taskgraph::CollectiveOp::Barrier;
    call.algorithm = taskgraph::CollectiveAlgorithm::Dissemination;
    text = "dissemination barrier, ceil(log2 P) rounds of 2o + L (the collective closed forms, eq. 4)";
  } else {
    return std::nullopt;
  }
  const std::optional<taskgraph::Picoseconds> t = components::collective_time(call, p, sync);
  if (!t) return std::nullopt;
  if (form) *form = text;
  return static_cast<double>(*t) / 1000.0;
}

namespace {
base::TemporaryDirectory comet_build_directory() {
  base::TemporaryDirectory dir("poems_comet_");
  if (!dir.created()) throw EvaluationError("cannot create a temporary directory to build CoMet in: " + dir.error());
  return dir;
}

const std::string& existing_comet_source() {
  const std::string& source = comet_source();
  if (source.empty() || !std::filesystem::is_regular_file(source))
    throw InputError("the CoMet program examples/comet/comet.c is not where this build expects it ('" + source + "')");
  return source;
}
}  // namespace

CometOnHost::CometOnHost(double timeout_seconds)
    : dir_(comet_build_directory()),
      binary_(build_comet("mpicc", existing_comet_source(), dir_, "comet", timeout_seconds)),
      timeout_seconds_(timeout_seconds) {}

std::map<std::uint64_t, CometFigure> CometOnHost::run(const std::string& kernel,
                                                      const std::vector<std::uint64_t>& sizes, std::uint32_t procs,
                                                      std::uint32_t reps, std::string* command) const {
  measure::Launch launch;
  launch.ranks = static_cast<int>(procs);
  launch.program = binary_;
  launch.args = program_args(kernel, sizes, reps);
  launch.timeout_seconds = timeout_seconds_;
  if (command) *command = command_text(measure::mpirun_command(launch));
  const measure::ProcessResult m = measure::run_mpi(launch);
  const std::string what = "CoMet " + kernel + " under mpirun -np " + std::to_string(procs);
  if (!m.ok())
    throw EvaluationError(what + ": " + m.status_text() + ": " + base::last_lines(m.err.empty() ? m.out : m.err, 12));
  ProgramFigures measured = parse_output(m.out, what);
  return measured.figures.count(kernel) ? std::move(measured.figures.at(kernel))
                                        : std::map<std::uint64_t, CometFigure>{};
}

CometReport run_comet(const CometRequest& request, Store& store) {
  if (request.procs < 1 || request.procs > 1024)
    throw UsageError("--procs", "'" + std::to_string(request.procs) + "' is out of range; allowed: 1..1024");
  if (request.reps < 1 || request.reps > 100000)
    throw UsageError("--reps",
                     "'" + std::to_string(request.reps) + "' is not allowed; allowed: an integer from 1 to 100000");
  const std::string& source = existing_comet_source();
  CometRequest r = request;
  if (r.kernels.empty()) r.kernels = comet_kernel_names();
  if (r.sizes.empty()) r.sizes = parse_comet_sizes("0,1,8,64,512,4K,32K,256K,1M");

  CometReport report;
  report.procs = r.procs;
  report.reps = r.reps;
  report.measured = r.measure;
  report.store_path = store.path();

  // The machine of the predictions, and the program built for it.
  DirectMachineRequest mr = r.machine;
  mr.paradigm = "simulation[direct]";
  mr.needs_processor = false;  // comet.c charges no work (POEMS_Compute)
  const DirectMachine machine = direct_machine(mr);
  report.machine = machine.description + ": " + loggops_text(machine.machine.params) +
                   (machine.machine.rendezvous_handshake ? " (rendezvous handshake)" : "");
  DirectRunSettings settings;
  settings.procs = std::to_string(r.procs);
  settings.compute = "model";
  const direct::DirectOptions options = direct_options(settings, machine);
  const base::TemporaryDirectory build_dir = comet_build_directory();
  const std::string direct_binary =
      build_comet(wrapper_for(source), source, build_dir, "comet-direct", r.timeout_seconds);

  const std::string hash = comet_file_hash(source);
  CometStore kb(store, hash, report);
  const nlohmann::json machine_json = machine_key(machine.machine);
  // The PSL models, simulated on the same machine.
  std::unique_ptr<CometSimulator> simulator;
  if (r.simulate) simulator = std::make_unique<CometSimulator>(machine.machine, r.procs, r.reps);

  // The measured program, built only when it runs.
  std::optional<CometOnHost> host;
  nlohmann::json host_json;
  if (r.measure) {
    host.emplace(r.timeout_seconds);
    const std::string mpi = measure::mpi_version();
    report.host = measure::host_name() + " (" + std::to_string(measure::host_cores()) + " cores, " +
                  (mpi.empty() ? std::string("mpirun") : mpi) + ")";
    host_json = {{"host", measure::host_name()}, {"cores", measure::host_cores()}, {"mpi", mpi}};
    if (double l[1]; ::getloadavg(l, 1) == 1) report.load_average = l[0];
  }

  for (const std::string& kernel : r.kernels) {
    CometKernelResult k;
    k.name = kernel;
    const std::vector<std::string> args = program_args(kernel, r.sizes, r.reps);
    const nlohmann::json binding = {{"procs", r.procs}, {"reps", r.reps}, {"args", args}};

    // Direct execution on the machine model.
    report.direct_command =
        "poems direct comet -np " + std::to_string(r.procs) + " --compute model -- " + command_text(args);
    const DirectRun run = run_direct_program(direct_binary, args, options, ProgramOutput::Capture, r.timeout_seconds);
    if (!run.result) throw EvaluationError("CoMet " + kernel + " under direct execution: " + run.failure);
    if (!run.result->completed())
      throw EvaluationError("CoMet " + kernel + " under direct execution: " + run.result->error);
    const ProgramFigures direct = parse_output(run.output, "CoMet " + kernel + " under direct execution");
    for (const auto& [bytes, f] :
         direct.figures.count(kernel) ? direct.figures.at(kernel) : std::map<std::uint64_t, CometFigure>{}) {
      point(k, bytes).direct = f;
      nlohmann::json b = binding;
      b["machine"] = machine_json;
      kb.put(kCometDirect, kernel, bytes, b, figure_result(f, false, r.reps));
    }
    if (direct.skipped.count(kernel)) k.note = "skipped: " + direct.skipped.at(kernel);

    // Measurement under mpirun.
    if (host)
      for (const auto& [bytes, f] : host->run(kernel, r.sizes, r.procs, r.reps, &report.measure_command)) {
        point(k, bytes).measured = f;
        nlohmann::json b = binding;
        b.update(host_json);
        kb.put(kCometMeasured, kernel, bytes, b, figure_result(f, true, r.reps));
      }

    // The PSL model simulated, at the sizes the program reported.
    if (simulator)
      for (CometPoint& p : k.points) {
        // comet.c runs the sizes in the order given: the one before this one.
        const auto at = std::find(r.sizes.begin(), r.sizes.end(), p.bytes);
        const std::optional<std::uint64_t> previous =
            at == r.sizes.begin() || at == r.sizes.end() ? std::nullopt : std::optional<std::uint64_t>(*(at - 1));
        p.simulated = simulator->figure(kernel, p.bytes, previous);
        if (!p.simulated) continue;
        nlohmann::json b = {{"procs", r.procs},
                            {"reps", r.reps},
                            {"model", comet_model_name(kernel)},
                            {"parameters", simulator->parameters(kernel, p.bytes, previous)},
                            {"machine", machine_json}};
        kb.put(kCometSimulated, kernel, p.bytes, b, figure_result(*p.simulated, false, r.reps), simulator->spec_hash());
      }

    // Closed forms, at the sizes the program reported.
    for (CometPoint& p : k.points) {
      p.closed_form_ns = comet_closed_form_ns(kernel, p.bytes, r.procs, machine.machine, &k.closed_form);
      if (p.closed_form_ns) {
        db::Result c;
        c.time_ns = *p.closed_form_ns;
        c.extra = {{"form", k.closed_form}};
        nlohmann::json b = {{"procs", r.procs}, {"machine", machine_json}};
        kb.put(kCometClosedForm, kernel, p.bytes, b, c);
      }
    }
    static const std::vector<std::string> with_forms = {"echo",   "pairwise",  "shift",  "broadcast",
                                                        "reduce", "allreduce", "barrier"};
    if (k.closed_form.empty() && k.note.empty())
      k.note = std::find(with_forms.begin(), with_forms.end(), kernel) == with_forms.end()
                   ? "no closed form for this kernel"
               : !machine.machine.flat() || machine.machine.noisy()
                   ? "no closed form on a machine that is not flat or has OS noise"
                   : "the closed form does not hold here (g > 2o + L, P, or outside its regime; docs/comet.md)";
    report.kernels.push_back(std::move(k));
  }
  report.warnings = store.take_warnings();
  return report;
}

}  // namespace poems::core
