// The Sweep3D program: the KBA wavefront sweep driver over MPI, and the whole
// program (deck, decomposition, sweeps, report) as one function a thin main
// calls between MPI_Init and MPI_Finalize.
//
// MPI calls used (the standard C API, nothing implementation-specific):
// Comm_rank, Comm_size, Send, Recv, Allreduce, Reduce, Gather, Bcast,
// Barrier, Wtime. Per k-block, in this order and with these sizes (the PSL
// task graph of examples/sweep3d/sweep3d.psl is the same):
//   Recv from i-upstream  jt·mk·mmi doubles, tag iq
//   Recv from j-upstream  it·mk·mmi doubles, tag 100 + iq
//   compute the block
//   Send to i-downstream  jt·mk·mmi doubles, tag iq
//   Send to j-downstream  it·mk·mmi doubles, tag 100 + iq
// (full size even for a short last k-block), for iq = 0..7, mo = 1..mmo,
// k-blocks 1..kb; then one Allreduce (MPI_MAX) of one double per iteration.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "poems/sweep3d/app/block_compute.h"
#include "poems/sweep3d/app/deck.h"
#include "poems/sweep3d/app/decomposition.h"

namespace poems::sweep3d::app {

// One process's times (seconds, MPI_Wtime) and traffic.
struct RankTimes {
  double loop = 0;                        // the iteration loop: what the models predict
  double compute = 0;                     // inside BlockCompute::compute
  double recv = 0;                        // in MPI_Recv (waiting included)
  double send = 0;                        // in MPI_Send
  double allreduce = 0;                   // in the convergence test's MPI_Allreduce
  double cpu = 0;                         // process CPU time of the loop (std::clock)
  std::uint64_t messages = 0, bytes = 0;  // sent
};

struct RunResult {
  int iterations = 0;
  bool converged = false;  // epsi > 0 and the change fell below it
  double change = 0;       // the last iteration's largest relative flux change
  RankTimes local;         // this process
  // Over all processes; valid on rank 0 only.
  int ranks = 1;
  double time = 0;  // largest loop time: the run's wall time
  double compute_mean = 0, compute_max = 0, recv_mean = 0, send_mean = 0, allreduce_mean = 0, cpu_max = 0;
  std::uint64_t messages = 0, bytes = 0;
  LocalTallies totals;              // summed
  std::vector<RankTimes> per_rank;  // iprint = 1
  std::vector<double> flux_line;    // iprint = 1 and a physical computation: φ(i, jt_g/2, kt/2)
};

// Called on rank 0 after each iteration with its number and flux change.
using Monitor = std::function<void(int iteration, double change)>;

// Runs the source iterations of `deck` on MPI_COMM_WORLD (all ranks call it).
RunResult run_sweep3d(const Deck& deck, const Decomposition& d, BlockCompute& compute, const Monitor& monitor = {});

// The program: `sweep3d [DECK] [--modeled-wg NS]`. Rank 0 reads DECK
// (default "input", as Sweep3D) and broadcasts it; every rank validates it;
// rank 0 prints to `out` (errors to `err`). --modeled-wg replaces the
// kernel by a delay of NS per cell-angle (a spin) and allocates no cell
// arrays. Returns 0 ok, 1 bad deck, 2 usage, 3 run failure. MPI must be
// initialized.
int sweep3d_program(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// Rank 0 reads the deck file (at most 1 MiB) and broadcasts it on
// MPI_COMM_WORLD; false on every rank if rank 0 could not read it.
bool read_and_share_deck(const std::string& path, int rank, std::string& text);

}  // namespace poems::sweep3d::app
