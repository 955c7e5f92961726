// The recommender against an independent brute force over the candidate set,
// its evidence (stored results reused, gaps stored once, other commands' runs
// found), --confirm with the simulator, and the candidate space.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "poems/db/knowledge_base.h"
#include "recommender_test_util.h"

using namespace poems;
using namespace poems::recommender;
using namespace poems::recommender::testing;

namespace {

struct Case {
  const char* name;
  Problem problem;
  CandidateSpace space;
  std::int64_t npe_i, npe_j, mmi;  // for the brute force when one grid / a fixed mmi
  bool with_kb;
};

std::vector<Case> cases() {
  Problem handshake = problem(64, 64, 64, odin(), 8);
  handshake.machine.rendezvous_handshake = true;
  handshake.machine.wg_ns = 2;  // communication a large share of the time
  return {
      {"255^3 on 4096 (64x64) of Odin", problem(255, 255, 255, odin()), {4096, false, 64, 64, {}, {}}, 64, 64, 0, true},
      {"150^3 on 6, every grid, Odin", problem(150, 150, 150, odin()), {6, true, 0, 0, {}, {}}, 0, 0, 0, false},
      {"50x40x30 on 12, every grid, BigRed", problem(50, 40, 30, bigred()), {12, true, 0, 0, {}, {}}, 0, 0, 0, true},
      {"64^3 mm=8 on 64, every grid, handshake, Wg=2ns", handshake, {64, true, 0, 0, {}, {}}, 0, 0, 0, false},
      {"255^3 on 1024 (32x32) of BigRed, mmi=2",
       problem(255, 255, 255, bigred()),
       {1024, false, 32, 32, {}, 2},
       32,
       32,
       2,
       false},
  };
}

}  // namespace

TEST(Recommender, BestEqualsTheBruteForceBestForSeveralProblemsAndMachines) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    ScratchDir dir;
    std::unique_ptr<db::KnowledgeBase> kb;
    if (c.with_kb) kb = std::make_unique<db::KnowledgeBase>(dir.file());
    const std::vector<Scored> brute = brute_force(c.problem, c.space.procs, c.space.all_grids, c.npe_i, c.npe_j, c.mmi);
    for (int pass = 0; pass < (c.with_kb ? 2 : 1); ++pass) {  // cold, then from stored evidence
      Recommender r(kb.get(), c.problem);
      const std::vector<Recommendation> top = r.recommend(c.space, 5);
      ASSERT_EQ(top.size(), 5u);
      EXPECT_EQ(r.stats().candidates, brute.size());
      for (std::size_t k = 0; k < top.size(); ++k) {
        EXPECT_EQ(top[k].candidate, brute[k].c) << "rank " << k + 1 << " pass " << pass;
        EXPECT_EQ(top[k].time_ns, brute[k].time_ns) << "rank " << k + 1;
      }
    }
  }
}

TEST(Recommender, AWarmQueryReusesEveryStoredResultAndEvaluatesNothing) {
  ScratchDir dir;
  const Problem p = problem(64, 64, 40, odin());
  const CandidateSpace space{16, true, 0, 0, {}, {}};  // 1x16 .. 16x1: 5 grids x 40 mk x 4 mmi
  std::vector<Recommendation> cold_top, warm_top;
  {
    db::KnowledgeBase kb(dir.file());
    Recommender r(&kb, p);
    cold_top = r.recommend(space, 3);
    EXPECT_EQ(r.stats().candidates, 800u);
    EXPECT_EQ(r.stats().reused, 0u);
    EXPECT_EQ(r.stats().evaluated, 800u);
    EXPECT_EQ(r.stats().stored, 800u);
    EXPECT_TRUE(cold_top[0].evidence[0].fresh);
    EXPECT_EQ(kb.runs().size(), 800u);
  }
  db::KnowledgeBase kb(dir.file());
  Recommender r(&kb, p);
  warm_top = r.recommend(space, 3);
  EXPECT_EQ(r.stats().reused, 800u);
  EXPECT_EQ(r.stats().evaluated, 0u);
  EXPECT_EQ(r.stats().stored, 0u);
  EXPECT_EQ(kb.runs().size(), 800u);  // nothing added
  ASSERT_EQ(warm_top.size(), cold_top.size());
  for (std::size_t k = 0; k < warm_top.size(); ++k) {
    EXPECT_EQ(warm_top[k].candidate, cold_top[k].candidate);
    EXPECT_EQ(warm_top[k].time_ns, cold_top[k].time_ns);
    EXPECT_FALSE(warm_top[k].evidence[0].fresh);
    EXPECT_EQ(warm_top[k].evidence[0].run_id, cold_top[k].evidence[0].run_id);
    EXPECT_EQ(kb.run(warm_top[k].evidence[0].run_id)->result->time_ns, warm_top[k].time_ns);
  }
  // Each grid's candidates form a study of their own.
  EXPECT_EQ(kb.studies().size(), 5u);
}

