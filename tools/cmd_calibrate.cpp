// `poems calibrate`: this machine's MPI (LogGOPS) and a kernel's Wg
// (core/calibration.h), stored as a machine with its calibrations and
// written as a PSL machine component file.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <utility>

#include "options.h"
#include "poems/base/suggest.h"
#include "poems/core/cachesim_calibration.h"
#include "poems/core/calibration.h"
#include "poems/report/calibration.h"

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

// --cachesim: measure and simulate the study's tasks, fit the rates, write
// NAME_cachesim (to NAME_cachesim.psl unless --psl says otherwise).
void run_calibrate_cachesim(CalibrateOptions& o, Context& ctx) {
  const std::pair<const char*, bool> ignored[] = {{"--shape", !o.request.shapes.empty()},
                                                  {"--sizes", !o.request.sizes.empty()},
                                                  {"--fit-bytes", !o.fit_bytes.empty()},
                                                  {"--quick", o.request.quick},
                                                  {"--network", o.request.network != "loggops"}};
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
  report::write_cachesim_calibration(cal, psl, o.format, ctx.out);
}

void run_calibrate(CalibrateOptions& o, Context& ctx) {
  core::check_machine_name(o.request.name);
  const std::vector<std::string>& networks = core::calibration_networks();
  if (std::find(networks.begin(), networks.end(), o.request.network) == networks.end())
    throw core::UsageError("--network",
                           "'" + o.request.network + "' is not allowed; allowed: " + base::name_list(networks));
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
    report::write_calibration(cal, o.psl, ctx.out);
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
  cmd->add_option("--network", o->request.network,
                  "Network benchmark: loggops (poems_loggops_bench's echo, exchange and message trains) or comet "
                  "(CoMet's echo and pairwise, examples/comet/comet.c; o and g from the trains; docs/comet.md)")
      ->capture_default_str();
  cmd->add_option("--sizes", o->request.sizes,
                  "Message sizes in bytes, comma-separated (default: 8 B to 256 KiB; --network comet: 0 B and the "
                  "powers of 2 to 1M, suffixes K and M)");
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
