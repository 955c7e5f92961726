// A rank's message to itself on a machine with copy_G (docs/network.md, "A
// rank's copy of its own block"): one copy in the rank's memory, as Open
// MPI's self transport makes it, with no latency, gap or wire time; the
// (s-1) x copy_G paid half by the send's CPU and half by the receive's.
// Closed forms on DESIGN 5.1's parameters (L=2500 o=1500 g=1000 G=6 ns).
#include <memory>
#include <vector>

#include "direct_test_util.h"
#include "poems/components/network.h"

namespace poems::direct::testing {
namespace {

const sim::LogGOPS kSelfDesign{};

DirectOptions self_machine(std::uint32_t ranks, components::FemtosecondsPerByte copy) {
  DirectOptions o = model_options(ranks, kSelfDesign);
  components::NetworkSpec spec;  // one rank per node, the LogGOPS above between nodes
  spec.copy_per_byte = copy;
  o.sim.network = std::make_shared<const components::Network>(spec);
  return o;
}

constexpr int kSelfInts = 4000;  // 16,000 bytes: 15,999 x 0.5 ns = 7,999.5 ns

// Rank 0 sends kSelfInts ints to itself (`send_first`: MPI_Isend then MPI_Recv;
// else MPI_Irecv then MPI_Send); returns the time it took.
Picoseconds to_itself(components::FemtosecondsPerByte copy, bool send_first) {
  Picoseconds took = 0;
  const DirectResult r = run_ranks(self_machine(2, copy), [&](int rank, int) {
    if (rank != 0) return;
    std::vector<int> a(kSelfInts, 7), b(kSelfInts, 0);
    MPI_Request q;
    const double t0 = MPI_Wtime();
    if (send_first) {
      MPI_Isend(a.data(), kSelfInts, MPI_INT, 0, 3, MPI_COMM_WORLD, &q);
      MPI_Recv(b.data(), kSelfInts, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Irecv(b.data(), kSelfInts, MPI_INT, 0, 3, MPI_COMM_WORLD, &q);
      MPI_Send(a.data(), kSelfInts, MPI_INT, 0, 3, MPI_COMM_WORLD);
    }
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    took = ps(MPI_Wtime() - t0);
    EXPECT_EQ(b[kSelfInts - 1], 7) << "the data arrive";
  });
  EXPECT_TRUE(r.completed()) << r.error;
  return took;
}

TEST(SelfMessage, IsOneCopyAtTheMachinesCopyRate) {
  EXPECT_EQ(to_itself(500'000, false), 7'999'500);
  EXPECT_EQ(to_itself(500'000, true), 7'999'500);
  EXPECT_EQ(to_itself(2'000'000, false), 31'998'000);  // four times the rate, four times the time
}

TEST(SelfMessage, WithoutCopyRateIsANodeLocalMessage) {
  // No copy_G: the message is priced as between two ranks of one node,
  // here the network's LogGOPS: o + L + o + (s-1)G = 1.5 + 2.5 + 1.5 + 95.994 us.
  EXPECT_EQ(to_itself(0, false), 101'494'000);
}

TEST(SelfMessage, MessagesBetweenRanksKeepTheirPrice) {
  // copy_G changes a rank's message to itself only: 8 bytes from rank 1 to
  // rank 0 arrive at o + L and are received by o + 7G = 5,542 ns either way.
  for (components::FemtosecondsPerByte copy :
       {components::FemtosecondsPerByte{0}, components::FemtosecondsPerByte{500'000}}) {
    Picoseconds took = 0;
    const DirectResult r = run_ranks(self_machine(2, copy), [&](int rank, int) {
      double x = rank;
      const double t0 = MPI_Wtime();
      if (rank == 1) MPI_Send(&x, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
      if (rank == 0) {
        MPI_Recv(&x, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        took = ps(MPI_Wtime() - t0);
        EXPECT_EQ(x, 1.0);
      }
    });
    ASSERT_TRUE(r.completed()) << r.error;
    EXPECT_EQ(took, ns(5'542)) << "copy_G " << copy << " fs/B";
  }
}

}  // namespace
}  // namespace poems::direct::testing
