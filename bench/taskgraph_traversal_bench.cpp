// Traversal rate of the lazy Sweep3D task graph: every operation of every rank
// pulled once, as an evaluator would. Prints operations per second and the
// peak resident memory.
//   taskgraph_traversal_bench [npe_i npe_j [iterations]]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/taskgraph/dtg.h"

using namespace poems;

int main(int argc, char** argv) {
  double npe_i = argc > 2 ? std::atof(argv[1]) : 100, npe_j = argc > 2 ? std::atof(argv[2]) : 100;
  double iterations = argc > 3 ? std::atof(argv[3]) : 1;
  psl::Frontend fe;
  if (!fe.load_files({std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"})) return 1;
  auto graph = std::make_shared<taskgraph::StaticTaskGraph>(psl::lower_model(fe.program(), fe.sources(), ""));
  // 150^3 per DESIGN; the grid grows with the processor count so blocks stay non-empty.
  taskgraph::ParameterBinding b{{"npe_i", npe_i},
                                {"npe_j", npe_j},
                                {"iterations", iterations},
                                {"it_g", std::max(150.0, npe_i)},
                                {"jt_g", std::max(150.0, npe_j)}};
  auto t0 = std::chrono::steady_clock::now();
  taskgraph::ModelSchedule schedule(graph, b, {});
  double setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  taskgraph::OpBuffer buf;
  std::uint64_t ops = 0, bytes = 0;
  auto t1 = std::chrono::steady_clock::now();
  for (std::uint32_t r = 0; r < schedule.ranks(); ++r) {
    for (;;) {
      buf.clear();
      std::size_t n = schedule.pull(r, 4096, buf);
      if (n == 0) break;
      ops += n;
      for (const auto& op : buf.ops) bytes += op.bytes;
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("processes %u (%gx%g), iterations %g\n", schedule.ranks(), npe_i, npe_j, iterations);
  std::printf("instantiation %.3f s\n", setup);
  std::printf("operations %llu in %.3f s: %.1f million operations/s\n", static_cast<unsigned long long>(ops), seconds,
              ops / seconds / 1e6);
  std::printf("bytes moved %llu\n", static_cast<unsigned long long>(bytes));
  std::printf("peak RSS %.1f MiB (%.1f bytes per process)\n", usage.ru_maxrss / 1024.0,
              usage.ru_maxrss * 1024.0 / schedule.ranks());
  return 0;
}
