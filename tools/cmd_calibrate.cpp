// `poems calibrate`: this machine's MPI (LogGOPS) and a kernel's Wg
// (core/calibration.h), stored as a machine with its calibrations and
// written as a PSL machine component file.
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <utility>

#include "options.h"
#include "poems/core/cachesim_calibration.h"
#include "poems/core/calibration.h"

namespace poems::cli {

namespace {

struct CalibrateOptions {
  core::CalibrationRequest request;
  std::string procs = "2", psl = "local.psl", fit_bytes, format;
  int nice = 0;
  core::StoreOptions store;
  bool cachesim = false;  // --cachesim: processor[cachesim]'s rates instead
  CLI::Option* psl_option = nullptr;
};

std::string fmt(const char* spec, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, v);
  return buffer;
}

void print_text(const core::Calibration& cal, const std::string& psl, std::ostream& out) {
  const measure::LoggopsCalibration& c = cal.loggops;
  out << "machine " << cal.name << " (" << c.machine_range << " range): L = " << fmt("%.4g", c.L)
      << " ns, o = " << fmt("%.4g", c.o) << " ns, g = " << fmt("%.4g", c.g) << " ns, G = " << fmt("%.4g", c.G)
      << " ns/B, O = " << fmt("%.4g", c.O) << " ns/B, S = " << fmt("%.0f", c.S) << " B, Wg = " << fmt("%.4g", cal.wg_ns)
      << " ns\n\n";
  out << "   bytes   echo_ns  model_ns  model_%  exchange_ns  overhead_ns    gap_ns\n";
  const auto overhead = cal.samples.overhead_ns(), gap = cal.samples.gap_ns();
  char line[160];
  for (std::size_t k = 0; k < cal.samples.sizes.size(); ++k) {
    const double m = core::model_echo_ns(c, cal.samples.sizes[k]);
    std::snprintf(line, sizeof line, "%8.0f %9.1f %9.1f %+8.1f %12.1f %12.1f %9.1f\n", cal.samples.sizes[k],
                  cal.samples.echo_ns[k], m, 100 * (m - cal.samples.echo_ns[k]) / cal.samples.echo_ns[k],
                  cal.samples.exchange_ns[k], overhead[k], gap[k]);
    out << line;
  }
  std::snprintf(line, sizeof line, "\n%-22s %12s %12s %16s\n", "task", "block_us", "Wg_ns", "Wg_ns_at_once");
  out << line;
  for (const core::TaskWg& w : cal.tasks) {
    std::snprintf(line, sizeof line, "%-22s %12.2f %12.3f %12.3f (%d)\n", w.text.c_str(), w.block_ns / 1e3, w.wg_ns,
                  w.busy_wg_ns, w.concurrent);
    out << line;
  }
  const processor::WorkingSetCurve& h = cal.hierarchy;
  if (!h.bytes.empty()) {
    out << "\nprocessor[hierarchy]: " << cal.caches << "\n";
    std::snprintf(line, sizeof line, "%-8s %-22s %14s %12s %16s\n", "level", "task", "working_set_B", "Wg_ns",
                  "Wg_ns_at_once");
    out << line;
    for (std::size_t i = 0; i < h.bytes.size(); ++i) {
      std::snprintf(line, sizeof line, "%-8s %-22s %14.0f %12.3f %12.3f (%d)\n", cal.hierarchy_levels[i].c_str(),
                    cal.hierarchy_tasks[i].c_str(), h.bytes[i], h.wg_ns[i],
                    i < h.busy_wg_ns.size() ? h.busy_wg_ns[i] : h.wg_ns[i], h.busy_wg_ns.empty() ? 1 : h.cores);
      out << line;
    }
  }
  if (!cal.hierarchy_note.empty()) out << "note: " << cal.hierarchy_note << '\n';
  for (const std::string& n : c.notes) out << "note: " << n << '\n';
  out << "\nwrote " << psl << " (components " << cal.name << ", " << cal.name << "_cpu"
      << (h.bytes.empty() ? "" : ", " + cal.name + "_hierarchy") << ")\n";
}

// --cachesim: measure and simulate the study's tasks, fit the rates, write
// NAME_cachesim (to NAME_cachesim.psl unless --psl says otherwise).
void run_calibrate_cachesim(CalibrateOptions& o, Context& ctx) {
  const std::pair<const char*, bool> ignored[] = {{"--shape", !o.request.shapes.empty()},
                                                  {"--sizes", !o.request.sizes.empty()},
                                                  {"--fit-bytes", !o.fit_bytes.empty()},
                                                  {"--quick", o.request.quick}};
  for (const auto& [option, given] : ignored)
    if (given) throw core::UsageError(option, "does not apply with --cachesim (its tasks are those of --study)");
  core::CachesimCalibrationRequest request;
  request.spec = o.request.spec, request.study = o.request.study;
  request.name = o.request.name, request.kernel = o.request.kernel;
  const std::string psl = o.psl_option->count() ? o.psl : o.request.name + "_cachesim.psl";
  const PriorityScope priority(o.nice, ctx);
  core::Store store(o.store);  // keeps the simulated counts
  const core::CachesimCalibration cal = core::calibrate_cachesim(
      request, [&](const std::string& step) { ctx.err << "calibrate --cachesim: " << step << " ...\n"; });
  std::ofstream file(psl);
  file << cal.psl;
  file.close();
  if (!file) throw core::InputError("cannot write " + psl);
  if (o.format == "json") {
    nlohmann::json j = {{"component", cal.component},
                        {"kernel", cal.kernel},
                        {"psl", std::filesystem::absolute(psl).string()},
                        {"ns_per_instruction", cal.rates.ns_per_instruction},
                        {"ns_per_L1_miss", cal.rates.ns_per_L1_miss},
                        {"ns_per_LL_miss", cal.rates.ns_per_LL_miss},
                        {"ns_per_LL_miss_shared", cal.rates.ns_per_LL_miss_shared},
                        {"tasks", nlohmann::json::array()}};
    for (const core::CachesimPoint& p : cal.points)
      j["tasks"].push_back({{"task", p.task},
                            {"measured_ns", p.measured_ns},
                            {"predicted_ns", p.predicted_ns},
                            {"left_out_predicted_ns", p.left_out_ns},
                            {"Ir", p.per_call.Ir},
                            {"L1_misses", p.per_call.l1_misses()},
                            {"LL_misses", p.per_call.ll_misses()},
                            {"LL", p.ll.text()},
                            {"simulation_seconds", p.simulation_seconds},
                            {"cached", p.cached}});
    ctx.out << j.dump(2) << '\n';
    return;
  }
  ctx.out << "processor[cachesim] " << cal.component
          << ": ns_per_instruction = " << fmt("%.4g", cal.rates.ns_per_instruction)
          << " ns, ns_per_L1_miss = " << fmt("%.4g", cal.rates.ns_per_L1_miss)
          << " ns, ns_per_LL_miss = " << fmt("%.4g", cal.rates.ns_per_LL_miss)
          << " ns, ns_per_LL_miss_shared = " << fmt("%.4g", cal.rates.ns_per_LL_miss_shared) << " ns\ncaches: I1 "
          << cal.caches.I1.text() << ", D1 " << cal.caches.D1.text() << ", LL " << cal.caches.LL.text()
          << " (shared by " << cal.ll_shared_by << ")\n\n";
  char line[200];
  std::snprintf(line, sizeof line, "%-44s %12s %12s %7s %7s %12s %10s %10s %8s\n", "task", "measured_us", "cachesim_us",
                "diff_%", "loo_%", "Ir", "L1_miss", "LL_miss", "sim_s");
  ctx.out << line;
  for (const core::CachesimPoint& p : cal.points) {
    std::string text;
    for (const char* k : {"it", "jt", "mk", "angles", "kt", "procs"})
      if (auto it = p.task.find(k); it != p.task.end())
        text += (text.empty() ? "" : " ") + std::string(k) + "=" + fmt("%.0f", it->second);
    std::snprintf(line, sizeof line, "%-44s %12.2f %12.2f %+7.1f %+7.1f %12.0f %10.0f %10.0f %8s\n", text.c_str(),
                  p.measured_ns / 1e3, p.predicted_ns / 1e3, 100 * (p.predicted_ns - p.measured_ns) / p.measured_ns,
                  100 * (p.left_out_ns - p.measured_ns) / p.measured_ns, p.per_call.Ir, p.per_call.l1_misses(),
                  p.per_call.ll_misses(), p.cached ? "stored" : fmt("%.1f", p.simulation_seconds).c_str());
    ctx.out << line;
  }
  ctx.out << "\nwrote " << psl << " (component " << cal.component << ")\n";
}

void run_calibrate(CalibrateOptions& o, Context& ctx) {
  const std::string& name = o.request.name;
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos)
    throw core::UsageError("--name",
                           "'" + name + "' is not a PSL identifier (letters, digits, _; not starting with a digit)");
  if (o.cachesim) return run_calibrate_cachesim(o, ctx);
  const double procs = core::quantity("--procs", o.procs, base::kDimensionless, "an integer in 2..64");
  if (procs < 2 || procs > 64 || procs != static_cast<int>(procs))
    throw core::UsageError("--procs", "'" + o.procs + "' is out of range; expected an integer in 2..64");
  o.request.procs = static_cast<int>(procs);
  if (!o.fit_bytes.empty()) {
    double lo = 0, hi = 0;
    if (std::sscanf(o.fit_bytes.c_str(), "%lf-%lf", &lo, &hi) != 2 || lo < 0 || hi < lo)
      throw core::UsageError("--fit-bytes", "'" + o.fit_bytes + "' is not MIN-MAX bytes, e.g. 8192-65536");
    o.request.fit_bytes = std::make_pair(lo, hi);
  }
  const PriorityScope priority(o.nice, ctx);
  core::Store store(o.store);
  const core::Calibration cal =
      core::calibrate(o.request, [&](const std::string& step) { ctx.err << "calibrate: " << step << " ...\n"; });
  std::ofstream file(o.psl);
  file << cal.psl;
  file.close();
  if (!file) throw core::InputError("cannot write " + o.psl);
  const std::string psl_path = std::filesystem::absolute(o.psl).string();
  core::store_calibration(cal, o.request, psl_path, store);
  if (store.enabled()) ctx.err << "stored machine '" << cal.name << "' (calibrated) in " << store.path() << '\n';
  if (o.format == "json")
    ctx.out << core::to_json(cal, psl_path).dump(2) << '\n';
  else
    print_text(cal, o.psl, ctx.out);
}

}  // namespace

