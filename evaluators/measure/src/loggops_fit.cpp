// LogGOPS parameters from the calibration micro-benchmarks (see loggops_fit.h).
#include "poems/measure/loggops_fit.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace poems::measure {

namespace {

std::vector<double> numbers(const nlohmann::json& j, const char* key, std::size_t expected) {
  if (!j.contains(key) || !j[key].is_array())
    throw std::runtime_error(std::string("calibration output lacks '") + key + "'");
  std::vector<double> v;
  for (const auto& x : j[key]) {
    if (!x.is_number()) throw std::runtime_error(std::string("calibration output: '") + key + "' holds a non-number");
    v.push_back(x.get<double>());
  }
  if (expected && v.size() != expected)
    throw std::runtime_error(std::string("calibration output: '") + key + "' has " + std::to_string(v.size()) +
                             " values for " + std::to_string(expected) + " sizes");
  return v;
}

// The model's one-way time of a `bytes` message (loggops_fit.h: one latency
// more above the eager limit S).
double one_way_ns(double L, double o, double G, double O, double S, double bytes) {
  return (bytes > S ? 2 : 1) * L + 2 * o + (bytes - 1) * std::max(O, G);
}

std::string format(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", v);
  return buffer;
}

}  // namespace

std::vector<double> LoggopsSamples::gap_ns() const {
  std::vector<double> out;
  for (std::size_t k = 0; k < sizes.size(); ++k) out.push_back((train_ns[k] - rtt1_ns[k]) / (train_messages - 1));
  return out;
}

std::vector<double> LoggopsSamples::overhead_ns() const {
  std::vector<double> out;
  for (std::size_t k = 0; k < sizes.size(); ++k)
    out.push_back((train_delay_ns[k] - rtt1_ns[k]) / (train_messages - 1) - delay_ns[k]);
  return out;
}

LoggopsSamples parse_loggops_output(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("calibration output is not JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::runtime_error("calibration output is not a JSON object");
  LoggopsSamples s;
  s.ranks = j.value("ranks", 2);
  s.train_messages = j.value("train_messages", 16);
  if (s.train_messages < 2) throw std::runtime_error("calibration output: train_messages must be at least 2");
  s.quick = j.value("quick", false);
  s.sizes = numbers(j, "sizes", 0);
  if (s.sizes.empty()) throw std::runtime_error("calibration output has no sizes");
  const std::size_t n = s.sizes.size();
  s.echo_ns = numbers(j, "echo_ns", n);
  s.exchange_ns = numbers(j, "exchange_ns", n);
  s.rtt1_ns = numbers(j, "rtt1_ns", n);
  s.train_ns = numbers(j, "train_ns", n);
  s.delay_ns = numbers(j, "delay_ns", n);
  s.train_delay_ns = numbers(j, "train_delay_ns", n);
  s.probe_sizes = numbers(j, "eager_probe_sizes", 0);
  s.probe_ns = numbers(j, "eager_probe_ns", s.probe_sizes.size());
  s.probe_wait_ns = j.value("eager_probe_wait_ns", 0.0);
  s.eager_limit = j.value("eager_limit", 0.0);
  return s;
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit f;
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t k = 0; k < x.size() && k < y.size(); ++k) {
    if (!(y[k] > 0)) continue;
    const double w = 1 / (y[k] * y[k]);
    sw += w, sx += w * x[k], sy += w * y[k], sxx += w * x[k] * x[k], sxy += w * x[k] * y[k];
    ++f.points;
  }
  if (f.points == 0) return f;
  const double det = sw * sxx - sx * sx;
  if (f.points == 1 || std::fabs(det) <= 1e-12 * sw * sxx) {
    f.intercept = sy / sw;
  } else {
    f.slope = (sw * sxy - sx * sy) / det;
    f.intercept = (sy - f.slope * sx) / sw;
  }
  for (std::size_t k = 0; k < x.size() && k < y.size(); ++k)
    if (y[k] > 0)
      f.max_relative_residual =
          std::max(f.max_relative_residual, std::fabs(y[k] - f.intercept - f.slope * x[k]) / y[k]);
  return f;
}

