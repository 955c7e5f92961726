// LogGOPS parameters from CoMet's echo and pairwise (see comet_fit.h).
#include "poems/measure/comet_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace poems::measure {

namespace {

std::string format(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", v);
  return buffer;
}

// (s − 1)·x, 0 at s ≤ 1, as LogGOPS::per_byte.
double per_byte(double bytes, double x) { return bytes > 1 ? (bytes - 1) * x : 0; }

struct RangeSamples {
  std::vector<double> sizes, echo, pairwise;
};

RangeSamples select(const CometNetworkSamples& s, double min_bytes, double max_bytes) {
  RangeSamples r;
  for (std::size_t k = 0; k < s.sizes.size(); ++k)
    if (s.sizes[k] >= min_bytes && s.sizes[k] <= max_bytes) {
      r.sizes.push_back(s.sizes[k]);
      r.echo.push_back(s.echo_ns[k]);
      r.pairwise.push_back(s.pairwise_ns[k]);
    }
  return r;
}

// Σ of the squared relative residuals of the pairwise model, and the largest.
std::pair<double, double> pairwise_residuals(const RangeSamples& r, double L, double o, double G, double O, double S) {
  double sum = 0, largest = 0;
  for (std::size_t k = 0; k < r.sizes.size(); ++k) {
    if (!(r.pairwise[k] > 0)) continue;
    const double e = (comet_pairwise_model_ns(L, o, G, O, S, r.sizes[k]) - r.pairwise[k]) / r.pairwise[k];
    sum += e * e;
    largest = std::max(largest, std::fabs(e));
  }
  return {sum, largest};
}

// O in [0, G] closest to the pairwise: a scan (the residual is not convex in
// O: a size's term is flat until (s−1)·O passes L), then a golden-section
// search between the best point's neighbours.
double fit_overhead_per_byte(const RangeSamples& r, double L, double o, double G, double S, bool& identified) {
  identified = false;
  if (G <= 0 || r.sizes.empty()) return 0;
  auto cost = [&](double O) { return pairwise_residuals(r, L, o, G, O, S).first; };
  constexpr int kSteps = 2000;
  const double step = G / kSteps;
  int best = 0;
  double best_cost = cost(0);
  const double at_zero = best_cost;
  for (int k = 1; k <= kSteps; ++k)
    if (const double c = cost(k * step); c < best_cost) best = k, best_cost = c;
  double lo = std::max(0.0, (best - 1) * step), hi = std::min(G, (best + 1) * step);
  const double phi = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * G; ++i) {
    const double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
    if (cost(a) <= cost(b))
      hi = b;
    else
      lo = a;
  }
  const double O = (lo + hi) / 2;
  const double chosen = cost(O) <= best_cost ? O : best * step;
  identified = cost(chosen) < at_zero;
  return identified ? chosen : 0;
}

RangeFit fit_range(const CometNetworkSamples& s, const std::string& name, double min_bytes, double max_bytes, double S,
                   std::vector<std::string>& notes, double& pairwise_residual) {
  RangeFit f;
  f.name = name;
  const RangeSamples r = select(s, min_bytes, max_bytes);
  f.sizes = static_cast<int>(r.sizes.size());
  if (r.sizes.empty()) return f;
  f.min_bytes = *std::min_element(r.sizes.begin(), r.sizes.end());
  f.max_bytes = *std::max_element(r.sizes.begin(), r.sizes.end());
  std::vector<double> x;
  for (double b : r.sizes) x.push_back(per_byte(b, 1));
  f.echo = fit_line(x, r.echo);
  const bool rendezvous = f.min_bytes > S;
  const double intercept = f.echo.intercept;  // L + 2o (2L + 2o above S)
  f.o = s.o;
  if (2 * s.o > intercept) {
    f.o = std::max(0.0, intercept / 2);
    notes.push_back(name + " range: the trains' o = " + format(s.o) + " ns is more than half the echo at 1 B (" +
                    format(intercept) + " ns); o set to " + format(f.o) + " ns and L to 0");
  }
  f.L = std::max(0.0, (intercept - 2 * f.o) / (rendezvous ? 2 : 1));
  f.G = std::max(0.0, f.echo.slope);
  if (f.echo.slope < 0) notes.push_back(name + " range: the echo time falls with the size; G set to 0");
  bool identified = false;
  f.O = fit_overhead_per_byte(r, f.L, f.o, f.G, S, identified);
  if (!identified)
    notes.push_back(name + " range: the pairwise exceeds the echo by no more than O = 0 explains; O set to 0");
  pairwise_residual = pairwise_residuals(r, f.L, f.o, f.G, f.O, S).second;
  // g: the gap trains' line at 1 B over the range's sizes (all of them if
  // none lies in the range).
  std::vector<double> gx, gy;
  for (std::size_t k = 0; k < s.gap_sizes.size() && k < s.gap_ns.size(); ++k)
    if (s.gap_sizes[k] >= min_bytes && s.gap_sizes[k] <= max_bytes)
      gx.push_back(s.gap_sizes[k]), gy.push_back(s.gap_ns[k]);
  if (gx.empty() && !s.gap_sizes.empty()) {
    gx = s.gap_sizes, gy = s.gap_ns;
    notes.push_back(name + " range: no gap train in " + format(f.min_bytes) + "-" + format(f.max_bytes) +
                    " B; g from all of them");
  }
  f.gap = fit_line(gx, gy);
  f.g = std::max(0.0, f.gap.intercept + f.gap.slope);
  return f;
}

}  // namespace

