// Point-to-point under direct execution: data really delivered (the buffer
// the engine matched), virtual times equal to the LogGOPS closed forms and to
// the simulator running the same operations from a GOAL schedule.
#include <array>
#include <numeric>
#include <vector>

#include "direct_test_util.h"
#include "poems/base/diagnostics.h"
#include "poems/taskgraph/goal.h"

namespace poems::direct::testing {
namespace {

// DESIGN 5.1's parameters: L=2500 o=1500 g=1000 G=6 O=0 (ns), S=65535.
const sim::LogGOPS kP{};

// One message hop: o (send) + L + o + max((s-1)O, (s-1)G) (receive), plus L
// of rendezvous synchronization above S.
Picoseconds hop(const sim::LogGOPS& p, std::uint64_t s) {
  return p.o + p.L + p.recv_cpu(s) + (p.rendezvous(s) ? p.L : 0);
}

sim::SimulationResult simulate_goal(const std::string& text, const sim::LogGOPS& p,
                                    sim::Semantics semantics = sim::Semantics::Matched) {
  psl::SourceManager sources;
  psl::FileId f = sources.add("test.goal", text);
  psl::DiagnosticEngine diags(sources);
  auto s = taskgraph::parse_goal(sources, f, diags);
  EXPECT_TRUE(s) << "bad GOAL";
  sim::SimulationOptions o;
  o.params = p;
  o.semantics = semantics;
  return s ? sim::simulate(*s, o) : sim::SimulationResult{};
}

class PingPong : public ::testing::TestWithParam<int> {};

TEST_P(PingPong, DeliversDataAndTakesTwoHops) {
  const int count = GetParam();  // doubles: eager (8 B, 8 KB) and rendezvous (800 KB > S)
  const std::uint64_t bytes = 8ull * static_cast<std::uint64_t>(count);
  double round = -1;
  std::vector<double> back;
  MPI_Status st{};
  DirectResult r = run_ranks(model_options(2, kP), [&](int rank, int) {
    std::vector<double> v(static_cast<std::size_t>(count));
    if (rank == 0) {
      std::iota(v.begin(), v.end(), 1.0);
      const double t0 = MPI_Wtime();
      MPI_Send(v.data(), count, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
      MPI_Recv(v.data(), count, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD, &st);
      round = MPI_Wtime() - t0;
      back = v;
    } else {
      MPI_Recv(v.data(), count, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (double& x : v) x *= 2;
      MPI_Send(v.data(), count, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD);
    }
  });
  ASSERT_TRUE(r.completed()) << r.error;
  ASSERT_EQ(back.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) ASSERT_EQ(back[static_cast<std::size_t>(i)], 2.0 * (i + 1)) << i;
  EXPECT_EQ(st.MPI_SOURCE, 1);
  EXPECT_EQ(st.MPI_TAG, 8);
  int got = 0;
  MPI_Get_count(&st, MPI_DOUBLE, &got);
  EXPECT_EQ(got, count);
  EXPECT_EQ(ps(round), 2 * hop(kP, bytes));
  EXPECT_EQ(r.sim.per_rank[0].finish, 2 * hop(kP, bytes));

  const std::string s = std::to_string(bytes) + "b";
  sim::SimulationResult goal = simulate_goal("num_ranks 2\nrank 0 { a: send " + s + " to 1 tag 7\n b: recv " + s +
                                                 " from 1 tag 8\n b requires a }\n"
                                                 "rank 1 { a: recv " +
                                                 s + " from 0 tag 7\n b: send " + s + " to 0 tag 8\n b requires a }\n",
                                             kP);
  ASSERT_EQ(goal.per_rank.size(), 2u);
  EXPECT_EQ(r.sim.per_rank[0].finish, goal.per_rank[0].finish);
  EXPECT_EQ(r.sim.per_rank[1].finish, goal.per_rank[1].finish);
  EXPECT_EQ(r.sim.messages, 2u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, PingPong, ::testing::Values(1, 1024, 100000));

TEST(Ring, TokenGoesAroundInPHops) {
  for (int P : {2, 3, 7, 16}) {
    int token = -1;
    DirectResult r = run_ranks(model_options(static_cast<std::uint32_t>(P), kP), [&](int rank, int size) {
      int t = 0;
      if (rank == 0) {
        t = 1;
        MPI_Send(&t, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&t, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token = t;
      } else {
        MPI_Recv(&t, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t += rank;
        MPI_Send(&t, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
      }
    });
    ASSERT_TRUE(r.completed()) << r.error;
    EXPECT_EQ(token, 1 + P * (P - 1) / 2) << "P=" << P;
    EXPECT_EQ(r.sim.per_rank[0].finish, static_cast<Picoseconds>(P) * hop(kP, 4)) << "P=" << P;
    EXPECT_EQ(r.sim.max_finish_rank, 0u);
  }
}

TEST(Nonblocking, ExchangeWithBothNeighboursMatchesTheSimulator) {
  const int P = 5, n = 16;
  std::vector<std::array<int, 2>> got(P);
  DirectResult r = run_ranks(model_options(P, kP), [&](int rank, int size) {
    std::vector<int> out(n, rank), left(n), right(n);
    const int l = (rank + size - 1) % size, rr = (rank + 1) % size;
    MPI_Request q[4];
    MPI_Irecv(left.data(), n, MPI_INT, l, 1, MPI_COMM_WORLD, &q[0]);
    MPI_Irecv(right.data(), n, MPI_INT, rr, 2, MPI_COMM_WORLD, &q[1]);
    MPI_Isend(out.data(), n, MPI_INT, rr, 1, MPI_COMM_WORLD, &q[2]);
    MPI_Isend(out.data(), n, MPI_INT, l, 2, MPI_COMM_WORLD, &q[3]);
    MPI_Status st[4];
    MPI_Waitall(4, q, st);
    for (MPI_Request x : q) EXPECT_EQ(x, MPI_REQUEST_NULL);
    EXPECT_EQ(st[0].MPI_SOURCE, l);
    EXPECT_EQ(st[1].MPI_TAG, 2);
    got[static_cast<std::size_t>(rank)] = {left[n - 1], right[0]};
  });
  ASSERT_TRUE(r.completed()) << r.error;
  std::string goal = "num_ranks 5\n";
  for (int k = 0; k < P; ++k) {
    EXPECT_EQ(got[static_cast<std::size_t>(k)][0], (k + P - 1) % P);
    EXPECT_EQ(got[static_cast<std::size_t>(k)][1], (k + 1) % P);
    const std::string l = std::to_string((k + P - 1) % P), rr = std::to_string((k + 1) % P);
    goal += "rank " + std::to_string(k) + " { a: recv 64b from " + l + " tag 1\n b: recv 64b from " + rr +
            " tag 2\n c: send 64b to " + rr + " tag 1\n d: send 64b to " + l +
            " tag 2\n b irequires a\n c irequires b\n d irequires c }\n";
  }
  sim::SimulationResult s = simulate_goal(goal, kP);
  for (int k = 0; k < P; ++k)
    EXPECT_EQ(r.sim.per_rank[static_cast<std::size_t>(k)].finish, s.per_rank[static_cast<std::size_t>(k)].finish) << k;
  EXPECT_EQ(r.sim.max_finish, s.max_finish);
}

// A message that arrives before its receive is posted (rank 1 waits for the
// later message first): the two semantics charge the receiver differently
// (docs/simulator.md), and direct execution takes each from the engine, as
// the simulator does on the same schedule. Eager (S = 65535) and rendezvous
// (S = 32) alike.
sim::SimulationResult late_receive(sim::Semantics semantics, const sim::LogGOPS& p, bool direct) {
  if (!direct) {
    const std::string goal =
        "num_ranks 2\n"
        "rank 0 { a: send 64b to 1 tag 7\n b: calc 20000\n c: send 64b to 1 tag 8\n b irequires a\n c requires b }\n"
        "rank 1 { a: recv 64b from 0 tag 8\n b: recv 64b from 0 tag 7\n b requires a }\n";
    return simulate_goal(goal, p, semantics);
  }
  DirectOptions o = model_options(2, p);
  o.sim.semantics = semantics;
  DirectResult r = run_ranks(o, [&](int rank, int) {
    std::array<char, 64> buf{};
    if (rank == 0) {
      std::array<char, 64> first{};
      MPI_Request q;
      MPI_Isend(first.data(), 64, MPI_CHAR, 1, 7, MPI_COMM_WORLD, &q);  // blocking would deadlock above S
      POEMS_Advance(20000.0);
      MPI_Send(buf.data(), 64, MPI_CHAR, 1, 8, MPI_COMM_WORLD);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), 64, MPI_CHAR, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(buf.data(), 64, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  });
  EXPECT_TRUE(r.completed()) << r.error;
  return r.sim;
}

class LateReceive : public ::testing::TestWithParam<std::tuple<sim::Semantics, int>> {};

TEST_P(LateReceive, DirectExecutionAgreesWithTheSimulator) {
  const auto [semantics, eager_limit] = GetParam();
  sim::LogGOPS p = kP;
  p.S = static_cast<std::uint64_t>(eager_limit);
  sim::SimulationResult d = late_receive(semantics, p, true), s = late_receive(semantics, p, false);
  ASSERT_EQ(d.per_rank.size(), 2u);
  ASSERT_EQ(s.per_rank.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) EXPECT_EQ(d.per_rank[k].finish, s.per_rank[k].finish) << k;
}

INSTANTIATE_TEST_SUITE_P(Semantics, LateReceive,
                         ::testing::Combine(::testing::Values(sim::Semantics::Matched, sim::Semantics::Loggopsim),
                                            ::testing::Values(65535, 32)));

// Eager: under loggopsim the early message was processed on arrival, while
// rank 1 waited for the other one; its receive then completes at once. Under
// matched it pays o + (s-1)O after the first receive. Rank 1 ends one
// receive's CPU time earlier under loggopsim.
TEST(LateReceive, LoggopsimProcessesTheEarlyMessageOnArrival) {
  const Picoseconds matched = late_receive(sim::Semantics::Matched, kP, true).per_rank.at(1).finish;
  const Picoseconds loggopsim = late_receive(sim::Semantics::Loggopsim, kP, true).per_rank.at(1).finish;
  EXPECT_EQ(matched - loggopsim, kP.recv_cpu(64));
  // The later message: sent at o + 20 us, processed on arrival.
  EXPECT_EQ(loggopsim, kP.o + ns(20000) + hop(kP, 64));
}

TEST(AnySource, MessagesArriveInTheEngineOrder) {
  // Rank k sends after (4 - k) us of computation: rank 3 first, rank 1 last.
  std::vector<int> sources, values;
  DirectResult r = run_ranks(model_options(4, kP), [&](int rank, int size) {
    if (rank == 0) {
      for (int i = 1; i < size; ++i) {
        int v = 0;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        sources.push_back(st.MPI_SOURCE);
        values.push_back(v);
        EXPECT_EQ(st.MPI_TAG, 10 + st.MPI_SOURCE);
      }
    } else {
      POEMS_Advance(1000.0 * (4 - rank));
      const int v = 100 * rank;
      MPI_Send(&v, 1, MPI_INT, 0, 10 + rank, MPI_COMM_WORLD);
    }
  });
  ASSERT_TRUE(r.completed()) << r.error;
  EXPECT_EQ(sources, (std::vector<int>{3, 2, 1}));
  EXPECT_EQ(values, (std::vector<int>{300, 200, 100}));
  // The first message (rank 3's, sent at 1 us) arrives at 5 us; the others
  // are waiting by the time rank 0 posts its next receive: back to back.
  EXPECT_EQ(r.sim.per_rank[0].finish, ns(1000) + kP.o + kP.L + 3 * kP.recv_cpu(4));
}

TEST(Probe, SeesTheMessageWhenItArrives) {
  Picoseconds probed = 0, received = 0;
  MPI_Status st{};
  int value = 0;
  DirectResult r = run_ranks(model_options(2, kP), [&](int rank, int) {
    if (rank == 1) {
      POEMS_Advance(10000);
      const int v = 77;
      MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    } else {
      MPI_Probe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      probed = ps(MPI_Wtime());
      MPI_Recv(&value, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      received = ps(MPI_Wtime());
    }
  });
  ASSERT_TRUE(r.completed()) << r.error;
  EXPECT_EQ(st.MPI_SOURCE, 1);
  EXPECT_EQ(st.MPI_TAG, 5);
  int bytes = 0;
  MPI_Get_count(&st, MPI_BYTE, &bytes);
  EXPECT_EQ(bytes, 4);
  EXPECT_EQ(value, 77);
  EXPECT_EQ(probed, ns(10000) + kP.o + kP.L);    // the arrival
  EXPECT_EQ(received, probed + kP.recv_cpu(4));  // then the receive's processing
}

TEST(Probe, IprobeAndTestSeeOnlyWhatHasHappened) {
  std::vector<int> iprobe_flags, test_flags;
  DirectResult r = run_ranks(model_options(2, kP), [&](int rank, int) {
    int flag = 0, v = 0;
    if (rank == 1) {
      POEMS_Advance(5000);  // arrives at 5 us + o + L = 9 us
      v = 1;
      MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      POEMS_Advance(25000);  // from 6.5 us: sent at 31.5 us, arrives at 35.5 us
      v = 2;
      MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
      return;
    }
    MPI_Iprobe(1, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);  // at 0: nothing yet
    iprobe_flags.push_back(flag);
    POEMS_Advance(10000);
    MPI_Iprobe(1, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);  // at 10.1 us (the first probe cost 0.1 us)
    iprobe_flags.push_back(flag);
    MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_EQ(v, 1);
    MPI_Request q;
    MPI_Irecv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &q);
    MPI_Test(&q, &flag, MPI_STATUS_IGNORE);  // at about 11.6 us
    test_flags.push_back(flag);
    POEMS_Advance(40000);
    MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    test_flags.push_back(flag);
    EXPECT_EQ(q, MPI_REQUEST_NULL);
    EXPECT_EQ(v, 2);
  });
  ASSERT_TRUE(r.completed()) << r.error;
  EXPECT_EQ(iprobe_flags, (std::vector<int>{0, 1}));
  EXPECT_EQ(test_flags, (std::vector<int>{0, 1}));
}

// A polling MPI_Testall over an eager send (done at once) and a synchronous
// send (done when the receive matches it, late) must advance virtual time
// although some of its requests are complete: it used to spin forever under
// --compute model (issue found with direct_feature_p2p -np 2).
TEST(Testall, PollingWithSomeRequestsDoneAdvancesTime) {
  int polls = 0;
  DirectResult r = run_ranks(model_options(2, kP), [&](int rank, int) {
    int v = rank;
    if (rank == 1) {
      POEMS_Advance(20000);  // receives only at 20 us
      int a = 0, b = 0;
      MPI_Recv(&a, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(&b, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      return;
    }
    MPI_Request q[2];
    MPI_Isend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &q[0]);
    MPI_Issend(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &q[1]);
    int flag = 0;
    while (!flag) {
      MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
      ++polls;
    }
    EXPECT_EQ(q[0], MPI_REQUEST_NULL);
    EXPECT_EQ(q[1], MPI_REQUEST_NULL);
  });
  ASSERT_TRUE(r.completed()) << r.error;
  // Each unanswered poll costs 100 ns; the synchronous send completes after
  // rank 1's receive at 20 us or later: at least a hundred polls.
  EXPECT_GT(polls, 100);
  EXPECT_GE(r.sim.per_rank[0].finish, ns(20000));
}

TEST(Sendrecv, ShiftsARing) {
  const int P = 6;
  std::vector<int> got(P, -1);
  DirectResult r = run_ranks(model_options(P, kP), [&](int rank, int size) {
    int mine = rank * 10, theirs = -1;
    MPI_Status st;
    MPI_Sendrecv(&mine, 1, MPI_INT, (rank + 1) % size, 3, &theirs, 1, MPI_INT, (rank + size - 1) % size, 3,
                 MPI_COMM_WORLD, &st);
    EXPECT_EQ(st.MPI_SOURCE, (rank + size - 1) % size);
    got[static_cast<std::size_t>(rank)] = theirs;
  });
  ASSERT_TRUE(r.completed()) << r.error;
  for (int k = 0; k < P; ++k) EXPECT_EQ(got[static_cast<std::size_t>(k)], ((k + P - 1) % P) * 10);
  // Everyone posts, sends at 0 and receives its neighbour's message on arrival.
  EXPECT_EQ(r.sim.max_finish, hop(kP, 4));
}

TEST(ProcNull, TransfersNothingAtNoCost) {
  MPI_Status st{};
  DirectResult r = run_ranks(model_options(1, kP), [&](int, int) {
    int v = 3;
    MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    EXPECT_EQ(v, 3);
  });
  ASSERT_TRUE(r.completed()) << r.error;
  EXPECT_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  EXPECT_EQ(r.sim.max_finish, 0u);
  EXPECT_EQ(r.sim.messages, 0u);
}

TEST(Wtime, IsTheVirtualClock) {
  std::vector<Picoseconds> t;
  DirectResult r = run_ranks(model_options(1, kP), [&](int, int) {
    t.push_back(ps(MPI_Wtime()));
    POEMS_Advance(1234.5);
    t.push_back(ps(MPI_Wtime()));
    POEMS_Advance(0.25);
    t.push_back(ps(MPI_Wtime()));
  });
  ASSERT_TRUE(r.completed()) << r.error;
  EXPECT_EQ(t, (std::vector<Picoseconds>{0, 1'234'500, 1'234'750}));
  EXPECT_EQ(r.sim.per_rank[0].compute, 1'234'750u);
}

}  // namespace
}  // namespace poems::direct::testing
