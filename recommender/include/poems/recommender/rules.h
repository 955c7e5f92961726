// Rules mined from the knowledge base (POEMS section 3.5, IFESTOS's
// knowledge discovery; docs/recommender.md, "Rules"): a small regression tree
// over the stored cases says which blocking factors win where, e.g.
// "it*jt <= 64 => best mk in 10..30; mk = 15 is within 5% of the best in 12
// of 13 cases". Each rule carries its support (the stored cases behind it) and its
// confidence (the fraction of them where its suggestion is near-best).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "poems/db/knowledge_base.h"

namespace poems::recommender {

// The features rules split on: local cells per k-plane it*jt, processors
// npe_i*npe_j, kt, and the latency in units of work L/Wg.
constexpr std::size_t kRuleFeatureCount = 4;
using RuleFeatures = std::array<double, kRuleFeatureCount>;
extern const std::array<const char*, kRuleFeatureCount> kRuleFeatureNames;  // "it*jt", "procs", "kt", "L/Wg"

// One stored problem instance: everything of a case but (mk, mmi), with the
// analytic time of every (mk, mmi) stored for it.
struct RuleCase {
  RuleFeatures features{};
  std::map<std::pair<std::int64_t, std::int64_t>, double> times;  // (mk, mmi) -> ns
};

struct MiningOptions {
  std::size_t min_values = 3;  // distinct mk (mmi: 2) a case needs to say which one wins
  std::size_t min_leaf = 3;    // cases per rule
  int depth = 2;               // conditions per rule at most
  double tolerance = 0.05;     // "near-best": within this fraction of the case's best time
};

struct MinedRules {
  std::vector<db::Rule> rules;  // problem_class, rule_text, support, confidence, data
  std::size_t cases = 0;        // stored cases (problem instances) mined
  std::size_t runs = 0;         // stored runs behind them
};

// The analytic closed-form runs of `model` for a specification and tool
// version, grouped into cases.
std::vector<RuleCase> load_rule_cases(const db::KnowledgeBase& kb, const std::string& model,
                                      const std::string& spec_hash, const std::string& tool_version);
MinedRules mine_rules(const std::vector<RuleCase>& cases, const std::string& problem_class,
                      const MiningOptions& options = {});
// Whether a mined rule's conditions hold for these features.
bool rule_applies(const db::Rule& rule, const RuleFeatures& features);
RuleFeatures rule_features(std::int64_t it_g, std::int64_t jt_g, std::int64_t kt, std::int64_t npe_i,
                           std::int64_t npe_j, double latency_ns, double wg_ns);

}  // namespace poems::recommender
