// `poems calibrate`: measures the local MPI's LogGOPS parameters
// (poems_loggops_bench under mpirun: echo, exchange and message trains, seed
// 002 section 1.3, seed 001 section 3.3) and Wg of the Sweep3D k-block kernel
// for the block shapes in use, fits them (loggops_fit.h), stores a machine
// with provenance and its calibrations in the knowledge base, and writes it
// as a PSL machine component file.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <tuple>

#include "cli_common.h"
#include "loaded_model.h"
#include "measured_programs.h"
#include "model_source.h"
#include "poems/db/knowledge_base.h"
#include "poems/measure/loggops_fit.h"
#include "poems/measure/machine_file.h"
#include "poems/measure/mpirun.h"
#include "poems/processor/measured.h"
#include "poems/sweep3d/kblock.h"
#include "study_runner.h"

namespace poems::cli {

namespace {

struct CalibrateOptions {
  int np = 2, nice = 0;
  bool quick = false;
  std::string name = "local", psl = "local.psl", sizes, spec, study, format = "table", fit_bytes;
  std::vector<std::string> shapes;
  StoreOptions store;
};

// A k-block it × jt × mk with mmi angles, in a column of kt planes (0: alone).
struct Shape {
  int it, jt, mk, mmi, kt;
  auto operator<=>(const Shape&) const = default;
  std::string text() const {
    return std::to_string(it) + "x" + std::to_string(jt) + "x" + std::to_string(mk) + "x" + std::to_string(mmi) +
           (kt ? ",kt=" + std::to_string(kt) : "");
  }
};

struct ShapeWg {
  Shape shape;
  double block_ns = 0, wg_ns = 0;  // alone on the machine
  int concurrent = 1;              // copies running at once for the next two
  double busy_block_ns = 0, busy_wg_ns = 0;
};

std::string fmt(const char* spec, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, v);
  return buffer;
}

Shape parse_shape(const std::string& text) {
  Shape s{};
  char extra = 0;
  const int n = std::sscanf(text.c_str(), "%d,%d,%d,%d,%d%c", &s.it, &s.jt, &s.mk, &s.mmi, &s.kt, &extra);
  if ((n != 4 && n != 5) || s.it < 1 || s.jt < 1 || s.mk < 1 || s.mmi < 1 || s.kt < 0 || (n == 5 && s.kt < 1) ||
      static_cast<double>(s.it) * s.jt * std::max(s.mk, s.kt) > 1e8)
    usage_error("--shape", "'" + text + "' is not IT,JT,MK,MMI[,KT] (whole numbers >= 1, it*jt*max(mk,kt) <= 1e8)");
  return s;
}

// A message size and how many of it a study's runs send in all.
struct Traffic {
  double bytes = 0, count = 0;
};

// The k-block shapes of a study's bindings: (ceil(it_g/npe_i), ceil(jt_g/npe_j),
// mk, mmi, kt), and the messages the bindings send (Sweep3D's: along i
// 8·jt·mk·mmi bytes from the (npe_i-1)·npe_j processes with an i-neighbour
// downstream, along j likewise; per block, octant, angle block, iteration).
std::set<Shape> study_shapes(const std::string& spec, const std::string& study, std::vector<Traffic>& traffic,
                             int& result) {
  LoadedModel loaded;
  std::set<Shape> shapes;
  if (!load_study_model(spec, {}, study, loaded, result)) return shapes;
  const psl::StudyDecl& st = *loaded.frontend->program().find_study(study);
  const taskgraph::ParameterBinding fixed = study_parameters(loaded, st);
  for (const StudyBinding& b : expand_study(st)) {
    taskgraph::ParameterBinding params = fixed;
    for (const auto& [k, v] : b)
      if (k.find('.') == std::string::npos) params[k] = v.number;
    const std::vector<double> values = taskgraph::evaluate_model_values(*loaded.graph, params);
    std::map<std::string, double> named;
    for (std::uint32_t i = 0; i < loaded.graph->model_slot_count() && i < values.size(); ++i)
      named[loaded.graph->slot_names[i]] = values[i];
    for (const char* n : {"it", "jt", "mk", "mmi", "kt", "npe_i", "npe_j", "mmo", "kb", "iterations"})
      if (!named.count(n))
        throw std::runtime_error("study " + study + ": the model has no '" + n + "' to take a block shape from");
    shapes.insert(Shape{static_cast<int>(named["it"]), static_cast<int>(named["jt"]), static_cast<int>(named["mk"]),
                        static_cast<int>(named["mmi"]), static_cast<int>(named["kt"])});
    const double blocks = 8 * named["mmo"] * named["kb"] * named["iterations"];
    const double pi = named["npe_i"], pj = named["npe_j"], block = named["mk"] * named["mmi"] * 8;
    traffic.push_back({block * named["jt"], blocks * (pi - 1) * pj});
    traffic.push_back({block * named["it"], blocks * pi * (pj - 1)});
  }
  return shapes;
}

// Each shape alone and with `np` copies at once (the processes of a run share
// the node's caches and memory bandwidth).
std::vector<ShapeWg> measure_wg(const std::set<Shape>& shapes, int np) {
  sweep3d::register_sweep3d_kernels();
  processor::ProcessorSpec spec;
  spec.component = "local_cpu";
  spec.evaluator = "processor[measured]";
  spec.strings["kernel"] = "sweep3d.kblock";
  processor::MeasuredProcessor model(spec);
  std::vector<ShapeWg> out;
  for (const Shape& s : shapes) {
    processor::TaskRequest task;
    task.component = "KBlock";
    task.transaction = "execute_code_block";
    const double work = static_cast<double>(s.it) * s.jt * s.mk * s.mmi;
    task.params = {{"it", s.it}, {"jt", s.jt}, {"mk", s.mk}, {"angles", s.mmi}, {"work", work}};
    if (s.kt) task.params["kt"] = s.kt;
    ShapeWg w{s, model.task_time_ns(task), 0};
    w.wg_ns = w.block_ns / work;
    task.params["procs"] = np;
    const processor::MeasuredProcessor::Measurement busy = model.measurement(task);
    w.concurrent = busy.concurrent;
    w.busy_block_ns = busy.mean_ns;
    w.busy_wg_ns = busy.mean_ns / work;
    out.push_back(w);
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The model's per-size costs with the fitted parameters, for the report.
double model_echo(const measure::LoggopsCalibration& c, double s) {
  return (s > c.S ? 2 : 1) * c.L + 2 * c.o + (s - 1) * std::max(c.O, c.G);
}

void store(const CalibrateOptions& o, const measure::LoggopsCalibration& c, const measure::LoggopsSamples& samples,
           const std::vector<ShapeWg>& wg, double wg_ns, const std::string& psl_path, const std::string& source) {
  if (o.store.disabled) return;
  db::KnowledgeBase kb(db::resolve_path(o.store.db_path));
  db::Machine m;
  m.name = o.name;
  m.provenance = db::Provenance::kCalibrated;
  m.source = source;
  nlohmann::json shapes = nlohmann::json::array();
  for (const ShapeWg& w : wg)
    shapes.push_back({{"shape", w.shape.text()},
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
                  {"Wg", wg_ns},
                  {"Wg_shapes", shapes},
                  {"host", measure::host_name()},
                  {"cores", measure::host_cores()},
                  {"mpi", measure::mpi_version()},
                  {"processes", o.np},
                  {"psl_file", psl_path},
                  {"samples",
                   {{"sizes", samples.sizes},
                    {"echo_ns", samples.echo_ns},
                    {"exchange_ns", samples.exchange_ns},
                    {"overhead_ns", samples.overhead_ns()},
                    {"gap_ns", samples.gap_ns()},
                    {"eager_probe_sizes", samples.probe_sizes},
                    {"eager_probe_ns", samples.probe_ns}}}};
  kb.transaction([&] {
    kb.put_machine(m);
    auto add = [&](const std::string& parameter, double value, const std::string& method) {
      kb.add_calibration(db::Calibration{0, o.name, parameter, method, value, ""});
    };
    for (const measure::RangeFit* r : {&c.eager, &c.rendezvous, &c.messages}) {
      if (!r->sizes) continue;
      const std::string range =
          " " + r->name + " " + fmt("%.0f", r->min_bytes) + "-" + fmt("%.0f", r->max_bytes) + " B";
      add("L", r->L, "echo (ping-pong)" + range);
      add("o", r->o, "message train RTT_n^d" + range);
      add("O", r->O, "message train RTT_n^d" + range);
      add("g", r->g, "message train RTT_n^0" + range);
      add("G", r->G, "message train RTT_n^0" + range);
    }
    add("S", c.S, "blocking send to an unposted receive");
    for (std::size_t k = 0; k < samples.sizes.size(); ++k)
      add("exchange[" + fmt("%.0f", samples.sizes[k]) + "B]", samples.exchange_ns[k], "pairwise exchange (seed 001)");
    for (const ShapeWg& w : wg) {
      add("Wg[" + w.shape.text() + "]", w.wg_ns, "processor[measured] sweep3d.kblock, alone");
      add("Wg[" + w.shape.text() + "]", w.busy_wg_ns,
          "processor[measured] sweep3d.kblock, " + std::to_string(w.concurrent) + " at once");
    }
    add("Wg", wg_ns, "median over shapes, " + std::to_string(o.np) + " processes computing at once");
  });
  std::cerr << "stored machine '" << o.name << "' (calibrated) in " << kb.path().string() << '\n';
}

void calibrate(const CalibrateOptions& o, int& result) {
  const auto priority = apply_nice(o.nice);
  std::set<Shape> shapes;
  std::vector<Traffic> traffic;
  for (const std::string& s : o.shapes) {
    const Shape sh = parse_shape(s);
    shapes.insert(sh);
    traffic.push_back({8.0 * sh.jt * sh.mk * sh.mmi, 1});
    traffic.push_back({8.0 * sh.it * sh.mk * sh.mmi, 1});
  }
  if (!o.study.empty()) {
    if (o.spec.empty()) usage_error("--study", "needs --spec FILE (the specification the study is in)");
    for (const Shape& s : study_shapes(o.spec, o.study, traffic, result)) shapes.insert(s);
    if (result != kExitOk) return;
  }
  if (shapes.empty()) shapes = {{50, 50, 10, 3, 50}, {25, 50, 10, 3, 50}, {20, 20, 10, 3, 20}};

  const std::string bench = sibling_program("poems_loggops_bench");
  if (bench.empty()) {
    std::cerr << "poems: error: poems_loggops_bench is not beside the poems executable (build it: cmake --build build "
                 "--target poems_loggops_bench)\n";
    result = kExitEvaluation;
    return;
  }
  std::cerr << "calibrate: LogGOPS of the local MPI with poems_loggops_bench on " << o.np << " processes"
            << (o.quick ? " (quick)" : "") << " ...\n";
  measure::Launch launch;
  launch.ranks = o.np;
  launch.program = bench;
  if (o.quick) launch.args.push_back("--quick");
  if (!o.sizes.empty()) launch.args.insert(launch.args.end(), {"--sizes", o.sizes});
  launch.timeout_seconds = 600;
  const measure::ProcessResult run = measure::run_mpi(launch);
  const std::string line = measure::result_line(run.out, "POEMS_LOGGOPS ");
  if (!run.ok() || line.empty()) {
    std::cerr << "poems: error: poems_loggops_bench under mpirun: " << run.status_text() << "\n" << run.err;
    result = kExitEvaluation;
    return;
  }
  const measure::LoggopsSamples samples = measure::parse_loggops_output(line);
  // The machine follows the messages in use (8·jt·mk·mmi and 8·it·mk·mmi
  // bytes, weighted by how many the study's runs send): the echo regime
  // carrying most of them (messages_range), unless --fit-bytes says otherwise.
  double fit_min = 0, fit_max = 0;
  if (!o.fit_bytes.empty()) {
    if (std::sscanf(o.fit_bytes.c_str(), "%lf-%lf", &fit_min, &fit_max) != 2 || fit_min < 0 || fit_max < fit_min)
      usage_error("--fit-bytes", "'" + o.fit_bytes + "' is not MIN-MAX bytes, e.g. 8192-65536");
  } else if (!traffic.empty()) {
    std::vector<double> sizes, counts;
    for (const Traffic& t : traffic)
      if (t.count > 0) sizes.push_back(t.bytes), counts.push_back(t.count);
    std::tie(fit_min, fit_max) = measure::messages_range(samples, sizes, counts);
  }
  const measure::LoggopsCalibration c = measure::fit_loggops(samples, fit_min, fit_max);

  std::cerr << "calibrate: Wg of the Sweep3D k-block kernel for " << shapes.size() << " block shape"
            << (shapes.size() == 1 ? "" : "s") << " ...\n";
  const std::vector<ShapeWg> wg = measure_wg(shapes, o.np);
  std::vector<double> wgs;
  for (const ShapeWg& w : wg) wgs.push_back(w.busy_wg_ns);
  const double wg_ns = median(wgs);  // the node's rate with its processes computing at once

  const std::string source = "poems calibrate --np " + std::to_string(o.np) + (o.quick ? " --quick" : "") + " on " +
                             measure::host_name() + " (" + std::to_string(measure::host_cores()) + " cores, " +
                             measure::mpi_version() + ")";
  measure::MachineProfile profile;
  profile.name = o.name;
  profile.network_description = "this host: " + measure::mpi_version() + ", " + std::to_string(o.np) + " processes";
  profile.L = c.L, profile.o = c.o, profile.g = c.g, profile.G = c.G, profile.O = c.O, profile.S = c.S;
  profile.Wg = wg_ns;
  profile.comment_lines = {
      "Machine '" + o.name + "', written by " + source + ".",
      "LogGOPS fitted per message-size range (docs/sweep3d.md, Calibration); this machine takes the " +
          c.machine_range + " range.",
      "S is the largest size whose blocking send does not wait for the receiver. Wg: median over the block",
      "shapes measured with processor[measured] while " + std::to_string(o.np) +
          " copies run at once (the node's processes share caches and memory bandwidth)."};
  for (const measure::RangeFit* r : {&c.eager, &c.rendezvous, &c.messages})
    if (r->sizes)
      profile.comment_lines.push_back(r->name + " range " + fmt("%.0f", r->min_bytes) + "-" +
                                      fmt("%.0f", r->max_bytes) + " B: L = " + fmt("%.4g", r->L) +
                                      " ns, o = " + fmt("%.4g", r->o) + " ns, O = " + fmt("%.4g", r->O) +
                                      " ns/B, g = " + fmt("%.4g", r->g) + " ns, G = " + fmt("%.4g", r->G) + " ns/B");
  for (const ShapeWg& w : wg)
    profile.comment_lines.push_back("Wg[" + w.shape.text() + "] = " + fmt("%.4g", w.wg_ns) + " ns alone, " +
                                    fmt("%.4g", w.busy_wg_ns) + " ns with " + std::to_string(w.concurrent) +
                                    " at once");
  for (const std::string& n : c.notes) profile.comment_lines.push_back("note: " + n);
  const std::string text = measure::machine_psl(profile);
  std::ofstream file(o.psl);
  file << text;
  file.close();
  if (!file) {
    std::cerr << "poems: error: cannot write " << o.psl << '\n';
    result = kExitInputError;
    return;
  }
  const std::string psl_path = std::filesystem::absolute(o.psl).string();
  try {
    store(o, c, samples, wg, wg_ns, psl_path, source);
  } catch (const std::exception& e) {
    std::cerr << "poems: warning: the calibration was not stored in the knowledge base: " << e.what() << '\n';
  }

  if (o.format == "json") {
    nlohmann::json out = {{"machine", o.name},    {"psl_file", psl_path}, {"range", c.machine_range},
                          {"L_ns", c.L},          {"o_ns", c.o},          {"g_ns", c.g},
                          {"G_ns_per_byte", c.G}, {"O_ns_per_byte", c.O}, {"S_bytes", c.S},
                          {"Wg_ns", wg_ns},       {"notes", c.notes}};
    nlohmann::json sizes = nlohmann::json::array();
    for (std::size_t k = 0; k < samples.sizes.size(); ++k)
      sizes.push_back({{"bytes", samples.sizes[k]},
                       {"echo_ns", samples.echo_ns[k]},
                       {"model_echo_ns", model_echo(c, samples.sizes[k])},
                       {"exchange_ns", samples.exchange_ns[k]},
                       {"overhead_ns", samples.overhead_ns()[k]},
                       {"gap_ns", samples.gap_ns()[k]}});
    out["sizes"] = sizes;
    nlohmann::json shapes_json = nlohmann::json::array();
    for (const ShapeWg& w : wg)
      shapes_json.push_back({{"shape", w.shape.text()},
                             {"Wg_ns", w.wg_ns},
                             {"concurrent", w.concurrent},
                             {"Wg_concurrent_ns", w.busy_wg_ns}});
    out["Wg_shapes"] = shapes_json;
    std::cout << out.dump(2) << '\n';
  } else {
    std::cout << "machine " << o.name << " (" << c.machine_range << " range): L = " << fmt("%.4g", c.L)
              << " ns, o = " << fmt("%.4g", c.o) << " ns, g = " << fmt("%.4g", c.g) << " ns, G = " << fmt("%.4g", c.G)
              << " ns/B, O = " << fmt("%.4g", c.O) << " ns/B, S = " << fmt("%.0f", c.S)
              << " B, Wg = " << fmt("%.4g", wg_ns) << " ns\n\n";
    std::cout << "   bytes   echo_ns  model_ns  model_%  exchange_ns  overhead_ns    gap_ns\n";
    const auto overhead = samples.overhead_ns(), gap = samples.gap_ns();
    for (std::size_t k = 0; k < samples.sizes.size(); ++k) {
      const double m = model_echo(c, samples.sizes[k]);
      std::printf("%8.0f %9.1f %9.1f %+8.1f %12.1f %12.1f %9.1f\n", samples.sizes[k], samples.echo_ns[k], m,
                  100 * (m - samples.echo_ns[k]) / samples.echo_ns[k], samples.exchange_ns[k], overhead[k], gap[k]);
    }
    std::printf("\n%-22s %12s %12s %16s\n", "block shape", "block_us", "Wg_ns", "Wg_ns_at_once");
    for (const ShapeWg& w : wg)
      std::printf("%-22s %12.2f %12.3f %12.3f (%d)\n", w.shape.text().c_str(), w.block_ns / 1e3, w.wg_ns, w.busy_wg_ns,
                  w.concurrent);
    for (const std::string& n : c.notes) std::cout << "note: " << n << '\n';
    std::cout << "\nwrote " << o.psl << " (components " << o.name << ", " << o.name << "_cpu)\n";
  }
  result = kExitOk;
}

}  // namespace

void register_calibrate(CLI::App& app, int& result) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure the local MPI's LogGOPS parameters and the Sweep3D kernel's Wg; store a machine");
  cmd->add_option("--np", o->np, "MPI processes of the benchmark (ranks 0 and 1 measure)")
      ->check(CLI::Range(2, 64))
      ->capture_default_str();
  cmd->add_flag("--quick", o->quick, "Fewer sizes and repetitions (a few seconds)");
  cmd->add_option("--nice", o->nice, "Measure at this nice value (negative: root; see poems measure --help)")
      ->check(CLI::Range(-20, 19));
  cmd->add_option("--name", o->name, "Machine name in the knowledge base and the PSL file")->capture_default_str();
  cmd->add_option("--psl", o->psl, "PSL machine component file to write")->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "Message sizes in bytes, comma-separated (default: 8 B to 256 KiB)");
  cmd->add_option("--shape", o->shapes,
                  "A k-block shape to measure Wg for: IT,JT,MK,MMI[,KT] (in a column of KT planes; repeatable)");
  cmd->add_option("--spec", o->spec, "With --study: the specification")->check(CLI::ExistingFile);
  cmd->add_option("--study", o->study, "Measure Wg for the block shapes of this study's bindings");
  cmd->add_option("--fit-bytes", o->fit_bytes,
                  "Message sizes MIN-MAX whose fit the machine takes (default: around the messages of the block "
                  "shapes of --shape/--study, else the sizes above S)");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  add_store_options(cmd, o->store);
  cmd->callback([o, &result] {
    if (o->name.empty() || !(std::isalpha(static_cast<unsigned char>(o->name[0])) || o->name[0] == '_') ||
        o->name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
            std::string::npos)
      usage_error("--name",
                  "'" + o->name + "' is not a PSL identifier (letters, digits, _; not starting with a digit)");
    calibrate(*o, result);
  });
}

}  // namespace poems::cli