void register_calibrate(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate",
                                     "Measure the local MPI's LogGOPS parameters, a kernel's Wg and its working-set "
                                     "curve (processor[hierarchy]); store a machine and its PSL file");
  add_procs_option(cmd, o->procs, "MPI processes of the benchmark (ranks 0 and 1 measure); copies of a task at once",
                   {"--np"})
      ->capture_default_str();
  cmd->add_flag("--quick", o->request.quick, "Fewer sizes and repetitions (a few seconds)");
  cmd->add_option("--nice", o->nice, "Measure at this nice value (negative: root; see poems measure --help)")
      ->check(CLI::Range(-20, 19));
  cmd->add_option("--name", o->request.name, "Machine name in the knowledge base and the PSL file")
      ->capture_default_str();
  o->psl_option =
      cmd->add_option("--psl", o->psl, "PSL machine component file to write (--cachesim: NAME_cachesim.psl)")
          ->capture_default_str();
  cmd->add_flag("--cachesim", o->cachesim,
                "Calibrate processor[cachesim]'s rates on the tasks of --study instead (cachegrind; no MPI benchmark)");
  cmd->add_option("--sizes", o->request.sizes, "Message sizes in bytes, comma-separated (default: 8 B to 256 KiB)");
  cmd->add_option("--kernel", o->request.kernel,
                  "processor[measured] kernel to time (default: the study's, else the first registered)");
  std::string syntax;
  for (const core::CalibrationKernel& k : core::calibration_kernels())
    if (k.parse_task) syntax += (syntax.empty() ? "" : "; ") + k.kernel + ": " + k.task_syntax;
  cmd->add_option("--shape", o->request.shapes, "A task of the kernel in its shorthand (" + syntax + "); repeatable");
  cmd->add_option("spec,--spec", o->request.spec, "With --study: the specification");
  cmd->add_option("--study", o->request.study, "Measure Wg for the compute tasks of this study's bindings");
  cmd->add_option("--fit-bytes", o->fit_bytes,
                  "Message sizes MIN-MAX whose fit the machine takes (default: around the messages of the tasks "
                  "of --shape/--study, else the sizes above S)");
  add_format_option(cmd, o->format, {"table", "json"});
  add_store_options(cmd, o->store);
  cmd->callback([o, &ctx] { run_calibrate(*o, ctx); });
}

}  // namespace poems::cli
