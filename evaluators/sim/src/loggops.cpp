#include "poems/sim/loggops.h"

#include <cmath>

#include "poems/sim/report.h"

namespace poems::sim {

namespace {
std::optional<std::uint64_t> scaled(double value, double scale) {
  double v = std::round(value * scale);
  if (!std::isfinite(v) || v < 0 || v > 9.0e18) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}
}  // namespace

std::optional<Picoseconds> ns_to_ps(double ns) { return scaled(ns, 1e3); }
std::optional<FemtosecondsPerByte> ns_per_byte_to_fs(double ns_per_byte) { return scaled(ns_per_byte, 1e6); }

std::string format_ps(Picoseconds ps) { return ps_to_ns_text(ps) + "ns"; }

std::string format_fs_per_byte(FemtosecondsPerByte fs) {
  std::string s = std::to_string(fs / 1000000);
  std::uint64_t frac = fs % 1000000;
  if (frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 6 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    s += "." + digits;
  }
  return s + "ns/B";
}

}  // namespace poems::sim
