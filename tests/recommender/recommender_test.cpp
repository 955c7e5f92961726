// The recommender against an independent brute force over the candidate set,
// its evidence (stored results reused, gaps stored once, other commands' runs
// found), --confirm with the simulator, the candidate space, and a model with
// no closed form and no problem class (its own question, a study's vary space).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "poems/core/study.h"
#include "poems/db/knowledge_base.h"
#include "poems/recommender/rules.h"
#include "poems/taskgraph/limits.h"
#include "recommender_test_util.h"

using namespace poems;
using namespace poems::recommender;
using namespace poems::recommender::testing;

namespace {

struct Case {
  const char* name;
  Problem problem;
  std::int64_t procs;
  bool all_grids;
  std::int64_t npe_i, npe_j, mmi;  // for the brute force when one grid / a fixed mmi
  bool with_kb;
};

std::vector<Case> cases() {
  Ask handshake{64, 64, 64, "Odin", 8, 12, true, "2ns", {}};  // communication a large share of the time
  return {
      {"255^3 on 4096 (64x64) of Odin", problem(255, 255, 255), 4096, false, 64, 64, 0, true},
      {"150^3 on 6, every grid, Odin", problem(150, 150, 150), 6, true, 0, 0, 0, false},
      {"50x40x30 on 12, every grid, BigRed", problem(50, 40, 30, "BigRed"), 12, true, 0, 0, 0, true},
      {"64^3 mm=8 on 64, every grid, handshake, Wg=2ns", problem(handshake), 64, true, 0, 0, 0, false},
      {"255^3 on 1024 (32x32) of BigRed, mmi=2", problem(Ask{255, 255, 255, "BigRed", 6, 12, false, "", {"mmi=2"}}),
       1024, false, 32, 32, 2, false},
  };
}

}  // namespace

TEST(Recommender, BestEqualsTheBruteForceBestForSeveralProblemsAndMachines) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    ScratchDir dir;
    std::unique_ptr<db::KnowledgeBase> kb;
    if (c.with_kb) kb = std::make_unique<db::KnowledgeBase>(dir.file());
    const std::vector<Scored> brute = brute_force(c.problem, c.procs, c.all_grids, c.npe_i, c.npe_j, c.mmi);
    const std::set<std::string> fixed = c.mmi ? std::set<std::string>{"mmi"} : std::set<std::string>{};
    for (int pass = 0; pass < (c.with_kb ? 2 : 1); ++pass) {  // cold, then from stored evidence
      Recommender r(kb.get(), c.problem);
      const std::vector<Recommendation> top = r.recommend(candidates(c.problem, {}, fixed, c.procs, c.all_grids), 5);
      ASSERT_EQ(top.size(), 5u);
      EXPECT_EQ(r.stats().candidates, brute.size());
      for (std::size_t k = 0; k < top.size(); ++k) {
        EXPECT_EQ(candidate_of(top[k], c.problem), brute[k].c) << "rank " << k + 1 << " pass " << pass;
        EXPECT_EQ(top[k].time_ns, brute[k].time_ns) << "rank " << k + 1;
      }
    }
  }
}

