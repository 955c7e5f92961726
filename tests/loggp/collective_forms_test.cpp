// The collective closed forms of components/ (the LogGOPSim paper, section 3) equal the
// simulator exactly in their stated regimes, and decline outside them.
#include <gtest/gtest.h>

#include "poems/components/collective_models.h"
#include "poems/loggp/critical_path.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/explicit_schedule.h"

using namespace poems;
using taskgraph::CollectiveAlgorithm;
using taskgraph::CollectiveOp;

namespace {

components::LogGOPS params(std::uint64_t L, std::uint64_t o, std::uint64_t g, std::uint64_t G_fs, std::uint64_t O_fs,
                           std::uint64_t S = 65535) {
  components::LogGOPS p;
  p.L = L * 1000;
  p.o = o * 1000;
  p.g = g * 1000;
  p.G = G_fs;
  p.O = O_fs;
  p.S = S;
  return p;
}

struct Times {
  taskgraph::Picoseconds sim, critical_path;
};

Times run(CollectiveOp op, CollectiveAlgorithm a, std::uint32_t procs, std::uint64_t bytes,
          const components::LogGOPS& p, bool handshake = false) {
  taskgraph::CollectiveCall call;
  call.op = op;
  call.algorithm = a;
  call.procs = procs;
  call.bytes = bytes;
  sim::SimulationOptions o;
  o.params = p;
  o.rendezvous_handshake = handshake;
  taskgraph::CollectiveSchedule for_sim(call), for_cp(call);
  sim::SimulationResult r = sim::simulate(for_sim, o);
  EXPECT_TRUE(r.completed);
  return {r.max_finish, loggp::critical_path(for_cp, o).time};
}

taskgraph::CollectiveCall call_of(CollectiveOp op, CollectiveAlgorithm a, std::uint32_t procs, std::uint64_t bytes) {
  taskgraph::CollectiveCall c;
  c.op = op;
  c.algorithm = a;
  c.procs = procs;
  c.bytes = bytes;
  return c;
}

// CPU-bound, NIC-bound, a 200 Gb/s link with O > 0, and the paper's parameters.
const components::LogGOPS kMachines[] = {
    params(2500, 1500, 1000, 0, 6'000'000),
    params(2500, 1500, 4000, 6'000'000, 0),
    params(5300, 300, 800, 40'000, 10'000, 1 << 20),
    params(2500, 1500, 4000, 6'000'000, 8'000'000),
};

}  // namespace

