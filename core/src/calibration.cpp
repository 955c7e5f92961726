#include "poems/core/calibration.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

#include "poems/base/registry.h"
#include "poems/base/suggest.h"
#include "poems/core/comet_calibration.h"
#include "poems/core/compute_rates.h"
#include "poems/core/error.h"
#include "poems/core/programs.h"
#include "poems/core/session.h"
#include "poems/core/study.h"
#include "poems/measure/host_caches.h"
#include "poems/measure/machine_file.h"
#include "poems/measure/memory_copy.h"
#include "poems/measure/mpirun.h"
#include "poems/processor/measured.h"
#include "poems/taskgraph/dtg.h"

namespace poems::core {

namespace {

// Listed as registered: `poems calibrate` takes the first by default.
base::Registry<CalibrationKernel>& registry() {
  static base::Registry<CalibrationKernel> r(base::RegistryOrder::Registration);
  return r;
}

std::string fmt(const char* spec, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, v);
  return buffer;
}

std::string default_text(const TaskParameters& task) {
  std::string out;
  for (const auto& [k, v] : task) out += (out.empty() ? "" : ",") + k + "=" + fmt("%.6g", v);
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Message sizes and how many of each a run sends (every point-to-point
// message of the instantiated task graph, collectives' included).
void add_traffic(const taskgraph::StaticTaskGraph& graph, const taskgraph::ParameterBinding& binding,
                 std::map<double, double>& traffic) {
  auto shared = std::make_shared<taskgraph::StaticTaskGraph>(graph);
  taskgraph::ModelSchedule schedule(shared, binding, {});
  taskgraph::OpBuffer buffer;
  for (std::uint32_t rank = 0; rank < schedule.ranks(); ++rank)
    for (;;) {
      buffer.clear();
      const std::size_t n = schedule.pull(rank, 4096, buffer);
      if (n == 0 || n == taskgraph::ScheduleSource::kBlocked) break;
      for (const taskgraph::Operation& op : buffer.ops)
        if (op.kind == taskgraph::OpKind::Send) traffic[static_cast<double>(op.bytes)] += 1;
      if (buffer.rank_done) break;
    }
}

}  // namespace

std::vector<TaskParameters> study_compute_tasks(const std::string& spec, const std::string& study, std::string& kernel,
                                                std::map<double, double>* traffic) {
  SystemRequest request;
  request.files = {spec};
  request.study = study;
  const std::unique_ptr<System> system = load_system(request);
  Store none({true, ""});
  SessionOptions options;
  options.choices.study["compute"] = base::Value::of_string("processor[measured]", base::Value::Kind::Ref);
  Session session(*system, options, none);
  std::set<TaskParameters> seen;
  std::vector<TaskParameters> tasks;
  for (const StudyBinding& b : expand_study(*system->study())) {
    const CellRequest cell = cell_request(*system, b);
    const Composition& c = session.composition("analytic[LogGP]", cell.overrides, cell.study);
    const taskgraph::ParameterBinding binding = session.binding(cell.parameters);
    const std::vector<double> values = taskgraph::evaluate_model_values(*system->graph(), binding);
    for (const Ted& ted : c.plan.teds) {
      if (ted.kind != "compute" || ted.evaluator != "processor[measured]") continue;
      auto k = ted.parameters.find("kernel");
      if (k != ted.parameters.end() && kernel.empty()) kernel = k->second.text;
      const ProcessorTask processor_task = compute_task(system->program(), c.system, ted, *system->graph(), values);
      if (kernel.empty()) kernel = processor_task.component;  // a PSL kernel { } is named by its component
      if (seen.insert(processor_task.params).second) tasks.push_back(processor_task.params);
    }
    if (traffic) add_traffic(*system->graph(), binding, *traffic);
  }
  if (tasks.empty()) throw InputError("study " + study + " has no compute task a processor[measured] component times");
  return tasks;
}

namespace {

// The processor[hierarchy] curve: the kernel timed with a working set half
// of each cache level (it fits with room for the stack, the code and the
// other arrays), four times the last level (DRAM) and between each two, alone
// and with every core of the host running a copy of its own.
void measure_hierarchy(const CalibrationKernel& kernel, processor::MeasuredProcessor& model, Calibration& out,
                       const std::function<void(const std::string&)>& progress) {
  std::vector<measure::CacheLevel> caches;
  try {
    caches = measure::host_caches();
  } catch (const std::exception& e) {
    out.hierarchy_note = std::string("no processor[hierarchy] curve: ") + e.what();
    return;
  }
  out.caches = measure::describe(caches);
  // Half of each level, four times the last, and the geometric middle of
  // each two neighbours: the rate does not change linearly in log2(bytes)
  // across a level's edge, and the middles pin where it turns.
  std::vector<std::pair<std::string, double>> levels;
  for (const measure::CacheLevel& c : caches) levels.emplace_back(c.name(), c.bytes / 2);
  levels.emplace_back("DRAM", caches.back().bytes * 4);
  std::vector<std::pair<std::string, double>> targets;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (i > 0)
      targets.emplace_back(levels[i - 1].first + "-" + levels[i].first,
                           std::sqrt(levels[i - 1].second * levels[i].second));
    targets.push_back(levels[i]);
  }
  const int cores = std::max(1, measure::host_cores());
  progress("the processor[hierarchy] curve of " + kernel.description + ": " + std::to_string(targets.size()) +
           " working sets, alone and " + std::to_string(cores) + " at once (" + out.caches + ")");
  processor::WorkingSetCurve curve;
  curve.cores = cores;
  for (const auto& [level, bytes] : targets) {
    TaskParameters t = kernel.task_for_working_set(bytes);
    if (!t.count("working_set") || !t.count("work"))
      throw InputError("kernel " + kernel.kernel + "'s task for a working set of " + std::to_string(bytes) +
                       " B has no '" + (t.count("work") ? "working_set" : "work") + "'");
    const double ws = t.at("working_set"), work = t.at("work");
    if (!curve.bytes.empty() && ws <= curve.bytes.back()) continue;  // a level too small to tell apart
    processor::TaskRequest task;
    task.component = kernel.component;
    task.transaction = kernel.transaction;
    task.params = t;
    curve.bytes.push_back(ws);
    curve.wg_ns.push_back(model.task_time_ns(task) / work);
    task.params["procs"] = cores;
    curve.busy_wg_ns.push_back(model.measurement(task).mean_ns / work);
    out.hierarchy_levels.push_back(level);
    out.hierarchy_tasks.push_back(kernel.task_text ? kernel.task_text(t) : default_text(t));
  }
  if (cores == 1) curve.busy_wg_ns.clear();
  out.hierarchy = curve;
}

}  // namespace

void register_calibration_kernel(CalibrationKernel kernel) {
  std::string name = kernel.kernel;
  registry().add(name, std::move(kernel));
}

const CalibrationKernel& calibration_kernel(const std::string& name) {
  if (const CalibrationKernel* k = name.empty() ? registry().first() : registry().find(name)) return *k;
  const std::vector<std::string> names = registry().names();
  throw UsageError("--kernel", (name.empty() ? std::string("no kernel is registered to calibrate")
                                             : "no kernel named '" + name + "' is registered") +
                                   " (kernels: " + base::known_names(names) + ")" + base::did_you_mean(name, names));
}

std::vector<CalibrationKernel> calibration_kernels() { return registry().entries(); }

const std::vector<std::string>& calibration_networks() {
  static const std::vector<std::string> networks = {"loggops", "comet"};
  return networks;
}

Calibration calibrate(const CalibrationRequest& r, const std::function<void(const std::string&)>& progress) {
  const std::vector<std::string>& networks = calibration_networks();
  if (std::find(networks.begin(), networks.end(), r.network) == networks.end())
    throw UsageError("--network", "'" + r.network + "' is not allowed; allowed: " + base::name_list(networks));
  const bool comet = r.network == "comet";
  CometNetworkRequest comet_request;
  if (comet) comet_request = comet_network_request(r.sizes, r.quick, r.procs);  // bad --sizes before any run
  Calibration out;
  out.name = r.name;
  out.network = r.network;
  std::map<double, double> traffic;
  std::vector<TaskParameters> tasks;
  std::string kernel_name = r.kernel;
  if (!r.study.empty()) {
    if (r.spec.empty()) throw UsageError("--study", "needs the specification the study is in");
    // Timed alone, then with --procs copies: the runs' own procs go.
    std::set<TaskParameters> seen;
    for (TaskParameters t : study_compute_tasks(r.spec, r.study, kernel_name, &traffic)) {
      t.erase("procs");
      if (seen.insert(t).second) tasks.push_back(t);
    }
  }
  const CalibrationKernel& kernel = calibration_kernel(kernel_name);
  out.kernel = kernel.kernel;
  out.kernel_description = kernel.description;
  auto text_of = [&](const TaskParameters& t) { return kernel.task_text ? kernel.task_text(t) : default_text(t); };
  for (const std::string& s : r.shapes) {
    if (!kernel.parse_task) throw UsageError("--shape", "kernel " + kernel.kernel + " takes no shorthand");
    TaskParameters t;
    try {
      t = kernel.parse_task(s);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--shape", e.what());
    }
    if (kernel.message_sizes)
      for (double bytes : kernel.message_sizes(t)) traffic[bytes] += 1;
    tasks.push_back(t);
  }
  if (tasks.empty()) tasks = kernel.default_tasks;
  if (tasks.empty())
    throw UsageError("--kernel", "kernel " + kernel.kernel + " has no default tasks: give --spec and --study " +
                                     "whose compute tasks it times");

  const std::string bench = sibling_program("poems_loggops_bench");
  if (bench.empty())
    throw EvaluationError(
        "poems_loggops_bench is not beside the poems executable (build it: cmake --build build "
        "--target poems_loggops_bench)");
  progress((comet ? "o and g of the local MPI with poems_loggops_bench's message trains on "
                  : "LogGOPS of the local MPI with poems_loggops_bench on ") +
           std::to_string(r.procs) + " processes" + (r.quick ? " (quick)" : ""));
  measure::Launch launch;
  launch.ranks = r.procs;
  launch.program = bench;
  if (r.quick) launch.args.push_back("--quick");
  // With CoMet the trains run at CoMet's sizes (but 0 B): g per echo regime.
  if (comet)
    launch.args.insert(launch.args.end(), {"--sizes", comet_train_sizes(comet_request)});
  else if (!r.sizes.empty())
    launch.args.insert(launch.args.end(), {"--sizes", r.sizes});
  launch.timeout_seconds = 600;
  const measure::ProcessResult run = measure::run_mpi(launch);
  const std::string line = measure::result_line(run.out, "POEMS_LOGGOPS ");
  if (!run.ok() || line.empty())
    throw EvaluationError("poems_loggops_bench under mpirun: " + run.status_text() + "\n" + run.err);
  out.samples = measure::parse_loggops_output(line);
  // The machine follows the messages in use (weighted by how many the
  // study's runs send): the echo regime carrying most of them, unless
  // --fit-bytes says otherwise. With CoMet, its echo's regimes.
  if (comet) {
    out.comet = calibrate_comet_network(comet_request, out.samples, r.fit_bytes.value_or(std::make_pair(0.0, 0.0)),
                                        traffic, progress, out.comet_command);
    out.loggops = out.comet.loggops;
  } else {
    double fit_min = 0, fit_max = 0;
    if (r.fit_bytes) {
      std::tie(fit_min, fit_max) = *r.fit_bytes;
    } else if (!traffic.empty()) {
      std::tie(fit_min, fit_max) = measure::traffic_range(out.samples, traffic);
    }
    out.loggops = measure::fit_loggops(out.samples, fit_min, fit_max);
  }

  progress("Wg of " + kernel.description + " for " + std::to_string(tasks.size()) + " task" +
           (tasks.size() == 1 ? "" : "s"));
  processor::ProcessorSpec spec;
  spec.component = r.name + "_cpu";
  spec.evaluator = "processor[measured]";
  spec.strings["kernel"] = kernel.kernel;
  try {
    processor::MeasuredProcessor model(spec);
    std::vector<double> busy;
    for (const TaskParameters& t : tasks) {
      processor::TaskRequest task;
      task.component = kernel.component;
      task.transaction = kernel.transaction;
      task.params = t;
      const double work = t.at("work");
      TaskWg w;
      w.task = t;
      w.text = text_of(t);
      w.block_ns = model.task_time_ns(task);
      w.wg_ns = w.block_ns / work;
      task.params["procs"] = r.procs;
      const processor::MeasuredProcessor::Measurement m = model.measurement(task);
      w.concurrent = m.concurrent;
      w.busy_block_ns = m.mean_ns;
      w.busy_wg_ns = m.mean_ns / work;
      busy.push_back(w.busy_wg_ns);
      out.tasks.push_back(w);
    }
    out.wg_ns = median(busy);  // the node's rate with its processes computing at once
    if (kernel.task_for_working_set)
      measure_hierarchy(kernel, model, out, progress);
    else
      out.hierarchy_note = "no processor[hierarchy] curve: kernel " + kernel.kernel + " cannot size its working set";
  } catch (const processor::ProcessorError& e) {
    throw EvaluationError(std::string("processor[measured] ") + kernel.kernel + ": " + e.what());
  } catch (const std::out_of_range&) {
    throw InputError("a task of kernel " + kernel.kernel + " has no 'work'");
  }

  out.source = "poems calibrate " + std::string(comet ? "--network comet " : "") + "--procs " +
               std::to_string(r.procs) + (r.quick ? " --quick" : "") + " on " + measure::host_name() + " (" +
               std::to_string(measure::host_cores()) + " cores, " + measure::mpi_version() + ")";
  const measure::LoggopsCalibration& c = out.loggops;
  measure::MachineProfile profile;
  profile.name = r.name;
  profile.network_description = "this host: " + measure::mpi_version() + ", " + std::to_string(r.procs) + " processes";
  profile.L = c.L, profile.o = c.o, profile.g = c.g, profile.G = c.G, profile.O = c.O, profile.S = c.S;
  for (const measure::RangeFit& f : c.regimes)
    profile.regimes.push_back({std::floor(f.min_bytes), f.L, f.o, f.g, f.G, f.O});
  profile.Wg = out.wg_ns;
  progress("memcpy of 64 MiB (copy_G)");
  out.copy_ns_per_byte = measure::copy_ns_per_byte();
  profile.copy_G = out.copy_ns_per_byte;
  profile.node_cores = static_cast<std::uint32_t>(measure::host_cores());
  profile.wg_description = "time per unit of work of " + kernel.description + " on this host";
  profile.comment_lines = {
      "Machine '" + r.name + "', written by " + out.source + ".",
      "LogGOPS fitted per message-size range (poems calibrate); this machine takes the " + c.machine_range + " range.",
      "S is the largest size whose blocking send does not wait for the receiver. Wg: median over the tasks",
      "measured with processor[measured] while " + std::to_string(r.procs) +
          " copies run at once (the node's processes share caches and memory bandwidth)."};
  if (comet)
    profile.comment_lines = {
        "Machine '" + r.name + "', written by " + out.source + ".",
        "LogGOPS fitted per protocol regime of CoMet's echo (examples/comet/comet.c, docs/comet.md): L and G from",
        "the echo, O from pairwise minus echo, o and g from poems_loggops_bench's message trains; S is the",
        "largest size of the echo's first regime. This machine takes the " + c.machine_range +
            " range. Wg: median over the tasks",
        "measured with processor[measured] while " + std::to_string(r.procs) +
            " copies run at once (the node's processes share caches and memory bandwidth)."};
  if (!c.regimes.empty())
    profile.comment_lines.push_back(
        "Above it, each higher regime of the echo its own parameters (from_K; between the "
        "ranks of this node shm_from_K).");
  std::vector<const measure::RangeFit*> fits = {&c.eager, &c.rendezvous, &c.messages};
  for (const measure::RangeFit& f : c.regimes) fits.push_back(&f);
  for (const measure::RangeFit* f : fits)
    if (f->sizes)
      profile.comment_lines.push_back(f->name + " range " + fmt("%.0f", f->min_bytes) + "-" +
                                      fmt("%.0f", f->max_bytes) + " B: L = " + fmt("%.4g", f->L) +
                                      " ns, o = " + fmt("%.4g", f->o) + " ns, O = " + fmt("%.4g", f->O) +
                                      " ns/B, g = " + fmt("%.4g", f->g) + " ns, G = " + fmt("%.4g", f->G) + " ns/B");
  for (const TaskWg& w : out.tasks)
    profile.comment_lines.push_back("Wg[" + w.text + "] = " + fmt("%.4g", w.wg_ns) + " ns alone, " +
                                    fmt("%.4g", w.busy_wg_ns) + " ns with " + std::to_string(w.concurrent) +
                                    " at once");
  for (const std::string& n : c.notes) profile.comment_lines.push_back("note: " + n);
  if (!out.hierarchy.bytes.empty()) {
    profile.hierarchy = processor::curve_attributes(out.hierarchy);
    profile.hierarchy_comment_lines = {
        "processor[hierarchy]: Wg of " + kernel.description + " against the bytes a task touches (its",
        "parameter working_set), alone (Wg_K) and with " + std::to_string(out.hierarchy.cores) +
            " copies at once (Wg_busy_K); this host: " + out.caches + "."};
    for (std::size_t i = 0; i < out.hierarchy.bytes.size(); ++i)
      profile.hierarchy_comment_lines.push_back("point " + std::to_string(i + 1) + ": " + out.hierarchy_levels[i] +
                                                ", task " + out.hierarchy_tasks[i]);
  }
  out.psl = measure::machine_psl(profile);
  return out;
}

namespace {
// The message-size regimes above the machine's range, as stored and printed.
nlohmann::json regimes_json(const measure::LoggopsCalibration& c) {
  nlohmann::json a = nlohmann::json::array();
  for (const measure::RangeFit& f : c.regimes)
    a.push_back({{"from_bytes", f.min_bytes},
                 {"max_bytes", f.max_bytes},
                 {"L_ns", f.L},
                 {"o_ns", f.o},
                 {"g_ns", f.g},
                 {"G_ns_per_byte", f.G},
                 {"O_ns_per_byte", f.O}});
  return a;
}
}  // namespace

void store_calibration(const Calibration& cal, const CalibrationRequest& r, const std::string& psl_path, Store& store) {
  if (!store.enabled()) return;
  const measure::LoggopsCalibration& c = cal.loggops;
  const measure::LoggopsSamples& samples = cal.samples;
  db::KnowledgeBase& kb = *store.kb();
  db::Machine m;
  m.name = cal.name;
  m.provenance = db::Provenance::kCalibrated;
  m.source = cal.source;
  nlohmann::json shapes = nlohmann::json::array();
  for (const TaskWg& w : cal.tasks)
    shapes.push_back({{"shape", w.text},
                      {"block_ns", w.block_ns},
                      {"Wg", w.wg_ns},
                      {"concurrent", w.concurrent},
                      {"Wg_concurrent", w.busy_wg_ns}});
  m.parameters = {{"L", c.L},
                  {"o", c.o},
                  {"g", c.g},
                  {"G", c.G},
                  {"O", c.O},
                  {"S", c.S},
                  {"Wg", cal.wg_ns},
                  {"copy_G", cal.copy_ns_per_byte},
                  {"regimes", regimes_json(c)},
                  {"Wg_kernel", cal.kernel},
                  {"Wg_shapes", shapes},
                  {"host", measure::host_name()},
                  {"cores", measure::host_cores()},
                  {"mpi", measure::mpi_version()},
                  {"processes", r.procs},
                  {"psl_file", psl_path},
                  {"samples",
                   {{"sizes", samples.sizes},
                    {"echo_ns", samples.echo_ns},
                    {"exchange_ns", samples.exchange_ns},
                    {"overhead_ns", samples.overhead_ns()},
                    {"gap_ns", samples.gap_ns()},
                    {"eager_probe_sizes", samples.probe_sizes},
                    {"eager_probe_ns", samples.probe_ns}}}};
  const bool comet = cal.network == "comet";
  if (comet) {
    m.parameters["network_benchmark"] =
        "CoMet (examples/comet/comet.c): echo and pairwise; o and g from poems_loggops_bench's message trains";
    nlohmann::json sizes = nlohmann::json::array(), echo = sizes, pairwise = sizes;
    for (const measure::CometFitPoint& p : cal.comet.points)
      sizes.push_back(p.bytes), echo.push_back(p.echo_ns), pairwise.push_back(p.pairwise_ns);
    m.parameters["comet"] = {
        {"sizes", sizes}, {"echo_ns", echo}, {"pairwise_ns", pairwise}, {"command", cal.comet_command}};
  }
  try {
    kb.transaction([&] {
      kb.put_machine(m);
      auto add = [&](const std::string& parameter, double value, const std::string& method) {
        kb.add_calibration(db::Calibration{0, cal.name, parameter, method, value, ""});
      };
      for (const measure::RangeFit* f : {&c.eager, &c.rendezvous, &c.messages}) {
        if (!f->sizes) continue;
        const std::string range =
            " " + f->name + " " + fmt("%.0f", f->min_bytes) + "-" + fmt("%.0f", f->max_bytes) + " B";
        if (comet) {
          add("L", f->L, "CoMet echo (comet.c)" + range);
          add("o", f->o,
              "message train RTT_n^d (poems_loggops_bench, eager), at most half the CoMet echo at 1 B of the" + range);
          add("O", f->O, "CoMet pairwise minus echo (comet.c)" + range);
          add("g", f->g, "message train RTT_n^0 (poems_loggops_bench)" + range);
          add("G", f->G, "CoMet echo (comet.c)" + range);
          continue;
        }
        add("L", f->L, "echo (ping-pong)" + range);
        add("o", f->o, "message train RTT_n^d" + range);
        add("O", f->O, "message train RTT_n^d" + range);
        add("g", f->g, "message train RTT_n^0" + range);
        add("G", f->G, "message train RTT_n^0" + range);
      }
      if (comet) {
        add("S", c.S, "CoMet echo (comet.c): the largest size of its first protocol regime");
        for (const measure::CometFitPoint& p : cal.comet.points) {
          add("echo[" + fmt("%.0f", p.bytes) + "B]", p.echo_ns, "CoMet echo (comet.c), median one way");
          add("pairwise[" + fmt("%.0f", p.bytes) + "B]", p.pairwise_ns, "CoMet pairwise (comet.c), median");
        }
      } else {
        add("S", c.S, "blocking send to an unposted receive");
        for (std::size_t k = 0; k < samples.sizes.size(); ++k)
          add("exchange[" + fmt("%.0f", samples.sizes[k]) + "B]", samples.exchange_ns[k],
              "pairwise exchange (the CoMet thesis)");
      }
      for (const TaskWg& w : cal.tasks) {
        add("Wg[" + w.text + "]", w.wg_ns, "processor[measured] " + cal.kernel + ", alone");
        add("Wg[" + w.text + "]", w.busy_wg_ns,
            "processor[measured] " + cal.kernel + ", " + std::to_string(w.concurrent) + " at once");
      }
      add("Wg", cal.wg_ns, "median over tasks, " + std::to_string(r.procs) + " processes computing at once");
      const processor::WorkingSetCurve& h = cal.hierarchy;
      for (std::size_t i = 0; i < h.bytes.size(); ++i) {
        const std::string at = "[" + cal.hierarchy_levels[i] + " " + fmt("%.0f", h.bytes[i]) + "B]";
        add("Wg" + at, h.wg_ns[i], "processor[hierarchy] " + cal.kernel + " " + cal.hierarchy_tasks[i] + ", alone");
        if (i < h.busy_wg_ns.size())
          add("Wg_busy" + at, h.busy_wg_ns[i],
              "processor[hierarchy] " + cal.kernel + " " + cal.hierarchy_tasks[i] + ", " + std::to_string(h.cores) +
                  " at once");
      }
    });
  } catch (const std::exception& e) {
    throw StoreError("the calibration was not stored in " + store.path() + ": " + e.what());
  }
}

namespace {

nlohmann::json residual(double model, double measured) {
  return measured > 0 ? nlohmann::json((model - measured) / measured) : nlohmann::json();
}

nlohmann::json range_json(const measure::RangeFit& f, double pairwise_residual) {
  if (!f.sizes) return nullptr;
  return {{"min_bytes", f.min_bytes},
          {"max_bytes", f.max_bytes},
          {"sizes", f.sizes},
          {"L_ns", f.L},
          {"o_ns", f.o},
          {"g_ns", f.g},
          {"G_ns_per_byte", f.G},
          {"O_ns_per_byte", f.O},
          {"echo_max_residual", f.echo.max_relative_residual},
          {"pairwise_max_residual", pairwise_residual}};
}

// CoMet's echo and pairwise against the machine, and each range's fit.
nlohmann::json comet_json(const Calibration& cal) {
  const measure::CometNetworkFit& f = cal.comet;
  nlohmann::json points = nlohmann::json::array();
  for (const measure::CometFitPoint& p : f.points)
    points.push_back({{"bytes", p.bytes},
                      {"regime", p.regime},
                      {"echo_ns", p.echo_ns},
                      {"model_echo_ns", p.model_echo_ns},
                      {"echo_residual", residual(p.model_echo_ns, p.echo_ns)},
                      {"pairwise_ns", p.pairwise_ns},
                      {"model_pairwise_ns", p.model_pairwise_ns},
                      {"pairwise_residual", residual(p.model_pairwise_ns, p.pairwise_ns)}});
  nlohmann::json regimes = nlohmann::json::array();
  for (const auto& [first, last] : f.regimes) regimes.push_back({first, last});
  return {{"command", cal.comet_command},
          {"points", points},
          {"echo_regimes", regimes},
          {"eager", range_json(f.loggops.eager, f.eager_pairwise_residual)},
          {"rendezvous", range_json(f.loggops.rendezvous, f.rendezvous_pairwise_residual)},
          {"messages", range_json(f.loggops.messages, f.messages_pairwise_residual)}};
}

}  // namespace

nlohmann::json to_json(const Calibration& cal, const std::string& psl_path) {
  const measure::LoggopsCalibration& c = cal.loggops;
  nlohmann::json j = {{"machine", cal.name}, {"psl_file", psl_path}, {"range", c.machine_range}, {"L_ns", c.L},
                      {"o_ns", c.o},         {"g_ns", c.g},          {"G_ns_per_byte", c.G},     {"O_ns_per_byte", c.O},
                      {"S_bytes", c.S},      {"Wg_ns", cal.wg_ns},   {"kernel", cal.kernel},     {"notes", c.notes}};
  nlohmann::json sizes = nlohmann::json::array();
  const auto overhead = cal.samples.overhead_ns(), gap = cal.samples.gap_ns();
  for (std::size_t k = 0; k < cal.samples.sizes.size(); ++k)
    sizes.push_back({{"bytes", cal.samples.sizes[k]},
                     {"echo_ns", cal.samples.echo_ns[k]},
                     {"model_echo_ns", measure::model_echo_ns(c, cal.samples.sizes[k])},
                     {"exchange_ns", cal.samples.exchange_ns[k]},
                     {"overhead_ns", overhead[k]},
                     {"gap_ns", gap[k]}});
  j["sizes"] = sizes;
  j["regimes"] = regimes_json(c);
  j["copy_G_ns_per_byte"] = cal.copy_ns_per_byte;
  if (cal.network == "comet") j["network"] = "comet", j["comet"] = comet_json(cal);
  nlohmann::json shapes = nlohmann::json::array();
  for (const TaskWg& w : cal.tasks)
    shapes.push_back(
        {{"shape", w.text}, {"Wg_ns", w.wg_ns}, {"concurrent", w.concurrent}, {"Wg_concurrent_ns", w.busy_wg_ns}});
  j["Wg_shapes"] = shapes;
  nlohmann::json curve = nlohmann::json::array();
  const processor::WorkingSetCurve& h = cal.hierarchy;
  for (std::size_t i = 0; i < h.bytes.size(); ++i)
    curve.push_back({{"level", cal.hierarchy_levels[i]},
                     {"task", cal.hierarchy_tasks[i]},
                     {"working_set_bytes", h.bytes[i]},
                     {"Wg_ns", h.wg_ns[i]},
                     {"Wg_busy_ns", i < h.busy_wg_ns.size() ? nlohmann::json(h.busy_wg_ns[i]) : nlohmann::json()}});
  j["hierarchy"] = {{"caches", cal.caches}, {"cores", h.cores}, {"points", curve}, {"note", cal.hierarchy_note}};
  return j;
}

void check_machine_name(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos)
    throw UsageError("--name",
                     "'" + name + "' is not a PSL identifier (letters, digits, _; not starting with a digit)");
}

}  // namespace poems::core
