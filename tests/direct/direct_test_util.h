// Helpers of the direct-execution tests: run a function as P MPI ranks.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <functional>

#include "poems/direct/runtime.h"

namespace poems::direct::testing {

using taskgraph::Picoseconds;

inline constexpr Picoseconds ns(std::uint64_t v) { return v * 1000; }

// Computation costs nothing unless charged: virtual times are exact. The
// ranks are threads of the test process: the tests read what the ranks
// write into the test's variables (tests/direct/programs/ check processes).
inline DirectOptions model_options(std::uint32_t ranks, const sim::LogGOPS& p = {}) {
  DirectOptions o;
  o.ranks = ranks;
  o.isolation = Isolation::Threads;
  o.compute = ComputeMode::Model;
  o.sim.params = p;
  return o;
}

// Runs body(rank, size) between MPI_Init and MPI_Finalize on every rank.
inline DirectResult run_ranks(const DirectOptions& o, const std::function<void(int rank, int size)>& body) {
  return run(
      [&body](int argc, char** argv) {
        MPI_Init(&argc, &argv);
        int rank = 0, size = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        body(rank, size);
        MPI_Finalize();
        return 0;
      },
      {"test"}, o);
}

// MPI_Wtime's seconds back to picoseconds (exact for the times tests use).
inline Picoseconds ps(double seconds) { return static_cast<Picoseconds>(std::llround(seconds * 1e12)); }

}  // namespace poems::direct::testing