TEST(CollectiveForms, EqualTheSimulatorExactly) {
  int checked = 0;
  for (const auto& p : kMachines)
    for (std::uint64_t s : {1ull, 1024ull, 100'000ull})
      for (bool rendezvous : {false, true})
        for (std::uint32_t P : {2u, 3u, 5u, 8u, 13u, 64u, 256u}) {
          components::LogGOPS q = p;
          if (rendezvous) q.S = s - 1;
          const taskgraph::Picoseconds sync = q.L;
          const struct {
            CollectiveOp op;
            CollectiveAlgorithm a;
          } forms[] = {{CollectiveOp::Scatter, CollectiveAlgorithm::Linear},
                       {CollectiveOp::Gather, CollectiveAlgorithm::Linear},
                       {CollectiveOp::Bcast, CollectiveAlgorithm::Binomial},
                       {CollectiveOp::Reduce, CollectiveAlgorithm::Binomial},
                       {CollectiveOp::Allreduce, CollectiveAlgorithm::Dissemination},
                       {CollectiveOp::Barrier, CollectiveAlgorithm::Dissemination},
                       {CollectiveOp::Allreduce, CollectiveAlgorithm::RecursiveDoubling}};
          for (const auto& f : forms) {
            auto form = components::collective_time(call_of(f.op, f.a, P, s), q, sync);
            if (!form) continue;  // outside the form's regime
            Times r = run(f.op, f.a, P, s, q);
            EXPECT_EQ(*form, r.sim) << taskgraph::collective_op_name(f.op) << "/"
                                    << taskgraph::collective_algorithm_name(f.a) << " P=" << P << " s=" << s
                                    << (rendezvous ? " rendezvous" : "");
            EXPECT_LE(r.critical_path, r.sim);
            ++checked;
          }
        }
  // Every form applies on most of these cases (the binomial one to powers of two).
  EXPECT_GT(checked, 400);
}

TEST(CollectiveForms, TheHandshakeSynchronizationIsChargedPerRound) {
  const components::LogGOPS p = params(2500, 1500, 1000, 6'000'000, 0, 100);
  const taskgraph::Picoseconds handshake = 2 * (p.L + p.o);
  for (std::uint32_t P : {2u, 7u, 16u}) {
    auto form = components::dissemination_time(p, P, 1024, handshake);
    ASSERT_TRUE(form);
    EXPECT_EQ(*form, run(CollectiveOp::Allreduce, CollectiveAlgorithm::Dissemination, P, 1024, p, true).sim);
  }
}

// By hand: L 5 us, o 1 us, g 2 us, G 1 ns/B, 1 KiB eager on 8 ranks: three
// hops of o + L + (s-1)G + o = 1000 + 5000 + 1023 + 1000 = 8023 ns; with the
// rendezvous (S below 1 KiB) each hop waits L more, 13023 ns.
TEST(CollectiveForms, BinomialReduceByHand) {
  const components::LogGOPS p = params(5000, 1000, 2000, 1'000'000, 0);
  EXPECT_EQ(components::binomial_reduce_time(p, 8, 1024, p.L), std::optional<taskgraph::Picoseconds>(24'069'000));
  components::LogGOPS rendezvous = p;
  rendezvous.S = 1000;
  EXPECT_EQ(components::binomial_reduce_time(rendezvous, 8, 1024, rendezvous.L),
            std::optional<taskgraph::Picoseconds>(39'069'000));
  EXPECT_EQ(components::binomial_reduce_time(p, 2, 1024, p.L), std::optional<taskgraph::Picoseconds>(8'023'000));
  EXPECT_EQ(components::binomial_reduce_time(p, 1, 1024, p.L), std::optional<taskgraph::Picoseconds>(0));
  // An incomplete tree (P = 6), and a receive longer than a hop (g = 9 us).
  EXPECT_FALSE(components::binomial_reduce_time(p, 6, 1024, p.L));
  EXPECT_FALSE(components::binomial_reduce_time(params(5000, 1000, 9000, 1'000'000, 0), 8, 1024, p.L));
}

TEST(CollectiveForms, DeclineOutsideTheirRegime) {
  // Eq. 1 with o > g but G > O: neither resource dominates.
  const components::LogGOPS mixed = params(2500, 1500, 1000, 6'000'000, 1'000'000);
  EXPECT_FALSE(components::linear_scatter_time(mixed, 8, 1024, 0));
  // Eq. 3 on an incomplete tree.
  EXPECT_FALSE(components::binomial_bcast_time(mixed, 6, 1024, 0));
  EXPECT_EQ(components::binomial_bcast_time(mixed, 1, 1024, 0), 0u);
}

// Under the loggopsim semantics a rendezvous sender does not synchronize,
// so the same forms hold with no synchronization term, exactly, except for
// 0-byte messages (the barrier's): LogGOPSim charges them o - G, its
// (s-1)G wrapping, and `poems analyze` takes the critical path there. The
// critical path stays a lower bound, 0-byte messages included.
TEST(CollectiveForms, EqualTheLoggopsimSimulatorWithoutSynchronization) {
  int checked = 0;
  for (const auto& p : kMachines)
    for (std::uint64_t s : {1ull, 1024ull, 100'000ull})
      for (bool rendezvous : {false, true})
        for (std::uint32_t P : {2u, 3u, 5u, 8u, 13u, 64u, 256u}) {
          components::LogGOPS q = p;
          if (rendezvous) q.S = s - 1;
          const struct {
            CollectiveOp op;
            CollectiveAlgorithm a;
          } forms[] = {{CollectiveOp::Scatter, CollectiveAlgorithm::Linear},
                       {CollectiveOp::Gather, CollectiveAlgorithm::Linear},
                       {CollectiveOp::Bcast, CollectiveAlgorithm::Binomial},
                       {CollectiveOp::Reduce, CollectiveAlgorithm::Binomial},
                       {CollectiveOp::Allreduce, CollectiveAlgorithm::Dissemination},
                       {CollectiveOp::Barrier, CollectiveAlgorithm::Dissemination},
                       {CollectiveOp::Allreduce, CollectiveAlgorithm::RecursiveDoubling}};
          for (const auto& f : forms) {
            const taskgraph::CollectiveCall call = call_of(f.op, f.a, P, s);
            auto form = components::collective_time(call, q, 0);
            if (!form) continue;
            taskgraph::CollectiveSchedule for_sim(call), for_cp(call);
            sim::SimulationOptions o;
            o.params = q;
            o.semantics = sim::Semantics::Loggopsim;
            const taskgraph::Picoseconds simulated = sim::simulate(for_sim, o).max_finish;
            EXPECT_LE(loggp::critical_path(for_cp, o).time, simulated);
            if (f.op == CollectiveOp::Barrier) {
              EXPECT_LT(simulated, *form);  // o - G per 0-byte message
              continue;
            }
            EXPECT_EQ(*form, simulated) << taskgraph::collective_op_name(f.op) << "/"
                                        << taskgraph::collective_algorithm_name(f.a) << " P=" << P << " s=" << s
                                        << (rendezvous ? " rendezvous" : "");
            ++checked;
          }
        }
  EXPECT_GT(checked, 400);
}
