// A faulty program stops the run with a message that names the call and the
// rank; the other ranks are unwound (their destructors run) and the next run
// in the same process is unaffected.
#include <stdexcept>
#include <vector>

#include "direct_test_util.h"

namespace poems::direct::testing {
namespace {

// Counts destructor runs: a blocked rank's stack is unwound when the run stops.
struct Guard {
  int* count;
  ~Guard() { ++*count; }
};

TEST(Errors, DeadlockNamesTheWaitingCall) {
  int unwound = 0;
  DirectResult r = run_ranks(model_options(2), [&](int rank, int) {
    Guard g{&unwound};
    int v = 0;
    MPI_Recv(&v, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  });
  EXPECT_FALSE(r.completed());
  EXPECT_NE(r.error.find("deadlock: 2 rank(s)"), std::string::npos) << r.error;
  ASSERT_EQ(r.sim.stuck.size(), 2u);
  EXPECT_EQ(r.sim.stuck[0].waits.front(), "the program waits in MPI_Recv");
  EXPECT_NE(r.sim.stuck[0].waits[1].find("recv 4 B from rank 1 tag 0 [MPI_Recv]"), std::string::npos)
      << r.sim.stuck[0].waits[1];
  EXPECT_EQ(unwound, 2);
  EXPECT_EQ(r.exit_codes, (std::vector<int>{-1, -1}));
}

TEST(Errors, ProbeWithoutSenderIsADeadlock) {
  DirectResult r = run_ranks(model_options(2), [&](int rank, int) {
    if (rank == 0) MPI_Probe(1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  });
  EXPECT_FALSE(r.completed());
  ASSERT_EQ(r.sim.stuck.size(), 1u);
  EXPECT_EQ(r.sim.stuck[0].waits.front(), "the program waits in MPI_Probe for a message from rank 1 tag 3");
}

TEST(Errors, TruncationStopsTheRun) {
  DirectResult r = run_ranks(model_options(2), [&](int rank, int) {
    std::vector<int> v(8, 1);
    if (rank == 0)
      MPI_Send(v.data(), 8, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else
      MPI_Recv(v.data(), 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  });
  EXPECT_EQ(r.error,
            "rank 1: MPI_Recv: a message of 32 bytes from rank 0 (tag 0) is longer than the receive buffer of 16 bytes "
            "(MPI_ERR_TRUNCATE)");
}

TEST(Errors, UnsupportedCallNamesItself) {
  DirectResult r = run_ranks(model_options(3), [&](int rank, int) {
    if (rank == 2) {
      MPI_File f;
      MPI_File_open(MPI_COMM_SELF, "x", MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  });
  EXPECT_EQ(r.error,
            "rank 2: MPI_File_open: is not supported by POEMS direct execution (docs/direct.md lists what is)");
  // Not a deadlock: nothing to report about the ranks that wait for rank 2.
  EXPECT_EQ(r.sim.stuck_total, 0u);
}

TEST(Errors, AbortStopsEveryRank) {
  int unwound = 0;
  DirectResult r = run_ranks(model_options(4), [&](int rank, int) {
    Guard g{&unwound};
    if (rank == 3) MPI_Abort(MPI_COMM_WORLD, 5);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  });
  EXPECT_EQ(r.error, "rank 3 called MPI_Abort with error code 5");
  EXPECT_EQ(r.abort_code, 5);
  EXPECT_EQ(unwound, 4);
}

TEST(Errors, ExceptionInARank) {
  DirectResult r = run_ranks(model_options(2), [&](int rank, int) {
    if (rank == 1) throw std::runtime_error("boom");
  });
  EXPECT_EQ(r.error, "rank 1: uncaught exception: boom");
}

TEST(Errors, ArgumentsAreChecked) {
  auto error_of = [](const std::function<void(int, int)>& body) { return run_ranks(model_options(2), body).error; };
  int v = 0;
  EXPECT_EQ(error_of([&](int, int) { MPI_Send(&v, 1, MPI_INT, 9, 0, MPI_COMM_WORLD); }),
            "rank 0: MPI_Send: rank 9 is not in the communicator of size 2 (MPI_ERR_RANK)");
  EXPECT_EQ(error_of([&](int, int) { MPI_Send(&v, 1, MPI_INT, 1, -4, MPI_COMM_WORLD); }),
            "rank 0: MPI_Send: tag -4 is not in 0..1073741823 (MPI_ERR_TAG)");
  EXPECT_EQ(error_of([&](int, int) { MPI_Send(&v, -1, MPI_INT, 1, 0, MPI_COMM_WORLD); }),
            "rank 0: MPI_Send: count -1 is negative (MPI_ERR_COUNT)");
  EXPECT_EQ(error_of([&](int, int) { MPI_Send(&v, 1, 999, 1, 0, MPI_COMM_WORLD); }),
            "rank 0: MPI_Send: datatype 999 is not a datatype (MPI_ERR_TYPE)");
  EXPECT_EQ(error_of([&](int, int) {
              MPI_Datatype t;
              MPI_Type_contiguous(2, MPI_INT, &t);
              MPI_Send(&v, 1, t, 1, 0, MPI_COMM_WORLD);
            }),
            "rank 0: MPI_Send: datatype 71 is not committed (MPI_ERR_TYPE)");
  EXPECT_EQ(error_of([&](int, int) { MPI_Allreduce(&v, &v, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD); }),
            "rank 0: MPI_Allreduce: MPI_BAND does not apply to MPI_DOUBLE (MPI_ERR_OP)");
  EXPECT_EQ(error_of([&](int, int) { MPI_Bcast(&v, 1, MPI_INT, 2, MPI_COMM_WORLD); }),
            "rank 0: MPI_Bcast: root 2 is not in the communicator of size 2 (MPI_ERR_ROOT)");
  EXPECT_EQ(error_of([&](int, int) { MPI_Barrier(42); }),
            "rank 0: MPI_Barrier: communicator 42 is not one of this rank's (MPI_ERR_COMM)");
  EXPECT_EQ(error_of([&](int rank, int) {
              if (rank == 0)
                MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
              else
                MPI_Barrier(MPI_COMM_WORLD);
            }),
            "rank 1: MPI_Barrier: collective call 1 on this communicator is MPI_Bcast with root 0 on other ranks");
  MPI_Request q = 12345;
  EXPECT_EQ(error_of([&](int, int) { MPI_Wait(&q, MPI_STATUS_IGNORE); }),
            "rank 0: MPI_Wait: request 12345 is not an active request of this rank (MPI_ERR_REQUEST)");
}

TEST(Errors, CallsOutsideInitAndFinalize) {
  DirectOptions o = model_options(1);
  DirectResult r = run(
      [](int, char**) {
        int v = 0;
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        return 0;
      },
      {"p"}, o);
  EXPECT_EQ(r.error, "rank 0: MPI_Send: called before MPI_Init");
  r = run(
      [](int, char**) {
        MPI_Init(nullptr, nullptr);
        MPI_Finalize();
        MPI_Barrier(MPI_COMM_WORLD);
        return 0;
      },
      {"p"}, o);
  EXPECT_EQ(r.error, "rank 0: MPI_Barrier: called after MPI_Finalize");
}

TEST(Runs, AreDeterministicAndIndependent) {
  auto ring = [](int rank, int size) {
    int t = rank;
    for (int i = 0; i < 3; ++i) {
      POEMS_Advance(100.0 * (rank + 1));
      int got = 0;
      MPI_Sendrecv(&t, 1, MPI_INT, (rank + 1) % size, i, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      t = got + 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  };
  DirectResult a = run_ranks(model_options(9), ring);
  DirectResult failed = run_ranks(model_options(2), [](int, int) { MPI_Abort(MPI_COMM_WORLD, 1); });
  EXPECT_FALSE(failed.completed());
  DirectResult b = run_ranks(model_options(9), ring);
  ASSERT_TRUE(a.completed() && b.completed());
  for (std::size_t k = 0; k < 9; ++k) {
    EXPECT_EQ(a.sim.per_rank[k].finish, b.sim.per_rank[k].finish);
    EXPECT_EQ(a.sim.per_rank[k].wait, b.sim.per_rank[k].wait);
  }
  EXPECT_EQ(a.sim.events, b.sim.events);
  EXPECT_EQ(a.exit_codes, std::vector<int>(9, 0));
}

}  // namespace
}  // namespace poems::direct::testing
