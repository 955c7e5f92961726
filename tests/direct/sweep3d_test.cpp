// The real MPI Sweep3D (examples/sweep3d/app) under direct execution: its
// data really travel (the flux does not depend on the rank count), its
// virtual loop time agrees with the task-graph simulator and the closed form
// at the same parameters, and the memory-reduced computation gives the same
// virtual time without the kernel and its arrays.
#include <cmath>
#include <memory>

#include "direct_test_util.h"
#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/sweep3d/app/decomposition.h"
#include "poems/sweep3d/app/driver.h"
#include "poems/sweep3d/direct/charged_compute.h"
#include "poems/sweep3d/sweep3d_model.h"
#include "poems/taskgraph/dtg.h"

namespace poems::direct::testing {
namespace {

using sweep3d::app::Deck;

sim::LogGOPS odin() {
  sim::LogGOPS p;  // the LogGOPSim paper, section 4.1
  p.L = 5'300'000;
  p.o = 2'300'000;
  p.g = 2'000'000;
  p.G = 2'500'000;
  p.O = 1'000'000;
  p.S = 32768;
  return p;
}

constexpr double kWg = 60;  // ns per cell-angle (machines.psl: Opteron)

Deck deck(int npe_i, int npe_j, int it_g, int kt, int mk, int mmi, int iterations, int fixups = 0) {
  Deck d;
  d.npe_i = npe_i;
  d.npe_j = npe_j;
  d.mk = mk;
  d.mmi = mmi;
  d.it_g = it_g;
  d.jt_g = it_g;
  d.kt = kt;
  d.mm = 6;
  d.epsi = -iterations;
  d.ifixups = fixups;
  return d;
}

struct SweepOutcome {
  DirectResult direct;
  sweep3d::app::RunResult rank0;
};

// Sweep3D's loop on npe_i x npe_j simulated ranks, blocks charged at kWg.
SweepOutcome run_sweep(const Deck& d, bool reduced, bool early = true) {
  DirectOptions o = model_options(static_cast<std::uint32_t>(d.npe_i * d.npe_j), odin());
  o.early_receive = early;
  o.processor = processor::ProcessorSpec{"Opteron", "processor[wg]", {{"Wg", kWg}}, {}};
  SweepOutcome out;
  out.direct = run_ranks(o, [&](int rank, int size) {
    const sweep3d::app::Decomposition dec = sweep3d::app::decompose(d, size, rank);
    std::unique_ptr<sweep3d::app::BlockCompute> compute;
    if (reduced)
      compute = std::make_unique<sweep3d::direct::ReducedCompute>();
    else
      compute =
          std::make_unique<sweep3d::direct::ChargedCompute>(std::make_unique<sweep3d::app::TransportCompute>(d, dec));
    sweep3d::app::RunResult r = sweep3d::app::run_sweep3d(d, dec, *compute);
    if (rank == 0) out.rank0 = r;
  });
  return out;
}

// The task-graph simulator on the PSL model at the deck's parameters.
double simulated_ns(const Deck& d) {
  static psl::Frontend fe;
  static std::shared_ptr<const taskgraph::StaticTaskGraph> graph = [] {
    EXPECT_TRUE(fe.load_files({std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"}));
    return std::make_shared<taskgraph::StaticTaskGraph>(psl::lower_model(fe.program(), fe.sources(), ""));
  }();
  taskgraph::ParameterBinding b{{"npe_i", d.npe_i}, {"npe_j", d.npe_j}, {"it_g", d.it_g},
                                {"jt_g", d.jt_g},   {"kt", d.kt},       {"mk", d.mk},
                                {"mmi", d.mmi},     {"mm", d.mm},       {"iterations", d.fixed_iterations()}};
  taskgraph::InstantiateOptions inst;
  inst.ns_per_work = kWg;
  taskgraph::ModelSchedule schedule(graph, b, inst);
  sim::SimulationOptions o;
  o.params = odin();
  const sim::SimulationResult r = sim::simulate(schedule, o);
  EXPECT_TRUE(r.completed);
  return static_cast<double>(r.max_finish) / 1000.0;
}

double closed_form_ns(const Deck& d) {
  components::Sweep3DConfig c;
  c.it_g = d.it_g;
  c.jt_g = d.jt_g;
  c.kt = d.kt;
  c.npe_i = d.npe_i;
  c.npe_j = d.npe_j;
  c.mk = d.mk;
  c.mmi = d.mmi;
  c.mm = d.mm;
  c.iterations = d.fixed_iterations();
  return static_cast<double>(components::predict_sweep3d(c, {odin(), false, kWg}).time) / 1000.0;
}

TEST(Sweep3DDirect, FluxDoesNotDependOnTheRanks) {
  // 13 x 13 x 9 cells: remainders in i and j, a short last k-block, fixups.
  double flux = 0;
  for (auto [pi, pj] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{2, 3}}) {
    const SweepOutcome s = run_sweep(deck(pi, pj, 13, 9, 4, 3, 3, 1), false);
    ASSERT_TRUE(s.direct.completed()) << s.direct.error;
    const double f = s.rank0.totals.flux_sum;
    EXPECT_GT(f, 0);
    if (flux == 0) flux = f;
    EXPECT_NEAR(f, flux, 1e-12 * flux) << pi << "x" << pj;
    EXPECT_EQ(s.rank0.iterations, 3);
    EXPECT_EQ(s.rank0.messages, 3 * sweep3d::app::messages_per_iteration(pi, pj, 3, 2));
  }
}

TEST(Sweep3DDirect, AgreesWithTheSimulatorAndTheClosedForm) {
  // Grids that divide evenly (the task graph times every block at its full
  // size), eager and rendezvous messages (S = 32 KiB: 8 jt mk mmi bytes).
  const Deck cases[] = {deck(2, 2, 24, 24, 6, 3, 2), deck(3, 2, 36, 30, 10, 3, 1), deck(4, 4, 64, 32, 16, 6, 1),
                        deck(1, 5, 40, 20, 5, 2, 2)};
  for (const Deck& d : cases) {
    const SweepOutcome s = run_sweep(d, false);
    ASSERT_TRUE(s.direct.completed()) << s.direct.error;
    const double direct_ns = s.rank0.time * 1e9;
    const double sim_ns = simulated_ns(d), form_ns = closed_form_ns(d);
    const std::string what = std::to_string(d.npe_i) + "x" + std::to_string(d.npe_j) + " " + std::to_string(d.it_g) +
                             "^2x" + std::to_string(d.kt) + " mk=" + std::to_string(d.mk) +
                             " mmi=" + std::to_string(d.mmi);
    EXPECT_LT(std::fabs(direct_ns - sim_ns), 0.05 * sim_ns) << what << ": direct " << direct_ns << " sim " << sim_ns;
    EXPECT_LT(std::fabs(direct_ns - form_ns), 0.05 * form_ns)
        << what << ": direct " << direct_ns << " form " << form_ns;
    // Every block's work was charged: the compute time is the model's exactly.
    EXPECT_EQ(s.direct.sim.per_rank[0].compute,
              static_cast<Picoseconds>(std::llround(kWg * 1000 * d.fixed_iterations() * 8 * d.mm * (d.it_g / d.npe_i) *
                                                    (d.jt_g / d.npe_j) * d.kt)))
        << what;
  }
}

TEST(Sweep3DDirect, ReducedComputationTakesTheSameVirtualTime) {
  const Deck d = deck(3, 3, 30, 24, 8, 3, 2);
  const SweepOutcome full = run_sweep(d, false), reduced = run_sweep(d, true);
  ASSERT_TRUE(full.direct.completed()) << full.direct.error;
  ASSERT_TRUE(reduced.direct.completed()) << reduced.direct.error;
  EXPECT_EQ(reduced.rank0.time, full.rank0.time);
  for (std::size_t k = 0; k < 9; ++k)
    EXPECT_EQ(reduced.direct.sim.per_rank[k].finish, full.direct.sim.per_rank[k].finish) << k;
  EXPECT_EQ(reduced.rank0.totals.flux_sum, 0.0);  // nothing was computed
  EXPECT_GT(full.rank0.totals.flux_sum, 0.0);
}

// Early completion (DirectOptions::early_receive) lets a rank whose upstream
// blocks are sent sweep on without handing over; the engine's times are
// the same as when every receive waits for it, block by block.
TEST(Sweep3DDirect, EarlyCompletionTakesTheSameVirtualTime) {
  for (const Deck& d : {deck(3, 3, 30, 24, 8, 3, 2), deck(4, 2, 32, 16, 4, 6, 1)}) {
    const SweepOutcome early = run_sweep(d, false, true), waiting = run_sweep(d, false, false);
    ASSERT_TRUE(early.direct.completed()) << early.direct.error;
    ASSERT_TRUE(waiting.direct.completed()) << waiting.direct.error;
    EXPECT_EQ(early.rank0.time, waiting.rank0.time);
    EXPECT_EQ(early.rank0.totals.flux_sum, waiting.rank0.totals.flux_sum);
    for (std::size_t k = 0; k < early.direct.sim.per_rank.size(); ++k) {
      EXPECT_EQ(early.direct.sim.per_rank[k].finish, waiting.direct.sim.per_rank[k].finish) << k;
      EXPECT_EQ(early.direct.sim.per_rank[k].compute, waiting.direct.sim.per_rank[k].compute) << k;
      EXPECT_EQ(early.direct.sim.per_rank[k].wait, waiting.direct.sim.per_rank[k].wait) << k;
    }
    EXPECT_GT(early.direct.early_completions, 0u);
    EXPECT_LT(early.direct.switches, waiting.direct.switches);
  }
}

}  // namespace
}  // namespace poems::direct::testing
