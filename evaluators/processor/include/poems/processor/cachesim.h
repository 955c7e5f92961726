// processor[cachesim]: a kernel's time on a processor with hypothetical
// caches (the role SimpleScalar plays in the POEMS paper). The kernel runs
// under Valgrind's cache simulator (cachegrind) with the target's I1, D1 and
// last-level (LL) caches; its time is
//
//   instructions × ns_per_instruction + L1 misses × ns_per_L1_miss + LL misses × ns_per_LL_miss
//
// (plus a term for processes computing at once, cachesim_time_ns) with
// rates calibrated on this host (core/cachesim_calibration.h). The
// simulated counts of a (kernel, params, caches) are kept by a cache the
// core may install (the knowledge base): a simulated kernel takes seconds.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "poems/processor/processor_model.h"

namespace poems::processor {

// One simulated cache: total size, associativity and line size in bytes.
// Cachegrind needs a power-of-two line size of at least 16 B and a
// power-of-two number of sets (size / (assoc × line)).
struct CacheLevel {
  double size = 0, assoc = 0, line = 0;
  // "49152,12,64": cachegrind's --D1= form.
  std::string text() const;
  auto operator<=>(const CacheLevel&) const = default;
};

// One process's share of a cache that `sharers` processes use at once: the
// sets divided among them, rounded down to a power of two (cachegrind needs
// one), associativity and line kept. 32 MiB shared by 2: 16 MiB.
CacheLevel shared_level(const CacheLevel& level, int sharers);

// What cachegrind simulates: two levels, first-level instruction and data
// caches and one unified last level (on a host with L2 and L3, LL is the L3
// and the L2 is not simulated: an L1 miss costs one rate wherever it hits).
struct CacheConfig {
  CacheLevel I1, D1, LL;
  auto operator<=>(const CacheConfig&) const = default;
};

// Cachegrind's events (its `events:` line), per run or per call.
struct CacheCounts {
  double Ir = 0, I1mr = 0, ILmr = 0, Dr = 0, D1mr = 0, DLmr = 0, Dw = 0, D1mw = 0, DLmw = 0;
  double l1_misses() const { return I1mr + D1mr + D1mw; }  // each an LL access
  double ll_misses() const { return ILmr + DLmr + DLmw; }  // each a memory access
};

struct CachesimRates {
  double ns_per_instruction = 0, ns_per_L1_miss = 0, ns_per_LL_miss = 0;
  // What an LL miss costs more for each other process computing at once on
  // the processes' shared memory (bandwidth, queueing); 0 by default.
  double ns_per_LL_miss_shared = 0;
};

// time = Ir × ns_per_instruction + L1 misses × ns_per_L1_miss
//      + LL misses × (ns_per_LL_miss + (sharers − 1) × ns_per_LL_miss_shared),
// `sharers` the processes computing at once (the task's procs, at most the
// LL's sharers).
double cachesim_time_ns(const CacheCounts& per_call, const CachesimRates& rates, int sharers = 1);

// Non-negative least squares of the rates on relative errors: the rates
// minimising Σ ((predicted − measured) / measured)², each >= 0 (every subset
// of the four rates tried, so exact). `sharers`: each task's, empty for 1
// (ns_per_LL_miss_shared is then 0). Throws ProcessorError unless there are
// as many positive times as counts, >= 1.
CachesimRates fit_cachesim_rates(const std::vector<CacheCounts>& per_call, const std::vector<double>& measured_ns,
                                 const std::vector<int>& sharers = {});

// Reads a cachegrind output file's `events:` and `summary:` lines (any order
// of events; those above must all be there). Throws ProcessorError saying
// what is missing.
CacheCounts parse_cachegrind_output(const std::string& text);

// The counts of one call in steady state: (counts of a run of `calls2`
// calls − counts of a run of `calls1`) / (calls2 − calls1). The start-up of
// the program and the warm-up calls cancel. A count that goes down by at
// most 100 + 1 % of the first run's is start-up noise (per call: 0).
// Throws ProcessorError unless calls2 > calls1 and no count goes down more.
CacheCounts per_call_counts(const CacheCounts& run1, int calls1, const CacheCounts& run2, int calls2);

// The calls a simulation makes: `warmup` first in both runs (the steady
// state reached), `counted` more in the second (one representative
// stretch of it). A kernel with a registered cycle (register_kernel_cycle:
// the calls after which its state repeats, a Sweep3D column's 8 octants ×
// k-blocks) warms up for a whole cycle and counts the next whole cycle, as
// processor[measured] times whole cycles; any other kernel, whose calls are
// alike, 1 and 2. Throws ProcessorError when the cycle function throws.
struct SimulatedCalls {
  int warmup = 1, counted = 2;
};
SimulatedCalls simulated_calls(const std::string& kernel, const std::map<std::string, double>& params);

// Everything a simulation's counts depend on.
struct SimulationKey {
  std::string kernel;
  std::map<std::string, double> params;
  CacheConfig caches;
  SimulatedCalls calls;
  std::string runner;  // the poems-kernel executable that ran it
};

// Where simulated counts are kept between runs (the core installs the
// knowledge base); either function may be empty. They should not throw: a
// cache that cannot answer says nothing (find) or keeps nothing (store).
struct CachesimCountsCache {
  std::function<std::optional<CacheCounts>(const SimulationKey& key)> find;
  std::function<void(const SimulationKey& key, const CacheCounts& per_call, double seconds)> store;
};
void set_cachesim_counts_cache(CachesimCountsCache cache);  // replaces the one before; {} removes it

struct SimulationOptions {
  std::string valgrind = "valgrind";  // searched in PATH
  std::string runner;                 // "": poems-kernel beside the running executable
  double timeout_ns = 600e9;          // each of the two runs
};

struct Simulation {
  CacheCounts per_call;
  double seconds = 0;  // wall time of the simulation (0 when served from a cache)
  bool cached = false;
};

// The steady-state counts of one call of `kernel` with `params` on `caches`:
// two cachegrind runs of poems-kernel (warm-up calls, then warm-up plus
// counted calls), at the same time, their difference per counted call.
// Served from the installed cache when it has them. Throws ProcessorError
// (valgrind missing, a run failing or timing out, bad output).
Simulation simulate_kernel(const std::string& kernel, const std::map<std::string, double>& params,
                           const CacheConfig& caches, const SimulationOptions& options = {});

// The poems-kernel executable beside the running one ("" if absent).
std::string default_kernel_runner();

// A cache's configuration, checked: the message names the attribute (e.g.
// 'D1_size') and the allowed range. Throws ProcessorError prefixed with `who`.
void check_cache_level(const std::string& who, const std::string& name, const CacheLevel& level);

}  // namespace poems::processor
