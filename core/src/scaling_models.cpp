// Empirical scaling models from recorded runs (scaling_models.h).
#include "poems/core/scaling_models.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "poems/core/error.h"
#include "poems/db/run_key.h"
#include "poems/trace/archive.h"
#include "poems/trace/otf2_read.h"
#include "poems/trace/regions.h"

namespace poems::core {

namespace {

nlohmann::json model_json(const RegionModel& r) {
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

void fit_region(RegionModel& r, const ScalingRequest& request) {
  r.points = medians(r.points);
  try {
    r.model = scaling::fit(r.points);
    for (double p : request.predict) r.predictions.emplace_back(p, r.model->at(p));
  } catch (const scaling::FitError& e) {
    r.why_not = e.what();
  }
}

}  // namespace

nlohmann::json ScalingReport::to_json() const {
  nlohmann::json j;
  j["archives"] = nlohmann::json::array();
  for (const auto& [path, ranks] : archives) j["archives"].push_back({{"path", path}, {"ranks", ranks}});
  j["total"] = model_json(total);
  j["regions"] = nlohmann::json::array();
  for (const RegionModel& r : regions) j["regions"].push_back(model_json(r));
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
  trace::Window window;
  if (!request.window.empty()) {
    std::string error;
    if (!trace::parse_window(request.window, window, error)) throw UsageError("--window", error);
  }
  struct Run {
    std::string path, hash;
    std::uint32_t ranks = 0;
    std::vector<trace::RegionComputation> regions;
  };
  std::vector<Run> runs;
  for (const std::string& archive : request.archives) {
    Run run;
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
  std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.ranks < b.ranks; });
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
  RunRecord record(store, key);
  db::Result result;
  result.time_ns =
      (report.total.predictions.empty() ? report.total.points.back().value : report.total.predictions.back().second) /
      seconds / 1000;
  result.extra = report.to_json();
  if (record.finish(result) == RunRecord::State::AlreadyStored) report.already_stored = true;
  if (store.enabled() && record.id() != 0) report.run_id = record.id();
  return report;
}

}  // namespace poems::core
