// `poems calibrate --network comet` (see comet_calibration.h).
#include "poems/core/comet_calibration.h"

#include <algorithm>

#include "poems/core/comet.h"
#include "poems/core/error.h"

namespace poems::core {

CometNetworkRequest comet_network_request(const std::string& sizes, bool quick, int procs) {
  CometNetworkRequest r;
  r.procs = static_cast<std::uint32_t>(procs);
  r.reps = quick ? 20 : 100;
  if (!sizes.empty()) {
    r.sizes = parse_comet_sizes(sizes);
  } else {
    r.sizes = {0};
    for (std::uint64_t s = 1; s <= (1u << 20); s *= 2) r.sizes.push_back(s);
  }
  if (std::none_of(r.sizes.begin(), r.sizes.end(), [](std::uint64_t s) { return s > 0; }))
    throw UsageError("--sizes", "'" + sizes +
                                    "' is not allowed with --network comet; allowed: sizes from 0 to 16M, at least "
                                    "one above 0 B (the message trains of o and g need one)");
  return r;
}

std::string comet_train_sizes(const CometNetworkRequest& request) {
  std::vector<std::uint64_t> above_zero;
  for (std::uint64_t s : request.sizes)
    if (s > 0) above_zero.push_back(s);
  return comet_sizes_text(above_zero);
}

measure::CometNetworkFit calibrate_comet_network(const CometNetworkRequest& r, const measure::LoggopsSamples& trains,
                                                 std::pair<double, double> fit_bytes,
                                                 const std::map<double, double>& traffic,
                                                 const std::function<void(const std::string&)>& progress,
                                                 std::string& command) {
  progress("CoMet's echo and pairwise (examples/comet/comet.c) under mpirun on " + std::to_string(r.procs) +
           " processes, " + std::to_string(r.sizes.size()) + " sizes, " + std::to_string(r.reps) + " repetitions");
  const CometOnHost host(r.timeout_seconds);
  const std::map<std::uint64_t, CometFigure> echo = host.run("echo", r.sizes, r.procs, r.reps, &command);
  const std::map<std::uint64_t, CometFigure> pairwise = host.run("pairwise", r.sizes, r.procs, r.reps);
  measure::CometNetworkSamples s;
  for (const auto& [bytes, f] : echo) {
    const auto p = pairwise.find(bytes);
    if (p == pairwise.end())
      throw EvaluationError("CoMet pairwise printed no result at " + std::to_string(bytes) + " B");
    s.sizes.push_back(static_cast<double>(bytes));
    s.echo_ns.push_back(f.median_ns);
    s.pairwise_ns.push_back(p->second.median_ns);
  }
  if (s.sizes.empty()) throw EvaluationError("CoMet echo printed no result");
  // o as fit_loggops takes it: the eager range's overhead trains at 1 B.
  const measure::LoggopsCalibration from_trains = measure::fit_loggops(trains);
  s.o = from_trains.eager.sizes ? from_trains.eager.o : from_trains.rendezvous.o;
  s.gap_sizes = trains.sizes;
  s.gap_ns = trains.gap_ns();
  if (fit_bytes.second <= 0 && !traffic.empty())
    fit_bytes = measure::traffic_range(measure::comet_echo_samples(s), traffic);
  return measure::fit_comet_network(s, fit_bytes.first, fit_bytes.second);
}

}  // namespace poems::core
