#include "poems/report/recommendation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "poems/components/loggops.h"
#include "poems/core/difference.h"
#include "poems/report/text_table.h"

namespace poems::report {

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

// A difference between paradigms (core::difference_pct), signed.
std::string signed_pct(double pct) { return (pct >= 0 ? "+" : "") + fixed(pct, 3) + "%"; }

// How a ranking by the simulator went, under the evidence line.
std::string ranking_text(const recommender::SimulatedRanking& how, std::size_t top) {
  std::ostringstream out;
  out << "ranked by "
      << (how.by == recommender::Ranking::Both ? std::string("the larger of the ") + recommender::kAnalytic +
                                                     " and the " + recommender::kSimulation + " time"
                                               : std::string(recommender::kSimulation))
      << ": the analytic best " << how.simulated << " of " << how.candidates << " candidates simulated";
  if (how.simulated == how.candidates)
    out << " (all of them)";
  else if (how.complete)
    out << " (each other one's analytic time is more than " << fixed(100 * recommender::kRankingMargin, 0)
        << "% above the rank-" << top << " time)";
  else
    out << " (at most " << how.limit << ": a candidate not simulated might rank higher)";
  return out.str() + "\n";
}

std::string value_text(double v) {
  return v == std::trunc(v) && std::fabs(v) < 9e15 ? std::to_string(static_cast<std::int64_t>(v))
                                                   : nlohmann::json(v).dump();
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

std::string recommendation_text(const RecommendReport& report) {
  const recommender::Answer& r = report.answer;
  const recommender::Problem& p = r.problem;
  std::ostringstream out;
  out << p.model;
  const char* separator = " ";
  for (std::size_t i = 0; i < p.parameters.size(); ++i)
    if (std::find(r.chosen.begin(), r.chosen.end(), p.parameters[i]) == r.chosen.end()) {
      out << separator << p.parameters[i] << "=" << value_text(p.values[i]);
      separator = ", ";
    }
  out << " on " << (p.machine_name.empty() ? "command-line parameters" : p.machine_name)
      << ", Wg=" << value_text(p.machine.ns_per_work) << "ns";
  if (!r.operating_point && r.procs)
    out << ", " << r.procs << " processors" << (r.all_layouts ? " (every layout)" : "");
  out << ": " << r.stats.candidates << " candidates (" << p.method << ")\n";
  out << "evidence: " << r.stats.reused << " stored results reused, " << r.stats.evaluated << " evaluated, "
      << r.stats.stored << " stored";
  if (r.stats.simulated) out << ", " << r.stats.simulated << " simulated";
  out << (report.db_path.empty() ? " (no knowledge base)" : " in " + report.db_path) << "; "
      << fixed(report.wall_seconds, 3) << " s\n";
  if (r.ranking.by != recommender::Ranking::Analytic) out << ranking_text(r.ranking, r.recommendations.size());
  out << '\n';

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
  } else if (r.ranking.by != recommender::Ranking::Analytic) {
    // Both times and their difference (core::difference_pct, the analytic time the reference).
    std::vector<std::string> header{"rank"};
    header.insert(header.end(), r.chosen.begin(), r.chosen.end());
    header.insert(header.end(), {"simulated", "analytic", "difference", "confidence", "evidence"});
    TextTable table = {header};
    bool flagged = false;
    for (std::size_t i = 0; i < r.recommendations.size(); ++i) {
      const Recommendation& rec = r.recommendations[i];
      std::vector<std::string> row{std::to_string(i + 1)};
      for (const std::string& v : value_cells(rec.values)) row.push_back(v);
      const double simulated = rec.simulated_ns.value_or(0);
      const double d = core::difference_pct(simulated, rec.time_ns).value_or(0.0);
      const bool disagrees = core::disagrees(d);
      flagged = flagged || disagrees;
      row.insert(row.end(), {time_text(simulated), time_text(rec.time_ns), signed_pct(d) + (disagrees ? " *" : ""),
                             fixed(rec.confidence.value, 2), evidence_text(rec)});
      table.push_back(row);
    }
    print_table(table, out);
    if (flagged)
      out << "* the paradigms differ by more than " << fixed(core::kDisagreePct, 0)
          << "% (difference = (simulated - analytic) / analytic)\n";
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
  }
  if (!r.operating_point && !r.recommendations.empty()) {
    const recommender::Confidence& conf = r.recommendations.front().confidence;
    if (conf.nearest_run)
      out << "\nconfidence of rank 1: nearest cross-checked case is run " << *conf.nearest_run << " ("
          << conf.nearest_paradigm << ") at distance " << fixed(conf.distance, 2) << ", disagreement "
          << percent(conf.disagreement) << "\n";
    else
      out << "\nconfidence 0.50: analytic only (no case of this specification was evaluated by a second "
             "paradigm; try --confirm)\n";
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
          {time_text(cf.analytic_ns), time_text(cf.simulated_ns), signed_pct(cf.difference_pct),
           cf.simulation.run_id ? std::to_string(cf.simulation.run_id) + (cf.simulation.fresh ? " (new)" : "") : "-"});
      table.push_back(row);
    }
    print_table(table, out);
    out << "agreement: largest difference " << fixed(r.confirm->max_abs_difference_pct, 3)
        << "% (simulated vs analytic); the simulator ranks them "
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

}  // namespace poems::report
