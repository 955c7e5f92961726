// The knowledge-base side of the recommender: finding stored results for
// candidates, recording fresh ones, and the cross-checked cases behind the
// confidence. Private to poems_recommender.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "poems/db/knowledge_base.h"
#include "poems/recommender/confidence.h"
#include "poems/recommender/problem.h"
#include "poems/recommender/recommender.h"

namespace poems::recommender::detail {

struct AnalyticValue {
  double time_ns = std::numeric_limits<double>::quiet_NaN();
  db::RowId run_id = 0;
  bool fresh = false;
  bool known() const { return !std::isnan(time_ns); }
};

// The closed form's result at a candidate, as `poems analyze` stores it.
// Throws components::Sweep3DParameterError.
db::Result closed_form_result(const Problem& problem, const Candidate& c);

class EvidenceStore {
 public:
  EvidenceStore(db::KnowledgeBase* kb, const Problem& problem) : kb_(kb), problem_(problem) {}

  // The analytic time of every candidate of `set` (index as CandidateSet::at):
  // stored results first (the grids' studies, then any run with the same
  // binding), the gaps evaluated and recorded, every run linked to its grid's study.
  std::vector<AnalyticValue> analytic(const CandidateSet& set, QueryStats& stats);
  // Stored results of other paradigms for this specification, each with the
  // closed form at the same case (found, or evaluated and recorded). Loaded once.
  const std::vector<CrossCheck>& cross_checks(QueryStats& stats);
  // The candidate's stored simulation, or a fresh one (claimed, simulated, stored).
  Evidence simulation(const Candidate& c, QueryStats& stats);
  void add_cross_check(CrossCheck check) { checks_->push_back(std::move(check)); }

 private:
  void read_studies(const CandidateSet& set, std::vector<AnalyticValue>& out);
  void scan_runs(const CandidateSet& set, const std::vector<bool>& incomplete, std::vector<AnalyticValue>& out,
                 std::vector<std::vector<db::RowId>>& to_link);
  std::optional<CrossCheck> cross_check(db::RowId id, const std::string& evaluator, double time_ns,
                                        const nlohmann::json& binding, QueryStats& stats);

  // analytic_key(problem_, c), from a template built once (a fresh key costs
  // several microseconds of JSON building per candidate).
  db::RunKey analytic_key_of(const Candidate& c);

  db::KnowledgeBase* kb_;
  const Problem& problem_;
  std::optional<db::RunKey> analytic_template_;
  std::optional<std::vector<CrossCheck>> checks_;
};

}  // namespace poems::recommender::detail
