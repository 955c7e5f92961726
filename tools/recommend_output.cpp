#include "recommend_output.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "cli.h"
#include "poems/components/loggops.h"

namespace poems::cli {

namespace {

using recommender::Evidence;
using recommender::Recommendation;

std::string time_text(double ns) {
  char buf[48];
  if (ns >= 1e9)
    std::snprintf(buf, sizeof buf, "%.4f s", ns / 1e9);
  else if (ns >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3f us", ns / 1e3);
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string percent(double fraction) { return fixed(100 * fraction, 3) + "%"; }

nlohmann::json value_json(double v) {
  return v == std::trunc(v) && std::fabs(v) < 9e15 ? nlohmann::json(static_cast<std::int64_t>(v)) : nlohmann::json(v);
}

std::string value_text(double v) { return value_json(v).dump(); }

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
  j["evidence"] = evidence;
  j["confidence"] = r.confidence.value;
  j["confidence_detail"] = detail;
  return j;
}

std::string evidence_text(const Recommendation& r) {
  std::string out;
  for (const Evidence& e : r.evidence) {
    if (!out.empty()) out += ", ";
    out += e.paradigm + (e.run_id ? " run " + std::to_string(e.run_id) : std::string(" (not stored)"));
    if (e.fresh) out += " (new)";
  }
  return out;
}

std::vector<std::string> value_cells(const std::vector<double>& values) {
  std::vector<std::string> out;
  for (double v : values) out.push_back(value_text(v));
  return out;
}

}  // namespace

nlohmann::json report_json(const RecommendReport& r) {
  const recommender::Problem& p = *r.problem;
  nlohmann::json out;
  // The parameters the candidates do not choose.
  nlohmann::json parameters = nlohmann::json::object();
  for (std::size_t i = 0; i < p.parameters.size(); ++i)
    if (std::find(r.chosen.begin(), r.chosen.end(), p.parameters[i]) == r.chosen.end())
      parameters[p.parameters[i]] = value_json(p.values[i]);
  out["problem"] = {
      {"model", p.model},
      {"spec", r.spec},
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
  out["evidence"]["db"] = r.db_path.empty() ? nlohmann::json() : nlohmann::json(r.db_path);
  out["wall_seconds"] = r.wall_seconds;
  if (r.confirm) {
    nlohmann::json items = nlohmann::json::array();
    for (std::size_t i = 0; i < r.confirm->items.size(); ++i) {
      const recommender::Confirmation& c = r.confirm->items[i];
      nlohmann::json j;
      for (std::size_t k = 0; k < r.chosen.size() && k < c.values.size(); ++k) j[r.chosen[k]] = value_json(c.values[k]);
      j["analytic_ns"] = c.analytic_ns;
      j["simulated_ns"] = c.simulated_ns;
      j["difference"] = c.difference;
      j["simulation"] = evidence_json(c.simulation);
      items.push_back(j);
    }
    out["confirm"] = {{"paradigm", recommender::kSimulation},
                      {"items", items},
                      {"max_abs_difference", r.confirm->max_abs_difference},
                      {"same_order", r.confirm->same_order}};
  }
  if (r.operating_point) {
    const recommender::OperatingPoint& op = *r.operating_point;
    nlohmann::json points = nlohmann::json::array();
    const double first = op.points.front().best.time_ns;
    for (const recommender::ProcsPoint& pt : op.points) {
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

std::string report_text(const RecommendReport& r) {
  const recommender::Problem& p = *r.problem;
  std::ostringstream out;
  out << p.model;
  for (std::size_t i = 0; i < p.parameters.size(); ++i)
    if (std::find(r.chosen.begin(), r.chosen.end(), p.parameters[i]) == r.chosen.end())
      out << (i ? ", " : " ") << p.parameters[i] << "=" << value_text(p.values[i]);
  out << " on " << (p.machine_name.empty() ? "command-line parameters" : p.machine_name)
      << ", Wg=" << value_text(p.machine.ns_per_work) << "ns";
  if (!r.operating_point && r.procs)
    out << ", " << r.procs << " processors" << (r.all_layouts ? " (every layout)" : "");
  out << ": " << r.stats.candidates << " candidates (" << p.method << ")\n";
  out << "evidence: " << r.stats.reused << " stored results reused, " << r.stats.evaluated << " evaluated, "
      << r.stats.stored << " stored";
  if (r.stats.simulated) out << ", " << r.stats.simulated << " simulated";
  out << (r.db_path.empty() ? " (no knowledge base)" : " in " + r.db_path) << "; " << fixed(r.wall_seconds, 3)
      << " s\n\n";

  if (r.operating_point) {
    const recommender::OperatingPoint& op = *r.operating_point;
    std::vector<std::string> header{"procs"};
    header.insert(header.end(), r.chosen.begin(), r.chosen.end());
    header.insert(header.end(), {"time", "speedup", ""});
    TextTable table = {header};
    const double first = op.points.front().best.time_ns;
    for (std::size_t i = 0; i < op.points.size(); ++i) {
      const recommender::ProcsPoint& pt = op.points[i];
      std::vector<std::string> row{std::to_string(pt.procs)};
      for (const std::string& v : value_cells(pt.best.values)) row.push_back(v);
      row.insert(row.end(), {time_text(pt.best.time_ns), fixed(first / pt.best.time_ns, 2),
                             op.knee && *op.knee == i ? "<- knee" : ""});
      table.push_back(row);
    }
    print_table(table, out);
    if (op.knee) {
      const recommender::ProcsPoint& k = op.points[*op.knee];
      out << "\noptimal operating point: " << k.procs << " processors";
      if (*op.knee + 1 == op.points.size())
        out << " (the end of the range: below it, more processors still gain " << percent(op.fraction) << " or more)\n";
      else
        out << ": beyond it the best time in the range improves by less than " << percent(op.fraction) << "\n";
    }
  } else {
    std::vector<std::string> header{"rank"};
    header.insert(header.end(), r.chosen.begin(), r.chosen.end());
    header.insert(header.end(), {"time", "confidence", "evidence"});
    TextTable table = {header};
    for (std::size_t i = 0; i < r.recommendations.size(); ++i) {
      const Recommendation& rec = r.recommendations[i];
      std::vector<std::string> row{std::to_string(i + 1)};
      for (const std::string& v : value_cells(rec.values)) row.push_back(v);
      row.insert(row.end(), {time_text(rec.time_ns), fixed(rec.confidence.value, 2), evidence_text(rec)});
      table.push_back(row);
    }
    print_table(table, out);
    if (!r.recommendations.empty()) {
      const recommender::Confidence& conf = r.recommendations.front().confidence;
      if (conf.nearest_run)
        out << "\nconfidence of rank 1: nearest cross-checked case is run " << *conf.nearest_run << " ("
            << conf.nearest_paradigm << ") at distance " << fixed(conf.distance, 2) << ", disagreement "
            << percent(conf.disagreement) << "\n";
      else
        out << "\nconfidence 0.50: analytic only (no case of this specification was evaluated by a second "
               "paradigm; try --confirm)\n";
    }
  }
  if (r.confirm) {
    out << "\nconfirm with " << recommender::kSimulation << ":\n";
    std::vector<std::string> header = r.chosen;
    header.insert(header.end(), {"analytic", "simulated", "difference", "run"});
    TextTable table = {header};
    for (const recommender::Confirmation& cf : r.confirm->items) {
      std::vector<std::string> row = value_cells(cf.values);
      row.insert(
          row.end(),
          {time_text(cf.analytic_ns), time_text(cf.simulated_ns),
           (cf.difference >= 0 ? "+" : "") + percent(cf.difference),
           cf.simulation.run_id ? std::to_string(cf.simulation.run_id) + (cf.simulation.fresh ? " (new)" : "") : "-"});
      table.push_back(row);
    }
    print_table(table, out);
    out << "agreement: largest difference " << percent(r.confirm->max_abs_difference) << "; the simulator ranks them "
        << (r.confirm->same_order ? "in the same order" : "in a different order") << "\n";
  }
  if (r.explained) {
    out << "\nrules mined from " << r.rules.cases << " stored cases (" << r.rules.runs << " runs):\n";
    if (r.rules.rules.empty())
      out << "  none yet: a rule needs at least 3 cases with 3 or more values of "
          << (r.rule_space.targets.empty() ? std::string("a chosen parameter") : r.rule_space.targets.front())
          << " each (ask about more problems, layouts or --procs-range)\n";
    for (std::size_t i = 0; i < r.rules.rules.size(); ++i) {
      const db::Rule& rule = r.rules.rules[i];
      out << (i < r.rule_applies.size() && r.rule_applies[i] ? "* " : "  ") << rule.rule_text << "  [support "
          << rule.support << ", confidence " << fixed(rule.confidence, 2) << "]\n";
    }
    if (!r.rules.rules.empty()) out << "(* applies to the first answer)\n";
  }
  return out.str();
}

}  // namespace poems::cli
