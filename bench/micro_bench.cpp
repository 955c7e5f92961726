// Micro-benchmarks with Google Benchmark: the inner operations the hot paths
// are built from, each timed in isolation with Google Benchmark's repetition
// and statistics. The whole-run benchmarks (simulator at 2^17 ranks, direct
// Sweep3D, trace overhead, study throughput) stay plain programs: what they
// report (peak memory, events per second of one long run, the time of
// another tool beside ours) is one measurement of a run, not a loop body.
//   micro_bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "calendar_queue.h"
#include "event_queue.h"
#include "poems/sweep3d/sweep3d_model.h"

using namespace poems;

namespace {

// Increments of the hold model: one in eight 0 (an event at the current
// time), the others uniform in [1 ps, 20 us), as bench/event_queue_bench.cpp.
std::vector<std::uint64_t> hold_increments(std::size_t n) {
  std::mt19937_64 rng(20261202);
  std::uniform_int_distribution<std::uint64_t> step(1, 20'000'000 - 1);
  std::vector<std::uint64_t> out(n);
  for (std::uint64_t& x : out) x = rng() % 8 == 0 ? 0 : step(rng);
  return out;
}

constexpr std::size_t kIncrements = 1 << 16;  // a power of two: index by mask

// One hold (pop the earliest event, push one at its time plus an increment)
// on the matched semantics' radix queue, with state.range(0) events queued.
void BM_RadixQueueHold(benchmark::State& state) {
  const std::vector<std::uint64_t> inc = hold_increments(kIncrements);
  sim::detail::RadixQueue<sim::detail::Event> q;
  std::uint64_t key = 0;
  for (std::int64_t i = 0; i < state.range(0); ++i) q.push(sim::detail::Event{inc[i % kIncrements], key++});
  std::size_t i = 0;
  for (auto _ : state) {
    const sim::detail::Event e = q.pop();
    q.push(sim::detail::Event{e.time + inc[i++ & (kIncrements - 1)], key++});
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RadixQueueHold)->Arg(64)->Arg(4096)->Arg(1 << 17);

// The same hold on the loggopsim semantics' calendar queue ((time, stamp) order).
void BM_CalendarQueueHold(benchmark::State& state) {
  const std::vector<std::uint64_t> inc = hold_increments(kIncrements);
  sim::detail::CalendarQueue<> q;
  std::uint64_t stamp = 0;
  for (std::int64_t i = 0; i < state.range(0); ++i) {
    q.push(sim::detail::StampedEvent{inc[i % kIncrements], stamp, stamp});
    ++stamp;
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const sim::detail::StampedEvent e = q.pop();
    q.push(sim::detail::StampedEvent{e.time + inc[i++ & (kIncrements - 1)], stamp, stamp});
    ++stamp;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CalendarQueueHold)->Arg(64)->Arg(4096)->Arg(1 << 17);

// One closed-form Sweep3D evaluation (the analytic evaluator's inner call, what
// the recommender repeats over a blocking-factor space) on Odin's LogGOPS, on
// a state.range(0)^2 processor grid, 255^3 cells, mk = 10, mmi = 3.
void BM_Sweep3DClosedForm(benchmark::State& state) {
  components::Sweep3DMachine m;
  m.params.L = 5'300'000;
  m.params.o = 2'300'000;
  m.params.g = 2'000'000;
  m.params.G = 2'500'000;
  m.params.O = 1'000'000;
  m.params.S = 32768;
  m.wg_ns = 60;
  components::Sweep3DConfig c;
  c.it_g = c.jt_g = c.kt = 255;
  c.npe_i = c.npe_j = state.range(0);
  c.mk = 10;
  c.mmi = 3;
  c.iterations = 12;
  for (auto _ : state) {
    benchmark::DoNotOptimize(c);
    benchmark::DoNotOptimize(components::predict_sweep3d(c, m).time);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Sweep3DClosedForm)->Arg(4)->Arg(32)->Arg(200);

}  // namespace

BENCHMARK_MAIN();
