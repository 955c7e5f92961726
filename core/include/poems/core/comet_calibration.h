// `poems calibrate --network comet` (docs/comet.md): the local MPI's LogGOPS
// from CoMet's own echo and pairwise kernels (examples/comet/comet.c under
// mpirun, core/comet.h's CometOnHost), fitted per protocol regime by
// measure::fit_comet_network; o and g from poems_loggops_bench's message
// trains, which the echo and pairwise cannot separate from L (o) or do not
// show at all (g).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "poems/measure/comet_fit.h"
#include "poems/measure/loggops_fit.h"

namespace poems::core {

// What the CoMet calibration runs: sizes (--sizes, else 0 B and the powers
// of 2 from 1 B to 1 MiB: echo_regimes sees a protocol's jump only between
// neighbours at most 4 times apart, and at 4 times apart a bandwidth-bound
// echo grows nearly 4 times, which it takes for a jump too), repetitions and
// ranks.
struct CometNetworkRequest {
  std::vector<std::uint64_t> sizes;
  std::uint32_t reps = 100, procs = 2;
  double timeout_seconds = 600;
};
// The request for calibrate's --sizes text ("" = the defaults above) and
// --quick (20 repetitions instead of 100); UsageError("--sizes") when a size
// is out of 0..16M or none is above 0 B (the trains need one).
CometNetworkRequest comet_network_request(const std::string& sizes, bool quick, int procs);
// The sizes above 0 B, comma-separated: poems_loggops_bench's --sizes.
std::string comet_train_sizes(const CometNetworkRequest& request);

// Runs comet.c's echo and pairwise under mpirun, then fits them with the
// trains' o (their eager range's, as fit_loggops takes it) and gap per
// size. `fit_bytes`: the range the machine takes ({0, 0}: the default);
// `traffic`: message size -> how many the study's runs send, for the range
// when `fit_bytes` is not given. `command` receives the echo's mpirun line.
measure::CometNetworkFit calibrate_comet_network(const CometNetworkRequest& request,
                                                 const measure::LoggopsSamples& trains,
                                                 std::pair<double, double> fit_bytes,
                                                 const std::map<double, double>& traffic,
                                                 const std::function<void(const std::string&)>& progress,
                                                 std::string& command);

}  // namespace poems::core
