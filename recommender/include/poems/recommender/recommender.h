// The performance recommender (POEMS section 3.5, IFESTOS style;
// docs/recommender.md): ranks candidate values of a model's parameters by
// predicted time, evidence first: results stored in the knowledge base are
// used as they are, gaps are filled with the analytic evaluator (the
// model's closed form, else the task graph's critical path) and stored, so a
// repeated question evaluates nothing.
//
//   core::Session session(system, options, store);
//   Problem problem = problem_of(session);
//   Recommender r(store.kb(), problem);
//   std::vector<Recommendation> top = r.recommend(CandidateSet(dimensions), 5);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "poems/db/knowledge_base.h"
#include "poems/recommender/confidence.h"
#include "poems/recommender/problem.h"
#include "poems/recommender/problem_class.h"

namespace poems::recommender {

inline constexpr const char* kAnalytic = kAnalyticParadigm;
inline constexpr const char* kSimulation = kSimulationParadigm;

// One result behind a recommendation.
struct Evidence {
  db::RowId run_id = 0;  // 0: not stored (no knowledge base)
  std::string paradigm;  // the evaluator, e.g. "analytic[LogGP]"
  double time_ns = 0;
  bool fresh = false;  // evaluated by this query; else found in the knowledge base
};

struct Recommendation {
  std::vector<std::string> names;      // the chosen parameters
  std::vector<double> values;          // their values
  double time_ns = 0;                  // the analytic prediction (by which candidates are ranked by default)
  std::optional<double> simulated_ns;  // ranked by the simulator or by both (Ranking): the simulated time
  std::vector<Evidence> evidence;
  Confidence confidence;
  double value(const std::string& name) const;  // NaN when not chosen
};

// What a query cost: a warm query has evaluated == stored == 0.
struct QueryStats {
  std::size_t candidates = 0;  // ranked
  std::size_t reused = 0;      // analytic results found in the knowledge base
  std::size_t evaluated = 0;   // analytic evaluations made
  std::size_t stored = 0;      // runs recorded
  std::size_t simulated = 0;   // simulations made (confirm)
};

// --confirm: the simulator on the top candidates.
struct Confirmation {
  std::vector<double> values;
  double analytic_ns = 0, simulated_ns = 0;
  // core::difference_pct(simulated, analytic): percent of the analytic time,
  // as a study comparing analytic[LogGP] then simulation[MPI-Sim] gives it
  // (0 when the analytic time is 0).
  double difference_pct = 0;
  Evidence simulation;
};
struct ConfirmReport {
  std::vector<Confirmation> items;
  double max_abs_difference_pct = 0;
  bool same_order = true;  // the simulator ranks the confirmed candidates as the analytic evaluator does
};

// --by: what candidates are ranked by.
enum class Ranking {
  Analytic,    // analytic[LogGP] (the default)
  Simulation,  // simulation[MPI-Sim]
  Both,        // the larger of the two times: as fast as both paradigms say
};
// "analytic[LogGP]", "simulation[MPI-Sim]" or "both"; throws QueryError otherwise.
Ranking ranking_named(const std::string& name);
std::string ranking_name(Ranking by);
// At most this many candidates, or 4 x top if more, are simulated when
// ranking by the simulator (docs/recommender.md, "--by").
inline constexpr std::size_t kSimulatedCandidates = 16;
// A candidate whose analytic time is above the top-th ranked time so far by
// more than this fraction is not simulated: the critical path is a lower
// bound of the simulated time, and a closed form is within this of it on its
// validated models.
inline constexpr double kRankingMargin = 0.02;
// How a ranking by the simulator went.
struct SimulatedRanking {
  Ranking by = Ranking::Analytic;
  std::size_t candidates = 0;  // ranked by the analytic evaluator first
  std::size_t simulated = 0;   // of them, simulated (the analytic best first)
  std::size_t limit = 0;       // the most that would have been simulated
  // Every candidate not simulated has an analytic time above the top-th
  // ranked time by more than kRankingMargin (or none is left): the limit did not cut the ranking short.
  bool complete = false;
};

// --procs-range A..B: the best time per processor count and the knee.
struct ProcsRange {
  std::int64_t from = 1, to = 1;
  double fraction = 0.10;  // "improves by less than this fraction"
  bool all_layouts = false;
  std::vector<Dimension> others;  // the other parameters chosen at every count
};
struct ProcsPoint {
  std::int64_t procs = 0;
  Recommendation best;
};
struct OperatingPoint {
  std::vector<ProcsPoint> points;  // processor counts ascending
  double fraction = 0.10;
  // The optimal operating point: the first point past which the best time
  // within the range improves by less than `fraction` (docs/recommender.md).
  std::optional<std::size_t> knee;
};

// The processor counts of a range: A, B and the near-square counts n*n and
// n*(n+1) between them, thinned so that neighbours differ by at least 2^(1/8).
std::vector<std::int64_t> procs_ladder(std::int64_t from, std::int64_t to);
// The knee of best times over ascending processor counts: the smallest i with
// min(times[i..]) >= (1 - fraction) * times[i].
std::optional<std::size_t> knee(const std::vector<double>& times, double fraction);

// The candidates of a question: `dimensions` (if empty, the problem class's
// for the names not in `fixed`) and, with procs != 0, the process layouts of
// procs processes (every usable one with `all_layouts`). Throws QueryError.
CandidateSet candidates(const Problem& problem, std::vector<Dimension> dimensions, const std::set<std::string>& fixed,
                        std::int64_t procs, bool all_layouts);
// The process layouts of `procs` processes: the problem class's, or the one
// process-set parameter of a model that has one.
Dimension layouts(const Problem& problem, std::int64_t procs, bool all);

class Recommender {
 public:
  // `kb` may be null: then everything is evaluated and nothing stored.
  // Throws QueryError when the problem is invalid.
  Recommender(db::KnowledgeBase* kb, Problem problem);
  ~Recommender();
  Recommender(const Recommender&) = delete;
  Recommender& operator=(const Recommender&) = delete;

  // The `top` best candidates, fastest first (equal times: the problem
  // class's tie order, then the candidate order).
  std::vector<Recommendation> recommend(const CandidateSet& candidates, std::size_t top);
  // The `top` best candidates by `by`: by the simulator (or both), the
  // candidates are ranked by the analytic evaluator, then simulated in that
  // order (stored simulations found, fresh ones stored) until the next
  // one's analytic time is above the top-th ranked time by more than
  // kRankingMargin, or max(kSimulatedCandidates, 4 x top) are; the simulated
  // ones are ranked by `by` (ties: the analytic order). `report` tells how it went.
  std::vector<Recommendation> recommend(const CandidateSet& candidates, std::size_t top, Ranking by,
                                        SimulatedRanking* report = nullptr);
  // Simulates each recommendation (or finds its stored simulation), adds the
  // evidence and recomputes its confidence.
  ConfirmReport confirm(std::vector<Recommendation>& recommendations);
  OperatingPoint operating_point(const ProcsRange& range);
  // Evaluations at once: the gaps that cost more than handing them over (the
  // critical path of a task graph; not a closed form's microseconds) and the
  // confirming simulations run on `jobs` forked workers; the rows stored and
  // the answer are those of jobs = 1 (docs/recommender.md, "--jobs").
  void set_jobs(std::size_t jobs);

  const QueryStats& stats() const;
  const Problem& problem() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace poems::recommender
