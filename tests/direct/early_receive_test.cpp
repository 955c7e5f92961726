// Early completion (DirectOptions::early_receive): a wait whose receive's
// message was sent already, or whose send's data are packed, lets the rank go
// on before the engine has simulated the completion. The engine's answer must
// not change: every virtual time, every received value and every reported
// error are those of the same run with the option off, where each wait hands
// the turn to the engine.
#include <array>
#include <string>
#include <vector>

#include "direct_test_util.h"

namespace poems::direct::testing {
namespace {

// DESIGN 5.1's parameters (S = 65535 B: the 100,000-byte messages below are rendezvous).
const sim::LogGOPS kP{};

struct Observed {
  DirectResult result;
  std::vector<std::vector<double>> seen;  // per rank: values received and clock reads, in program order
};

Observed run_both_ways(bool early, std::uint32_t ranks,
                       const std::function<void(int, int, std::vector<double>&)>& body) {
  Observed o;
  o.seen.resize(ranks);
  DirectOptions options = model_options(ranks, kP);
  options.early_receive = early;
  o.result = run_ranks(options, [&](int rank, int size) { body(rank, size, o.seen[static_cast<std::size_t>(rank)]); });
  return o;
}

void expect_same_run(const Observed& early, const Observed& waiting) {
  ASSERT_EQ(early.result.error, waiting.result.error);
  ASSERT_EQ(early.result.sim.per_rank.size(), waiting.result.sim.per_rank.size());
  for (std::size_t r = 0; r < early.result.sim.per_rank.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(early.result.sim.per_rank[r].finish, waiting.result.sim.per_rank[r].finish);
    EXPECT_EQ(early.result.sim.per_rank[r].overhead, waiting.result.sim.per_rank[r].overhead);
    EXPECT_EQ(early.result.sim.per_rank[r].wait, waiting.result.sim.per_rank[r].wait);
  }
  EXPECT_EQ(early.result.sim.events, waiting.result.sim.events);
  EXPECT_EQ(early.result.sim.messages, waiting.result.sim.messages);
  EXPECT_EQ(early.seen, waiting.seen);
}

// Every kind of point-to-point wait, eager and rendezvous, with clock reads between.
void mixed_traffic(int rank, int size, std::vector<double>& seen) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  // A ring of blocking sends and receives (rank 0 starts it).
  double token = rank;
  if (rank == 0) MPI_Send(&token, 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
  MPI_Recv(&token, 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  seen.push_back(token);
  if (rank != 0) {
    token += rank;
    MPI_Send(&token, 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
  }
  seen.push_back(MPI_Wtime());
  // A halo of nonblocking eager and rendezvous messages, completed by MPI_Waitall.
  std::vector<double> big_out(12500, rank), big_in(12500, -1);  // 100,000 B
  std::array<double, 4> small_out{rank + 0.5, 1, 2, 3}, small_in{};
  MPI_Request q[4];
  MPI_Irecv(big_in.data(), 12500, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &q[0]);
  MPI_Irecv(small_in.data(), 4, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &q[1]);
  MPI_Isend(big_out.data(), 12500, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &q[2]);
  MPI_Isend(small_out.data(), 4, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &q[3]);
  MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
  seen.push_back(big_in.front() + big_in.back());
  seen.push_back(small_in[0]);
  seen.push_back(MPI_Wtime());
  // Blocking rendezvous sends along the ring, received in turn.
  if (rank % 2 == 0) {
    MPI_Send(big_out.data(), 12500, MPI_DOUBLE, right, 4, MPI_COMM_WORLD);
    MPI_Recv(big_in.data(), 12500, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(big_in.data(), 12500, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(big_out.data(), 12500, MPI_DOUBLE, right, 4, MPI_COMM_WORLD);
  }
  seen.push_back(big_in[7]);
  // Tags out of order from one sender, then any tag from it.
  if (rank == 1) {
    for (int tag : {5, 6, 7}) {
      double v = 10 * tag;
      MPI_Send(&v, 1, MPI_DOUBLE, 2, tag, MPI_COMM_WORLD);
    }
  } else if (rank == 2) {
    MPI_Status st;
    for (int tag : {6, 5, MPI_ANY_TAG}) {
      double v = 0;
      MPI_Recv(&v, 1, MPI_DOUBLE, 1, tag, MPI_COMM_WORLD, &st);
      seen.push_back(v);
      seen.push_back(st.MPI_TAG);
    }
  }
  // Any source (the engine's order), a synchronous send, and MPI_Waitany.
  if (rank == 0) {
    MPI_Status st;
    for (int i = 1; i < size; ++i) {
      double v = 0;
      MPI_Recv(&v, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &st);
      seen.push_back(st.MPI_SOURCE);
    }
    double a = 0, b = 0;
    MPI_Request w[2];
    MPI_Irecv(&a, 1, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD, &w[0]);
    MPI_Irecv(&b, 1, MPI_DOUBLE, 2, 9, MPI_COMM_WORLD, &w[1]);
    for (int i = 0; i < 2; ++i) {
      int index = -1;
      MPI_Waitany(2, w, &index, MPI_STATUS_IGNORE);
      seen.push_back(index);
    }
    seen.push_back(a + b);
  } else {
    double v = rank;
    MPI_Ssend(&v, 1, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD);
    if (rank <= 2) MPI_Send(&v, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
  }
  seen.push_back(MPI_Wtime());
  // Sendrecv around the ring.
  double out = 100 + rank, in = -1;
  MPI_Sendrecv(&out, 1, MPI_DOUBLE, right, 11, &in, 1, MPI_DOUBLE, left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  seen.push_back(in);
  seen.push_back(MPI_Wtime());
}

TEST(EarlyReceive, EveryVirtualTimeAndValueIsTheEnginesOwn) {
  for (std::uint32_t ranks : {3u, 4u, 7u}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    const Observed early = run_both_ways(true, ranks, mixed_traffic);
    const Observed waiting = run_both_ways(false, ranks, mixed_traffic);
    ASSERT_TRUE(early.result.completed()) << early.result.error;
    EXPECT_GT(early.result.early_completions, 0u);
    EXPECT_EQ(waiting.result.early_completions, 0u);
    // Fewer hand-overs: the waits that found their message went on.
    EXPECT_LT(early.result.switches, waiting.result.switches);
    expect_same_run(early, waiting);
    // The values MPI defines, whichever way: the ring's token, the tags in the order asked.
    const std::vector<double>& two = early.seen[2];
    EXPECT_EQ(early.seen[0][0], static_cast<double>(ranks * (ranks - 1) / 2));
    ASSERT_GE(two.size(), 12u);
    EXPECT_EQ(std::vector<double>(two.begin() + 6, two.begin() + 12), (std::vector<double>{60, 6, 50, 5, 70, 7}));
  }
}

// Rank 0's two messages to rank 1: the value v with tag v, for v = 1, 2.
void send_tags_one_and_two() {
  for (int tag : {1, 2}) {
    double v = tag;
    MPI_Send(&v, 1, MPI_DOUBLE, 1, tag, MPI_COMM_WORLD);
  }
}

// A receive posted before, from any source, may take the message first: the
// later receive naming the sender waits for the engine to match in order.
TEST(EarlyReceive, AnEarlierReceiveFromAnySourceComesFirst) {
  auto body = [](int rank, int, std::vector<double>& seen) {
    if (rank == 0) {
      send_tags_one_and_two();
    } else {
      double first = 0, second = 0;
      MPI_Request any;
      MPI_Status st;
      MPI_Irecv(&first, 1, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &any);
      MPI_Recv(&second, 1, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      seen.push_back(second);
      seen.push_back(st.MPI_TAG);
      MPI_Wait(&any, &st);
      seen.push_back(first);
      seen.push_back(st.MPI_TAG);
    }
  };
  const Observed early = run_both_ways(true, 2, body);
  const Observed waiting = run_both_ways(false, 2, body);
  ASSERT_TRUE(early.result.completed()) << early.result.error;
  EXPECT_EQ(early.seen[1], (std::vector<double>{2, 2, 1, 1}));
  expect_same_run(early, waiting);
}

// The other way round: the receive naming the sender was posted first, so it
// takes the first message (early, though MPI_Waitall lists it second) and the
// any-source receive posted after it gets the second.
TEST(EarlyReceive, AReceivePostedFirstTakesTheFirstMessage) {
  auto body = [](int rank, int, std::vector<double>& seen) {
    if (rank == 0) {
      send_tags_one_and_two();
    } else {
      double named = 0, any = 0;
      MPI_Request q[2];
      MPI_Status st[2];
      MPI_Irecv(&named, 1, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &q[1]);
      MPI_Irecv(&any, 1, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q[0]);
      MPI_Waitall(2, q, st);
      seen.push_back(named);
      seen.push_back(st[1].MPI_TAG);
      seen.push_back(any);
      seen.push_back(st[0].MPI_TAG);
    }
  };
  const Observed early = run_both_ways(true, 2, body);
  const Observed waiting = run_both_ways(false, 2, body);
  ASSERT_TRUE(early.result.completed()) << early.result.error;
  EXPECT_EQ(early.seen[1], (std::vector<double>{1, 1, 2, 2}));
  EXPECT_EQ(early.result.early_completions, 1u);
  expect_same_run(early, waiting);
}

// Rank 0 receives from every other rank in the reverse of the order they
// sent: a message beyond the first 256 of its inbox waits for the engine;
// the values and times are the engine's either way.
TEST(EarlyReceive, ManySendersReceivedInReverse) {
  constexpr std::uint32_t kRanks = 400;
  auto body = [](int rank, int size, std::vector<double>& seen) {
    double v = rank;
    if (rank != 0) {
      MPI_Send(&v, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
      return;
    }
    for (int from = size - 1; from >= 1; --from) {
      MPI_Recv(&v, 1, MPI_DOUBLE, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      seen.push_back(v);
    }
    seen.push_back(MPI_Wtime());
  };
  const Observed early = run_both_ways(true, kRanks, body);
  const Observed waiting = run_both_ways(false, kRanks, body);
  ASSERT_TRUE(early.result.completed()) << early.result.error;
  ASSERT_EQ(early.seen[0].size(), kRanks);
  for (std::uint32_t i = 0; i + 1 < kRanks; ++i) EXPECT_EQ(early.seen[0][i], static_cast<double>(kRanks - 1 - i));
  EXPECT_GT(early.result.early_completions, 0u);
  expect_same_run(early, waiting);
}

// A message longer than the buffer fails the run with the same words either way.
TEST(EarlyReceive, TruncationIsTheSameError) {
  auto body = [](int rank, int, std::vector<double>&) {
    std::array<int, 8> v{};
    if (rank == 0)
      MPI_Send(v.data(), 8, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else
      MPI_Recv(v.data(), 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  };
  const Observed early = run_both_ways(true, 2, body);
  const Observed waiting = run_both_ways(false, 2, body);
  EXPECT_FALSE(early.result.completed());
  EXPECT_EQ(early.result.error,
            "rank 1: MPI_Recv: a message of 32 bytes from rank 0 (tag 0) is longer than the receive buffer of 16 bytes "
            "(MPI_ERR_TRUNCATE)");
  EXPECT_EQ(early.result.error, waiting.result.error);
}

// Two ranks that both send a rendezvous message first deadlock in the model
// either way; going on early, the report says the program went on from its send.
TEST(EarlyReceive, ARendezvousDeadlockIsStillOne) {
  auto body = [](int rank, int, std::vector<double>&) {
    std::vector<double> out(12500, rank), in(12500);
    MPI_Send(out.data(), 12500, MPI_DOUBLE, 1 - rank, 0, MPI_COMM_WORLD);
    MPI_Recv(in.data(), 12500, MPI_DOUBLE, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  };
  const Observed early = run_both_ways(true, 2, body);
  const Observed waiting = run_both_ways(false, 2, body);
  EXPECT_FALSE(waiting.result.completed());
  EXPECT_NE(waiting.result.error.find("deadlock: 2 rank(s) cannot go on (rank 0: the program waits in MPI_Send)"),
            std::string::npos)
      << waiting.result.error;
  EXPECT_FALSE(early.result.completed());
  EXPECT_NE(early.result.error.find("deadlock: 2 rank(s) cannot go on (rank 0: the program waits in MPI_Recv, having "
                                    "gone on from its rendezvous send (operation 0) with the data buffered"),
            std::string::npos)
      << early.result.error;
}

}  // namespace
}  // namespace poems::direct::testing
