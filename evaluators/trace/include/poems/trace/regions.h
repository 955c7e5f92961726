// Computation per code region of a recorded run (docs/scaling.md): the time
// outside MPI between two calls, per rank, inside a window. An archive
// records MPI calls, not call sites, so a region is named by the calls
// around it: "MPI_Recv..MPI_Send" is all computation that follows an
// MPI_Recv and ends in an MPI_Send, wherever in the program that happens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "poems/trace/replay.h"
#include "poems/trace/trace.h"

namespace poems::trace {

struct RegionComputation {
  std::string name;                   // "MPI_Recv..MPI_Send"; "start..MPI_Barrier" before a window's first call
  std::vector<Picoseconds> per_rank;  // its computation on each rank (wall or CPU time as asked)
  std::uint64_t visits = 0;           // computation steps, all ranks
  Picoseconds max() const;
  double mean() const;
};

// Every region of `trace` in `window`, largest total first; TraceError for a
// window a rank cannot satisfy, or CPU time asked of an archive without it.
std::vector<RegionComputation> region_computation(const Trace& trace, const Window& window, bool cpu_time);

}  // namespace poems::trace