TEST(Recommender, RunsStoredByAnalyzeAndByStudiesAreEvidence) {
  ScratchDir dir;
  const Problem p = problem(32, 32, 20, odin());
  db::KnowledgeBase kb(dir.file());
  nlohmann::json machine = {{"L_ps", 5300000},
                            {"o_ps", 2300000},
                            {"g_ps", 2000000},
                            {"G_fs_per_byte", 2500000},
                            {"O_fs_per_byte", 1000000},
                            {"S_bytes", 32768},
                            {"rendezvous_handshake", false}};
  auto parameters = [](int mk, int mmi) {
    return nlohmann::json{{"it_g", 32.0}, {"jt_g", 32.0}, {"kt", 20.0}, {"npe_i", 4.0},      {"npe_j", 4.0},
                          {"mk", mk},     {"mmi", mmi},   {"mm", 6.0},  {"iterations", 12.0}};
  };
  // As `poems analyze SPEC --set mk=7 --set mmi=2 --set npe_i=4 --set npe_j=4` keys it (cmd_analyze.cpp) ...
  db::RunKey analyzed{
      "Sweep3D",
      "analytic[LogGP]",
      "spec-hash",
      "test",
      {{"parameters", parameters(7, 2)}, {"wg_ns", 60.0}, {"machine", machine}, {"method", "closed-form"}}};
  EXPECT_EQ(analyzed.canonical_text(), analytic_key(p, {7, 2, 4, 4}).canonical_text());
  // ... and as `poems run --study` keys it (cmd_run.cpp).
  db::RunKey studied{"Sweep3D",
                     "analytic[LogGP]",
                     "spec-hash",
                     "test",
                     {{"parameters", parameters(9, 1)},
                      {"overrides", nlohmann::json::object()},
                      {"machine", machine},
                      {"compute", {{{"node", 3}, {"evaluator", "processor[wg]"}, {"ns_per_work", 60.0}}}},
                      {"method", "default"}}};
  // Marker times no evaluation gives: whoever reports them read the store.
  db::Result one, two;
  one.time_ns = 1.0;
  two.time_ns = 2.0;
  const auto recorded = kb.record_runs({{analyzed, one}, {studied, two}});
  Recommender r(&kb, p);
  const std::vector<Recommendation> top = r.recommend({16, false, 4, 4, {}, {}}, 2);
  EXPECT_EQ(r.stats().reused, 2u);
  EXPECT_EQ(r.stats().evaluated, 20u * 4 - 2);
  EXPECT_EQ(top[0].candidate, (Candidate{7, 2, 4, 4}));
  EXPECT_EQ(top[0].time_ns, 1.0);
  EXPECT_EQ(top[0].evidence[0].run_id, recorded[0].id);
  EXPECT_FALSE(top[0].evidence[0].fresh);
  EXPECT_EQ(top[1].candidate, (Candidate{9, 1, 4, 4}));
  EXPECT_EQ(top[1].evidence[0].run_id, recorded[1].id);
  // The gaps were stored under analyze's key: `poems analyze` finds them.
  const auto stored = kb.find_done_run(analytic_key(p, {3, 3, 4, 4}));
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->binding["method"], "closed-form");
}

