// Mined rules, the confidence formula and the optimal operating point.
#include <gtest/gtest.h>

#include <cmath>

#include "poems/db/knowledge_base.h"
#include "poems/recommender/problem_class.h"
#include "poems/recommender/rules.h"
#include "recommender_test_util.h"

using namespace poems;
using namespace poems::recommender;
using namespace poems::recommender::testing;

namespace {

// Sweep3D's rule space (examples/sweep3d registers it).
const RuleSpace kSweep3D{{"mk", "mmi"}, {"it*jt", "procs", "kt", "L/Wg"}};

// A case whose best mk is `best` (times grow with |log2(mk / best)|), over mk
// in {1, 2, 5, 10, 20} and mmi in {1, 3} (mmi = 3 is 10% slower).
RuleCase synthetic(double cells, std::int64_t best) {
  RuleCase c;
  c.features = {cells, 100, 255, 88};
  for (std::int64_t mk : {1, 2, 5, 10, 20})
    for (std::int64_t mmi : {1, 3})
      c.times[{mk, mmi}] = (1 + std::fabs(std::log2(double(mk) / double(best)))) * (mmi == 3 ? 1.1 : 1.0);
  return c;
}

}  // namespace

TEST(Rules, AThresholdOnItJtSeparatesTwoRegimes) {
  std::vector<RuleCase> cases;
  for (double cells : {16, 25, 36, 49, 64, 81}) cases.push_back(synthetic(cells, 10));
  for (double cells : {100, 144, 196, 256, 324, 400}) cases.push_back(synthetic(cells, 2));
  const MinedRules mined = mine_rules(cases, kSweep3D, "Sweep3D");
  EXPECT_EQ(mined.cases, 12u);
  EXPECT_EQ(mined.runs, 120u);
  std::vector<const db::Rule*> mk_rules;
  for (const db::Rule& r : mined.rules)
    if (r.data["target"] == "mk") mk_rules.push_back(&r);
  ASSERT_EQ(mk_rules.size(), 2u);
  EXPECT_EQ(mk_rules[0]->rule_text, "it*jt <= 81 => best mk = 10; mk = 10 is within 5% of the best in 6 of 6 cases");
  EXPECT_EQ(mk_rules[0]->support, 6);
  EXPECT_EQ(mk_rules[0]->confidence, 1.0);
  EXPECT_EQ(mk_rules[1]->rule_text, "it*jt > 81 => best mk = 2; mk = 2 is within 5% of the best in 6 of 6 cases");
  EXPECT_EQ(mk_rules[1]->data["runs"], 60);
  EXPECT_EQ(mk_rules[0]->problem_class, "Sweep3D");
  // mmi = 1 always wins, and mmi is never within 1% at the best mk: no split, one rule each.
  for (const db::Rule& r : mined.rules) {
    if (r.data["target"] == "mmi") {
      EXPECT_EQ(r.rule_text, "always => best mmi = 1; mmi = 1 is within 5% of the best in 12 of 12 cases");
    }
    if (r.data["target"] == "mmi-spread") {
      EXPECT_EQ(r.support, 12);
      EXPECT_EQ(r.confidence, 0.0);
    }
  }
  EXPECT_TRUE(rule_applies(*mk_rules[0], kSweep3D, {64, 1, 1, 1}));
  EXPECT_FALSE(rule_applies(*mk_rules[0], kSweep3D, {100, 1, 1, 1}));
  EXPECT_TRUE(rule_applies(*mk_rules[1], kSweep3D, {100, 1, 1, 1}));
}

TEST(Rules, ConfidenceCountsCasesWhereTheSuggestionIsNearBest) {
  std::vector<RuleCase> cases;
  for (std::int64_t best : {5, 5, 10, 10, 10, 20}) cases.push_back(synthetic(50, best));
  const MinedRules mined = mine_rules(cases, kSweep3D, "Sweep3D");
  const db::Rule& mk = mined.rules.front();
  ASSERT_EQ(mk.data["target"], "mk");
  EXPECT_EQ(mk.data["suggest"], 10);  // the (lower) median of 5 5 10 10 10 20
  EXPECT_EQ(mk.data["range"], nlohmann::json::array({5, 20}));
  // mk = 10 costs 1 + |log2(10/5)| = 2x the best where 5 or 20 wins: 3 of 6 near-best.
  EXPECT_EQ(mk.data["hits"], 3);
  EXPECT_EQ(mk.confidence, 0.5);
  EXPECT_EQ(mk.support, 6);
}

