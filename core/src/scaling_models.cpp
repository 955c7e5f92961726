// Empirical scaling models from recorded runs (scaling_models.h).
#include "poems/core/scaling_models.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "poems/core/error.h"
#include "poems/db/run_key.h"
#include "poems/trace/archive.h"
#include "poems/trace/otf2_read.h"
#include "poems/trace/regions.h"

namespace poems::core {

namespace {

nlohmann::json model2_json(const RegionModel& r, const ScalingRequest& request) {
  nlohmann::json j = {{"region", r.name}, {"share", r.share}};
  j["points"] = nlohmann::json::array();
  for (const scaling::Point2& p : r.points2)
    j["points"].push_back({{"ranks", p.p}, {"size", p.n}, {"seconds", p.value}});
  if (!r.model2) {
    j["why_not"] = r.why_not;
    return j;
  }
  const scaling::Model2& m = *r.model2;
  j["model"] = {{"formula", m.formula(request.variable, request.size_variable)},
                {"psl", m.psl(request.variable, request.size_variable)},
                {"c0", m.c0},
                {"cp", m.cp},
                {"cn", m.cn},
                {"cpn", m.cpn},
                {"ranks_term", {{"i", m.p_term.i}, {"j", m.p_term.j}}},
                {"size_term", {{"i", m.n_term.i}, {"j", m.n_term.j}}},
                {"fit_smape_pct", m.fit_smape},
                {"cv_smape_pct", m.cv_smape},
                {"adjusted_r2", m.adjusted_r2}};
  j["predictions"] = nlohmann::json::array();
  for (const scaling::Point2& p : r.predictions2)
    j["predictions"].push_back({{"ranks", p.p}, {"size", p.n}, {"seconds", p.value}});
  return j;
}

nlohmann::json model_json(const RegionModel& r, const ScalingRequest& request) {
  if (!request.sizes.empty()) return model2_json(r, request);
  nlohmann::json j = {{"region", r.name}, {"share", r.share}};
  j["points"] = nlohmann::json::array();
  for (const scaling::Point& p : r.points) j["points"].push_back({{"ranks", p.p}, {"seconds", p.value}});
  if (r.model) {
    const scaling::Model& m = *r.model;
    j["model"] = {{"formula", m.formula()},
                  {"psl", m.psl()},
                  {"c0", m.c0},
                  {"c1", m.c1},
                  {"i", m.term.i},
                  {"j", m.term.j},
                  {"offset", m.term.offset},
                  {"fit_smape_pct", m.fit_smape},
                  {"cv_smape_pct", m.cv_smape},
                  {"adjusted_r2", m.adjusted_r2}};
    j["predictions"] = nlohmann::json::array();
    for (const auto& [p, s] : r.predictions) j["predictions"].push_back({{"ranks", p}, {"seconds", s}});
  } else {
    j["why_not"] = r.why_not;
  }
  return j;
}

// Repeated runs at one rank count: their median (Extra-P's choice), so that
// one disturbed repetition does not move the model.
std::vector<scaling::Point> medians(const std::vector<scaling::Point>& points) {
  std::map<double, std::vector<double>> at;
  for (const scaling::Point& p : points) at[p.p].push_back(p.value);
  std::vector<scaling::Point> out;
  for (auto& [p, values] : at) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    out.push_back({p, n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2});
  }
  return out;
}

std::vector<scaling::Point2> medians(const std::vector<scaling::Point2>& points) {
  std::map<std::pair<double, double>, std::vector<double>> at;
  for (const scaling::Point2& p : points) at[{p.p, p.n}].push_back(p.value);
  std::vector<scaling::Point2> out;
  for (auto& [pn, values] : at) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    out.push_back({pn.first, pn.second, n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2});
  }
  return out;
}

