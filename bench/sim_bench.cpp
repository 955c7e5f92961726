// Simulator speed and memory on one collective at scale: events per second,
// peak resident memory, bytes per process and per in-flight operation.
//   sim_bench [collective algorithm procs bytes]   (default: bcast binomial 131072 8)
//   sim_bench suite                                (the figures of docs/PERFORMANCE.md at 2^17)
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "poems/sim/simulator.h"
#include "poems/taskgraph/explicit_schedule.h"

using namespace poems;

namespace {

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

int run(const char* op_name, const char* algorithm_name, std::uint32_t procs, std::uint64_t bytes) {
  auto op = taskgraph::parse_collective_op(op_name);
  auto algorithm = taskgraph::parse_collective_algorithm(algorithm_name);
  if (!op || !algorithm) {
    std::fprintf(stderr, "unknown collective or algorithm\n");
    return 2;
  }
  taskgraph::CollectiveCall call;
  call.op = *op;
  call.algorithm = *algorithm;
  call.procs = procs;
  call.bytes = bytes;
  taskgraph::CollectiveSchedule source(call);
  sim::SimulationOptions options;  // DESIGN 5.1 parameters (L=2500 o=1500 g=1000 G=6 O=0 S=65535)
  options.per_rank_results = false;
  sim::SimulationResult r = sim::simulate(source, options);
  const double rss = peak_rss_mib();
  std::printf(
      "%s/%s P=%u s=%llu: finish %.3f us, events %llu, %.3f s, %.2f M events/s, peak RSS %.1f MiB "
      "(%.0f B/process), peak in-flight ops %llu, peak queue %llu, initial read %.3f s%s\n",
      op_name, algorithm_name, procs, static_cast<unsigned long long>(bytes), static_cast<double>(r.max_finish) / 1e6,
      static_cast<unsigned long long>(r.events), r.wall_seconds, r.events_per_second() / 1e6, rss,
      rss * 1048576.0 / procs, static_cast<unsigned long long>(r.peak_window_ops),
      static_cast<unsigned long long>(r.peak_queue), r.initial_read_seconds, r.completed ? "" : " (DID NOT COMPLETE)");
  return r.completed ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "suite") == 0) {
    int rc = run("bcast", "binomial", 1u << 17, 8);
    rc |= run("allreduce", "dissemination", 1u << 17, 8);
    return rc;
  }
  if (argc != 1 && argc != 5) {
    std::fprintf(stderr, "usage: sim_bench [collective algorithm procs bytes] | suite\n");
    return 2;
  }
  return argc == 5 ? run(argv[1], argv[2], static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10)),
                         std::strtoull(argv[4], nullptr, 10))
                   : run("bcast", "binomial", 1u << 17, 8);
}
