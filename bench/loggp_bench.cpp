// The analytic evaluator: closed-form Sweep3D evaluations per second (over the
// blocking-factor and processor-grid space a recommender scans), one
// projection to 10^6 processes, and the critical path's rate in tasks/s.
//   loggp_bench [npe_i npe_j]   (critical-path grid, default 32 32)
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "poems/sweep3d/sweep3d_model.h"
#include "poems/loggp/critical_path.h"
#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/taskgraph/dtg.h"

using namespace poems;

namespace {
components::Sweep3DMachine odin() {
  components::Sweep3DMachine m;
  m.params.L = 5'300'000;
  m.params.o = 2'300'000;
  m.params.g = 2'000'000;
  m.params.G = 2'500'000;
  m.params.O = 1'000'000;
  m.params.S = 32768;
  m.wg_ns = 60;
  return m;
}
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

int main(int argc, char** argv) {
  const components::Sweep3DMachine m = odin();
  // 1. Closed form over the 255^3 blocking study space: mk x mmi x grids.
  const int mks[] = {1, 2, 3, 5, 10, 15, 17, 30, 51, 85};
  const int mmis[] = {1, 2, 3, 6};
  const int grids[] = {4, 10, 16, 20, 32, 50, 64, 100, 141, 200};
  std::uint64_t evals = 0, checksum = 0;
  auto t = std::chrono::steady_clock::now();
  for (int rep = 0; rep < 250; ++rep)
    for (int g : grids)
      for (int mk : mks)
        for (int mmi : mmis) {
          components::Sweep3DConfig c;
          c.it_g = c.jt_g = c.kt = 255;
          c.npe_i = c.npe_j = g;
          c.mk = mk;
          c.mmi = mmi;
          c.iterations = 12;
          checksum += components::predict_sweep3d(c, m).time;
          ++evals;
        }
  double s = seconds_since(t);
  std::printf("closed form: %llu evaluations in %.3f s = %.3g evaluations/s (%.3f us each; checksum %llu)\n",
              (unsigned long long)evals, s, evals / s, 1e6 * s / evals, (unsigned long long)(checksum % 1000003));

  // 2. One projection to 10^6 processes (1000 x 1000, 1G cells).
  components::Sweep3DConfig big;
  big.it_g = big.jt_g = big.kt = 1000;
  big.npe_i = big.npe_j = 1000;
  big.mk = 10;
  big.mmi = 3;
  t = std::chrono::steady_clock::now();
  components::Sweep3DPrediction p = components::predict_sweep3d(big, m);
  s = seconds_since(t);
  std::printf("projection to 10^6 processes (1000^3 cells, mk=10, mmi=3): %.6f s predicted, evaluated in %.3f us\n",
              p.time / 1e12, 1e6 * s);

  // 3. Critical path of the PSL Sweep3D task graph.
  const int ni = argc > 2 ? std::atoi(argv[1]) : 32, nj = argc > 2 ? std::atoi(argv[2]) : 32;
  psl::Frontend fe;
  if (!fe.load_files({std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"})) return 1;
  auto graph = std::make_shared<taskgraph::StaticTaskGraph>(psl::lower_model(fe.program(), fe.sources(), ""));
  taskgraph::ParameterBinding b = {{"npe_i", double(ni)}, {"npe_j", double(nj)}, {"iterations", 2.0}};
  taskgraph::InstantiateOptions inst;
  inst.ns_per_work = 60;
  taskgraph::ModelSchedule schedule(graph, b, inst);
  sim::SimulationOptions so;
  so.params = m.params;
  t = std::chrono::steady_clock::now();
  loggp::AnalyticResult r = loggp::critical_path(schedule, so);
  s = seconds_since(t);
  std::printf("critical path, Sweep3D 150^3 on %dx%d, 2 iterations: %llu tasks in %.3f s = %.3g tasks/s\n", ni, nj,
              (unsigned long long)r.operations, s, r.operations / s);
  return 0;
}
