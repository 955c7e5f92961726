// The answer as JSON (what `poems recommend --format json` prints).
#include <cmath>

#include "poems/components/loggops.h"
#include "poems/core/difference.h"
#include "poems/recommender/question.h"

namespace poems::recommender {

namespace {

nlohmann::json value_json(double v) {
  return v == std::trunc(v) && std::fabs(v) < 9e15 ? nlohmann::json(static_cast<std::int64_t>(v)) : nlohmann::json(v);
}

nlohmann::json evidence_json(const Evidence& e) {
  nlohmann::json j = {{"paradigm", e.paradigm}, {"time_ns", e.time_ns}, {"source", e.fresh ? "evaluated" : "stored"}};
  j["run_id"] = e.run_id ? nlohmann::json(e.run_id) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json recommendation_json(const Recommendation& r) {
  nlohmann::json evidence = nlohmann::json::array();
  for (const Evidence& e : r.evidence) evidence.push_back(evidence_json(e));
  nlohmann::json detail = {{"distance", r.confidence.distance}, {"disagreement", r.confidence.disagreement}};
  detail["nearest_run"] = r.confidence.nearest_run ? nlohmann::json(*r.confidence.nearest_run) : nlohmann::json();
  detail["nearest_paradigm"] =
      r.confidence.nearest_run ? nlohmann::json(r.confidence.nearest_paradigm) : nlohmann::json();
  nlohmann::json j;
  for (std::size_t k = 0; k < r.names.size(); ++k) j[r.names[k]] = value_json(r.values[k]);
  j["time_ns"] = r.time_ns;
  if (r.simulated_ns) {
    j["simulated_ns"] = *r.simulated_ns;
    j["difference_pct"] = core::difference_pct(*r.simulated_ns, r.time_ns).value_or(0.0);
  }
  j["evidence"] = evidence;
  j["confidence"] = r.confidence.value;
  j["confidence_detail"] = detail;
  return j;
}

}  // namespace

nlohmann::json to_json(const Answer& r, const std::string& spec, const std::string& db_path, double wall_seconds) {
  const Problem& p = r.problem;
  nlohmann::json out;
  // The parameters the candidates do not choose.
  nlohmann::json parameters = nlohmann::json::object();
  for (std::size_t i = 0; i < p.parameters.size(); ++i)
    if (std::find(r.chosen.begin(), r.chosen.end(), p.parameters[i]) == r.chosen.end())
      parameters[p.parameters[i]] = value_json(p.values[i]);
  out["problem"] = {
      {"model", p.model},
      {"spec", spec},
      {"parameters", parameters},
      {"chosen", r.chosen},
      {"machine", p.machine_name},
      {"machine_parameters", components::machine_key_json(p.machine.params, p.machine.rendezvous_handshake)},
      {"wg_ns", p.machine.ns_per_work},
      {"method", p.method},
      {"procs", r.procs},
      {"grid", r.all_layouts}};
  nlohmann::json recs = nlohmann::json::array();
  for (const Recommendation& rec : r.recommendations) recs.push_back(recommendation_json(rec));
  out["recommendations"] = recs;
  out["candidates"] = r.stats.candidates;
  out["evidence"] = {{"reused", r.stats.reused},
                     {"evaluated", r.stats.evaluated},
                     {"stored", r.stats.stored},
                     {"simulated", r.stats.simulated}};
  out["evidence"]["db"] = db_path.empty() ? nlohmann::json() : nlohmann::json(db_path);
  out["wall_seconds"] = wall_seconds;
  out["ranked_by"] = ranking_name(r.ranking.by);
  if (r.ranking.by != Ranking::Analytic)
    out["ranking"] = {{"candidates", r.ranking.candidates},
                      {"simulated", r.ranking.simulated},
                      {"limit", r.ranking.limit},
                      {"complete", r.ranking.complete}};
  if (r.confirm) {
    nlohmann::json items = nlohmann::json::array();
    for (std::size_t i = 0; i < r.confirm->items.size(); ++i) {
      const Confirmation& c = r.confirm->items[i];
      nlohmann::json j;
      for (std::size_t k = 0; k < r.chosen.size() && k < c.values.size(); ++k) j[r.chosen[k]] = value_json(c.values[k]);
      j["analytic_ns"] = c.analytic_ns;
      j["simulated_ns"] = c.simulated_ns;
      j["difference_pct"] = c.difference_pct;
      j["simulation"] = evidence_json(c.simulation);
      items.push_back(j);
    }
    out["confirm"] = {{"paradigm", kSimulation},
                      {"items", items},
                      {"max_abs_difference_pct", r.confirm->max_abs_difference_pct},
                      {"same_order", r.confirm->same_order}};
  }
  if (r.operating_point) {
    const OperatingPoint& op = *r.operating_point;
    nlohmann::json points = nlohmann::json::array();
    const double first = op.points.front().best.time_ns;
    for (const ProcsPoint& pt : op.points) {
      nlohmann::json j = recommendation_json(pt.best);
      j["procs"] = pt.procs;
      j["speedup"] = first / pt.best.time_ns;
      points.push_back(j);
    }
    out["operating_point"] = {{"fraction", op.fraction}, {"points", points}};
    out["operating_point"]["knee_procs"] = op.knee ? nlohmann::json(op.points[*op.knee].procs) : nlohmann::json();
  }
  if (r.explained) {
    nlohmann::json rules = nlohmann::json::array();
    for (std::size_t i = 0; i < r.rules.rules.size(); ++i) {
      const db::Rule& rule = r.rules.rules[i];
      rules.push_back({{"rule", rule.rule_text},
                       {"support", rule.support},
                       {"confidence", rule.confidence},
                       {"applies", i < r.rule_applies.size() && r.rule_applies[i]},
                       {"data", rule.data}});
    }
    out["rules"] = rules;
    out["rule_cases"] = r.rules.cases;
    out["rule_runs"] = r.rules.runs;
  }
  return out;
}

}  // namespace poems::recommender
