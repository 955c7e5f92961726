// processor[cachesim] (evaluators/processor/src/cachesim*.cpp): the parser of
// cachegrind's output, the difference that leaves one call, the time formula,
// the fit, the attributes' errors, and real cachegrind runs of a small
// Sweep3D column through poems-kernel (built beside this test).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "poems/processor/cachesim.h"
#include "poems/sweep3d/kblock.h"
#include "processor_error.h"

using namespace poems;
using processor::CacheCounts;
using processor::ProcessorError;
using processor::ProcessorSpec;
using processor::testing::error_of;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The host configuration of the development machine: every size valid for cachegrind.
ProcessorSpec valid_spec() {
  ProcessorSpec s;
  s.component = "Host";
  s.evaluator = "processor[cachesim]";
  s.strings["kernel"] = "sweep3d.kblock";
  s.numbers = {{"I1_size", 32768},          {"I1_assoc", 8},       {"I1_line", 64},
               {"D1_size", 49152},          {"D1_assoc", 12},      {"D1_line", 64},
               {"LL_size", 1048576},        {"LL_assoc", 16},      {"LL_line", 64},
               {"ns_per_instruction", 0.2}, {"ns_per_L1_miss", 3}, {"ns_per_LL_miss", 50}};
  return s;
}

processor::CacheConfig caches_with_d1(double d1_size, double d1_assoc) {
  processor::CacheConfig c;
  c.I1 = {32768, 8, 64};
  c.D1 = {d1_size, d1_assoc, 64};
  c.LL = {1048576, 16, 64};
  return c;
}

// A column small enough to simulate in about a second: 8 x 8 cells of 16
// planes, k-blocks of 4, 2 angles (a cycle of 32 calls warms up, the next 32 count).
const std::map<std::string, double> kSmallColumn = {{"it", 8}, {"jt", 8}, {"mk", 4}, {"angles", 2}, {"kt", 16}};

bool valgrind_usable(std::string& why) {
#if defined(__SANITIZE_ADDRESS__)
  why =
      "AddressSanitizer build: an ASan-instrumented poems-kernel does not start under valgrind (\"ASan runtime "
      "does not come first in initial library list\")";
  return false;
#else
  if (processor::default_kernel_runner().empty()) {
    why = "poems-kernel is not beside processor_tests";
    return false;
  }
  if (std::system("valgrind --version >/dev/null 2>&1") != 0) {
    why = "valgrind is not installed (scripts/install-deps installs it)";
    return false;
  }
  return true;
#endif
}

}  // namespace

TEST(CachesimCounts, ParsesARealCachegrindOutputFile) {
  // /bin/true under cachegrind 3.19 with the development host's caches,
  // its per-function lines cut after the first function.
  std::ifstream in(std::string(POEMS_SOURCE_DIR) + "/tests/processor/data/cachegrind_true.out");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  const CacheCounts c = processor::parse_cachegrind_output(text.str());
  EXPECT_EQ(c.Ir, 130806);
  EXPECT_EQ(c.I1mr, 1091);
  EXPECT_EQ(c.ILmr, 1072);
  EXPECT_EQ(c.Dr, 29996);
  EXPECT_EQ(c.D1mr, 1153);
  EXPECT_EQ(c.DLmr, 1018);
  EXPECT_EQ(c.Dw, 10263);
  EXPECT_EQ(c.D1mw, 336);
  EXPECT_EQ(c.DLmw, 311);
  EXPECT_EQ(c.l1_misses(), 1091 + 1153 + 336);
  EXPECT_EQ(c.ll_misses(), 1072 + 1018 + 311);
}

