// Direct execution speed and memory: the real MPI Sweep3D
// (examples/sweep3d/app) on NPE_I x NPE_J simulated ranks, each with an
// IT x JT x KT block (weak scaling, as POEMS Fig. 14's 6 x 6 x 1000 per
// processor), mk = 10, mmi = 3, mm = 6, Odin's LogGOPS, blocks charged at
// Wg = 60 ns. Full: the real kernel and its arrays; reduced: the
// memory-reduced mode (no kernel, no cell arrays, the charge only).
//   direct_bench NPE_I NPE_J IT JT KT full|reduced [ITERATIONS] [STACK_KIB]
// Prints host time, simulated ranks per host second, MPI calls and events
// per second, peak resident memory and resident bytes per rank.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "poems/direct/runtime.h"
#include "poems/sweep3d/app/decomposition.h"
#include "poems/sweep3d/app/driver.h"
#include "poems/sweep3d/direct/charged_compute.h"

#include <mpi.h>

using namespace poems;

namespace {

double rss_mib(const char* field) {  // VmRSS or VmHWM of this process
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::atof(line.c_str() + std::strlen(field)) / 1024.0;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: direct_bench NPE_I NPE_J IT JT KT full|reduced [ITERATIONS] [STACK_KIB]\n");
    return 2;
  }
  sweep3d::app::Deck deck;
  deck.npe_i = std::atoi(argv[1]);
  deck.npe_j = std::atoi(argv[2]);
  deck.it_g = deck.npe_i * std::atoi(argv[3]);
  deck.jt_g = deck.npe_j * std::atoi(argv[4]);
  deck.kt = std::atoi(argv[5]);
  const bool reduced = std::strcmp(argv[6], "reduced") == 0;
  deck.epsi = -(argc > 7 ? std::atoi(argv[7]) : 1);
  deck.mk = 10;
  deck.mmi = 3;
  deck.mm = 6;

  direct::DirectOptions o;
  o.ranks = static_cast<std::uint32_t>(deck.npe_i * deck.npe_j);
  o.compute = direct::ComputeMode::Model;
  o.processor = processor::ProcessorSpec{"Opteron", "processor[wg]", {{"Wg", 60.0}}, {}};
  o.sim.params.L = 5'300'000;  // Odin
  o.sim.params.o = 2'300'000;
  o.sim.params.g = 2'000'000;
  o.sim.params.G = 2'500'000;
  o.sim.params.O = 1'000'000;
  o.sim.params.S = 32768;
  o.sim.per_rank_results = false;
  o.isolation = direct::Isolation::Threads;  // the ranks write loop_seconds; the thread mode's memory is measured
  if (argc > 8) o.stack_bytes = static_cast<std::size_t>(std::atol(argv[8])) << 10;

  const double base = rss_mib("VmRSS:");
  double loop_seconds = 0;
  direct::DirectResult r = direct::run(
      [&](int pargc, char** pargv) {
        MPI_Init(&pargc, &pargv);
        int rank = 0, size = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        const sweep3d::app::Decomposition d = sweep3d::app::decompose(deck, size, rank);
        std::unique_ptr<sweep3d::app::BlockCompute> compute;
        if (reduced)
          compute = std::make_unique<sweep3d::direct::ReducedCompute>();
        else
          compute = std::make_unique<sweep3d::direct::ChargedCompute>(
              std::make_unique<sweep3d::app::TransportCompute>(deck, d));
        const sweep3d::app::RunResult res = sweep3d::app::run_sweep3d(deck, d, *compute);
        if (rank == 0) loop_seconds = res.time;
        MPI_Finalize();
        return 0;
      },
      {"sweep3d"}, o);
  if (!r.completed()) {
    std::fprintf(stderr, "direct_bench: %s\n", r.error.c_str());
    return 3;
  }
  const double peak = rss_mib("VmHWM:");
  std::printf(
      "sweep3d %s %dx%d ranks=%u block %sx%sx%d: simulated %.6f s, host %.3f s, %.0f ranks/host s, "
      "%.2f M MPI calls/s, %.2f M events/s, %.2f M switches/s, peak RSS %.1f MiB, %.1f KiB/rank above the "
      "%.1f MiB base\n",
      reduced ? "reduced" : "full", deck.npe_i, deck.npe_j, o.ranks, argv[3], argv[4], deck.kt, loop_seconds,
      r.host_seconds, o.ranks / r.host_seconds, static_cast<double>(r.mpi_calls) / r.host_seconds / 1e6,
      static_cast<double>(r.sim.events) / r.host_seconds / 1e6, static_cast<double>(r.switches) / r.host_seconds / 1e6,
      peak, (peak - base) * 1024.0 / o.ranks, base);
  return 0;
}