TEST(Recommender, AWarmQueryReusesEveryStoredResultAndEvaluatesNothing) {
  ScratchDir dir;
  const Problem p = problem(64, 64, 40);
  const CandidateSet set = candidates(p, {}, {}, 16, true);  // 1x16 .. 16x1: 5 grids x 40 mk x 4 mmi
  std::vector<Recommendation> cold_top, warm_top;
  {
    db::KnowledgeBase kb(dir.file());
    Recommender r(&kb, p);
    cold_top = r.recommend(set, 3);
    EXPECT_EQ(r.stats().candidates, 800u);
    EXPECT_EQ(r.stats().reused, 0u);
    EXPECT_EQ(r.stats().evaluated, 800u);
    EXPECT_EQ(r.stats().stored, 800u);
    EXPECT_TRUE(cold_top[0].evidence[0].fresh);
    EXPECT_EQ(kb.runs().size(), 800u);
  }
  db::KnowledgeBase kb(dir.file());
  Recommender r(&kb, p);
  warm_top = r.recommend(set, 3);
  EXPECT_EQ(r.stats().reused, 800u);
  EXPECT_EQ(r.stats().evaluated, 0u);
  EXPECT_EQ(r.stats().stored, 0u);
  EXPECT_EQ(kb.runs().size(), 800u);  // nothing added
  ASSERT_EQ(warm_top.size(), cold_top.size());
  for (std::size_t k = 0; k < warm_top.size(); ++k) {
    EXPECT_EQ(candidate_of(warm_top[k]), candidate_of(cold_top[k]));
    EXPECT_EQ(warm_top[k].time_ns, cold_top[k].time_ns);
    EXPECT_FALSE(warm_top[k].evidence[0].fresh);
    EXPECT_EQ(warm_top[k].evidence[0].run_id, cold_top[k].evidence[0].run_id);
    EXPECT_EQ(kb.run(warm_top[k].evidence[0].run_id)->result->time_ns, warm_top[k].time_ns);
  }
  // Each grid's candidates form a study of their own.
  EXPECT_EQ(kb.studies().size(), 5u);
}