double comet_echo_model_ns(double L, double o, double G, double O, double S, double bytes) {
  return (bytes > S ? 2 : 1) * L + 2 * o + per_byte(bytes, std::max(O, G));
}

double comet_pairwise_model_ns(double L, double o, double G, double O, double S, double bytes) {
  return (bytes > S ? L : 0) + std::max(0.0, per_byte(bytes, O) - L) + 2 * o + L + per_byte(bytes, std::max(O, G));
}

LoggopsSamples comet_echo_samples(const CometNetworkSamples& s) {
  LoggopsSamples out;
  out.sizes = s.sizes;
  out.echo_ns = s.echo_ns;
  return out;
}

CometNetworkFit fit_comet_network(const CometNetworkSamples& s, double machine_min_bytes, double machine_max_bytes) {
  if (s.sizes.empty()) throw std::invalid_argument("CoMet fit: no sizes");
  if (s.echo_ns.size() != s.sizes.size() || s.pairwise_ns.size() != s.sizes.size())
    throw std::invalid_argument("CoMet fit: " + std::to_string(s.sizes.size()) + " sizes but " +
                                std::to_string(s.echo_ns.size()) + " echo and " + std::to_string(s.pairwise_ns.size()) +
                                " pairwise times");
  CometNetworkFit out;
  LoggopsCalibration& c = out.loggops;
  out.regimes = echo_regimes(comet_echo_samples(s));
  const double largest = out.regimes.back().second;
  if (out.regimes.size() == 1) {
    c.S = largest;
    c.notes.push_back("the echo does not jump between sizes: one protocol regime; S = " + format(largest) +
                      " B, the largest size measured");
  } else {
    c.S = out.regimes.front().second;
    if (out.regimes.size() > 2)
      c.notes.push_back("the echo jumps " + std::to_string(out.regimes.size() - 1) +
                        " times; the rendezvous range takes every size from " + format(out.regimes[1].first) + " B on");
  }
  c.eager = fit_range(s, "eager", 0, c.S, c.S, c.notes, out.eager_pairwise_residual);
  c.rendezvous =
      fit_range(s, "rendezvous", std::nextafter(c.S, 1e300), 1e300, c.S, c.notes, out.rendezvous_pairwise_residual);
  if (machine_max_bytes > 0)
    c.messages =
        fit_range(s, "messages", machine_min_bytes, machine_max_bytes, c.S, c.notes, out.messages_pairwise_residual);
  choose_machine_range(c, machine_min_bytes, machine_max_bytes);
  for (std::size_t k = 0; k < s.sizes.size(); ++k) {
    CometFitPoint p;
    p.bytes = s.sizes[k];
    p.regime = p.bytes > c.S ? "rendezvous" : "eager";
    p.echo_ns = s.echo_ns[k];
    p.pairwise_ns = s.pairwise_ns[k];
    p.model_echo_ns = comet_echo_model_ns(c.L, c.o, c.G, c.O, c.S, p.bytes);
    p.model_pairwise_ns = comet_pairwise_model_ns(c.L, c.o, c.G, c.O, c.S, p.bytes);
    out.points.push_back(p);
  }
  return out;
}

}  // namespace poems::measure
