// processor[cachesim] in the core: its simulated counts kept in the
// knowledge base, this host's caches, and the calibration of its three
// rates (`poems calibrate --cachesim`, docs/processor.md).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "poems/processor/cachesim.h"

namespace poems::core {

// Simulated counts are stored in the knowledge base at `db_path` as runs of
// evaluator processor[cachesim] (model: the kernel; key: its params, the
// caches, the calls simulated and the SHA-256 of the poems-kernel that ran
// them; result: time 0, the counts per call in `extra`). "" removes the
// cache. A knowledge base that cannot be opened costs only the cache.
void keep_cachesim_counts_in(const std::string& db_path);

// This host's caches from /sys/devices/system/cpu/cpu0/cache: L1
// instruction and data, and the last level; `ll_shared_by` = the CPUs
// sharing that last level. Throws EvaluationError when sysfs does not say.
processor::CacheConfig host_caches(int& ll_shared_by);

struct CachesimCalibrationRequest {
  std::string spec, study;  // the compute tasks of this study's bindings (with their procs)
  std::string name = "local";
  std::string kernel;  // "" = the study's processor[measured] kernel
};

struct CachesimPoint {
  std::map<std::string, double> task;  // the task's params, procs included
  double measured_ns = 0, predicted_ns = 0;
  double left_out_ns = 0;  // predicted by the rates fitted to the other tasks (leave-one-out)
  processor::CacheCounts per_call;
  processor::CacheLevel ll;  // the LL simulated (the host's, shared by procs)
  int sharers = 1;           // processes computing at once: min(procs, LL's sharers)
  double simulation_seconds = 0;
  bool cached = false;
};

struct CachesimCalibration {
  std::string kernel, component;  // component: NAME_cachesim
  processor::CacheConfig caches;
  int ll_shared_by = 1;
  processor::CachesimRates rates;
  std::vector<CachesimPoint> points;
  std::string psl;  // the component, with its provenance in comments
};

// Measures every task (processor[measured]), simulates it with this host's
// caches, fits the rates. Throws UsageError, InputError, EvaluationError.
CachesimCalibration calibrate_cachesim(const CachesimCalibrationRequest& request,
                                       const std::function<void(const std::string&)>& progress);

}  // namespace poems::core
