// The knowledge-base side of the recommender: evaluating candidates with the
// analytic evaluator, finding stored results for them, recording fresh ones,
// and the cross-checked cases behind the confidence. Private to
// poems_recommender.
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "poems/core/evaluators.h"
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

// analytic[LogGP] on the problem's bindings: the model's closed form, bound
// to its parameters once (a few hundred operations per candidate), or the
// task graph's critical path through the evaluation core.
class AnalyticEvaluator {
 public:
  explicit AnalyticEvaluator(const Problem& problem);
  ~AnalyticEvaluator();
  // `values`: every model parameter; `details` asks for the figures a record
  // keeps. Throws QueryError for a parameter outside the model's range.
  core::Outcome evaluate(const std::vector<double>& values, const components::ClosedFormMachine& machine,
                         bool details) const;

 private:
  const Problem& problem_;
  std::unique_ptr<components::BoundClosedForm> form_;
};

class EvidenceStore {
 public:
  EvidenceStore(db::KnowledgeBase* kb, const Problem& problem);
  // How many forked workers may fill the gaps at once (--jobs; 1: this process alone).
  void set_jobs(std::size_t jobs) { jobs_ = jobs < 1 ? 1 : jobs; }

  // The analytic time of every candidate of `set` (index as CandidateSet::at):
  // stored results first (the groups' studies, then any run with the same
  // binding), the gaps evaluated and recorded, every run linked to its group's study.
  std::vector<AnalyticValue> analytic(const CandidateSet& set, QueryStats& stats);
  // Stored results of other paradigms for this specification, each with the
  // analytic result at the same case (found, or evaluated and recorded). Loaded once.
  const std::vector<CrossCheck>& cross_checks(QueryStats& stats);
  // The candidate's stored simulation, or a fresh one (claimed, simulated, stored).
  Evidence simulation(const std::vector<std::string>& names, std::span<const double> c, QueryStats& stats);
  // simulation() of each case, in order; with jobs > 1 on forked workers,
  // claimed and stored by this process in the same order (the same rows).
  std::vector<Evidence> simulations(const std::vector<std::string>& names,
                                    const std::vector<std::vector<double>>& cases, QueryStats& stats);
  void add_cross_check(CrossCheck check) { checks_->push_back(std::move(check)); }
  // The confidence features of a candidate.
  Features features(const std::vector<std::string>& names, std::span<const double> c) const;
  const AnalyticEvaluator& evaluator() const { return evaluator_; }

 private:
  struct Groups;
  struct Evaluated {
    core::Outcome outcome;
    std::int64_t wall_ns = 0;
  };
  // Candidate `i` of `set` by the analytic evaluator; throws QueryError naming it.
  // `candidate` and `values` are scratch space.
  Evaluated evaluate_candidate(const CandidateSet& set, std::size_t i, std::vector<double>& candidate,
                               std::vector<double>& values) const;
  core::Outcome simulate(const std::vector<std::string>& names, std::span<const double> c) const;
  std::string candidate_text(const CandidateSet& set, std::size_t i) const;
  // Records group `g`'s evaluated gaps (in candidate order) and links its runs to its study, in one transaction.
  void store_group(const CandidateSet& set, const Groups& groups, std::size_t g, const std::vector<std::size_t>& gaps,
                   const std::vector<Evaluated>& evaluated, const std::vector<db::RowId>& to_link,
                   std::vector<AnalyticValue>& out, QueryStats& stats);
  // The gaps evaluated on forked workers; stored as store_group stores them, group by group in order.
  void fill_in_parallel(const CandidateSet& set, const Groups& groups,
                        const std::vector<std::vector<std::size_t>>& gaps,
                        const std::vector<std::vector<db::RowId>>& to_link, std::vector<AnalyticValue>& out,
                        QueryStats& stats);
  void read_studies(const Groups& groups, std::vector<AnalyticValue>& out);
  void scan_runs(const CandidateSet& set, const Groups& groups, const std::vector<bool>& incomplete,
                 std::vector<AnalyticValue>& out, std::vector<std::vector<db::RowId>>& to_link);
  std::optional<CrossCheck> cross_check(db::RowId id, const std::string& evaluator, double time_ns,
                                        const nlohmann::json& binding, QueryStats& stats);

  db::KnowledgeBase* kb_;
  const Problem& problem_;
  AnalyticEvaluator evaluator_;
  std::optional<std::vector<CrossCheck>> checks_;
  std::size_t jobs_ = 1;
};

}  // namespace poems::recommender::detail
