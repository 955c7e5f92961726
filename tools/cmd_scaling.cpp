// `poems scaling`: empirical scaling models of a program's computation from
// runs at several rank counts (docs/scaling.md); the fitting and the store
// are the core's (core/scaling_models.h).
#include <cstdio>
#include <memory>

#include "options.h"
#include "poems/core/scaling_models.h"

namespace poems::cli {

namespace scaling_cli {

struct ScalingOptions {
  core::ScalingRequest request;
  std::string computation = "wall";
  std::string metric = "max";
  std::string format = "table";
  core::StoreOptions store;
};

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", s);
  return text;
}

void print_region(const core::RegionModel& r, const core::ScalingRequest& request, std::ostream& out) {
  char share[32];
  std::snprintf(share, sizeof share, "%.1f %%", 100 * r.share);
  out << r.name << " (" << share << " of the largest run's computation)\n  measured:";
  for (const scaling::Point& p : r.points) out << "  P=" << p.p << " " << seconds(p.value) << " s";
  out << "\n";
  if (!r.model) {
    out << "  no model: " << r.why_not << "\n";
    return;
  }
  const scaling::Model& m = *r.model;
  char errors[160];
  std::snprintf(errors, sizeof errors, "fit %.2f %%, cross-validated %.2f %% (SMAPE), adjusted R^2 %.4f", m.fit_smape,
                m.cv_smape, m.adjusted_r2);
  out << "  model: " << m.formula(request.variable) << " s   [" << errors << "]\n";
  out << "  PSL:   " << m.psl(request.variable) << "\n";
  if (!r.predictions.empty()) {
    out << "  predicted:";
    for (const auto& [p, s] : r.predictions) out << "  P=" << p << " " << seconds(s) << " s";
    out << "\n";
  }
}

}  // namespace scaling_cli

using namespace scaling_cli;

void register_scaling(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ScalingOptions>();
  CLI::App* cmd = app.add_subcommand(
      "scaling",
      "Empirical scaling models of a program's computation, per code region, from OTF2 archives of runs at 3 or "
      "more rank counts (poems trace, poems direct --timeline; Extra-P's normal form, docs/scaling.md)");
  cmd->add_option("archives", o->request.archives, "The runs' archives (anchor files or directories)")->required();
  cmd->add_option("--predict", o->request.predict, "Rank counts to predict at (repeatable)");
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
    o->request.cpu_time = o->computation == "cpu";
    o->request.mean = o->metric == "mean";
    core::Store store(o->store);
    const core::ScalingReport report = core::fit_scaling_models(o->request, store);
    if (o->format == "json") {
      ctx.out << report.to_json().dump(2) << "\n";
      return;
    }
    ctx.out << "runs:";
    for (const auto& [path, ranks] : report.archives) ctx.out << " " << ranks;
    ctx.out << " ranks; computation per region, the " << (o->request.mean ? "ranks' mean" : "slowest rank's") << " ("
            << o->computation << " time)\n";
    if (report.rank_counts == 3)
      ctx.out << "three rank counts: models of one coefficient (c * P^i * log2(P)^j, or a constant); four or more "
                 "also try c0 + c1 * ...\n";
    ctx.out << "\n";
    print_region(report.total, o->request, ctx.out);
    for (const core::RegionModel& r : report.regions) {
      ctx.out << "\n";
      print_region(r, o->request, ctx.out);
    }
    if (report.regions.size() < report.regions_found)
      ctx.out << "\n(" << report.regions_found - report.regions.size()
              << " smaller regions not shown; --regions 0 shows all)\n";
    if (report.run_id)
      ctx.out << (report.already_stored ? "already stored as run " : "stored as run ") << *report.run_id << " in "
              << store.path() << "\n";
  });
}

}  // namespace poems::cli
