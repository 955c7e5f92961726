// Every collective under direct execution, with every algorithm of the
// shared library: the data delivered are the MPI results, and every rank's
// virtual finish time equals the simulator's for the same collective (and
// the seed-002 closed form where one applies).
#include <numeric>
#include <vector>

#include "direct_test_util.h"
#include "poems/components/collective_models.h"
#include "poems/components/network.h"
#include "poems/taskgraph/explicit_schedule.h"

namespace poems::direct::testing {
namespace {

using taskgraph::CollectiveAlgorithm;
using taskgraph::CollectiveOp;

const sim::LogGOPS kDefault{};  // L=2500 o=1500 g=1000 G=6 O=0 ns, S=65535

int value(int rank, int j) { return rank * 1000 + j; }

struct Case {
  CollectiveOp op;
  CollectiveAlgorithm algorithm;
  int procs;
  int count;  // ints per rank (per peer for alltoall)
  int root;
};

std::string name(const Case& c) {
  return std::string(taskgraph::collective_op_name(c.op)) + "/" + taskgraph::collective_algorithm_name(c.algorithm) +
         " P=" + std::to_string(c.procs) + " count=" + std::to_string(c.count) + " root=" + std::to_string(c.root);
}

// The collective with data; returns the number of wrong values seen.
int run_with_data(const Case& c, int rank, int size) {
  const int n = c.count;
  const auto un = static_cast<std::size_t>(n), up = static_cast<std::size_t>(size);
  int wrong = 0;
  auto expect = [&](bool ok) { wrong += ok ? 0 : 1; };
  std::vector<int> mine(un), all(un * up), out(un * up, -1);
  for (int j = 0; j < n; ++j) mine[static_cast<std::size_t>(j)] = value(rank, j);
  switch (c.op) {
    case CollectiveOp::Barrier: MPI_Barrier(MPI_COMM_WORLD); break;
    case CollectiveOp::Bcast: {
      std::vector<int> buf = rank == c.root ? mine : std::vector<int>(un, -1);
      MPI_Bcast(buf.data(), n, MPI_INT, c.root, MPI_COMM_WORLD);
      for (int j = 0; j < n; ++j) expect(buf[static_cast<std::size_t>(j)] == value(c.root, j));
      break;
    }
    case CollectiveOp::Reduce:
    case CollectiveOp::Allreduce: {
      std::vector<int> sum(un, -1);
      if (c.op == CollectiveOp::Reduce)
        MPI_Reduce(mine.data(), sum.data(), n, MPI_INT, MPI_SUM, c.root, MPI_COMM_WORLD);
      else
        MPI_Allreduce(mine.data(), sum.data(), n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      if (c.op == CollectiveOp::Allreduce || rank == c.root)
        for (int j = 0; j < n; ++j) expect(sum[static_cast<std::size_t>(j)] == 1000 * size * (size - 1) / 2 + size * j);
      break;
    }
    case CollectiveOp::Gather:
    case CollectiveOp::Allgather:
      if (c.op == CollectiveOp::Gather)
        MPI_Gather(mine.data(), n, MPI_INT, out.data(), n, MPI_INT, c.root, MPI_COMM_WORLD);
      else
        MPI_Allgather(mine.data(), n, MPI_INT, out.data(), n, MPI_INT, MPI_COMM_WORLD);
      if (c.op == CollectiveOp::Allgather || rank == c.root)
        for (int r = 0; r < size; ++r)
          for (int j = 0; j < n; ++j) expect(out[static_cast<std::size_t>(r * n + j)] == value(r, j));
      break;
    case CollectiveOp::Scatter:
      for (int r = 0; r < size; ++r)
        for (int j = 0; j < n; ++j) all[static_cast<std::size_t>(r * n + j)] = value(r, j) + 7;
      MPI_Scatter(all.data(), n, MPI_INT, out.data(), n, MPI_INT, c.root, MPI_COMM_WORLD);
      for (int j = 0; j < n; ++j) expect(out[static_cast<std::size_t>(j)] == value(rank, j) + 7);
      break;
    case CollectiveOp::Alltoall:
      // Block i of rank r goes to rank i: r * 1000 + i * 10 + j (j < 10 here).
      for (int i = 0; i < size; ++i)
        for (int j = 0; j < n; ++j) all[static_cast<std::size_t>(i * n + j)] = rank * 1000 + i * 10 + j % 10;
      MPI_Alltoall(all.data(), n, MPI_INT, out.data(), n, MPI_INT, MPI_COMM_WORLD);
      for (int i = 0; i < size; ++i)
        for (int j = 0; j < n; ++j) expect(out[static_cast<std::size_t>(i * n + j)] == i * 1000 + rank * 10 + j % 10);
      break;
  }
  return wrong;
}

sim::SimulationResult simulated(const Case& c) {
  taskgraph::CollectiveCall call;
  call.op = c.op;
  call.algorithm = c.algorithm;
  call.procs = static_cast<std::uint32_t>(c.procs);
  call.bytes = c.op == CollectiveOp::Barrier ? 0 : 4ull * static_cast<std::uint64_t>(c.count);
  call.root = static_cast<std::uint32_t>(c.root);
  taskgraph::CollectiveSchedule source(call);
  sim::SimulationOptions o;
  o.params = kDefault;
  sim::SimulationResult r = sim::simulate(source, o);
  if (auto form = components::collective_time(call, kDefault, kDefault.L)) {
    EXPECT_EQ(r.max_finish, *form) << name(c) << ": the simulator against the closed form";
  }
  return r;
}

void check(const Case& c) {
  DirectOptions o = model_options(static_cast<std::uint32_t>(c.procs), kDefault);
  o.algorithms[c.op] = c.algorithm;
  std::vector<int> wrong(static_cast<std::size_t>(c.procs), -1);
  DirectResult r =
      run_ranks(o, [&](int rank, int size) { wrong[static_cast<std::size_t>(rank)] = run_with_data(c, rank, size); });
  ASSERT_TRUE(r.completed()) << name(c) << ": " << r.error;
  for (int k = 0; k < c.procs; ++k) EXPECT_EQ(wrong[static_cast<std::size_t>(k)], 0) << name(c) << " rank " << k;
  sim::SimulationResult s = simulated(c);
  ASSERT_EQ(r.sim.per_rank.size(), s.per_rank.size());
  for (std::size_t k = 0; k < s.per_rank.size(); ++k)
    EXPECT_EQ(r.sim.per_rank[k].finish, s.per_rank[k].finish) << name(c) << " rank " << k;
  EXPECT_EQ(r.sim.messages, s.messages) << name(c);
  if (auto form =
          components::collective_time({c.op, c.algorithm, static_cast<std::uint32_t>(c.procs), 0,
                                       c.op == CollectiveOp::Barrier ? 0 : 4ull * static_cast<std::uint64_t>(c.count),
                                       static_cast<std::uint32_t>(c.root), 0, 0, 0},
                                      kDefault, kDefault.L)) {
    EXPECT_EQ(r.sim.max_finish, *form) << name(c) << ": direct execution against the closed form";
  }
}

class EveryCollective : public ::testing::TestWithParam<CollectiveOp> {};

TEST_P(EveryCollective, DeliversDataInTheSimulatorsTime) {
  const CollectiveOp op = GetParam();
  for (CollectiveAlgorithm a : taskgraph::algorithms_for(op))
    for (int procs : {1, 2, 3, 4, 5, 8, 13})
      // 12 bytes (eager) and 80 KB per rank (rendezvous: above S = 65535).
      for (int count : {3, 20000}) {
        if (op == CollectiveOp::Alltoall && count > 3 && procs > 5) continue;  // keep the buffers small
        const int root = (op == CollectiveOp::Bcast || op == CollectiveOp::Reduce || op == CollectiveOp::Gather ||
                          op == CollectiveOp::Scatter)
                             ? procs / 2
                             : 0;
        check(Case{op, a, procs, count, root});
      }
}

INSTANTIATE_TEST_SUITE_P(Collectives, EveryCollective,
                         ::testing::Values(CollectiveOp::Barrier, CollectiveOp::Bcast, CollectiveOp::Reduce,
                                           CollectiveOp::Allreduce, CollectiveOp::Gather, CollectiveOp::Scatter,
                                           CollectiveOp::Allgather, CollectiveOp::Alltoall),
                         [](const auto& info) { return std::string(taskgraph::collective_op_name(info.param)); });

TEST(Collectives, ClosedFormsAtPowersOfTwo) {
  // The regimes of the LogGOPSim paper's forms: binomial broadcast and linear scatter/gather
  // rooted at 0, dissemination barrier and allreduce, recursive doubling.
  for (int procs : {2, 4, 8, 16, 32}) {
    check(Case{CollectiveOp::Bcast, CollectiveAlgorithm::Binomial, procs, 3, 0});
    check(Case{CollectiveOp::Scatter, CollectiveAlgorithm::Linear, procs, 3, 0});
    check(Case{CollectiveOp::Gather, CollectiveAlgorithm::Linear, procs, 3, 0});
    check(Case{CollectiveOp::Barrier, CollectiveAlgorithm::Dissemination, procs, 0, 0});
    check(Case{CollectiveOp::Allreduce, CollectiveAlgorithm::Dissemination, procs, 3, 0});
    check(Case{CollectiveOp::Allreduce, CollectiveAlgorithm::RecursiveDoubling, procs, 3, 0});
  }
}

// A collective's own block is copied within the rank's memory (Open MPI's
// basic linear and ring algorithms): at the machine's copy_G, charged on the
// rank's CPU at the call; nothing in place, nothing for another rank's part.
TEST(Collectives, TheOwnBlockIsCopiedAtTheMachinesCopyRate) {
  auto options = [](std::uint32_t ranks, components::FemtosecondsPerByte copy) {
    DirectOptions o = model_options(ranks, kDefault);
    components::NetworkSpec spec;
    spec.copy_per_byte = copy;
    o.sim.network = std::make_shared<const components::Network>(spec);
    return o;
  };
  constexpr int n = 4000;  // 16,000 bytes: 8,000 ns at 0.5 ns/B
  std::vector<int> a(n, 1), b(n, 0);
  int one = n, zero = 0;
  auto one_rank = [&](int call) {
    switch (call) {
      case 0: MPI_Alltoall(a.data(), n, MPI_INT, b.data(), n, MPI_INT, MPI_COMM_WORLD); break;
      case 1: MPI_Alltoallv(a.data(), &one, &zero, MPI_INT, b.data(), &one, &zero, MPI_INT, MPI_COMM_WORLD); break;
      case 2: MPI_Allgather(a.data(), n, MPI_INT, b.data(), n, MPI_INT, MPI_COMM_WORLD); break;
      case 3: MPI_Allgatherv(a.data(), n, MPI_INT, b.data(), &one, &zero, MPI_INT, MPI_COMM_WORLD); break;
      case 4: MPI_Gather(a.data(), n, MPI_INT, b.data(), n, MPI_INT, 0, MPI_COMM_WORLD); break;
      case 5: MPI_Scatter(a.data(), n, MPI_INT, b.data(), n, MPI_INT, 0, MPI_COMM_WORLD); break;
      case 6: MPI_Gatherv(a.data(), n, MPI_INT, b.data(), &one, &zero, MPI_INT, 0, MPI_COMM_WORLD); break;
      case 7: MPI_Scatterv(a.data(), &one, &zero, MPI_INT, b.data(), n, MPI_INT, 0, MPI_COMM_WORLD); break;
      case 8: MPI_Alltoall(MPI_IN_PLACE, n, MPI_INT, b.data(), n, MPI_INT, MPI_COMM_WORLD); break;
      case 9: MPI_Allgather(MPI_IN_PLACE, n, MPI_INT, b.data(), n, MPI_INT, MPI_COMM_WORLD); break;
      default: MPI_Bcast(a.data(), n, MPI_INT, 0, MPI_COMM_WORLD); break;
    }
  };
  for (int call = 0; call <= 10; ++call) {
    b.assign(n, 0);
    DirectResult r = run_ranks(options(1, 500'000), [&](int, int) { one_rank(call); });
    ASSERT_TRUE(r.completed()) << "call " << call << ": " << r.error;
    EXPECT_EQ(r.sim.max_finish, call < 8 ? ns(8'000) : 0) << "call " << call;
    if (call < 8) {
      EXPECT_EQ(b[n - 1], 1) << "call " << call << ": the data still arrive";
    }
  }
  // Four ranks, pairwise all-to-all of 3 ints to each: every rank starts
  // its exchange 12 x 2 ns later, so every rank ends that much later.
  auto exchange = [](int rank, int size) {
    std::vector<int> to(static_cast<std::size_t>(3 * size), rank), from(static_cast<std::size_t>(3 * size), -1);
    MPI_Alltoall(to.data(), 3, MPI_INT, from.data(), 3, MPI_INT, MPI_COMM_WORLD);
  };
  DirectResult without = run_ranks(options(4, 0), exchange), with = run_ranks(options(4, 2'000'000), exchange);
  ASSERT_TRUE(without.completed() && with.completed()) << without.error << with.error;
  for (std::size_t k = 0; k < 4; ++k)
    EXPECT_EQ(with.sim.per_rank[k].finish, without.sim.per_rank[k].finish + ns(24)) << "rank " << k;
  // A flat machine but for copy_G is not flat: the run key keeps it.
  components::NetworkSpec spec;
  spec.copy_per_byte = 500'000;
  EXPECT_FALSE(spec.flat());
  EXPECT_EQ(components::network_key_json(spec).at("copy_fs_per_byte"), 500'000);
  EXPECT_EQ(components::network_spec_from_json(components::network_key_json(spec)).copy_per_byte, 500'000u);
}

TEST(Collectives, ReductionsOfEveryKind) {
  struct Out {
    double max = 0, sum = 0;
    long long prod = 0;
    int land = -1, bor = -1;
    struct {
      double value;
      int index;
    } minloc{0, -1};
  };
  std::vector<Out> out(6);
  DirectResult r = run_ranks(model_options(6, kDefault), [&](int rank, int) {
    Out& o = out[static_cast<std::size_t>(rank)];
    const double d = 1.5 * rank - 2;
    MPI_Allreduce(&d, &o.max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double third = 1.0 / (rank + 3);
    MPI_Allreduce(&third, &o.sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    long long f = rank + 1;
    MPI_Allreduce(&f, &o.prod, 1, MPI_LONG_LONG, MPI_PROD, MPI_COMM_WORLD);
    int odd = rank % 2, bit = 1 << rank;
    MPI_Allreduce(&odd, &o.land, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Allreduce(&bit, &o.bor, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
    struct {
      double value;
      int index;
    } pair{static_cast<double>((rank - 3) * (rank - 3)), rank};
    int in_place = rank;
    MPI_Allreduce(MPI_IN_PLACE, &in_place, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(in_place, 15);
    MPI_Allreduce(&pair, &o.minloc, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
  });
  ASSERT_TRUE(r.completed()) << r.error;
  double sum = 0;
  for (int k = 0; k < 6; ++k) sum += 1.0 / (k + 3);  // rank order: the same bits
  for (const Out& o : out) {
    EXPECT_EQ(o.max, 5.5);
    EXPECT_EQ(o.sum, sum);
    EXPECT_EQ(o.prod, 720);
    EXPECT_EQ(o.land, 0);
    EXPECT_EQ(o.bor, 63);
    EXPECT_EQ(o.minloc.value, 0.0);
    EXPECT_EQ(o.minloc.index, 3);
  }
}

TEST(Communicators, SplitAndDupGiveWorkingGroups) {
  const int P = 7;
  std::vector<std::array<int, 4>> seen(P);
  DirectResult r = run_ranks(model_options(P, kDefault), [&](int rank, int) {
    MPI_Comm half, copy;
    // Even and odd ranks, ordered by descending world rank.
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hr, hs, sum = 0;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
    MPI_Comm_dup(half, &copy);
    int first = rank;  // the group's rank 0 (the largest world rank) broadcasts its world rank
    MPI_Bcast(&first, 1, MPI_INT, 0, copy);
    seen[static_cast<std::size_t>(rank)] = {hr, hs, sum, first};
    MPI_Comm none;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &none);
    EXPECT_EQ(none == MPI_COMM_NULL, rank != 0);
    MPI_Comm_free(&copy);
    MPI_Comm_free(&half);
    EXPECT_EQ(half, MPI_COMM_NULL);
  });
  ASSERT_TRUE(r.completed()) << r.error;
  for (int k = 0; k < P; ++k) {
    const auto& s = seen[static_cast<std::size_t>(k)];
    const bool even = k % 2 == 0;
    EXPECT_EQ(s[1], even ? 4 : 3);
    EXPECT_EQ(s[0], even ? (6 - k) / 2 : (5 - k) / 2);
    EXPECT_EQ(s[2], even ? 0 + 2 + 4 + 6 : 1 + 3 + 5);
    EXPECT_EQ(s[3], even ? 6 : 5);
  }
}

}  // namespace
}  // namespace poems::direct::testing
