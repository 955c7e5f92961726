// What `poems trace` adds to a run (docs/trace.md, "Overhead"): the real MPI
// Sweep3D under mpirun, untraced and traced in alternation, its own loop
// time (POEMS_SWEEP3D_RESULT time_ns) compared by the median of each, and the
// archive's size per MPI call; then the cost of one traced call from a
// 1-byte ping-pong (trace_pingpong) traced and untraced.
//
//   trace_overhead_bench [--reps N] [--np P] [--nice N] [--deck "L1|L2|L3|L4|L5"] [--pingpong ITERATIONS]
//                        [--cpu-time 1]   (the traced runs also record CPU time: poems trace --cpu-time)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/measure/mpirun.h"
#include "poems/measure/process.h"
#include "poems/trace/archive.h"
#include "poems/trace/otf2_read.h"
#include "poems/trace/record.h"

namespace fs = std::filesystem;
using namespace poems;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double pingpong_seconds(const measure::ProcessResult& r, double& calls) {
  const std::string line = measure::result_line(r.out, "POEMS_PINGPONG ");
  if (!r.ok() || line.empty()) {
    std::fprintf(stderr, "trace_overhead_bench: the ping-pong failed (%s): %s\n", r.status_text().c_str(),
                 r.err.c_str());
    std::exit(3);
  }
  const auto j = nlohmann::json::parse(line);
  calls = j["calls"].get<double>();
  return j["seconds"].get<double>();
}

double loop_seconds(const measure::ProcessResult& r) {
  const std::string line = measure::result_line(r.out, "POEMS_SWEEP3D_RESULT ");
  if (!r.ok() || line.empty()) {
    std::fprintf(stderr, "trace_overhead_bench: the run failed (%s): %s\n", r.status_text().c_str(), r.err.c_str());
    std::exit(3);
  }
  return nlohmann::json::parse(line)["time_ns"].get<double>() / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5, np = 2, nice = 0;
  long pingpong = 200000;
  bool cpu_time = false;
  std::string deck = "2 1 10 3 1|150 150 150 6 0|1.0 1.0 1.0 -2|0 0 0|0 0 0";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (a == "--np")
      np = std::atoi(argv[i + 1]);
    else if (a == "--nice")
      nice = std::atoi(argv[i + 1]);
    else if (a == "--deck")
      deck = argv[i + 1];
    else if (a == "--pingpong")
      pingpong = std::atol(argv[i + 1]);
    else if (a == "--cpu-time")
      cpu_time = std::atoi(argv[i + 1]) != 0;
    else {
      std::fprintf(stderr,
                   "usage: trace_overhead_bench [--reps N] [--np P] [--nice N] [--deck \"L1|...|L5\"] "
                   "[--pingpong ITERATIONS] [--cpu-time 0|1]\n");
      return 2;
    }
  }
  const fs::path dir = fs::temp_directory_path() / ("poems_trace_overhead_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string text = deck;
  std::replace(text.begin(), text.end(), '|', '\n');
  std::ofstream(dir / "deck") << text << '\n';
  const std::string program = std::string(POEMS_SWEEP3D_MPI);
  measure::PriorityGuard priority(nice);
  if (!priority.warning.empty()) std::fprintf(stderr, "warning: %s\n", priority.warning.c_str());

  measure::Launch plain;
  plain.ranks = np;
  plain.program = program;
  plain.args = {(dir / "deck").string()};
  trace::RecordOptions traced;
  traced.ranks = np;
  traced.program = program;
  traced.args = plain.args;
  traced.cpu_time = cpu_time;
  std::vector<double> untraced_s, traced_s;
  std::uint64_t bytes = 0, calls = 0, events = 0;
  for (int i = 0; i < reps; ++i) {
    untraced_s.push_back(loop_seconds(measure::run_mpi(plain)));
    traced.output = (dir / ("archive" + std::to_string(i))).string();
    fs::create_directories(traced.output);
    traced_s.push_back(
        loop_seconds(measure::run_process(trace::record_command(traced, trace::interposition_library()), 600)));
    const std::string anchor = traced.output + "/traces.otf2";
    const trace::Trace t = trace::read_trace(anchor);
    bytes = trace::archive_bytes(anchor);
    calls = t.calls();
    events = t.events;
    fs::remove_all(traced.output);
    std::printf("run %d: untraced %.4f s, traced %.4f s\n", i + 1, untraced_s.back(), traced_s.back());
  }
  const double a = median(untraced_s), b = median(traced_s);
  std::printf("deck: %s%s\n", deck.c_str(), cpu_time ? " (traced with CPU time)" : "");
  std::printf("%d processes, %d runs each: untraced median %.4f s (min %.4f), traced median %.4f s (min %.4f)\n", np,
              reps, a, *std::min_element(untraced_s.begin(), untraced_s.end()), b,
              *std::min_element(traced_s.begin(), traced_s.end()));
  std::printf("overhead: %+.2f %% of the median (%+.2f %% of the fastest)\n", 100 * (b - a) / a,
              100 *
                  (*std::min_element(traced_s.begin(), traced_s.end()) -
                   *std::min_element(untraced_s.begin(), untraced_s.end())) /
                  *std::min_element(untraced_s.begin(), untraced_s.end()));
  std::printf("archive: %llu bytes, %llu MPI calls, %llu events: %.1f bytes per call, %.1f bytes per event\n",
              static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(calls),
              static_cast<unsigned long long>(events),
              calls ? static_cast<double>(bytes) / static_cast<double>(calls) : 0.0,
              events ? static_cast<double>(bytes) / static_cast<double>(events) : 0.0);

  // The cost of one call: the ping-pong's calls on rank 0, traced and not.
  measure::Launch pp;
  pp.ranks = 2;
  pp.program = POEMS_TRACE_PINGPONG;
  pp.args = {std::to_string(pingpong)};
  trace::RecordOptions ppt;
  ppt.ranks = 2;
  ppt.program = pp.program;
  ppt.args = pp.args;
  ppt.cpu_time = cpu_time;
  std::vector<double> plain_pp, traced_pp;
  double calls_pp = 0;
  for (int i = 0; i < reps; ++i) {
    plain_pp.push_back(pingpong_seconds(measure::run_mpi(pp), calls_pp));
    ppt.output = (dir / ("pingpong" + std::to_string(i))).string();
    fs::create_directories(ppt.output);
    traced_pp.push_back(pingpong_seconds(
        measure::run_process(trace::record_command(ppt, trace::interposition_library()), 600), calls_pp));
    fs::remove_all(ppt.output);
  }
  const double per_call = (median(traced_pp) - median(plain_pp)) / calls_pp * 1e9;
  std::printf("ping-pong of 1 byte, %.0f calls a rank: untraced median %.4f s, traced %.4f s: %+.0f ns a call\n",
              calls_pp, median(plain_pp), median(traced_pp), per_call);
  fs::remove_all(dir);
  return 0;
}