// One path: the run `poems analyze` (and a study's cell) stores for a binding
// is the recommender's run for that candidate, and the other way round.
TEST(Recommender, RunsStoredByTheEvaluationCoreAreEvidenceAndViceVersa) {
  ScratchDir dir;
  core::StoreOptions store_options{false, dir.file().string()};
  examples::register_examples();
  core::SystemRequest request;
  request.files = {std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"};
  request.sets = {"it_g=32", "jt_g=32", "kt=20"};
  const auto system = core::load_system(request);
  core::Store store(store_options);
  core::SessionOptions options;
  options.choices.machine = "Odin";
  core::Session session(*system, options, store);
  const Problem p = problem_of(session);
  // `poems analyze SPEC --set ... --set mk=7 --set mmi=2 --set npe_i=4 --set npe_j=4 --machine Odin`:
  core::CellRequest analyzed;
  analyzed.paradigm = "analytic[LogGP]";
  analyzed.parameters = {{"mk", 7}, {"mmi", 2}, {"npe_i", 4}, {"npe_j", 4}};
  const core::Session::Prepared prepared = session.prepare(analyzed);
  const Candidate seven{7, 2, 4, 4};
  EXPECT_EQ(prepared.key.canonical_text(), analytic_key(p, chosen(), seven.values()).canonical_text());
  // A marker time no evaluation gives: whoever reports it read the store.
  db::Result marker;
  marker.time_ns = 1.0;
  const auto recorded = store.kb()->record_runs({{prepared.key, marker}});
  Recommender r(store.kb(), p);
  std::vector<Dimension> dims = candidates(p, {}, {}, 0, false).dimensions();  // mk, mmi
  dims.insert(dims.begin(), {{"npe_i", "npe_j"}, {{4, 4}}});
  const std::vector<Recommendation> top = r.recommend(CandidateSet(dims), 2);
  EXPECT_EQ(r.stats().reused, 1u);
  EXPECT_EQ(r.stats().evaluated, 20u * 4 - 1);
  EXPECT_EQ(candidate_of(top[0]), seven);
  EXPECT_EQ(top[0].time_ns, 1.0);
  EXPECT_EQ(top[0].evidence[0].run_id, recorded[0].id);
  EXPECT_FALSE(top[0].evidence[0].fresh);
  // The gaps were stored under the core's key: `poems analyze` finds them.
  core::CellRequest other = analyzed;
  other.parameters["mk"] = 3;
  other.parameters["mmi"] = 3;
  const core::Cell cell = session.evaluate(other);
  EXPECT_TRUE(cell.reused);
  EXPECT_EQ(cell.run_id, store.kb()->find_done_run(analytic_key(p, chosen(), Candidate{3, 3, 4, 4}.values()))->id);
}

TEST(Recommender, AnInterruptedQueryLeavesWhatItStoredAndTheNextEvaluatesOnlyTheRest) {
  ScratchDir dir;
  const Problem p = problem(40, 40, 12);
  const std::vector<Scored> brute = brute_force(p, 0, false, 5, 8);
  const Dimension grid{{"npe_i", "npe_j"}, {{5, 8}}};
  {  // A question about mk = 5 only stores that part of the grid's study.
    db::KnowledgeBase kb(dir.file());
    Recommender r(&kb, p);
    r.recommend(CandidateSet({grid, {{"mk"}, {{5}}}, {{"mmi"}, {{1}, {2}, {3}, {6}}}}), 1);
    EXPECT_EQ(r.stats().stored, 4u);
  }
  ProcsRange range;
  range.from = 1;
  range.to = 225;
  range.all_layouts = true;
  range.others = candidates(p, {}, {}, 0, false).dimensions();
  // A child killed (SIGKILL) in the middle of a bigger question (1..225 processors, every grid).
  const pid_t child = ::fork();
  if (child == 0) {
    db::KnowledgeBase kb(dir.file());
    Recommender r(&kb, p);
    r.operating_point(range);
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
  std::vector<Dimension> on_grid = candidates(p, {}, {}, 0, false).dimensions();  // mk, mmi
  on_grid.insert(on_grid.begin(), grid);
  const std::vector<Recommendation> top = r.recommend(CandidateSet(on_grid), 1);
  EXPECT_GE(r.stats().reused, 4u);
  EXPECT_EQ(r.stats().reused + r.stats().evaluated, 48u);
  EXPECT_EQ(candidate_of(top[0]), brute[0].c);
  // Resume the whole range: exactly what is missing is evaluated, nothing twice.
  Recommender again(&kb, p);
  const OperatingPoint op = again.operating_point(range);
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
  const Problem p = problem(16, 16, 16, "Odin", 6, 2);
  db::KnowledgeBase kb(dir.file());
  Recommender r(&kb, p);
  const CandidateSet set = candidates(p, {}, {}, 4, true);
  std::vector<Recommendation> top = r.recommend(set, 3);
  for (const Recommendation& rec : top) EXPECT_EQ(rec.confidence.value, 0.5);  // analytic only
  const ConfirmReport report = r.confirm(top);
  EXPECT_EQ(r.stats().simulated, 3u);
  ASSERT_EQ(report.items.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    const Confirmation& c = report.items[k];
    // Below S the closed form is within 0.2% of the simulator (docs/models/sweep3d.md).
    EXPECT_LT(std::fabs(c.difference_pct), 0.2) << k;
    // The one difference (core/difference.h): simulated against analytic, percent of the analytic time.
    EXPECT_DOUBLE_EQ(c.difference_pct, (c.simulated_ns - c.analytic_ns) / c.analytic_ns * 100);
    ASSERT_EQ(top[k].evidence.size(), 2u);
    EXPECT_EQ(top[k].evidence[1].paradigm, "simulation[MPI-Sim]");
    EXPECT_EQ(top[k].evidence[1].run_id, c.simulation.run_id);
    // The nearest cross-checked case is the candidate itself: D = 0.
    EXPECT_EQ(top[k].confidence.distance, 0.0);
    EXPECT_DOUBLE_EQ(top[k].confidence.value,
                     0.5 + 0.5 * (1 - std::fabs(c.difference_pct) / 100 / kAgreementTolerance));
    EXPECT_EQ(kb.run(c.simulation.run_id)->key_text, simulation_key(p, set.names(), c.values).canonical_text());
  }
  EXPECT_DOUBLE_EQ(report.max_abs_difference_pct,
                   std::max({std::fabs(report.items[0].difference_pct), std::fabs(report.items[1].difference_pct),
                             std::fabs(report.items[2].difference_pct)}));
  // Confirming again finds the stored simulations.
  Recommender again(&kb, p);
  std::vector<Recommendation> top2 = again.recommend(set, 3);
  EXPECT_EQ(top2[0].evidence.size(), 2u);  // the simulation is evidence before confirming
  const ConfirmReport report2 = again.confirm(top2);
  EXPECT_EQ(again.stats().simulated, 0u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(report2.items[k].simulated_ns, report.items[k].simulated_ns);
  // A candidate next to the confirmed ones gains confidence from them.
  const std::vector<Recommendation> more = again.recommend(set, 10);
  EXPECT_GT(more[9].confidence.value, 0.5);
  EXPECT_GT(more[9].confidence.distance, 0.0);
}

// --confirm --jobs 2: the simulations on forked workers, claimed and stored
// by this process. A case simulated before is found, not simulated again; the
// others get a serial confirm's times and run ids. A failure fails the
// question with the error of the first failing case by position (not by
// arrival), as serially; what was under way is stored; nothing after it starts.
// --by simulation[MPI-Sim]: the analytic best simulated until the next
// analytic time is above the top-th simulated one; the answer is the top of
// simulating every candidate.
TEST(Recommender, RankingBySimulationIsTheTopOfSimulatingEveryCandidate) {
  const Problem p = problem(16, 16, 16, "Odin", 6, 2);
  const CandidateSet set = candidates(p, {}, {}, 4, true);
  ASSERT_GT(set.size(), 4 * kSimulatedCandidates);
  // Every candidate simulated: top = all of them.
  Recommender all(nullptr, p);
  SimulatedRanking every;
  const std::vector<Recommendation> full = all.recommend(set, set.size(), Ranking::Simulation, &every);
  ASSERT_EQ(full.size(), set.size());
  EXPECT_EQ(every.simulated, set.size());
  EXPECT_TRUE(every.complete);
  EXPECT_EQ(all.stats().simulated, set.size());
  for (std::size_t k = 1; k < full.size(); ++k) EXPECT_LE(*full[k - 1].simulated_ns, *full[k].simulated_ns) << k;

  Recommender r(nullptr, p);
  SimulatedRanking how;
  const std::vector<Recommendation> top = r.recommend(set, 3, Ranking::Simulation, &how);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(how.by, Ranking::Simulation);
  EXPECT_EQ(how.candidates, set.size());
  EXPECT_EQ(how.limit, kSimulatedCandidates);  // max(16, 4 x 3)
  // The closed form is within 0.2 % of the simulator here: a few suffice.
  EXPECT_GE(how.simulated, 3u);
  EXPECT_LT(how.simulated, kSimulatedCandidates);
  EXPECT_TRUE(how.complete);
  EXPECT_EQ(r.stats().simulated, how.simulated);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(top[k].values, full[k].values) << k;
    EXPECT_EQ(*top[k].simulated_ns, *full[k].simulated_ns) << k;
    ASSERT_EQ(top[k].evidence.size(), 2u);
    EXPECT_EQ(top[k].evidence[1].paradigm, kSimulation);
    EXPECT_EQ(top[k].evidence[1].time_ns, *top[k].simulated_ns);
  }
  // The analytic ranking of the same question is another order of other times.
  Recommender a(nullptr, p);
  const std::vector<Recommendation> analytic = a.recommend(set, 3, Ranking::Analytic);
  EXPECT_FALSE(analytic[0].simulated_ns);
  EXPECT_EQ(a.stats().simulated, 0u);
  EXPECT_NE(analytic[0].time_ns, *top[0].simulated_ns);
}

TEST(Recommender, ConfirmOnWorkersStoresWhatASerialConfirmDoesAndStopsAtTheFirstFailure) {
  ScratchDir dir;
  const Problem p = problem(16, 16, 16, "Odin", 6, 2);
  const CandidateSet set = candidates(p, {}, {}, 4, true);
  db::KnowledgeBase serial_kb(dir.file("serial.db")), kb(dir.file());
  Recommender serial(&serial_kb, p), parallel(&kb, p);
  parallel.set_jobs(2);
  std::vector<Recommendation> expected = serial.recommend(set, 4);
  const ConfirmReport s = serial.confirm(expected);
  std::vector<Recommendation> top = parallel.recommend(set, 4);
  ASSERT_EQ(top.size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) ASSERT_EQ(top[k].values, expected[k].values) << k;
  std::vector<Recommendation> first(top.begin(), top.begin() + 1);
  const db::RowId simulated_before = parallel.confirm(first).items.at(0).simulation.run_id;  // one case: serially
  EXPECT_EQ(parallel.stats().simulated, 1u);

  const QueryStats before = parallel.stats();
  const ConfirmReport r = parallel.confirm(top);
  EXPECT_EQ(parallel.stats().simulated - before.simulated, 3u);
  EXPECT_EQ(parallel.stats().stored - before.stored, 3u);
  ASSERT_EQ(r.items.size(), 4u);
  EXPECT_EQ(r.items[0].simulation.run_id, simulated_before);
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(r.items[k].simulation.fresh, k > 0) << k;
    EXPECT_EQ(r.items[k].simulated_ns, s.items[k].simulated_ns) << k;
    EXPECT_EQ(r.items[k].simulation.run_id, s.items[k].simulation.run_id) << k;  // claimed in case order
    EXPECT_EQ(kb.run(r.items[k].simulation.run_id)->status, db::RunStatus::kDone) << k;
  }

  // Failing cases: an operation limit of 10^5, which 16x16 processes with
  // mk = mmi = 1 (1.9 x 10^6 operations) reach after a while and no 4-process
  // candidate reaches (at most 18464); and mk = 0, which fails at once, before
  // any operation, with another message.
  struct RestoreLimit {
    std::uint64_t saved = taskgraph::default_instantiation_limits().max_operations;
    ~RestoreLimit() { taskgraph::default_instantiation_limits().max_operations = saved; }
  } restore;
  taskgraph::default_instantiation_limits().max_operations = 100'000;
  const std::vector<std::string>& names = top[0].names;
  auto with = [&](std::vector<double> values, const std::vector<std::pair<std::string, double>>& changes) {
    for (const auto& [name, value] : changes)
      values[std::find(names.begin(), names.end(), name) - names.begin()] = value;
    return values;
  };
  const std::vector<double> slow_failure = with(top[0].values, {{"npe_i", 16}, {"npe_j", 16}, {"mk", 1}, {"mmi", 1}});
  const std::vector<double> fast_failure = with(top[0].values, {{"mk", 0}});
  std::vector<std::vector<double>> fresh;  // candidates not simulated yet
  for (std::size_t i = 0; i < set.size() && fresh.size() < 2; ++i)
    if (std::none_of(top.begin(), top.end(), [&](const Recommendation& t) { return t.values == set.at(i); }))
      fresh.push_back(set.at(i));
  ASSERT_EQ(fresh.size(), 2u);
  auto cases = [&](const std::vector<std::vector<double>>& values) {
    std::vector<Recommendation> out;
    for (const std::vector<double>& v : values) {
      out.push_back(top[0]);
      out.back().values = v;
    }
    return out;
  };
  auto error_of = [&](Recommender& recommender, const std::vector<std::vector<double>>& values) {
    std::vector<Recommendation> recs = cases(values);
    try {
      recommender.confirm(recs);
    } catch (const std::exception& x) {
      return std::string(x.what());
    }
    return std::string("no error");
  };
  // The run of a case's simulation: its status, nothing if there is no run.
  auto status = [&](const std::vector<double>& values) -> std::optional<db::RunStatus> {
    const std::string key = simulation_key(p, names, values).canonical_text();
    for (const db::Run& run : kb.runs())
      if (run.key_text == key) return run.status;
    return std::nullopt;
  };

  // Both cases start at once: the failure at the first, at once, is the
  // question's; the second, still under way then, is stored.
  const std::size_t simulated = parallel.stats().simulated;
  const std::string infinite = error_of(parallel, {fast_failure, fresh[0]});
  EXPECT_NE(infinite.find("'kb' = ceil(kt / mk) is infinite"), std::string::npos) << infinite;
  EXPECT_EQ(infinite, error_of(serial, {fast_failure, fresh[0]}));
  EXPECT_EQ(status(fast_failure), db::RunStatus::kFailed);
  EXPECT_EQ(status(fresh[0]), db::RunStatus::kDone);
  EXPECT_EQ(parallel.stats().simulated, simulated + 1);

  // Two failures under way: the first case's error, though the second's
  // comes back first (most likely); both are stored, the third case is
  // never claimed.
  const std::int64_t runs = kb.count_runs();
  const std::string limit = error_of(parallel, {slow_failure, fast_failure, fresh[1]});
  EXPECT_NE(limit.find("more than 100000 operations"), std::string::npos) << limit;
  EXPECT_EQ(limit, error_of(serial, {slow_failure, fast_failure, fresh[1]}));
  EXPECT_EQ(status(slow_failure), db::RunStatus::kFailed);
  EXPECT_EQ(status(fast_failure), db::RunStatus::kFailed);  // claimed again, failed again
  EXPECT_EQ(status(fresh[1]), std::nullopt);
  EXPECT_EQ(kb.count_runs(), runs + 1);  // slow_failure's
  EXPECT_EQ(parallel.stats().simulated, simulated + 1);
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
  const Problem p = problem(255, 255, 255);
  const CandidateSet set = candidates(p, {}, {}, 4096, false);
  EXPECT_EQ(set.size(), 255u * 4);  // mk 1..255, mmi in {1, 2, 3, 6}
  EXPECT_EQ(set.names(), chosen());
  EXPECT_EQ(set.dimensions().back().values, (std::vector<std::vector<double>>{{1}, {2}, {3}, {6}}));
  EXPECT_EQ(set.at(0), (Candidate{1, 1, 64, 64}.values()));
  EXPECT_EQ(set.at(set.size() - 1), (Candidate{255, 6, 64, 64}.values()));
  EXPECT_EQ(set.index_of(Candidate{17, 3, 64, 64}.values()), 16u * 4 + 2);
  const Problem mk17 = problem(Ask{255, 255, 255, "Odin", 6, 12, false, "", {"mk=17"}});
  EXPECT_EQ(candidates(mk17, {}, {"mk"}, 4096, true).size(), 3u * 4);
}

TEST(Recommender, BadQuestionsNameTheParameterAndItsRange) {
  auto message = [](const Problem& p, const std::set<std::string>& fixed, std::int64_t procs, bool grid = false) {
    try {
      Recommender r(nullptr, p);
      candidates(p, {}, fixed, procs, grid);
    } catch (const QueryError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const Problem p = problem(255, 255, 255);
  EXPECT_EQ(message(p, {}, -1), "procs = -1 is out of range; expected an integer in 1..2147483648");
  EXPECT_EQ(message(problem(Ask{255, 255, 255, "Odin", 6, 12, false, "", {"mmi=4"}}), {"mmi"}, 16),
            "mmi = 4 is out of range; expected a divisor of mm = 6: 1, 2, 3, 6");
  EXPECT_EQ(message(problem(Ask{255, 255, 255, "Odin", 6, 12, false, "", {"mk=256"}}), {"mk"}, 16),
            "mk = 256 is out of range; expected an integer in 1..kt = 255");
  // mk = 0 makes the model's let kb = ceil(kt / mk) infinite: the model says so
  // where the question is prepared, before a candidate is drawn.
  try {
    problem(Ask{255, 255, 255, "Odin", 6, 12, false, "", {"mk=0"}});
    ADD_FAILURE() << "mk = 0 was accepted";
  } catch (const QueryError& e) {
    EXPECT_NE(std::string(e.what()).find("'kb' = ceil(kt / mk) is infinite with this binding (kt = 255, mk = 0)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(message(problem(Ask{255, 255, 255, "Odin", 6, 12, false, "", {"npe_i=4"}}), {"npe_i"}, 16),
            "--procs chooses npe_i; do not also --set it");
  EXPECT_NE(message(p, {}, 70000).find("expected at most 65025 processors"), std::string::npos);
  EXPECT_EQ(message(problem(255, 255, 0), {}, 16), "kt = 0 is out of range; expected an integer in 1..2147483648");
  EXPECT_EQ(message(problem(255, 255, 255, "Odin", 0), {}, 16),
            "mm = 0 is out of range; expected an integer in 1..4096");
  EXPECT_NE(message(problem(255, 255, 5'000'000), {}, 16, true).find("fix mk with --set mk=N"), std::string::npos);
  Problem missing = p;
  const std::size_t kt = missing.index("kt");
  missing.parameters.erase(missing.parameters.begin() + static_cast<std::ptrdiff_t>(kt));
  missing.values.erase(missing.values.begin() + static_cast<std::ptrdiff_t>(kt));
  EXPECT_EQ(message(missing, {}, 16), "the Sweep3D closed form needs the model parameter 'kt'");
  EXPECT_THROW(Recommender(nullptr, problem(255, 255, -1)), QueryError);
  Problem no_simulation = problem(8, 8, 8);
  no_simulation.simulation_error = "the model's MPI runtime has no simulated form";
  Recommender r(nullptr, no_simulation);
  std::vector<Recommendation> top = r.recommend(candidates(no_simulation, {}, {}, 4, false), 1);
  EXPECT_THROW(r.confirm(top), QueryError);
}

// A model with no closed form and no problem class: the question names the
// parameters (or a study's vary space gives them), the critical path ranks
// the candidates, and the answer is the brute-force best of the core's own
// analytic evaluations.
TEST(Recommender, AnyModelAndAnyStudysVarySpace) {
  ScratchDir dir;
  const std::filesystem::path spec = dir.file("pipeline.psl");
  std::ofstream(spec) << R"(model Pipeline {
  param P = 4, n = 120, chunk = 10;
  taskgraph pipe {
    processes { [r] : 0 <= r < P };
    for c in 1 .. n / chunk {
      recv from [r - 1] size 64B * chunk;
      task work : Stage(cells = chunk);
      send to [r + 1] size 64B * chunk;
    }
  }
}
component Stage in application[Pipeline] {
  accepts { profile { node_type = "stage"; } transaction stage(cells: int); protocol dataflow; }
  requests cpu { selector domain == hardware[processor] and evaluation == study.compute;
                 transaction execute_code_block(work = cells * 1000); protocol call_return; }
}
component Cpu in hardware[processor] {
  param Wg = 10ns;
  accepts { profile { evaluation = processor[wg]; Wg = Wg; } transaction execute_code_block(work: real) -> time;
            protocol call_return; }
}
component Net in hardware[network] {
  param L = 20us, o = 2us, g = 1us, G = 1ns/B, O = 0ns/B, S = 64KiB;
  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
            transaction message(bytes: bytes) -> time; protocol call_return; }
}
study chunks {
  model Pipeline on Net;
  set compute = processor[wg];
  vary chunk in [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 60, 120];
  compare analytic[LogGP];
}
)";
  core::SystemRequest request;
  request.files = {spec.string()};
  request.study = "chunks";
  const auto system = core::load_system(request);
  core::Store store({false, dir.file().string()});
  core::Session session(*system, {}, store);
  const Problem p = problem_of(session);
  EXPECT_EQ(p.method, "critical-path");
  // The study's vary space; the brute force evaluates every binding through the core.
  Dimension chunk{{"chunk"}, {}};
  double best_time = 1e300, best_chunk = 0;
  for (const core::StudyBinding& b : core::expand_study(*system->study())) {
    chunk.values.push_back({b.front().second.number});
    core::CellRequest cell = core::cell_request(*system, b);
    cell.paradigm = "analytic[LogGP]";
    const core::Cell c = session.evaluate(cell);
    ASSERT_TRUE(c.ok()) << c.error;
    if (c.outcome.breakdown.time_ns < best_time) {
      best_time = c.outcome.breakdown.time_ns;
      best_chunk = b.front().second.number;
    }
  }
  EXPECT_GT(best_chunk, 1);    // messages cost: the smallest chunk is not best ...
  EXPECT_LT(best_chunk, 120);  // ... nor the largest (no pipelining)
  Recommender r(store.kb(), p);
  const std::vector<Recommendation> top = r.recommend(candidates(p, {chunk}, {}, 0, false), 3);
  EXPECT_EQ(top[0].value("chunk"), best_chunk);
  EXPECT_EQ(top[0].time_ns, best_time);
  // The study's cells were stored by the core: the recommender found every one.
  EXPECT_EQ(r.stats().reused, chunk.values.size());
  EXPECT_EQ(r.stats().evaluated, 0u);
  // --procs sets the model's one process-set parameter.
  const CandidateSet on8 = candidates(p, {chunk}, {}, 8, false);
  EXPECT_EQ(on8.names(), (std::vector<std::string>{"P", "chunk"}));
  const std::vector<Recommendation> top8 = r.recommend(on8, 1);
  EXPECT_EQ(top8[0].value("P"), 8);
  EXPECT_GT(r.stats().evaluated, 0u);
  // Rules are about the chosen parameter, not the processor count (which
  // every case of a --procs-range differs in).
  EXPECT_EQ(rule_space(p, on8).targets, (std::vector<std::string>{"chunk"}));
  // A candidate the model rejects fails the question, naming it.
  try {
    r.recommend(candidates(p, {Dimension{{"chunk"}, {{7}}}}, {}, 8, false), 1);
    ADD_FAILURE() << "chunk = 7 makes the loop bound 120/7";
  } catch (const QueryError& e) {
    EXPECT_NE(std::string(e.what()).find("the candidate P=8, chunk=7 cannot be evaluated"), std::string::npos)
        << e.what();
  }
}

// --procs on any model whose process set has two or three parameters: every
// factorization of procs over them with --grid, the most square without.
TEST(Recommender, ProcsFactorizesOverTwoOrThreeProcessSetParameters) {
  ScratchDir dir;
  const std::filesystem::path spec = dir.file("grids.psl");
  std::ofstream(spec) << R"(model Plane {
  param px = 2, py = 2;
  taskgraph t { processes { [i, j] : 0 <= i < px and 0 <= j < py }; barrier; }
}
model Cube {
  param px = 2, py = 2, pz = 2;
  taskgraph t { processes { [i, j, k] : 0 <= i < px and 0 <= j < py and 0 <= k < pz }; barrier; }
}
component Net in hardware[network] {
  param L = 20us, o = 2us, g = 1us, G = 1ns/B, O = 0ns/B, S = 64KiB;
  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
            transaction message(bytes: bytes) -> time; protocol call_return; }
}
)";
  EXPECT_EQ(grid_factorizations(12, 2),
            (std::vector<std::vector<std::int64_t>>{{1, 12}, {2, 6}, {3, 4}, {4, 3}, {6, 2}, {12, 1}}));
  EXPECT_EQ(grid_factorizations(8, 3).size(), 10u);
  for (const char* model : {"Plane", "Cube"}) {
    SCOPED_TRACE(model);
    core::SystemRequest request;
    request.files = {spec.string()};
    request.model = model;
    const auto system = core::load_system(request);
    core::Store none({true, ""});
    core::SessionOptions options;
    options.choices.machine = "Net";
    core::Session session(*system, options, none);
    const Problem p = problem_of(session);
    const Dimension every = layouts(p, 12, true), square = layouts(p, 12, false);
    if (std::string(model) == "Plane") {
      EXPECT_EQ(every.names, (std::vector<std::string>{"px", "py"}));
      EXPECT_EQ(every.values, (std::vector<std::vector<double>>{{1, 12}, {2, 6}, {3, 4}, {4, 3}, {6, 2}, {12, 1}}));
      EXPECT_EQ(square.values, (std::vector<std::vector<double>>{{3, 4}}));
    } else {
      EXPECT_EQ(every.names, (std::vector<std::string>{"px", "py", "pz"}));
      EXPECT_EQ(every.values.size(), 18u);  // ordered triples of 2 * 2 * 3
      EXPECT_EQ(every.values.front(), (std::vector<double>{1, 1, 12}));
      EXPECT_EQ(square.values, (std::vector<std::vector<double>>{{2, 2, 3}}));
    }
    Recommender r(nullptr, p);
    const std::vector<Recommendation> top = r.recommend(candidates(p, {}, {}, 12, true), 100);
    EXPECT_EQ(top.size(), every.values.size());
  }
}
