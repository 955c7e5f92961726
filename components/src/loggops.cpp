#include "poems/components/loggops.h"

#include <cmath>
#include <cstdio>

namespace poems::components {

namespace {
std::optional<std::uint64_t> scaled(double value, double scale) {
  double v = std::round(value * scale);
  if (!std::isfinite(v) || v < 0 || v > 9.0e18) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}
}  // namespace

std::optional<Picoseconds> ns_to_ps(double ns) { return scaled(ns, 1e3); }
std::optional<FemtosecondsPerByte> ns_per_byte_to_fs(double ns_per_byte) { return scaled(ns_per_byte, 1e6); }

std::string ps_to_ns_text(Picoseconds ps) {
  std::string s = std::to_string(ps / 1000);
  if (Picoseconds frac = ps % 1000; frac != 0) {
    char digits[4];
    std::snprintf(digits, sizeof digits, "%03u", static_cast<unsigned>(frac));
    std::string d = digits;
    while (d.back() == '0') d.pop_back();
    s += "." + d;
  }
  return s;
}

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

nlohmann::json machine_key_json(const LogGOPS& p, bool rendezvous_handshake) {
  return {{"L_ps", p.L},
          {"o_ps", p.o},
          {"g_ps", p.g},
          {"G_fs_per_byte", p.G},
          {"O_fs_per_byte", p.O},
          {"S_bytes", p.S},
          {"rendezvous_handshake", rendezvous_handshake}};
}

}  // namespace poems::components