TEST(CachesimCounts, EventsInAnyOrderAndMissingOnes) {
  const CacheCounts c = processor::parse_cachegrind_output(
      "events: DLmw Dw Ir D1mw I1mr ILmr Dr D1mr DLmr\nsummary: 9 8 1 7 2 3 4 5 6\n");
  EXPECT_EQ(c.Ir, 1);
  EXPECT_EQ(c.DLmw, 9);
  EXPECT_EQ(c.D1mr, 5);
  EXPECT_TRUE(contains(error_of([] { processor::parse_cachegrind_output("events: Ir\nsummary: 5\n"); }),
                       "no event 'I1mr' (was the cache simulation on? --cache-sim=yes)"));
  EXPECT_TRUE(contains(error_of([] { processor::parse_cachegrind_output("summary: 5\n"); }), "no 'events:' line"));
  EXPECT_TRUE(contains(error_of([] { processor::parse_cachegrind_output("events: Ir I1mr\nsummary: 5\n"); }),
                       "no count for event 'I1mr'"));
}

TEST(CachesimCounts, DifferenceLeavesOneCall) {
  CacheCounts start;  // start-up and one warm-up call
  start.Ir = 1000, start.D1mr = 50, start.DLmr = 40, start.Dw = 7;
  CacheCounts later = start;  // and four more calls of 100 instructions, 3 D1 read misses, 1 LL miss
  later.Ir += 400, later.D1mr += 12, later.DLmr += 4, later.Dw += 8;
  const CacheCounts one = processor::per_call_counts(start, 1, later, 5);
  EXPECT_EQ(one.Ir, 100);
  EXPECT_EQ(one.D1mr, 3);
  EXPECT_EQ(one.DLmr, 1);
  EXPECT_EQ(one.Dw, 2);
  EXPECT_EQ(one.I1mr, 0);
  EXPECT_TRUE(contains(error_of([&] { processor::per_call_counts(start, 5, later, 5); }), "more calls"));
  EXPECT_TRUE(contains(error_of([&] { processor::per_call_counts(later, 1, start, 5); }), "fewer Ir"));
  CacheCounts noisy = later;  // the start-up's I1 misses differ by a few between runs
  start.I1mr = 5759, noisy.I1mr = 5700;
  EXPECT_EQ(processor::per_call_counts(start, 1, noisy, 5).I1mr, 0);
}

TEST(CachesimTime, InstructionsAndMissesPerLevel) {
  CacheCounts c;
  c.Ir = 1000, c.I1mr = 1, c.D1mr = 10, c.D1mw = 4, c.ILmr = 1, c.DLmr = 2, c.DLmw = 3;
  const double t = processor::cachesim_time_ns(c, {0.25, 4, 60});
  EXPECT_DOUBLE_EQ(t, 1000 * 0.25 + (1 + 10 + 4) * 4 + (1 + 2 + 3) * 60);
}

TEST(CachesimFit, RecoversTheRatesOfExactTimes) {
  std::vector<CacheCounts> counts;
  std::vector<double> times;
  const processor::CachesimRates truth{0.3, 2.5, 80};
  for (int k = 0; k < 6; ++k) {
    CacheCounts c;
    c.Ir = 1e6 * (k + 1), c.D1mr = 1e4 * (k * k + 1), c.DLmr = 300.0 * (6 - k);
    counts.push_back(c);
    times.push_back(processor::cachesim_time_ns(c, truth));
  }
  const processor::CachesimRates fit = processor::fit_cachesim_rates(counts, times);
  EXPECT_NEAR(fit.ns_per_instruction, 0.3, 1e-9);
  EXPECT_NEAR(fit.ns_per_L1_miss, 2.5, 1e-7);
  EXPECT_NEAR(fit.ns_per_LL_miss, 80, 1e-5);
}