void fit_region(RegionModel& r, const ScalingRequest& request) {
  if (!request.sizes.empty()) {
    r.points2 = medians(r.points2);
    try {
      r.model2 = scaling::fit2(r.points2);
      for (std::size_t k = 0; k < request.predict.size(); ++k) {
        const double p = request.predict[k], n = request.predict_sizes[k];
        r.predictions2.push_back({p, n, r.model2->at(p, n)});
      }
    } catch (const scaling::FitError& e) {
      r.why_not = e.what();
    }
    return;
  }
  r.points = medians(r.points);
  try {
    r.model = scaling::fit(r.points);
    for (double p : request.predict) r.predictions.emplace_back(p, r.model->at(p));
  } catch (const scaling::FitError& e) {
    r.why_not = e.what();
  }
}

}  // namespace

nlohmann::json ScalingReport::to_json(const ScalingRequest& request) const {
  nlohmann::json j;
  j["archives"] = nlohmann::json::array();
  for (const auto& [path, ranks] : archives) j["archives"].push_back({{"path", path}, {"ranks", ranks}});
  j["total"] = model_json(total, request);
  j["regions"] = nlohmann::json::array();
  for (const RegionModel& r : regions) j["regions"].push_back(model_json(r, request));
  if (!request.sizes.empty()) j["sizes"] = request.sizes;
  j["regions_found"] = regions_found;
  j["rank_counts"] = rank_counts;
  if (run_id) j["run_id"] = *run_id;
  return j;
}

