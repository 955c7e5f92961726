// When a receive pays its CPU overhead (DirectOptions::receive_overhead_at_wait,
// `poems direct --receive-overhead`): at the match (LogGOPS, Open MPI's eager
// copy) or in the call that completes it, in the program's order (SimGrid's
// SMPI). Closed forms on DESIGN 5.1's parameters, flat machine.
#include <vector>

#include "direct_test_util.h"

namespace poems::direct::testing {
namespace {

const sim::LogGOPS kDesign{};  // L=2500 o=1500 g=1000 G=6 O=0 (ns)

// Rank 1 sends two 8-byte messages (tags 1 and 2) at once; rank 0 posts both
// receives, then completes them as `complete` says. Returns rank 0's time.
struct TwoMessages {
  Picoseconds took = 0;
  DirectResult result;
};

TwoMessages two_messages(bool at_wait, const std::function<void(MPI_Request*)>& complete) {
  DirectOptions o = model_options(2, kDesign);
  o.receive_overhead_at_wait = at_wait;
  TwoMessages out;
  out.result = run_ranks(o, [&](int rank, int) {
    double a = 1, b = 2;
    if (rank == 0) {
      const double t0 = MPI_Wtime();
      MPI_Request q[2];
      MPI_Irecv(&a, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, &q[0]);
      MPI_Irecv(&b, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, &q[1]);
      complete(q);
      out.took = ps(MPI_Wtime() - t0);
      EXPECT_EQ(a, 10.0);
      EXPECT_EQ(b, 20.0);
    } else {
      a = 10;
      b = 20;
      MPI_Send(&a, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
      MPI_Send(&b, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    }
  });
  return out;
}

// The messages arrive at o + L = 4,000 ns and, one o later, 5,500 ns; each
// receive's per-byte part is 7G = 42 ns.
constexpr Picoseconds kFirstIn = ns(4000), kSecondIn = ns(5500), kPerByte = ns(42), kOverhead = ns(1500);

void later_first(MPI_Request* q) {
  MPI_Wait(&q[1], MPI_STATUS_IGNORE);
  MPI_Wait(&q[0], MPI_STATUS_IGNORE);
}

void in_arrival_order(MPI_Request* q) {
  MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  MPI_Wait(&q[1], MPI_STATUS_IGNORE);
}

TEST(ReceiveOverhead, AtTheMatchTheWaitOrderDoesNotMatter) {
  // Each o + 7G on the CPU when its message is in: the second waits for the
  // first's processing (4,000 + 1,542 = 5,542 > 5,500).
  const Picoseconds expected = kFirstIn + 2 * (kOverhead + kPerByte);
  for (auto* order : {later_first, in_arrival_order}) {
    const TwoMessages r = two_messages(false, order);
    ASSERT_TRUE(r.result.completed()) << r.result.error;
    EXPECT_EQ(r.took, expected);
    EXPECT_EQ(r.result.sim.per_rank[0].overhead, 2 * (kOverhead + kPerByte));
  }
}

TEST(ReceiveOverhead, AtTheWaitTheLaterMessageWaitedFirstCostsOneOMore) {
  // SMPI's rule: the bytes are in at 4,042 and 5,542 ns; the first wait
  // (the later message) pays its o from 5,542, the second one o after:
  // 8,542 ns, SMPI's time for the same program (docs/network.md).
  const TwoMessages late = two_messages(true, later_first);
  ASSERT_TRUE(late.result.completed()) << late.result.error;
  EXPECT_EQ(late.took, kSecondIn + kPerByte + 2 * kOverhead);
  EXPECT_EQ(late.took, ns(8542));
  // o + (s-1)O each, counted as overhead, not computation.
  EXPECT_EQ(late.result.sim.per_rank[0].overhead, 2 * kOverhead);
  EXPECT_EQ(late.result.sim.per_rank[0].compute, 0u);

  // Waited in arrival order the first o overlaps the second message.
  const TwoMessages ordered = two_messages(true, in_arrival_order);
  ASSERT_TRUE(ordered.result.completed()) << ordered.result.error;
  EXPECT_EQ(ordered.took, kSecondIn + kPerByte + kOverhead);
}

TEST(ReceiveOverhead, WaitallPaysEachAsItCompletesWhateverTheArrayOrder) {
  // SMPI's MPI_Waitall is a waitany loop: the first message's o overlaps the
  // wait for the second, as in arrival order above.
  const TwoMessages r = two_messages(true, [](MPI_Request* q) {
    MPI_Request reversed[2] = {q[1], q[0]};
    MPI_Waitall(2, reversed, MPI_STATUSES_IGNORE);
  });
  ASSERT_TRUE(r.result.completed()) << r.result.error;
  EXPECT_EQ(r.took, kSecondIn + kPerByte + kOverhead);
}

TEST(ReceiveOverhead, ASuccessfulTestPaysIt) {
  // Polling with MPI_Test: each "not yet" costs the poll cost; the test that
  // finds a receive complete pays its o then.
  const TwoMessages r = two_messages(true, [](MPI_Request* q) {
    int done = 0;
    while (!done) MPI_Test(&q[1], &done, MPI_STATUS_IGNORE);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  });
  ASSERT_TRUE(r.result.completed()) << r.result.error;
  // The polls end at the first multiple of the poll cost (100 ns) at or past
  // 5,542 ns; then the two o's.
  const Picoseconds poll = DirectOptions{}.poll_cost;
  const Picoseconds found = (kSecondIn + kPerByte + poll - 1) / poll * poll;
  EXPECT_EQ(r.took, found + 2 * kOverhead);
}

TEST(ReceiveOverhead, ABlockingReceivePaysItAsAtTheMatch) {
  // MPI_Recv completes what it posts: the same time under both rules.
  for (bool at_wait : {false, true}) {
    DirectOptions o = model_options(2, kDesign);
    o.receive_overhead_at_wait = at_wait;
    Picoseconds took = 0;
    const DirectResult r = run_ranks(o, [&](int rank, int) {
      double v = 3;
      if (rank == 0) {
        const double t0 = MPI_Wtime();
        MPI_Recv(&v, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        took = ps(MPI_Wtime() - t0);
      } else {
        MPI_Send(&v, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
      }
    });
    ASSERT_TRUE(r.completed()) << r.error;
    EXPECT_EQ(took, kFirstIn + kPerByte + kOverhead) << at_wait;
  }
}

}  // namespace
}  // namespace poems::direct::testing