TEST(CachesimFit, SharedRateFromTasksWithOthersAtOnce) {
  std::vector<CacheCounts> counts;
  std::vector<double> times;
  std::vector<int> sharers;
  const processor::CachesimRates truth{0.2, 3, 40, 25};
  for (int k = 0; k < 8; ++k) {
    CacheCounts c;
    c.Ir = 1e6 * (k % 4 + 1), c.D1mr = 1e4 * ((k * 7) % 5 + 1), c.DLmr = 500.0 * (k % 3 + 1);
    counts.push_back(c);
    sharers.push_back(1 + k % 2);
    times.push_back(processor::cachesim_time_ns(c, truth, sharers.back()));
  }
  EXPECT_DOUBLE_EQ(processor::cachesim_time_ns(counts[1], truth, 2),
                   counts[1].Ir * 0.2 + counts[1].l1_misses() * 3 + counts[1].ll_misses() * (40 + 25));
  const processor::CachesimRates fit = processor::fit_cachesim_rates(counts, times, sharers);
  EXPECT_NEAR(fit.ns_per_instruction, 0.2, 1e-9);
  EXPECT_NEAR(fit.ns_per_L1_miss, 3, 1e-6);
  EXPECT_NEAR(fit.ns_per_LL_miss, 40, 1e-5);
  EXPECT_NEAR(fit.ns_per_LL_miss_shared, 25, 1e-5);
}

TEST(CachesimFit, NoNegativeRate) {
  // Misses that come with shorter times would need a negative rate: it is 0.
  std::vector<CacheCounts> counts(3);
  counts[0].Ir = 1000, counts[0].D1mr = 0;
  counts[1].Ir = 2000, counts[1].D1mr = 100;
  counts[2].Ir = 3000, counts[2].D1mr = 300;
  const processor::CachesimRates fit = processor::fit_cachesim_rates(counts, {1000, 1900, 2700});
  EXPECT_EQ(fit.ns_per_L1_miss, 0);
  EXPECT_EQ(fit.ns_per_LL_miss, 0);
  EXPECT_EQ(fit.ns_per_LL_miss_shared, 0);
  EXPECT_GT(fit.ns_per_instruction, 0.9);
  EXPECT_LT(fit.ns_per_instruction, 1.0);
  EXPECT_TRUE(contains(error_of([&] { processor::fit_cachesim_rates(counts, {1, 0, 1}); }), "not positive"));
}

TEST(CachesimAttributes, EachMissingOrBadOneNamed) {
  sweep3d::register_sweep3d_kernels();
  EXPECT_NO_THROW(processor::make_processor_model(valid_spec()));
  auto without = [](const std::string& name) {
    ProcessorSpec s = valid_spec();
    s.numbers.erase(name);
    s.strings.erase(name);
    return error_of([&] { processor::make_processor_model(s); });
  };
  EXPECT_TRUE(contains(without("kernel"), "missing attribute 'kernel'")) << without("kernel");
  for (const char* name : {"I1_size", "D1_assoc", "LL_line", "ns_per_instruction", "ns_per_L1_miss", "ns_per_LL_miss"})
    EXPECT_TRUE(contains(without(name), std::string("missing attribute '") + name + "'")) << without(name);
  auto with = [](const std::string& name, double v) {
    ProcessorSpec s = valid_spec();
    s.numbers[name] = v;
    return error_of([&] { processor::make_processor_model(s); });
  };
  EXPECT_EQ(with("D1_line", 48),
            "processor component 'Host' (processor[cachesim]): attribute 'D1_line' is 48; it must be a power of two "
            "from 16 B to 64 KiB, e.g. `D1_line = 64B;`");
  EXPECT_TRUE(contains(with("D1_size", 40960), "'D1_size' is 40960; size / (assoc x line) = 53.3333333 sets"));
  EXPECT_TRUE(contains(with("LL_assoc", 0.5), "'LL_assoc' is 0.5; it must be a whole number from 1 to 1024"));
  EXPECT_TRUE(contains(with("I1_size", 64), "'I1_size' is 64; it must be a whole number of bytes from I1_assoc"));
  EXPECT_TRUE(contains(with("ns_per_LL_miss", -1), "'ns_per_LL_miss' is -1 ns; it must be a time from 0 to 1 s"));
  EXPECT_TRUE(contains(with("LL_shared_by", 0), "'LL_shared_by' is 0; it must be a whole number from 1 to 1024"));
  EXPECT_TRUE(contains(with("timeout", 0), "'timeout' is 0 ns; it must be a time > 0"));
  EXPECT_TRUE(contains(with("ns_per_LL_miss_shared", 2e9), "'ns_per_LL_miss_shared' is 2000000000 ns"));
  ProcessorSpec unknown = valid_spec();
  unknown.strings["kernel"] = "no.such";
  EXPECT_TRUE(contains(error_of([&] { processor::make_processor_model(unknown); }),
                       "unknown kernel 'no.such' (registered native kernels: "));
}

