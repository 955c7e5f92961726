// LogGOPS parameters from CoMet's echo and pairwise kernels
// (examples/comet/comet.c; `poems calibrate --network comet`, docs/comet.md),
// under the simulator's cost rules (loggops_fit.h), per protocol regime of
// the echo (echo_regimes: the sizes split where the echo jumps):
//
//   echo      one way   = L + 2o + (s−1)·max(O, G)            (+ L above S: the rendezvous sync)
//   pairwise  both send, then both receive
//                       = max{0, (s−1)·O − L} + 2o + L + (s−1)·max(O, G)   (+ L above S)
//
// (the pairwise closed form of core/src/comet.cpp, one dissemination round).
// The echo's line gives L + 2o and max(O, G) = G; pairwise minus echo,
// max{0, (s−1)·O − L}, gives O. o and g appear in neither apart from L (o
// only as L + 2o, g not at all on 2 ranks while g ≤ 2o + L), so they come
// from elsewhere: poems_loggops_bench's overhead and gap trains.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "poems/measure/loggops_fit.h"

namespace poems::measure {

// What the fit reads. Times in ns, sizes in bytes.
struct CometNetworkSamples {
  std::vector<double> sizes, echo_ns, pairwise_ns;  // CoMet's medians, one per size
  double o = 0;                                     // the send overhead at 1 B (the overhead trains)
  std::vector<double> gap_sizes, gap_ns;            // the gap trains, (RTT_n^0 − RTT_1^0)/(n−1) per size
};

// The model's one-way echo and pairwise time of `bytes` on these parameters.
double comet_echo_model_ns(double L, double o, double G, double O, double S, double bytes);
double comet_pairwise_model_ns(double L, double o, double G, double O, double S, double bytes);

// One measured size against the machine the fit chose.
struct CometFitPoint {
  double bytes = 0;
  std::string regime;  // "eager" or "rendezvous": which side of S
  double echo_ns = 0, model_echo_ns = 0, pairwise_ns = 0, model_pairwise_ns = 0;
};

struct CometNetworkFit {
  // eager: the echo's first regime, rendezvous: the sizes from its second
  // regime on, messages: --fit-bytes or the messages in use; the machine as
  // fit_loggops chooses it. RangeFit::echo is the echo's line in s − 1,
  // RangeFit::gap the gap trains' line in s; RangeFit::overhead is unused.
  LoggopsCalibration loggops;
  std::vector<std::pair<double, double>> regimes;  // echo_regimes of the CoMet echo
  std::vector<CometFitPoint> points;
  // Per range, the largest |model − measured| / measured of the pairwise.
  double eager_pairwise_residual = 0, rendezvous_pairwise_residual = 0, messages_pairwise_residual = 0;
};

// Per range: the echo's line in s − 1 (least squares of relative residuals)
// gives G = its slope and L = intercept − 2o (halved above S), o being the
// trains' o, capped at half the intercept so that L is not negative; O the
// value in [0, G] whose pairwise model is closest to the measured pairwise
// (least squares of relative residuals); g the gap trains' line at 1 B over
// the range's sizes. S is the largest size of the echo's first regime (the
// largest size measured when the echo does not jump). The machine takes the
// "messages" range [machine_min_bytes, machine_max_bytes] when given and
// holding measured sizes, else the rendezvous range when it has two or more
// sizes, else the eager range (fit_loggops's rule). Throws
// std::invalid_argument when the vectors' lengths differ or no size is given.
CometNetworkFit fit_comet_network(const CometNetworkSamples& samples, double machine_min_bytes = 0,
                                  double machine_max_bytes = 0);

// The echo as echo_regimes and messages_range read it.
LoggopsSamples comet_echo_samples(const CometNetworkSamples& samples);

}  // namespace poems::measure
