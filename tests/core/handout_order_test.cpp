// The hand-out order of a parallel study (core/handout_order.h): every cell
// goes out once, in plan order unless a long cell would become the tail, and
// the estimate it orders by follows the operations a simulation walks.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <queue>

#include "poems/core/handout_order.h"
#include "poems/core/session.h"
#include "poems/examples/examples.h"
#include "poems/taskgraph/dtg.h"

using namespace poems;
using namespace poems::core;

namespace {

// Sweep3D's latency study: 5 latencies x {4x4, 10x10, 20x20, 50x50} x
// {simulation, closed form}; a simulation's work is its processes, a
// closed form's none.
std::vector<double> latency_study_work() {
  std::vector<double> work;
  for (int latency = 0; latency < 5; ++latency)
    for (double processes : {16.0, 100.0, 400.0, 2500.0}) {
      work.push_back(processes);
      work.push_back(0);
    }
  return work;
}

// Hands every cell out in `order`'s choice to the first free of `slots`
// workers, each cell taking its work (plus a little for the free ones) as
// time; returns the makespan and fills the start order.
double makespan(HandOutOrder& order, const std::vector<double>& work, std::size_t slots,
                std::vector<std::size_t>* started = nullptr) {
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (std::size_t s = 0; s < slots; ++s) free_at.push(0);
  double end = 0;
  while (const auto next = order.next(work.size())) {
    const double t = free_at.top() + work[*next] + 1;
    free_at.pop();
    free_at.push(t);
    end = std::max(end, t);
    if (started) started->push_back(*next);
  }
  return end;
}

TEST(HandOutOrder, LongCellsDoNotBecomeTheTail) {
  const std::vector<double> work = latency_study_work();
  std::vector<double> none(work.size(), 0.0);
  HandOutOrder plan_order(none, 2);  // no estimates: plan order
  std::vector<std::size_t> in_plan;
  const double plan_end = makespan(plan_order, work, 2, &in_plan);
  std::vector<std::size_t> expected(work.size());
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(in_plan, expected);

  HandOutOrder order(work, 2);
  std::vector<std::size_t> started;
  const double end = makespan(order, work, 2, &started);
  const double total = std::accumulate(work.begin(), work.end(), 0.0) + static_cast<double>(work.size());
  // In plan order the last 50x50 cell starts after nearly everything else:
  // over 10 % behind a perfect split (7,560). Ours stays within 1 % of it.
  EXPECT_GT(plan_end, total / 2 * 1.10);
  EXPECT_LE(end, total / 2 * 1.01);
  // Every cell once; plan order up to the point where the 50x50 cells
  // remaining would outlast the rest (the first 50x50 at its turn).
  std::vector<std::size_t> sorted = started;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, expected);
  EXPECT_EQ(std::vector<std::size_t>(started.begin(), started.begin() + 8),
            std::vector<std::size_t>(expected.begin(), expected.begin() + 8));
  const auto last_big = std::find(started.begin(), started.end(), std::size_t{38});
  EXPECT_LT(last_big - started.begin(), 36) << "the last 50x50 simulation still starts near the end";
}

TEST(HandOutOrder, AfterAFailureOnlyTheCellsBeforeItInPlanOrder) {
  std::vector<double> work = latency_study_work();
  HandOutOrder order(work, 2);
  EXPECT_EQ(order.next(work.size()), 0u);
  // A failure at cell 5: cells 1..4 still go out, in plan order, and no other.
  for (std::size_t i = 1; i < 5; ++i) EXPECT_EQ(order.next(5), i);
  EXPECT_EQ(order.next(5), std::nullopt);
}

TEST(HandOutOrder, OneHeavyCellGoesFirst) {
  // One cell of more than half of one slot's share goes out at once.
  const std::vector<double> work = {1, 1, 1, 1, 10};
  HandOutOrder order(work, 2);
  EXPECT_EQ(order.next(work.size()), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(order.next(work.size()), i);
  EXPECT_EQ(order.next(work.size()), std::nullopt);
}

Session::Prepared prepare(Session& session, const std::string& paradigm, double npe_i, double npe_j) {
  CellRequest request;
  request.paradigm = paradigm;
  request.parameters = {{"npe_i", npe_i}, {"npe_j", npe_j}, {"mk", 10}, {"mmi", 3}, {"iterations", 1}};
  return session.prepare(request);
}

TEST(EstimatedWork, FollowsTheOperationsASimulationWalks) {
  examples::register_examples();
  SystemRequest r;
  r.files = {std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"};
  const std::unique_ptr<System> system = load_system(r);
  Store none({true, ""});
  SessionOptions options;
  options.choices.machine = "Odin";
  Session session(*system, options, none);

  for (const auto& [npe_i, npe_j] : {std::pair{4.0, 4.0}, std::pair{8.0, 4.0}, std::pair{10.0, 10.0}}) {
    const Session::Prepared p = prepare(session, "simulation[MPI-Sim]", npe_i, npe_j);
    ASSERT_TRUE(p.cell.ok()) << p.cell.error;
    taskgraph::ModelSchedule schedule(p.cell.evaluation.graph, p.cell.evaluation.binding,
                                      p.cell.evaluation.instantiate);
    const double operations = static_cast<double>(taskgraph::collect_statistics(schedule).operations);
    // Eight sampled ranks stand for all: within 15 % of the true count (on
    // these small grids most ranks are on the boundary, with fewer messages).
    EXPECT_NEAR(estimated_work(p), operations, operations * 0.15) << npe_i << "x" << npe_j;
    // The critical path walks the same operations; the closed form none.
    EXPECT_DOUBLE_EQ(estimated_work(prepare(session, "analytic[LogGP]", npe_i, npe_j)), 0);
  }
}

}  // namespace