TEST(Rules, MinedFromTheKnowledgeBaseWithRealSupport) {
  ScratchDir dir;
  db::KnowledgeBase kb(dir.file());
  const Problem p = problem(96, 96, 16);
  Recommender r(&kb, p);
  ProcsRange range;
  range.from = 4;
  range.to = 1024;
  range.others = candidates(p, {}, {}, 0, false).dimensions();
  const OperatingPoint op = r.operating_point(range);
  const RuleSpace space = rule_space(p, CandidateSet(range.others));
  EXPECT_EQ(space.targets, kSweep3D.targets);
  EXPECT_EQ(space.feature_names, kSweep3D.feature_names);
  const std::vector<RuleCase> cases = load_rule_cases(kb, p, space);
  EXPECT_EQ(cases.size(), op.points.size());  // one case per grid asked about
  MinedRules mined = mine_rules(cases, kSweep3D, "Sweep3D");
  EXPECT_EQ(mined.runs, r.stats().candidates);
  EXPECT_EQ(mined.runs, kb.runs().size());
  std::int64_t mk_support = 0;
  for (const db::Rule& rule : mined.rules) {
    EXPECT_GE(rule.support, 3);
    EXPECT_GE(rule.confidence, 0.0);
    EXPECT_LE(rule.confidence, 1.0);
    if (rule.data["target"] == "mk") {
      mk_support += rule.support;
      // The rule's range holds the best mk of every case it covers.
      for (const RuleCase& c : cases)
        if (rule_applies(rule, space, c.features)) {
          auto best = std::min_element(c.times.begin(), c.times.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
          EXPECT_GE(best->first[0], rule.data["range"][0].get<std::int64_t>());
          EXPECT_LE(best->first[0], rule.data["range"][1].get<std::int64_t>());
        }
    }
  }
  EXPECT_EQ(mk_support, static_cast<std::int64_t>(cases.size()));  // the leaves partition the cases
  kb.replace_rules("Sweep3D", mined.rules);
  kb.replace_rules("Sweep3D", mined.rules);  // replaced, not added
  EXPECT_EQ(kb.rules("Sweep3D").size(), mined.rules.size());
}

TEST(Confidence, Formula) {
  // The Sweep3D features of a case (per-process it and jt, kt, mk, mmi, mm,
  // the grid, the machine), as the example registers them.
  const Problem p = problem(200, 200, 100, "Odin", 6, 12);
  const ProblemClass* sweep3d = find_problem_class("Sweep3D");
  ASSERT_NE(sweep3d, nullptr);
  auto features = [&](double mk) {
    std::vector<double> values;
    apply(p, {"npe_i", "npe_j", "mk", "mmi"}, std::vector<double>{2, 2, mk, 2}, values);
    return sweep3d->features({&p.parameters, values}, p.machine);
  };
  const Features here = features(10);
  ASSERT_EQ(here.size(), 16u);
  EXPECT_DOUBLE_EQ(here[0], std::log2(101.0));  // it = 200 / 2
  EXPECT_EQ(confidence(here, {}).value, 0.5);
  CrossCheck same;
  same.features = here;
  same.run_id = 7;
  same.paradigm = "simulation[MPI-Sim]";
  same.analytic_ns = 100;
  same.other_ns = 100;
  EXPECT_EQ(confidence(here, {same}).value, 1.0);
  same.other_ns = 105;  // 5% of the analytic time apart: half the agreement
  Confidence c = confidence(here, {same});
  EXPECT_DOUBLE_EQ(c.value, 0.75);
  EXPECT_EQ(*c.nearest_run, 7);
  EXPECT_DOUBLE_EQ(c.disagreement, 0.05);
  // The analytic time is the reference (core::difference_pct): 100 against 105 is 100/105 - 1.
  same.other_ns = 100;
  same.analytic_ns = 105;
  EXPECT_DOUBLE_EQ(confidence(here, {same}).disagreement, 5.0 / 105);
  same.analytic_ns = 120;  // beyond the tolerance: no support
  EXPECT_EQ(confidence(here, {same}).value, 0.5);
  // mk 10 -> 12, all else equal: D = log2(1 + 12) - log2(1 + 10).
  CrossCheck far = same;
  far.analytic_ns = far.other_ns = 100;
  far.features = features(12);
  const double d = std::log2(13.0) - std::log2(11.0);
  EXPECT_DOUBLE_EQ(distance(here, far.features), d);
  EXPECT_DOUBLE_EQ(confidence(here, {far}).value, 0.5 + 0.5 * std::exp(-d / kDistanceScale));
  // The nearest case decides, even when a farther one agrees better.
  CrossCheck near_bad = same;
  near_bad.analytic_ns = 105;
  near_bad.run_id = 8;
  EXPECT_EQ(*confidence(here, {far, near_bad}).nearest_run, 8);
}

TEST(OperatingPoint, KneeAndLadder) {
  EXPECT_EQ(knee({100, 60, 40, 35, 34, 33.5}, 0.10), 3u);  // past 35 at most 4.3% is left
  EXPECT_EQ(knee({100, 50, 25, 12.5}, 0.10), 3u);          // still halving at the end
  EXPECT_EQ(knee({100, 95, 99}, 0.10), 0u);                // nothing to gain at all
  EXPECT_EQ(knee({100, 80, 120, 60}, 0.10), 3u);           // a later dip counts
  EXPECT_FALSE(knee({}, 0.1));
  const std::vector<std::int64_t> ladder = procs_ladder(100, 20000);
  EXPECT_EQ(ladder.front(), 100);
  EXPECT_EQ(ladder.back(), 20000);
  for (std::size_t i = 1; i + 1 < ladder.size(); ++i) {
    const std::int64_t n = static_cast<std::int64_t>(std::sqrt(double(ladder[i])));
    EXPECT_TRUE(n * n == ladder[i] || n * (n + 1) == ladder[i]) << ladder[i];
    EXPECT_GE(double(ladder[i]), std::exp2(1.0 / 8) * double(ladder[i - 1]));
  }
  EXPECT_EQ(procs_ladder(7, 7), (std::vector<std::int64_t>{7}));
  EXPECT_THROW(procs_ladder(0, 10), QueryError);
  EXPECT_THROW(procs_ladder(10, 5), QueryError);
}

TEST(OperatingPoint, EqualsTheBruteForceBestPerCountAndItsKnee) {
  const Problem p = problem(64, 64, 16, "BigRed");
  Recommender r(nullptr, p);
  ProcsRange range;
  range.from = 1;
  range.to = 1024;
  range.all_layouts = true;
  range.others = candidates(p, {}, {}, 0, false).dimensions();
  const OperatingPoint op = r.operating_point(range);
  const std::vector<std::int64_t> ladder = procs_ladder(1, 1024);
  ASSERT_EQ(op.points.size(), ladder.size());
  std::vector<double> times;
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    const std::vector<Scored> brute = brute_force(p, ladder[i], true);
    EXPECT_EQ(op.points[i].procs, ladder[i]);
    EXPECT_EQ(candidate_of(op.points[i].best), brute[0].c) << ladder[i];
    EXPECT_EQ(op.points[i].best.time_ns, brute[0].time_ns);
    times.push_back(brute[0].time_ns);
  }
  // The knee, by its definition, from the brute-force times.
  std::size_t expected = 0;
  for (std::size_t i = 0; i < times.size(); ++i) {
    const double rest = *std::min_element(times.begin() + static_cast<std::ptrdiff_t>(i), times.end());
    if (rest >= 0.9 * times[i]) {
      expected = i;
      break;
    }
  }
  ASSERT_TRUE(op.knee);
  EXPECT_EQ(*op.knee, expected);
  EXPECT_GT(*op.knee, 0u);
  EXPECT_LT(*op.knee + 1, op.points.size());  // this case has a knee inside the range
}