namespace {

RangeFit fit_range(const LoggopsSamples& s, const std::string& name, double min_bytes, double max_bytes, double o,
                   std::vector<std::string>& notes) {
  RangeFit r;
  r.name = name;
  const std::vector<double> gap = s.gap_ns(), overhead = s.overhead_ns();
  std::vector<double> x, echo, over, gp;
  for (std::size_t k = 0; k < s.sizes.size(); ++k) {
    if (s.sizes[k] < min_bytes || s.sizes[k] > max_bytes) continue;
    x.push_back(s.sizes[k]);
    echo.push_back(s.echo_ns[k]);
    over.push_back(overhead[k]);
    gp.push_back(gap[k]);
  }
  r.sizes = static_cast<int>(x.size());
  if (x.empty()) return r;
  r.min_bytes = *std::min_element(x.begin(), x.end());
  r.max_bytes = *std::max_element(x.begin(), x.end());
  r.overhead = fit_line(x, over);
  r.gap = fit_line(x, gp);
  r.echo = fit_line(x, echo);
  if (o < 0) o = std::max(0.0, r.overhead.intercept + r.overhead.slope);
  // One way costs (L +) L + 2o + (s−1)·max(O, G): G carries the echo's slope,
  // so the model's one-way time is the measured one; O ≤ G the overhead's.
  r.o = o;
  r.G = std::max(0.0, r.echo.slope);
  r.O = std::clamp(r.overhead.slope, 0.0, r.G);
  r.g = std::max(0.0, r.gap.intercept + r.gap.slope);
  const bool rendezvous = r.min_bytes > s.eager_limit;
  const double at_one = r.echo.intercept + r.echo.slope;  // RTT/2 of a 1-byte message
  const double latency = (at_one - 2 * o) / (rendezvous ? 2 : 1);
  if (latency < 0)
    notes.push_back(name + " range: RTT/2 at 1 byte is " + format(at_one) + " ns < 2o = " + format(2 * o) +
                    " ns; L set to 0");
  r.L = std::max(0.0, latency);
  if (r.overhead.slope < 0)
    notes.push_back(name + " range: the overhead falls with the size (slope " + format(r.overhead.slope) +
                    " ns/B); O set to 0");
  if (r.echo.slope < 0) notes.push_back(name + " range: the echo time falls with the size; G set to 0");
  return r;
}

// The largest relative difference between the model's echo with `r`'s
// parameters and the measured echo, over the measured sizes in `r`'s range.
double model_miss(const LoggopsSamples& s, const RangeFit& r) {
  double worst = 0;
  for (std::size_t k = 0; k < s.sizes.size(); ++k) {
    const double b = s.sizes[k];
    if (b < r.min_bytes || b > r.max_bytes || !(s.echo_ns[k] > 0)) continue;
    const double model = one_way_ns(r.L, r.o, r.G, r.O, s.eager_limit, b);
    worst = std::max(worst, std::fabs(model - s.echo_ns[k]) / s.echo_ns[k]);
  }
  return worst;
}

// A message-size regime's fit: fit_range's, and where the echo's line meets
// 1 byte below 2o + 2L with L >= 0 (L set to 0: beyond the caches the echo
// grows faster than in proportion), G is fitted again with L = 0, least
// squares of the relative residuals of 2o + (s-1)G, rather than the slope
// kept and the intercept lost (which overstates every size).
RangeFit fit_regime(const LoggopsSamples& s, const std::string& name, double first, double last, double o,
                    std::vector<std::string>& notes) {
  RangeFit r = fit_range(s, name, first, last, o, notes);
  if (r.sizes < 2 || r.echo.intercept + r.echo.slope >= 2 * r.o) return r;  // L >= 0 as fitted
  double xy = 0, xx = 0;                                                    // weights 1/echo^2: relative residuals
  for (std::size_t k = 0; k < s.sizes.size(); ++k) {
    const double b = s.sizes[k], y = s.echo_ns[k];
    if (b < first || b > last || !(y > 0)) continue;
    const double x = b - 1, w = 1 / (y * y);
    xy += w * x * (y - 2 * r.o), xx += w * x * x;
  }
  if (!(xx > 0)) return r;
  const double slope = r.G;
  r.G = std::max(0.0, xy / xx);
  r.O = std::min(r.O, r.G);
  if (!name.empty())
    notes.push_back(name + " range: G fitted with L = 0: " + format(r.G) + " ns/B (the echo's slope " + format(slope) +
                    " ns/B)");
  return r;
}

// A regime's sizes as ranges of their own: where its model misses a measured
// echo by more than kBendMiss, the bandwidth changed without a jump at the
// measured sizes (messages outgrowing a cache between two sizes a factor 2
// apart), so it splits in two at the size whose two fits miss least, if
// they miss at most half as much, and each piece again; every piece keeps
// two sizes, and there are at most `budget` of them.
constexpr double kBendMiss = 0.15;
// A machine's message-size regimes at most (components::kMaxSizeRegimes,
// a library this one does not depend on).
constexpr std::size_t kMaxRegimes = 8;

void split_at_bends(const LoggopsSamples& s, double first, double last, double o, std::size_t budget,
                    std::vector<std::pair<double, double>>& out) {
  std::vector<double> sizes;
  for (double b : s.sizes)
    if (b >= first && b <= last) sizes.push_back(b);
  std::sort(sizes.begin(), sizes.end());
  std::vector<std::string> scratch;  // the trial fits' notes: only the kept ones' count
  const double whole = model_miss(s, fit_regime(s, "", first, last, o, scratch));
  std::size_t best_k = 0;
  double best = whole;
  if (sizes.size() >= 4 && whole > kBendMiss && budget >= 2)
    for (std::size_t k = 2; k + 2 <= sizes.size(); ++k) {
      const double miss = std::max(model_miss(s, fit_regime(s, "", sizes[0], sizes[k - 1], o, scratch)),
                                   model_miss(s, fit_regime(s, "", sizes[k], sizes.back(), o, scratch)));
      if (miss < best) best = miss, best_k = k;
    }
  if (best_k == 0 || best > whole / 2) {
    out.push_back({first, last});
    return;
  }
  const std::size_t before = out.size();
  split_at_bends(s, sizes[0], sizes[best_k - 1], o, budget - 1, out);
  split_at_bends(s, sizes[best_k], sizes.back(), o, budget - (out.size() - before), out);
}

}  // namespace

