// Cross-checks across paths into the simulator: the lazy PSL task graph and
// its GOAL export must simulate to the same times, bit for bit.
#include <gtest/gtest.h>

#include <sstream>

#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/dtg.h"
#include "poems/taskgraph/goal.h"

using namespace poems;

namespace {

std::shared_ptr<const taskgraph::StaticTaskGraph> lower_file(const std::string& path) {
  static std::vector<std::unique_ptr<psl::Frontend>> keep;
  auto fe = std::make_unique<psl::Frontend>();
  EXPECT_TRUE(fe->load_files({path}));
  auto g = std::make_shared<taskgraph::StaticTaskGraph>(psl::lower_model(fe->program(), fe->sources(), ""));
  keep.push_back(std::move(fe));
  return g;
}

sim::SimulationOptions odin() {
  // Odin (the LogGOPSim paper, section 4.1): L=5.3us o=2.3us g=2us G=2.5ns/B O=1ns/B S=32768B.
  sim::SimulationOptions o;
  o.params.L = 5'300'000;
  o.params.o = 2'300'000;
  o.params.g = 2'000'000;
  o.params.G = 2'500'000;
  o.params.O = 1'000'000;
  o.params.S = 32768;
  return o;
}

}  // namespace

TEST(Sweep3DSimulation, PslAndGoalExportGiveTheSameTimes) {
  auto graph = lower_file(std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl");
  struct Case {
    taskgraph::ParameterBinding binding;
  };
  // Below and above the eager limit S = 32 KiB: 8*jt*mk*mmi bytes.
  const Case cases[] = {
      {{{"npe_i", 3}, {"npe_j", 2}, {"mk", 10}, {"mmi", 3}, {"iterations", 2}}},
      {{{"npe_i", 4}, {"npe_j", 4}, {"mk", 30}, {"mmi", 6}, {"iterations", 1}}},
      {{{"npe_i", 1}, {"npe_j", 5}, {"mk", 7}, {"mmi", 1}, {"iterations", 1}}},
  };
  for (const Case& c : cases) {
    taskgraph::InstantiateOptions inst;
    inst.ns_per_work = 60;  // Wg of the Opteron component
    taskgraph::ModelSchedule lazy(graph, c.binding, inst);
    sim::SimulationResult from_psl = sim::simulate(lazy, odin());

    taskgraph::ModelSchedule exported(graph, c.binding, inst);
    std::ostringstream goal;
    taskgraph::write_goal(goal, exported);
    psl::SourceManager sources;
    psl::DiagnosticEngine diags(sources);
    auto schedule = taskgraph::parse_goal(sources, sources.add("sweep3d.goal", goal.str()), diags);
    ASSERT_TRUE(schedule);
    sim::SimulationResult from_goal = sim::simulate(*schedule, odin());

    ASSERT_TRUE(from_psl.completed);
    ASSERT_TRUE(from_goal.completed);
    EXPECT_GT(from_psl.max_finish, 0u);
    EXPECT_EQ(from_psl.max_finish, from_goal.max_finish);
    EXPECT_EQ(from_psl.events, from_goal.events);
    ASSERT_EQ(from_psl.per_rank.size(), from_goal.per_rank.size());
    for (std::size_t r = 0; r < from_psl.per_rank.size(); ++r) {
      EXPECT_EQ(from_psl.per_rank[r].finish, from_goal.per_rank[r].finish) << "rank " << r;
      EXPECT_EQ(from_psl.per_rank[r].compute, from_goal.per_rank[r].compute) << "rank " << r;
      EXPECT_EQ(from_psl.per_rank[r].overhead, from_goal.per_rank[r].overhead) << "rank " << r;
    }
  }
}

TEST(Sweep3DSimulation, DesignKnownTreeThroughAPslModel) {
  // The 8-rank tree of docs/references.md written in PSL as a binomial reduce.
  psl::Frontend fe;
  ASSERT_TRUE(fe.load_text("tree.psl", R"(
model Tree {
  taskgraph t {
    processes { [r] : 0 <= r < 8 };
    reduce size 1024 root 0 algorithm binomial;
  }
})"));
  auto graph = std::make_shared<taskgraph::StaticTaskGraph>(psl::lower_model(fe.program(), fe.sources(), ""));
  taskgraph::ModelSchedule schedule(graph, {}, {});
  sim::SimulationOptions o;  // L=2500 o=1500 g=1000 G=6 O=0 S=65535 (ns)
  o.params.L = 2'500'000;
  o.params.o = 1'500'000;
  o.params.g = 1'000'000;
  o.params.G = 6'000'000;
  o.params.O = 0;
  o.params.S = 65535;
  sim::SimulationResult r = sim::simulate(schedule, o);
  ASSERT_TRUE(r.completed);
  const std::uint64_t want_ns[8] = {34914, 24776, 13138, 13138, 1500, 1500, 1500, 1500};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(r.per_rank[i].finish, want_ns[i] * 1000) << "rank " << i;
}