TEST(CachesimAttributes, SharedLastLevel) {
  const processor::CacheLevel ll{33554432, 16, 64};
  EXPECT_EQ(processor::shared_level(ll, 1), ll);
  EXPECT_EQ(processor::shared_level(ll, 2).size, 16777216);
  EXPECT_EQ(processor::shared_level(ll, 3).size, 8388608);  // sets rounded down to a power of two
  EXPECT_EQ(processor::shared_level(ll, 3).assoc, 16);
}

TEST(CachesimRun, MissingValgrindIsAClearError) {
  sweep3d::register_sweep3d_kernels();
  processor::SimulationOptions o;
  o.valgrind = "/nonexistent/valgrind";
  o.runner = "/bin/true";  // never started
  const std::string e =
      error_of([&] { processor::simulate_kernel("sweep3d.kblock", kSmallColumn, caches_with_d1(49152, 12), o); });
  EXPECT_TRUE(contains(e, "'/nonexistent/valgrind' was not found (install Valgrind: Debian package valgrind")) << e;
}

TEST(CachesimRun, SmallColumnReproducibleAndLargerD1NeverMissesMore) {
  std::string why;
  if (!valgrind_usable(why)) GTEST_SKIP() << why;
  sweep3d::register_sweep3d_kernels();
  processor::set_cachesim_counts_cache({});
  const processor::SimulatedCalls calls = processor::simulated_calls("sweep3d.kblock", kSmallColumn);
  EXPECT_EQ(calls.warmup, 32);  // a whole cycle: 8 octants of 4 k-blocks
  EXPECT_EQ(calls.counted, 32);
  EXPECT_EQ(processor::simulated_calls("test.no_cycle", kSmallColumn).warmup, 1);
  const processor::Simulation a = processor::simulate_kernel("sweep3d.kblock", kSmallColumn, caches_with_d1(4096, 2));
  const processor::Simulation b = processor::simulate_kernel("sweep3d.kblock", kSmallColumn, caches_with_d1(4096, 2));
  const processor::Simulation big =
      processor::simulate_kernel("sweep3d.kblock", kSmallColumn, caches_with_d1(65536, 2));
  // Exactly reproducible: the same program, the same simulated caches.
  EXPECT_EQ(a.per_call.Ir, b.per_call.Ir);
  EXPECT_EQ(a.per_call.D1mr, b.per_call.D1mr);
  EXPECT_EQ(a.per_call.D1mw, b.per_call.D1mw);
  EXPECT_EQ(a.per_call.DLmr, b.per_call.DLmr);
  // One k-block: 8 x 8 x 4 cells x 2 angles; a few dozen instructions per cell-angle.
  const double cell_angles = 8 * 8 * 4 * 2;
  EXPECT_GT(a.per_call.Ir / cell_angles, 10);
  EXPECT_LT(a.per_call.Ir / cell_angles, 200);
  EXPECT_EQ(a.per_call.Ir, big.per_call.Ir);  // the caches change no instruction
  // The column's 3 arrays of 8 x 8 x 16 doubles (24 KiB) plus faces outgrow 4 KiB, not 64 KiB.
  EXPECT_GT(a.per_call.D1mr + a.per_call.D1mw, 0);
  EXPECT_LE(big.per_call.D1mr + big.per_call.D1mw, a.per_call.D1mr + a.per_call.D1mw);
  EXPECT_LT(big.per_call.D1mr + big.per_call.D1mw, (a.per_call.D1mr + a.per_call.D1mw) / 4);
  EXPECT_GT(a.seconds, 0);
}