LoggopsCalibration fit_loggops(const LoggopsSamples& s, double machine_min_bytes, double machine_max_bytes) {
  LoggopsCalibration c;
  c.S = s.eager_limit;
  // o: the eager range's send overhead (above S a blocking send waits for the
  // receiver, so a train shows the handshake there, not the CPU overhead).
  c.eager = fit_range(s, "eager", 0, c.S, -1, c.notes);
  const double o = c.eager.sizes ? c.eager.o : -1;
  c.rendezvous = fit_range(s, "rendezvous", std::nextafter(c.S, 1e300), 1e300, o, c.notes);
  if (machine_max_bytes > 0) c.messages = fit_range(s, "messages", machine_min_bytes, machine_max_bytes, o, c.notes);
  choose_machine_range(c, machine_min_bytes, machine_max_bytes);
  fit_size_regimes(c, s);
  return c;
}

void fit_size_regimes(LoggopsCalibration& c, const LoggopsSamples& s) {
  c.regimes.clear();
  const RangeFit& chosen = c.machine_range == "messages"     ? c.messages
                           : c.machine_range == "rendezvous" ? c.rendezvous
                                                             : c.eager;
  if (!chosen.sizes) return;
  // A regime needs two sizes for its per-byte cost; a last size alone (the
  // echo of the largest messages growing almost 4-fold in a 4-fold step)
  // stays with the regime below.
  const auto echo = echo_regimes(s);
  for (std::size_t i = 0; i < echo.size(); ++i) {
    auto [first, last] = echo[i];
    if (first <= chosen.max_bytes) continue;
    // Nor can a regime of one size that another jump follows: it takes the
    // sizes of the next (beyond the last-level cache the echo of 16 MiB grew
    // 7.2-fold from 4 MiB's and that of 64 MiB 5.1-fold from 16 MiB's on the
    // development machine, two jumps by the rule, one regime: DRAM).
    while (first == last && i + 1 < echo.size()) last = echo[++i].second;
    if (first == last) continue;
    std::vector<std::pair<double, double>> pieces;
    split_at_bends(s, first, last, c.o, kMaxRegimes - std::min(kMaxRegimes, c.regimes.size()), pieces);
    for (const auto& [from, to] : pieces) {
      if (c.regimes.size() == kMaxRegimes) break;
      RangeFit r = fit_regime(s, "regime " + std::to_string(c.regimes.size() + 1), from, to, c.o, c.notes);
      if (r.sizes >= 2) c.regimes.push_back(r);
    }
  }
}

