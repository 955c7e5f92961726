// `poems comet`: the CoMet kernels (examples/comet/comet.c) measured on this
// host and predicted on a machine model, side by side (docs/comet.md). The
// runs are the core's (core/comet.h), the tables and plots report/comet.h's.
#include <memory>

#include "options.h"
#include "poems/core/comet.h"
#include "poems/report/comet.h"

namespace poems::cli {

namespace {

struct CometOptions {
  std::vector<std::string> imports;
  std::string machine, kernels = "all", sizes, procs = "2", reps = "10", format = "table", plot;
  bool no_measure = false, no_simulation = false;
  MachineOptions overrides;
  double timeout = 600;
  core::StoreOptions store;
};

}  // namespace

void register_comet(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CometOptions>();
  CLI::App* cmd = app.add_subcommand(
      "comet",
      "CoMet's communication kernels measured on this host under mpirun and predicted on a machine model (direct "
      "execution, the PSL models simulated, closed forms), kernel by kernel (docs/comet.md)");
  cmd->add_option("--import,--machines", o->imports,
                  "PSL files with the machine components (default: the examples' machines.psl)");
  cmd->add_option("--machine", o->machine,
                  "hardware[network] component to predict (default: the command line's LogGOPS); not 'local' "
                  "(poems calibrate's name for this host): no measurement");
  cmd->add_option("--kernels", o->kernels, "all, or kernels comma-separated (echo, pairwise, broadcast, ...)")
      ->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "Message sizes, 0..16M, e.g. 0,8,1K,64K (default: 0,1,8,64,512,4K,32K,256K,1M)");
  add_procs_option(cmd, o->procs, "Ranks, 1..1024 (also -np)")->capture_default_str();
  cmd->add_option("--reps", o->reps, "Timed repetitions per kernel and size, 1..100000")->capture_default_str();
  cmd->add_flag("--no-measure", o->no_measure, "Predict only: do not run the kernels under mpirun");
  cmd->add_flag("--no-simulation", o->no_simulation,
                "Do not simulate the kernels' PSL models (examples/comet/comet.psl)");
  add_machine_options(cmd, o->overrides);
  add_timeout_option(cmd, o->timeout);
  add_format_option(cmd, o->format, {"table", "csv", "json"});
  cmd->add_option("--plot", o->plot, "Directory for one plot per kernel (comet-KERNEL.png)");
  add_store_options(cmd, o->store);
  cmd->callback([o, cmd, &ctx] {
    finish_machine_options(cmd, o->overrides);
    core::CometRequest r;
    r.kernels = core::parse_comet_kernels(o->kernels);
    if (!o->sizes.empty()) r.sizes = core::parse_comet_sizes(o->sizes);
    r.procs = core::parse_comet_procs(o->procs);
    r.reps = core::parse_comet_reps(o->reps);
    r.measure = !o->no_measure && core::comet_machine_is_this_host(o->machine);
    r.simulate = !o->no_simulation;
    r.machine.files = o->imports;
    r.machine.machine = o->machine;
    r.machine.overrides = o->overrides.overrides;
    r.timeout_seconds = o->timeout;
    core::Store store(o->store);
    const core::CometReport report = core::run_comet(r, store);
    report::write_comet_report(report, o->format, ctx.out);
    if (store.enabled())
      ctx.err << "poems: stored " << report.stored << " runs in " << report.store_path << " (" << report.already_stored
              << " already there)\n";
    if (!o->plot.empty()) {
      std::string error;
      for (const std::string& f : report::write_comet_plots(report, o->plot, false, error))
        ctx.err << "poems: wrote " << f << '\n';
      if (!error.empty()) {
        ctx.err << "poems: error: --plot: " << error << '\n';
        ctx.result = kExitEvaluation;
      }
    }
  });
}

}  // namespace poems::cli