TEST(Recommender, AnInterruptedQueryLeavesWhatItStoredAndTheNextEvaluatesOnlyTheRest) {
  ScratchDir dir;
  const Problem p = problem(40, 40, 12, odin());
  const std::vector<Scored> brute = brute_force(p, 0, false, 5, 8);
  {  // A question about mk = 5 only stores that part of the grid's study.
    db::KnowledgeBase kb(dir.file());
    Recommender r(&kb, p);
    r.recommend({40, false, 5, 8, 5, {}}, 1);
    EXPECT_EQ(r.stats().stored, 4u);
  }
  // A child killed (SIGKILL) in the middle of a bigger question (1..225 processors, every grid).
  const pid_t child = ::fork();
  if (child == 0) {
    db::KnowledgeBase kb(dir.file());
    Recommender r(&kb, p);
    r.operating_point({1, 225, 0.1, true, {}, {}});
    ::_exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  db::KnowledgeBase kb(dir.file());
  // Runs, distinct keys, done runs, results (SQL: kb.runs() would parse every binding).
  auto counts = [&kb] {
    const db::QueryResult q = kb.query_readonly(
        "SELECT count(*), count(DISTINCT run_key), sum(status = 'done'), (SELECT count(*) FROM results) FROM runs");
    std::vector<std::int64_t> out;
    for (const db::Cell& c : q.rows.at(0)) out.push_back(std::get<std::int64_t>(c));
    return out;
  };
  const std::vector<std::int64_t> killed = counts();
  const std::size_t before = static_cast<std::size_t>(killed[0]);
  EXPECT_EQ(killed[1], killed[0]);  // every key once
  EXPECT_EQ(killed[2], killed[0]);  // every run done: a batch commits whole or not at all
  EXPECT_EQ(killed[3], killed[0]);  // each with its result
  Recommender r(&kb, p);
  const std::vector<Recommendation> top = r.recommend({40, false, 5, 8, {}, {}}, 1);
  EXPECT_GE(r.stats().reused, 4u);
  EXPECT_EQ(r.stats().reused + r.stats().evaluated, 48u);
  EXPECT_EQ(top[0].candidate, brute[0].c);
  // Resume the whole range: exactly what is missing is evaluated, nothing twice.
  Recommender again(&kb, p);
  const OperatingPoint op = again.operating_point({1, 225, 0.1, true, {}, {}});
  EXPECT_FALSE(op.points.empty());
  const std::size_t total = again.stats().candidates;
  EXPECT_EQ(again.stats().evaluated + again.stats().reused, total);
  const std::vector<std::int64_t> after = counts();
  EXPECT_EQ(after[1], after[0]);
  EXPECT_EQ(after[2], after[0]);
  EXPECT_EQ(after[3], after[0]);
  EXPECT_EQ(again.stats().evaluated, static_cast<std::size_t>(after[0]) - before - r.stats().stored);
  EXPECT_EQ(again.stats().stored, again.stats().evaluated);
}

TEST(Recommender, ConfirmSimulatesTheTopCandidatesAndRaisesTheirConfidence) {
  ScratchDir dir;
  Problem p = problem(16, 16, 16, odin());
  p.parameters["iterations"] = 2;
  p.graph = sweep3d_graph();
  db::KnowledgeBase kb(dir.file());
  Recommender r(&kb, p);
  std::vector<Recommendation> top = r.recommend({4, true, 0, 0, {}, {}}, 3);
  for (const Recommendation& rec : top) EXPECT_EQ(rec.confidence.value, 0.5);  // analytic only
  const ConfirmReport report = r.confirm(top);
  EXPECT_EQ(r.stats().simulated, 3u);
  ASSERT_EQ(report.items.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    const Confirmation& c = report.items[k];
    // Below S the closed form is within 0.2% of the simulator (docs/models/sweep3d.md).
    EXPECT_LT(std::fabs(c.difference), 0.002) << k;
    EXPECT_EQ(c.difference, (c.analytic_ns - c.simulated_ns) / c.simulated_ns);
    ASSERT_EQ(top[k].evidence.size(), 2u);
    EXPECT_EQ(top[k].evidence[1].paradigm, "simulation[MPI-Sim]");
    EXPECT_EQ(top[k].evidence[1].run_id, c.simulation.run_id);
    // The nearest cross-checked case is the candidate itself: D = 0.
    EXPECT_EQ(top[k].confidence.distance, 0.0);
    EXPECT_DOUBLE_EQ(top[k].confidence.value, 0.5 + 0.5 * (1 - std::fabs(c.difference) / kAgreementTolerance));
    EXPECT_EQ(kb.run(c.simulation.run_id)->key_text, simulation_key(p, c.candidate).canonical_text());
  }
  EXPECT_DOUBLE_EQ(report.max_abs_difference,
                   std::max({std::fabs(report.items[0].difference), std::fabs(report.items[1].difference),
                             std::fabs(report.items[2].difference)}));
  // Confirming again finds the stored simulations.
  Recommender again(&kb, p);
  std::vector<Recommendation> top2 = again.recommend({4, true, 0, 0, {}, {}}, 3);
  EXPECT_EQ(top2[0].evidence.size(), 2u);  // the simulation is evidence before confirming
  const ConfirmReport report2 = again.confirm(top2);
  EXPECT_EQ(again.stats().simulated, 0u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(report2.items[k].simulated_ns, report.items[k].simulated_ns);
  // A candidate next to the confirmed ones gains confidence from them.
  const std::vector<Recommendation> more = again.recommend({4, true, 0, 0, {}, {}}, 10);
  EXPECT_GT(more[9].confidence.value, 0.5);
  EXPECT_GT(more[9].confidence.distance, 0.0);
}

TEST(Recommender, CandidateSpace) {
  EXPECT_EQ(square_grid(4096, 255, 255), std::make_pair(std::int64_t{64}, std::int64_t{64}));
  EXPECT_EQ(square_grid(6, 150, 150), std::make_pair(std::int64_t{2}, std::int64_t{3}));
  EXPECT_EQ(square_grid(12, 150, 150), std::make_pair(std::int64_t{3}, std::int64_t{4}));
  EXPECT_EQ(square_grid(7, 150, 150), std::make_pair(std::int64_t{1}, std::int64_t{7}));
  // 4096 = 2^12 on 255 x 255: 32x128, 64x64, 128x32 (16x256 would leave processes without a column).
  const auto grids = factorizations(4096, 255, 255);
  ASSERT_EQ(grids.size(), 3u);
  EXPECT_EQ(grids[0], std::make_pair(std::int64_t{32}, std::int64_t{128}));
  EXPECT_EQ(factorizations(36, 100, 100).size(), 9u);
  const Problem p = problem(255, 255, 255, odin());
  const CandidateSet set = candidates(p, {4096, false, 0, 0, {}, {}});
  EXPECT_EQ(set.size(), 255u * 4);  // mk 1..255, mmi in {1, 2, 3, 6}
  EXPECT_EQ(set.mmi, (std::vector<std::int64_t>{1, 2, 3, 6}));
  EXPECT_EQ(set.at(0), (Candidate{1, 1, 64, 64}));
  EXPECT_EQ(set.at(set.size() - 1), (Candidate{255, 6, 64, 64}));
  EXPECT_EQ(candidates(p, {4096, true, 0, 0, 17, {}}).size(), 3u * 4);
}

TEST(Recommender, BadQuestionsNameTheParameterAndItsRange) {
  auto message = [](const Problem& p, const CandidateSpace& s) -> std::string {
    try {
      candidates(p, s);
    } catch (const QueryError& e) {
      return e.what();
    }
    return "no error";
  };
  const Problem p = problem(255, 255, 255, odin());
  EXPECT_EQ(message(p, {0, false, 0, 0, {}, {}}), "procs = 0 is out of range; expected an integer in 1..2147483648");
  EXPECT_EQ(message(p, {16, false, 0, 0, {}, 4}), "mmi = 4 is out of range; expected a divisor of mm = 6: 1, 2, 3, 6");
  EXPECT_EQ(message(p, {16, false, 0, 0, 256, {}}), "mk = 256 is out of range; expected an integer in 1..kt = 255");
  EXPECT_EQ(message(p, {16, false, 0, 0, 0, {}}), "mk = 0 is out of range; expected an integer in 1..kt = 255");
  EXPECT_EQ(message(p, {16, false, 4, 5, {}, {}}),
            "npe_i * npe_j = 20 but procs = 16; expected npe_i * npe_j == procs");
  EXPECT_NE(message(p, {70000, false, 0, 0, {}, {}}).find("expected at most it_g * jt_g processors"),
            std::string::npos);
  EXPECT_EQ(message(problem(255, 255, 0, odin()), {16, false, 0, 0, {}, {}}),
            "kt = 0 is out of range; expected an integer in 1..2147483648");
  EXPECT_EQ(message(problem(255, 255, 255, odin(), 0), {16, false, 0, 0, {}, {}}),
            "mm = 0 is out of range; expected an integer in 1..4096");
  EXPECT_NE(message(problem(255, 255, 5'000'000, odin()), {16, true, 0, 0, {}, {}}).find("fix mk with --set mk=N"),
            std::string::npos);
  Problem missing = p;
  missing.parameters.erase("kt");
  EXPECT_EQ(message(missing, {16, false, 0, 0, {}, {}}), "the Sweep3D recommender needs the model parameter 'kt'");
  EXPECT_THROW(Recommender(nullptr, problem(255, 255, -1, odin())), QueryError);
  Recommender no_graph(nullptr, problem(8, 8, 8, odin()));
  std::vector<Recommendation> top = no_graph.recommend({4, false, 0, 0, {}, {}}, 1);
  EXPECT_THROW(no_graph.confirm(top), QueryError);
}