TEST(CachesimRun, ModelCachesEachShapeAndUsesTheStore) {
  std::string why;
  if (!valgrind_usable(why)) GTEST_SKIP() << why;
  sweep3d::register_sweep3d_kernels();
  int finds = 0, stores = 0;
  CacheCounts stored;
  processor::CachesimCountsCache cache;
  cache.find = [&](const processor::SimulationKey& k) -> std::optional<CacheCounts> {
    ++finds;
    EXPECT_EQ(k.kernel, "sweep3d.kblock");
    EXPECT_EQ(k.params.count("procs"), 0u);  // not the kernel's: the LL's sharers
    if (stores) return stored;
    return std::nullopt;
  };
  cache.store = [&](const processor::SimulationKey& k, const CacheCounts& c, double) {
    ++stores, stored = c;
    EXPECT_EQ(k.caches.LL.size, 524288);  // 1 MiB shared by 2
  };
  processor::set_cachesim_counts_cache(cache);
  ProcessorSpec spec = valid_spec();
  spec.numbers["LL_shared_by"] = 2;
  processor::TaskRequest task;
  task.component = "KBlock";
  task.transaction = "execute_code_block";
  task.params = kSmallColumn;
  task.params["procs"] = 2;
  auto model = processor::make_processor_model(spec);
  const double t1 = model->task_time_ns(task);
  const double t2 = model->task_time_ns(task);  // the model's own cache
  auto again = processor::make_processor_model(spec);
  const double t3 = again->task_time_ns(task);  // the installed store
  processor::set_cachesim_counts_cache({});
  EXPECT_EQ(stores, 1);
  EXPECT_EQ(finds, 2);  // and a third below
  EXPECT_EQ(t1, t2);
  EXPECT_EQ(t1, t3);
  EXPECT_DOUBLE_EQ(t1, processor::cachesim_time_ns(stored, {0.2, 3, 50, 0}));
  spec.numbers["ns_per_LL_miss_shared"] = 7;  // the 2 processes computing at once (LL_shared_by = 2)
  processor::set_cachesim_counts_cache(cache);
  const double t4 = processor::make_processor_model(spec)->task_time_ns(task);
  processor::set_cachesim_counts_cache({});
  EXPECT_DOUBLE_EQ(t4, t1 + stored.ll_misses() * 7);
}

TEST(CachesimRun, KernelFailureIsReported) {
  std::string why;
  if (!valgrind_usable(why)) GTEST_SKIP() << why;
  sweep3d::register_sweep3d_kernels();
  processor::set_cachesim_counts_cache({});
  const std::string e = error_of([] {
    processor::simulate_kernel("sweep3d.kblock", {{"it", 8}, {"jt", 8}, {"mk", 4}}, caches_with_d1(49152, 12));
  });
  EXPECT_TRUE(contains(e, "failed (exit code 3)")) << e;
  EXPECT_TRUE(contains(e, "poems-kernel: kernel 'sweep3d.kblock' failed")) << e;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);  // no child left
  EXPECT_EQ(errno, ECHILD);
}

TEST(CachesimRun, TimeoutKillsValgrindAndTheKernel) {
  std::string why;
  if (!valgrind_usable(why)) GTEST_SKIP() << why;
  sweep3d::register_sweep3d_kernels();
  processor::set_cachesim_counts_cache({});
  processor::SimulationOptions o;
  o.timeout_ns = 300e6;  // a 64^3 column takes far longer under cachegrind
  const std::string e = error_of([&] {
    processor::simulate_kernel("sweep3d.kblock", {{"it", 64}, {"jt", 64}, {"mk", 8}, {"angles", 6}, {"kt", 64}},
                               caches_with_d1(49152, 12), o);
  });
  EXPECT_TRUE(contains(e, "timed out after 0.3 s (set the processor's `timeout`)")) << e;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}
