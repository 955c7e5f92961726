#include "poems/report/scaling.h"

#include <cstdio>
#include <ostream>

namespace poems::report {

namespace {

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", s);
  return text;
}

std::string errors_of(double fit, double cv, double r2) {
  char errors[160];
  std::snprintf(errors, sizeof errors, "fit %.2f %%, cross-validated %.2f %% (SMAPE), adjusted R^2 %.4f", fit, cv, r2);
  return errors;
}

// A region modelled in ranks and problem size.
void print_region2(const core::RegionModel& r, const core::ScalingRequest& request, std::ostream& out) {
  const std::string& pv = request.variable;
  const std::string& nv = request.size_variable;
  out << "  measured:";
  for (const scaling::Point2& p : r.points2)
    out << "  " << pv << "=" << p.p << "," << nv << "=" << p.n << " " << seconds(p.value) << " s";
  out << "\n";
  if (!r.model2) {
    out << "  no model: " << r.why_not << "\n";
    return;
  }
  const scaling::Model2& m = *r.model2;
  out << "  model: " << m.formula(pv, nv) << " s   [" << errors_of(m.fit_smape, m.cv_smape, m.adjusted_r2) << "]\n";
  out << "  PSL:   " << m.psl(pv, nv) << "\n";
  if (!r.predictions2.empty()) {
    out << "  predicted:";
    for (const scaling::Point2& p : r.predictions2)
      out << "  " << pv << "=" << p.p << "," << nv << "=" << p.n << " " << seconds(p.value) << " s";
    out << "\n";
  }
}

void print_region(const core::RegionModel& r, const core::ScalingRequest& request, std::ostream& out) {
  char share[32];
  std::snprintf(share, sizeof share, "%.1f %%", 100 * r.share);
  out << r.name << " (" << share << " of the largest run's computation)\n";
  if (!request.sizes.empty()) return print_region2(r, request, out);
  out << "  measured:";
  for (const scaling::Point& p : r.points) out << "  P=" << p.p << " " << seconds(p.value) << " s";
  out << "\n";
  if (!r.model) {
    out << "  no model: " << r.why_not << "\n";
    return;
  }
  const scaling::Model& m = *r.model;
  out << "  model: " << m.formula(request.variable) << " s   [" << errors_of(m.fit_smape, m.cv_smape, m.adjusted_r2)
      << "]\n";
  out << "  PSL:   " << m.psl(request.variable) << "\n";
  if (!r.predictions.empty()) {
    out << "  predicted:";
    for (const auto& [p, s] : r.predictions) out << "  P=" << p << " " << seconds(s) << " s";
    out << "\n";
  }
}

}  // namespace

void write_scaling_report(const core::ScalingReport& report, const core::ScalingRequest& request,
                          const std::string& format, const std::string& store_path, std::ostream& out) {
  if (format == "json") {
    out << report.to_json(request).dump(2) << "\n";
    return;
  }
  out << "runs:";
  for (const auto& [path, ranks] : report.archives) out << " " << ranks;
  out << " ranks; computation per region, the " << (request.mean ? "ranks' mean" : "slowest rank's") << " ("
      << (request.cpu_time ? "cpu" : "wall") << " time)\n";
  if (!request.sizes.empty())
    out << "models in " << request.variable << " (ranks) and " << request.size_variable
        << " (problem size): each one's terms from the runs in which the other is held, then combined\n";
  else if (report.rank_counts == 3)
    out << "three rank counts: models of one coefficient (c * P^i * log2(P)^j, or a constant); four or more "
           "also try c0 + c1 * ...\n";
  out << "\n";
  print_region(report.total, request, out);
  for (const core::RegionModel& r : report.regions) {
    out << "\n";
    print_region(r, request, out);
  }
  if (report.regions.size() < report.regions_found)
    out << "\n(" << report.regions_found - report.regions.size()
        << " smaller regions not shown; --regions 0 shows all)\n";
  if (report.run_id)
    out << (report.already_stored ? "already stored as run " : "stored as run ") << *report.run_id << " in "
        << store_path << "\n";
}

}  // namespace poems::report
