// `poems scaling`: empirical scaling models of a program's computation from
// runs at several rank counts (docs/scaling.md); the fitting and the store
// are the core's (core/scaling_models.h), the printing report/scaling.h's.
#include <memory>
#include <string>
#include <vector>

#include "options.h"
#include "poems/core/error.h"
#include "poems/core/scaling_models.h"
#include "poems/report/scaling.h"

namespace poems::cli {

namespace scaling_cli {

struct ScalingOptions {
  core::ScalingRequest request;
  std::string computation = "wall";
  std::string metric = "max";
  std::string format = "table";
  std::vector<std::string> predict;  // RANKS or RANKS:SIZE
  core::StoreOptions store;
};

}  // namespace scaling_cli

using namespace scaling_cli;

void register_scaling(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ScalingOptions>();
  CLI::App* cmd = app.add_subcommand(
      "scaling",
      "Empirical scaling models of a program's computation, per code region, from OTF2 archives of runs at 3 or "
      "more rank counts (poems trace, poems direct --timeline; Extra-P's normal form, docs/scaling.md)");
  cmd->add_option("archives", o->request.archives, "The runs' archives (anchor files or directories)")->required();
  cmd->add_option("--predict", o->predict,
                  "Rank counts to predict at (repeatable); with --sizes, RANKS:SIZE (e.g. 1024:768)");
  cmd->add_option("--sizes", o->request.sizes,
                  "The problem size of each archive, in the order given (e.g. 256,256,256,512,...): models in ranks "
                  "and problem size")
      ->delimiter(',');
  cmd->add_option("--size-param", o->request.size_variable, "The problem size's name in the formulas and PSL")
      ->capture_default_str();
  cmd->add_option("--window", o->request.window,
                  "Only FROM[#N]..TO[#M] of every run, e.g. MPI_Barrier#1..MPI_Allreduce#-1");
  cmd->add_option("--computation", o->computation,
                  "The wall time between MPI calls, or the thread's CPU time (archives recorded with poems trace "
                  "--cpu-time)")
      ->check(CLI::IsMember({"wall", "cpu"}))
      ->capture_default_str();
  cmd->add_option("--metric", o->metric, "Each region's time in a run: the slowest rank's (max) or the ranks' mean")
      ->check(CLI::IsMember({"max", "mean"}))
      ->capture_default_str();
  cmd->add_option("--regions", o->request.regions, "Regions shown, largest first (0: all)")->capture_default_str();
  cmd->add_option("--param", o->request.variable, "The rank count's name in the formulas and PSL")
      ->capture_default_str();
  add_format_option(cmd, o->format, {"table", "json"});
  add_store_options(cmd, o->store);
  cmd->callback([o, &ctx] {
    o->request.predict.clear();
    o->request.predict_sizes.clear();
    for (const std::string& text : o->predict) {
      const std::size_t colon = text.find(':');
      auto number = [&](const std::string& part) {
        std::size_t used = 0;
        double v = 0;
        try {
          v = std::stod(part, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != part.size())
          throw core::UsageError("--predict", "'" + text + "' is not RANKS or RANKS:SIZE (numbers)");
        return v;
      };
      o->request.predict.push_back(number(text.substr(0, colon)));
      if (colon != std::string::npos) o->request.predict_sizes.push_back(number(text.substr(colon + 1)));
    }
    o->request.cpu_time = o->computation == "cpu";
    o->request.mean = o->metric == "mean";
    core::Store store(o->store);
    const core::ScalingReport report = core::fit_scaling_models(o->request, store);
    report::write_scaling_report(report, o->request, o->format, store.path(), ctx.out);
  });
}

}  // namespace poems::cli
