// The Sweep3D closed form and the critical path against the simulator over
// the grid of issue 5: processor grids from 1x1 to 32x32 (and non-square),
// mk in {1, 2, 5, 7, 10, 30}, mmi in {1, 2, 3, 6}, messages below and above S,
// with and without the rendezvous handshake. The worst case is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "poems/loggp/critical_path.h"
#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/sim/simulator.h"
#include "poems/sweep3d/sweep3d_model.h"
#include "poems/taskgraph/dtg.h"

using namespace poems;

namespace {

std::shared_ptr<const taskgraph::StaticTaskGraph> sweep3d_graph() {
  static std::unique_ptr<psl::Frontend> fe;
  static std::shared_ptr<const taskgraph::StaticTaskGraph> graph;
  if (!graph) {
    fe = std::make_unique<psl::Frontend>();
    EXPECT_TRUE(fe->load_files({std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"}));
    graph = std::make_shared<taskgraph::StaticTaskGraph>(psl::lower_model(fe->program(), fe->sources(), ""));
  }
  return graph;
}

// Odin (the LogGOPSim paper, section 4.1) and the Opteron's Wg from examples/sweep3d/machines.psl.
components::Sweep3DMachine odin(bool handshake) {
  components::Sweep3DMachine m;
  m.params.L = 5'300'000;
  m.params.o = 2'300'000;
  m.params.g = 2'000'000;
  m.params.G = 2'500'000;
  m.params.O = 1'000'000;
  m.params.S = 32768;
  m.rendezvous_handshake = handshake;
  m.wg_ns = 60;
  return m;
}

struct Agreement {
  std::string name;
  double closed_form_error = 0, critical_path_error = 0;  // relative to the simulator
  double sim_ns = 0;
};

Agreement compare(const components::Sweep3DConfig& c, const components::Sweep3DMachine& m) {
  taskgraph::ParameterBinding b = {
      {"it_g", double(c.it_g)},   {"jt_g", double(c.jt_g)},   {"kt", double(c.kt)},
      {"npe_i", double(c.npe_i)}, {"npe_j", double(c.npe_j)}, {"mk", double(c.mk)},
      {"mmi", double(c.mmi)},     {"mm", double(c.mm)},       {"iterations", double(c.iterations)}};
  taskgraph::InstantiateOptions inst;
  inst.ns_per_work = m.wg_ns;
  sim::SimulationOptions so;
  so.params = m.params;
  so.rendezvous_handshake = m.rendezvous_handshake;
  so.per_rank_results = false;
  taskgraph::ModelSchedule for_sim(sweep3d_graph(), b, inst);
  sim::SimulationResult s = sim::simulate(for_sim, so);
  EXPECT_TRUE(s.completed);
  taskgraph::ModelSchedule for_cp(sweep3d_graph(), b, inst);
  loggp::AnalyticResult cp = loggp::critical_path(for_cp, so);
  EXPECT_LE(cp.time, s.max_finish) << "without queuing, nothing starts later than in the simulator";
  components::Sweep3DPrediction cf = components::predict_sweep3d(c, m);
  const double t = static_cast<double>(s.max_finish);
  Agreement a;
  char name[160];
  std::snprintf(name, sizeof name, "%lldx%lld it_g=%lld jt_g=%lld kt=%lld mk=%lld mmi=%lld%s", (long long)c.npe_i,
                (long long)c.npe_j, (long long)c.it_g, (long long)c.jt_g, (long long)c.kt, (long long)c.mk,
                (long long)c.mmi, m.rendezvous_handshake ? " handshake" : "");
  a.name = name;
  a.sim_ns = t / 1000;
  a.closed_form_error = (static_cast<double>(cf.time) - t) / t;
  a.critical_path_error = (static_cast<double>(cp.time) - t) / t;
  std::printf("%-60s sim %14.1f ns  closed %+8.4f%%  critical %+8.4f%%  (i %llu B, j %llu B)\n", name, a.sim_ns,
              100 * a.closed_form_error, 100 * a.critical_path_error, (unsigned long long)cf.message_i_bytes,
              (unsigned long long)cf.message_j_bytes);
  return a;
}

struct Worst {
  Agreement closed_form, critical_path;
  void add(const Agreement& a) {
    if (std::abs(a.closed_form_error) >= std::abs(closed_form.closed_form_error)) closed_form = a;
    if (std::abs(a.critical_path_error) >= std::abs(critical_path.critical_path_error)) critical_path = a;
  }
  void print(const char* what) const {
    std::printf("%s: worst closed form %+.4f%% (%s), worst critical path %+.4f%% (%s)\n", what,
                100 * closed_form.closed_form_error, closed_form.name.c_str(), 100 * critical_path.critical_path_error,
                critical_path.name.c_str());
  }
};

// Every (grid, mk, mmi, handshake) combination with `per_process` cells per
// process along i and j, kt = 30 (mk = 7 leaves a short last block).
Worst sweep_grid(const std::vector<std::pair<int, int>>& grids, const std::vector<int>& mks,
                 const std::vector<int>& mmis, int per_process, double wg_ns, int iterations) {
  Worst worst;
  for (bool handshake : {false, true})
    for (auto [ni, nj] : grids)
      for (int mk : mks)
        for (int mmi : mmis) {
          components::Sweep3DConfig c;
          c.npe_i = ni;
          c.npe_j = nj;
          c.it_g = per_process * ni;
          c.jt_g = per_process * nj;
          c.kt = 30;
          c.mk = mk;
          c.mmi = mmi;
          c.iterations = iterations;
          components::Sweep3DMachine m = odin(handshake);
          m.wg_ns = wg_ns;
          worst.add(compare(c, m));
        }
  return worst;
}

const std::vector<std::pair<int, int>> kGrids = {{1, 1}, {1, 5}, {5, 1}, {2, 2}, {3, 3}, {2, 7}, {8, 4}, {4, 8}};
const std::vector<int> kMk = {1, 2, 5, 7, 10, 30};
const std::vector<int> kMmi = {1, 2, 3, 6};

}  // namespace

// Odin with the Opteron's Wg = 60 ns. 16 cells per process: every message
// below S = 32 KiB; 64 cells: 8*64*mk*mmi bytes, above S from mk*mmi = 64 on.
TEST(Sweep3DAgreement, OdinBelowTheEagerLimit) {
  Worst w = sweep_grid(kGrids, kMk, kMmi, 16, 60, 2);
  w.print("16 cells per process");
  EXPECT_LT(std::abs(w.closed_form.closed_form_error), 0.02) << w.closed_form.name;
  EXPECT_LT(std::abs(w.critical_path.critical_path_error), 0.001) << w.critical_path.name;
}

TEST(Sweep3DAgreement, OdinAboveTheEagerLimit) {
  Worst w = sweep_grid(kGrids, kMk, kMmi, 64, 60, 2);
  w.print("64 cells per process");
  EXPECT_LT(std::abs(w.closed_form.closed_form_error), 0.02) << w.closed_form.name;
  EXPECT_LT(std::abs(w.critical_path.critical_path_error), 0.001) << w.critical_path.name;
}

TEST(Sweep3DAgreement, LargeGrids) {
  Worst w = sweep_grid({{16, 16}, {32, 32}, {32, 8}}, {2, 10}, {1, 3}, 8, 60, 1);
  w.print("16x16 to 32x32");
  EXPECT_LT(std::abs(w.closed_form.closed_form_error), 0.02) << w.closed_form.name;
  EXPECT_LT(std::abs(w.critical_path.critical_path_error), 0.001) << w.critical_path.name;
}

// A communication-bound machine (Wg = 2 ns: messages take a third of the
// time). The closed form still holds; so does the critical path, which keeps
// the NIC order of a process's back-to-back sends (without it: -5.6%).
TEST(Sweep3DAgreement, CommunicationBound) {
  Worst w = sweep_grid(kGrids, {1, 10, 30}, {1, 3, 6}, 64, 2, 2);
  w.print("Wg = 2 ns");
  EXPECT_LT(std::abs(w.closed_form.closed_form_error), 0.005) << w.closed_form.name;
  EXPECT_LE(w.critical_path.critical_path_error, 0) << "the critical path is a lower bound";
  EXPECT_LT(std::abs(w.critical_path.critical_path_error), 0.001) << w.critical_path.name;
}

// Issue 20, item 3: the cases of the grid above that the compressed walk
// had 0.38-1.47 % low (above S both ways, two to four blocks per octant
// pair, communication a third of the time; docs/models/sweep3d.md). There a
// j send waits for the i send before it to be matched, so the closed form
// walks every process and block: the simulator's time to the picosecond.
TEST(Sweep3DAgreement, RendezvousRingWithFewBlocksIsExact) {
  int cases = 0;
  for (bool handshake : {false, true})
    for (auto [ni, nj] : kGrids)
      for (int mmi : {3, 6}) {
        if (ni * nj == 1) continue;
        components::Sweep3DConfig c;
        c.npe_i = ni;
        c.npe_j = nj;
        c.it_g = 64 * ni;
        c.jt_g = 64 * nj;
        c.kt = 30;
        c.mk = 30;
        c.mmi = mmi;
        components::Sweep3DMachine m = odin(handshake);
        m.wg_ns = 2;
        // Two iterations: within 0.1 % (all ranks are taken to start the
        // second sweep together after the allreduce, which they do not quite).
        c.iterations = 2;
        const Agreement two = compare(c, m);
        EXPECT_LE(std::abs(two.closed_form_error), 0.001) << two.name;
        // One sweep: exact (on 1x5 and 5x1 by the compressed walk: no ring).
        c.iterations = 1;
        const Agreement a = compare(c, m);
        EXPECT_LE(std::abs(a.closed_form_error), 0.005) << a.name;
        EXPECT_EQ(a.closed_form_error, 0.0) << a.name;
        ++cases;
      }
  EXPECT_EQ(cases, 28);  // 7 grids x 2 mmi x handshake off/on
}

// One process: no messages, no allreduce; the time is exactly the work.
TEST(Sweep3DAgreement, OneProcessIsExactlyTheWork) {
  components::Sweep3DConfig c;
  c.npe_i = c.npe_j = 1;
  c.it_g = c.jt_g = 20;
  c.kt = 31;
  c.mk = 7;  // kb = 5, the last block short (modelled at full size, as the PSL spec does)
  c.mmi = 2;
  c.iterations = 3;
  components::Sweep3DMachine m = odin(false);
  components::Sweep3DPrediction p = components::predict_sweep3d(c, m);
  const std::uint64_t W = 60'000 * 20 * 20 * 7 * 2;  // ps
  EXPECT_EQ(p.block_work_ps, W);
  EXPECT_EQ(p.time, 3u * 8 * 3 * 5 * W);
  EXPECT_EQ(p.compute, p.time);
  EXPECT_EQ(p.comm, 0u);
  EXPECT_EQ(p.sync, 0u);
  Agreement a = compare(c, m);
  EXPECT_EQ(a.closed_form_error, 0.0);
  EXPECT_EQ(a.critical_path_error, 0.0);
}

// The Sweep3D facts' count (docs/references.md): 840 messages per iteration for 150^3 on 2x3, mk = 30,
// mmi = 2, mm = 6.
TEST(Sweep3DModel, MessageCountOfDesign) {
  components::Sweep3DConfig c;
  c.npe_i = 2;
  c.npe_j = 3;
  c.mk = 30;
  c.mmi = 2;
  c.iterations = 1;
  EXPECT_EQ(components::predict_sweep3d(c, odin(false)).messages, 840u);
}

TEST(Sweep3DModel, BadParametersNameTheParameterAndTheRange) {
  auto error_of = [](components::Sweep3DConfig c) -> std::string {
    try {
      components::predict_sweep3d(c, odin(false));
    } catch (const components::Sweep3DParameterError& e) {
      return e.what();
    }
    return "";
  };
  components::Sweep3DConfig c;
  c.mmi = 4;
  EXPECT_EQ(error_of(c), "mmi = 4 is out of range; expected a divisor of mm");
  c = {};
  c.mk = 0;
  EXPECT_EQ(error_of(c), "mk = 0 is out of range; expected an integer in 1..kt");
  c = {};
  c.npe_i = 0;
  EXPECT_EQ(error_of(c), "npe_i = 0 is out of range; expected an integer in 1..2^31");
  c = {};
  c.it_g = 1;
  EXPECT_EQ(error_of(c), "it_g = 1 is out of range; expected an integer in npe_i..2^31");
}

// Under the loggopsim semantics messages that arrive before their receive
// take the CPU at once and delay the wavefront's sends, by up to 37 % over
// the matched semantics on 16x16 with 5 cells per process (measured): the
// closed form, derived for the matched semantics, does not hold there and
// `poems analyze` refuses it (tests/cli). The critical path under loggopsim
// stays a lower bound, a loose one where that contention dominates.
TEST(Sweep3DAgreement, UnderLoggopsimTheCriticalPathIsALowerBound) {
  for (auto [ni, nj] : std::vector<std::pair<int, int>>{{2, 2}, {4, 4}, {8, 4}})
    for (int mk : {1, 10})
      for (int per : {5, 64}) {
        components::Sweep3DConfig c;
        c.npe_i = ni;
        c.npe_j = nj;
        c.it_g = per * ni;
        c.jt_g = per * nj;
        c.kt = 30;
        c.mk = mk;
        c.mmi = 3;
        c.iterations = 1;
        taskgraph::ParameterBinding b = {
            {"it_g", double(c.it_g)}, {"jt_g", double(c.jt_g)}, {"kt", 30.0}, {"npe_i", double(ni)},
            {"npe_j", double(nj)},    {"mk", double(mk)},       {"mmi", 3.0}, {"iterations", 1.0}};
        taskgraph::InstantiateOptions inst;
        inst.ns_per_work = 60;
        sim::SimulationOptions so;
        so.params = odin(false).params;
        so.semantics = sim::Semantics::Loggopsim;
        taskgraph::ModelSchedule for_sim(sweep3d_graph(), b, inst), for_cp(sweep3d_graph(), b, inst);
        const sim::SimulationResult s = sim::simulate(for_sim, so);
        ASSERT_TRUE(s.completed);
        EXPECT_LE(loggp::critical_path(for_cp, so).time, s.max_finish) << ni << "x" << nj << " mk=" << mk;
      }
}
