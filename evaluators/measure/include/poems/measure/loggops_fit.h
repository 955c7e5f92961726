// LogGOPS parameters from the calibration micro-benchmarks
// (poems_loggops_bench; docs/sweep3d.md, the LogGOPSim paper, section 1.3), under the
// simulator's cost rules (docs/references.md): a send costs the CPU o + (s−1)·O
// and the NIC g + (s−1)·G, the message arrives o + L after the send starts
// (L later again above S: rendezvous), a receive costs o + (s−1)·max(O, G).
//
//   overhead  o(s) = (RTT_n^d − RTT_1^0)/(n−1) − d  = o + (s−1)·O      (the LogGOPSim paper, eq. 6 of [11])
//   gap       (RTT_n^0 − RTT_1^0)/(n−1)             = g + (s−1)·G      (back-to-back trains)
//   echo      RTT/2 = L + 2o + (s−1)·max(O, G)       for s ≤ S, 2L + 2o + ... above
//
// Each is a straight line in s, fitted per message-size range (eager s ≤ S,
// rendezvous s > S) by least squares of the relative residuals; fit_loggops
// says how the parameters follow from the lines.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace poems::measure {

// What poems_loggops_bench printed (times in ns, sizes in bytes).
struct LoggopsSamples {
  int ranks = 2, train_messages = 16;
  bool quick = false;
  std::vector<double> sizes, echo_ns, exchange_ns, rtt1_ns, train_ns, delay_ns, train_delay_ns;
  std::vector<double> probe_sizes, probe_ns;  // blocking send while the receiver waits
  double probe_wait_ns = 0;
  double eager_limit = 0;  // S: largest probed size whose send did not wait

  std::vector<double> gap_ns() const;       // per size: (RTT_n^0 − RTT_1^0)/(n−1)
  std::vector<double> overhead_ns() const;  // per size: (RTT_n^d − RTT_1^0)/(n−1) − d
};

// Reads the JSON after "POEMS_LOGGOPS "; throws std::runtime_error naming a
// missing or malformed field.
LoggopsSamples parse_loggops_output(const std::string& json_text);

struct LineFit {
  double intercept = 0, slope = 0;  // y = intercept + slope·x
  int points = 0;
  double max_relative_residual = 0;  // largest |y − fit| / y
};

// Weighted least squares (weights 1/y², i.e. relative residuals) of y on x;
// with one point, a horizontal line. Points with y <= 0 are ignored.
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// LogGOPS of one size range. Times in ns, per-byte costs in ns/B.
struct RangeFit {
  std::string name;  // "eager" or "rendezvous"
  double min_bytes = 0, max_bytes = 0;
  int sizes = 0;
  double L = 0, o = 0, g = 0, G = 0, O = 0;
  LineFit echo, overhead, gap;
};

struct LoggopsCalibration {
  double S = 0;                          // eager limit, bytes
  RangeFit eager, rendezvous, messages;  // sizes == 0 when the range holds no measured size
  // The machine: the parameters of one range (machine_range), since one
  // LogGOPS set cannot follow both protocols of a shared-memory MPI.
  std::string machine_range;
  double L = 0, o = 0, g = 0, G = 0, O = 0;
  // Above the machine's range, each higher regime of the echo (echo_regimes)
  // fitted on its own sizes: the machine's message-size regimes (from_K in
  // PSL, docs/network.md), from the regime's smallest measured size on.
  std::vector<RangeFit> regimes;
  std::vector<std::string> notes;  // clamped values and the like
};

// Fills c.regimes: every echo regime of two or more sizes that all lie above
// the machine's range (c.machine_range's largest size), fitted with o = c.o
// (a one-size regime another jump follows takes the next one's sizes; a
// regime whose model misses a size by more than 15 % splits in two where
// two fits miss at most half as much; where the echo's line would need
// L < 0, G is fitted with L = 0). At most 8, a machine's limit.
void fit_size_regimes(LoggopsCalibration& c, const LoggopsSamples& samples);

// The echo time (RTT/2) the calibrated machine predicts for s bytes, in the
// regime that prices s: (2 above S : 1)·L + 2o + (s−1)·max(O, G).
double model_echo_ns(const LoggopsCalibration& c, double s);

// Per range: o from the eager range's overhead trains (above S a blocking
// send waits for the receiver, so a train shows the handshake); G the echo's
// slope, so the model's one-way time o + L (+ L above S) + o + (s−1)·max(O, G)
// follows the measured echo; O the overhead's slope, clamped to [0, G]; g the
// gap line at one byte; L from the echo at one byte (halved above S, where
// the model adds one latency for the rendezvous). The machine takes the
// "messages" range [machine_min_bytes, machine_max_bytes] when it is given
// (machine_max_bytes > 0) and holds measured sizes: the sizes the modelled
// application sends; else the rendezvous range when it has two or more sizes
// (the large messages of a wavefront), else the eager range.
LoggopsCalibration fit_loggops(const LoggopsSamples& samples, double machine_min_bytes = 0,
                               double machine_max_bytes = 0);

// The range the machine takes, by fit_loggops's rule (the messages range
// when it holds measured sizes, else the rendezvous range with two or more
// sizes, else the eager range): sets machine_range and L, o, g, G, O, and
// notes a messages range [min, max] (max > 0) that holds no measured size.
void choose_machine_range(LoggopsCalibration& c, double machine_min_bytes, double machine_max_bytes);

// Protocol regimes of the echo: the measured sizes split where the echo time
// jumps (more than 2.5 times, and more than 1.25 times the step in size, from
// one size to the next at most 4 times larger, e.g. a shared-memory MPI's
// switch to single-copy rendezvous), as [first, last] size pairs.
std::vector<std::pair<double, double>> echo_regimes(const LoggopsSamples& samples);

// The size range the machine should follow for an application sending
// `message_sizes` (`counts` of each; all 1 if empty): the regime carrying most
// messages, narrowed to half their smallest and twice their largest size
// there. A per-message error weighs with how often it is paid. {0, 0}
// without sizes.
std::pair<double, double> messages_range(const LoggopsSamples& samples, const std::vector<double>& message_sizes,
                                         const std::vector<double>& counts = {});
// messages_range for a run's traffic, message size -> how many (sizes sent
// 0 times left out), as the calibration counts it.
std::pair<double, double> traffic_range(const LoggopsSamples& samples, const std::map<double, double>& traffic);

}  // namespace poems::measure
