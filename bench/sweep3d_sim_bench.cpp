// Simulating Sweep3D: the lazy PSL task graph and the same graph through its
// GOAL export, events per second and peak memory for each.
//   sweep3d_sim_bench [npe_i npe_j [iterations [psl|goal|both [runs [matched|loggopsim]]]]]
// `runs` simulates each schedule that many times (a GOAL file is parsed
// once); the last argument picks the message-progress semantics.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "poems/psl/frontend.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/dtg.h"
#include "poems/taskgraph/goal.h"

using namespace poems;

namespace {
double peak_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

sim::Semantics semantics = sim::Semantics::Matched;

sim::SimulationOptions odin() {
  sim::SimulationOptions o;
  o.semantics = semantics;
  o.params.L = 5'300'000;
  o.params.o = 2'300'000;
  o.params.g = 2'000'000;
  o.params.G = 2'500'000;
  o.params.O = 1'000'000;
  o.params.S = 32768;
  o.per_rank_results = false;
  return o;
}

void report(const char* what, const sim::SimulationResult& r) {
  std::printf(
      "%-5s finish %.3f ms, %llu events in %.3f s (initial read %.3f s, %s): %.1f million events/s, peak RSS so "
      "far %.1f MiB\n",
      what, r.max_finish / 1e9, static_cast<unsigned long long>(r.events), r.wall_seconds, r.initial_read_seconds,
      r.lazy_attempt_abandoned ? "read in full after a lazy attempt"
      : r.read_lazily          ? "read lazily"
                               : "read in full",
      r.events_per_second() / 1e6, peak_mib());
}
}  // namespace

int main(int argc, char** argv) {
  double npe_i = argc > 2 ? std::atof(argv[1]) : 64, npe_j = argc > 2 ? std::atof(argv[2]) : 64;
  double iterations = argc > 3 ? std::atof(argv[3]) : 1;
  const char* which = argc > 4 ? argv[4] : "both";
  const int runs = argc > 5 ? std::max(1, std::atoi(argv[5])) : 1;
  if (argc > 6) {
    auto s = sim::parse_semantics(argv[6]);
    if (!s) return 2;
    semantics = *s;
  }
  psl::Frontend fe;
  if (!fe.load_files({std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"})) return 1;
  auto graph = std::make_shared<taskgraph::StaticTaskGraph>(taskgraph::lower_model(fe.program(), fe.sources(), ""));
  taskgraph::ParameterBinding b{{"npe_i", npe_i},
                                {"npe_j", npe_j},
                                {"iterations", iterations},
                                {"it_g", std::max(150.0, npe_i)},
                                {"jt_g", std::max(150.0, npe_j)}};
  taskgraph::InstantiateOptions inst;
  inst.ns_per_work = 60;
  std::printf("Sweep3D %gx%g = %g processes, %g iteration(s), 150^3 or larger grid, mk=10 mmi=3, %s semantics\n", npe_i,
              npe_j, npe_i * npe_j, iterations, sim::semantics_name(semantics));
  if (std::strcmp(which, "goal") != 0) {
    for (int run = 0; run < runs; ++run) {
      taskgraph::ModelSchedule lazy(graph, b, inst);
      report("psl", sim::simulate(lazy, odin()));
    }
  }
  if (std::strcmp(which, "psl") != 0) {
    std::string text;
    {
      std::ostringstream out;
      taskgraph::ModelSchedule exported(graph, b, inst);
      taskgraph::write_goal(out, exported);
      text = std::move(out).str();
    }
    const double text_mib = text.size() / 1048576.0;
    psl::SourceManager sources;
    psl::DiagnosticEngine diags(sources);
    auto t0 = std::chrono::steady_clock::now();
    auto schedule = taskgraph::parse_goal(sources, sources.add("sweep3d.goal", std::move(text)), diags);
    double parse = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!schedule) return 1;
    const double ops = static_cast<double>(schedule->total_operations());
    std::printf(
        "goal  %.1f MiB of GOAL text parsed in %.2f s: %.0f operations, %.1f MiB encoded (%.1f B per operation), "
        "node table %.1f MiB\n",
        text_mib, parse, ops, schedule->encoded_bytes() / 1048576.0, schedule->encoded_bytes() / ops,
        schedule->node_bytes() / 1048576.0);
    for (int run = 0; run < runs; ++run) {
      schedule->rewind();
      report("goal", sim::simulate(*schedule, odin()));
    }
  }
  return 0;
}