double model_echo_ns(const LoggopsCalibration& c, double s) {
  double L = c.L, o = c.o, G = c.G, O = c.O;
  for (const RangeFit& r : c.regimes)
    if (s >= r.min_bytes) L = r.L, o = r.o, G = r.G, O = r.O;
  return one_way_ns(L, o, G, O, c.S, s);
}

void choose_machine_range(LoggopsCalibration& c, double machine_min_bytes, double machine_max_bytes) {
  if (machine_max_bytes > 0 && !c.messages.sizes)
    c.notes.push_back("no measured size lies in " + format(machine_min_bytes) + "-" + format(machine_max_bytes) +
                      " B; the machine takes the rendezvous range");
  const RangeFit& chosen = c.messages.sizes                            ? c.messages
                           : c.rendezvous.sizes >= 2 || !c.eager.sizes ? c.rendezvous
                                                                       : c.eager;
  c.machine_range = chosen.name;
  c.L = chosen.L, c.o = chosen.o, c.g = chosen.g, c.G = chosen.G, c.O = chosen.O;
}

std::vector<std::pair<double, double>> echo_regimes(const LoggopsSamples& s) {
  std::vector<std::size_t> order(s.sizes.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return s.sizes[a] < s.sizes[b]; });
  std::vector<std::pair<double, double>> regimes;
  for (std::size_t n = 0; n < order.size(); ++n) {
    const std::size_t k = order[n];
    // A jump is a step in time the step in size does not explain: 4 KiB
    // taking 9 times 1 KiB's echo is a new protocol, 256 KiB taking 3.7
    // times 64 KiB's is the same one moving 4 times the bytes.
    const double before = n > 0 ? s.echo_ns[order[n - 1]] : 0,
                 size_step = n > 0 ? s.sizes[k] / s.sizes[order[n - 1]] : 0;
    const bool jump = n > 0 && before > 0 && s.echo_ns[k] > 2.5 * before && s.echo_ns[k] > 1.25 * size_step * before &&
                      size_step <= 4;
    if (regimes.empty() || jump)
      regimes.push_back({s.sizes[k], s.sizes[k]});
    else
      regimes.back().second = s.sizes[k];
  }
  return regimes;
}

std::pair<double, double> traffic_range(const LoggopsSamples& s, const std::map<double, double>& traffic) {
  std::vector<double> sizes, counts;
  for (const auto& [bytes, count] : traffic)
    if (count > 0) sizes.push_back(bytes), counts.push_back(count);
  return messages_range(s, sizes, counts);
}

std::pair<double, double> messages_range(const LoggopsSamples& s, const std::vector<double>& message_sizes,
                                         const std::vector<double>& counts) {
  const auto regimes = echo_regimes(s);
  if (message_sizes.empty() || regimes.empty()) return {0, 0};
  // A message belongs to the regime whose sizes begin at or below it.
  auto regime_of = [&](double bytes) {
    std::size_t r = 0;
    while (r + 1 < regimes.size() && regimes[r + 1].first <= bytes) ++r;
    return r;
  };
  std::vector<double> count(regimes.size(), 0);
  for (std::size_t k = 0; k < message_sizes.size(); ++k)
    count[regime_of(message_sizes[k])] += k < counts.size() ? counts[k] : 1;
  const std::size_t best = static_cast<std::size_t>(std::max_element(count.begin(), count.end()) - count.begin());
  double lo = 1e300, hi = 0;
  for (double m : message_sizes)
    if (regime_of(m) == best) lo = std::min(lo, m), hi = std::max(hi, m);
  return {std::max(regimes[best].first, lo / 2),
          std::min(best + 1 < regimes.size() ? regimes[best + 1].first : 1e300, hi * 2)};
}

}  // namespace poems::measure