ScalingReport fit_scaling_models(const ScalingRequest& request, Store& store) {
  if (request.archives.size() < 3)
    throw UsageError("scaling", "give archives of 3 or more runs at different rank counts (got " +
                                    std::to_string(request.archives.size()) + ")");
  for (double p : request.predict)
    if (!(p >= 1) || !std::isfinite(p))
      throw UsageError("--predict", "a rank count to predict at must be >= 1, not " + std::to_string(p));
  if (!request.sizes.empty()) {
    if (request.sizes.size() != request.archives.size())
      throw UsageError("--sizes", "give one problem size per archive: " + std::to_string(request.sizes.size()) +
                                      " sizes for " + std::to_string(request.archives.size()) + " archives");
    for (double n : request.sizes)
      if (!(n > 0) || !std::isfinite(n))
        throw UsageError("--sizes", "a problem size must be > 0, not " + std::to_string(n));
    if (request.predict_sizes.size() != request.predict.size())
      throw UsageError("--predict", "with --sizes, each prediction is RANKS:SIZE");
    for (double n : request.predict_sizes)
      if (!(n > 0) || !std::isfinite(n))
        throw UsageError("--predict", "a problem size to predict at must be > 0, not " + std::to_string(n));
  } else if (!request.predict_sizes.empty()) {
    throw UsageError("--predict", "RANKS:SIZE needs the archives' sizes (--sizes)");
  }
  trace::Window window;
  if (!request.window.empty()) {
    std::string error;
    if (!trace::parse_window(request.window, window, error)) throw UsageError("--window", error);
  }
  struct Run {
    std::string path, hash;
    std::uint32_t ranks = 0;
    double size = 0;
    std::vector<trace::RegionComputation> regions;
  };
  std::vector<Run> runs;
  for (std::size_t a = 0; a < request.archives.size(); ++a) {
    const std::string& archive = request.archives[a];
    Run run;
    if (!request.sizes.empty()) run.size = request.sizes[a];
    try {
      const trace::Trace t = trace::read_trace(archive);
      run.path = t.path;
      run.hash = trace::archive_hash(t.path);
      run.ranks = static_cast<std::uint32_t>(t.ranks.size());
      run.regions = trace::region_computation(t, window, request.cpu_time);
    } catch (const trace::TraceError& e) {
      throw InputError(e.what());
    }
    runs.push_back(std::move(run));
  }
  // By ranks, then size: the last run is the largest, whose regions are listed.
  std::stable_sort(runs.begin(), runs.end(),
                   [](const Run& a, const Run& b) { return std::tie(a.ranks, a.size) < std::tie(b.ranks, b.size); });
  const double seconds = 1e-12;
  auto metric = [&](const trace::RegionComputation& r) {
    return (request.mean ? r.mean() : static_cast<double>(r.max())) * seconds;
  };

  ScalingReport report;
  for (const Run& run : runs) report.archives.emplace_back(run.path, run.ranks);
  for (std::size_t k = 0; k < runs.size(); ++k) report.rank_counts += k == 0 || runs[k].ranks != runs[k - 1].ranks;
  // The whole computation: per rank, every region's.
  report.total.name = "all computation";
  for (const Run& run : runs) {
    trace::RegionComputation all;
    all.per_rank.assign(run.ranks, 0);
    for (const trace::RegionComputation& r : run.regions)
      for (std::size_t k = 0; k < r.per_rank.size(); ++k) all.per_rank[k] += r.per_rank[k];
    report.total.points.push_back({static_cast<double>(run.ranks), metric(all)});
    report.total.points2.push_back({static_cast<double>(run.ranks), run.size, metric(all)});
  }
  report.total.share = 1;
  fit_region(report.total, request);
  // The regions of the largest run, largest first, each with its value in every run.
  const Run& largest = runs.back();
  report.regions_found = largest.regions.size();
  double largest_total = 0;
  for (const trace::RegionComputation& r : largest.regions) largest_total += r.mean();
  const std::size_t shown =
      request.regions == 0 ? largest.regions.size() : std::min(request.regions, largest.regions.size());
  for (std::size_t k = 0; k < shown; ++k) {
    RegionModel m;
    m.name = largest.regions[k].name;
    m.share = largest_total > 0 ? largest.regions[k].mean() / largest_total : 0;
    std::string missing;
    for (const Run& run : runs) {
      auto it = std::find_if(run.regions.begin(), run.regions.end(),
                             [&](const trace::RegionComputation& r) { return r.name == m.name; });
      if (it == run.regions.end()) {
        missing = run.path;
        break;
      }
      m.points.push_back({static_cast<double>(run.ranks), metric(*it)});
      m.points2.push_back({static_cast<double>(run.ranks), run.size, metric(*it)});
    }
    if (!missing.empty())
      m.why_not = "the region is not in " + missing;
    else
      fit_region(m, request);
    report.regions.push_back(std::move(m));
  }

  // One run of scaling[PMNF], keyed by the archives' contents and the options.
  db::RunKey key;
  key.model = "scaling";
  key.evaluator = "scaling[PMNF]";
  std::string hashes;
  for (const Run& run : runs) hashes += run.hash;
  key.spec_hash = db::sha256_hex(hashes);
  key.tool_version = POEMS_VERSION;
  key.binding = {{"window", window.text()},
                 {"computation", request.cpu_time ? "cpu" : "wall"},
                 {"metric", request.mean ? "mean" : "max"},
                 {"regions", request.regions},
                 {"predict", request.predict}};
  if (!request.sizes.empty()) {
    // The sizes in the runs' order (by ranks), so that the same runs given in
    // another order are the same key.
    std::vector<double> sizes;
    for (const Run& run : runs) sizes.push_back(run.size);
    key.binding["sizes"] = sizes;
    key.binding["predict_sizes"] = request.predict_sizes;
  }
  RunRecord record(store, key);
  db::Result result;
  const double last = !request.sizes.empty()
                          ? (report.total.predictions2.empty() ? report.total.points2.back().value
                                                               : report.total.predictions2.back().value)
                          : (report.total.predictions.empty() ? report.total.points.back().value
                                                              : report.total.predictions.back().second);
  result.time_ns = last / seconds / 1000;
  result.extra = report.to_json(request);
  if (record.finish(result) == RunRecord::State::AlreadyStored) report.already_stored = true;
  if (store.enabled() && record.id() != 0) report.run_id = record.id();
  return report;
}

}  // namespace poems::core
