// Rules mined from the knowledge base (POEMS section 3.5, IFESTOS's
// knowledge discovery; docs/recommender.md, "Rules"): a small regression tree
// over the stored cases says which values of the chosen parameters win
// where, e.g. "it*jt <= 64 => best mk in 10..30; mk = 15 is within 5% of the
// best in 12 of 13 cases". Each rule carries its support (the stored cases
// behind it) and its confidence (the fraction of them where its suggestion is
// near-best). The parameters rules are about and the features they split on
// are the problem class's (e.g. blocking factors; problem size, procs, L/Wg), or
// for a model without one the chosen parameters and every other parameter.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "poems/db/knowledge_base.h"
#include "poems/recommender/problem.h"

namespace poems::recommender {

// What rules are about (targets, one or two) and what they split on.
struct RuleSpace {
  std::vector<std::string> targets;
  std::vector<std::string> feature_names;
};
// The problem class's, or: the first two one-parameter dimensions of the
// candidates, and every other parameter of the model plus L/Wg.
RuleSpace rule_space(const Problem& problem, const CandidateSet& candidates);
// The features of a case (the problem class's rule features, or the default).
std::vector<double> rule_features(const Problem& problem, const RuleSpace& space, const Binding& binding,
                                  const components::ClosedFormMachine& machine);

// One stored problem instance: everything of a case but the targets, with
// the analytic time of every stored combination of the targets.
struct RuleCase {
  std::vector<double> features;
  std::map<std::vector<std::int64_t>, double> times;  // target values -> ns
};

struct MiningOptions {
  std::size_t min_values = 3;  // distinct values of the first target a case needs to say which wins (others: 2)
  std::size_t min_leaf = 3;    // cases per rule
  int depth = 2;               // conditions per rule at most
  double tolerance = 0.05;     // "near-best": within this fraction of the case's best time
};

struct MinedRules {
  std::vector<db::Rule> rules;  // problem_class, rule_text, support, confidence, data
  std::size_t cases = 0;        // stored cases (problem instances) mined
  std::size_t runs = 0;         // stored runs behind them
};

// The analytic runs of the problem's model, specification and tool version
// stored with the problem's method, grouped into cases.
std::vector<RuleCase> load_rule_cases(const db::KnowledgeBase& kb, const Problem& problem, const RuleSpace& space);
MinedRules mine_rules(const std::vector<RuleCase>& cases, const RuleSpace& space, const std::string& problem_class,
                      const MiningOptions& options = {});
// Whether a mined rule's conditions hold for these features.
bool rule_applies(const db::Rule& rule, const RuleSpace& space, const std::vector<double>& features);

}  // namespace poems::recommender
