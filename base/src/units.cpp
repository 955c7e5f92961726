#include "poems/base/units.h"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace poems::base {

namespace {
struct UnitEntry {
  std::string_view suffix;
  Unit unit;
};
// Base units: nanoseconds and bytes.
constexpr std::array<UnitEntry, 21> kUnits{{
    {"ps", {kTime, 1e-3}},
    {"ns", {kTime, 1}},
    {"us", {kTime, 1e3}},
    {"ms", {kTime, 1e6}},
    {"s", {kTime, 1e9}},
    {"B", {kBytes, 1}},
    {"KB", {kBytes, 1e3}},
    {"MB", {kBytes, 1e6}},
    {"GB", {kBytes, 1e9}},
    {"KiB", {kBytes, 1024.0}},
    {"MiB", {kBytes, 1048576.0}},
    {"GiB", {kBytes, 1073741824.0}},
    {"B/s", {kBytesPerTime, 1e-9}},
    {"KB/s", {kBytesPerTime, 1e-6}},
    {"MB/s", {kBytesPerTime, 1e-3}},
    {"GB/s", {kBytesPerTime, 1}},
    {"ps/B", {kTimePerByte, 1e-3}},
    {"ns/B", {kTimePerByte, 1}},
    {"us/B", {kTimePerByte, 1e3}},
    {"ms/B", {kTimePerByte, 1e6}},
    {"s/B", {kTimePerByte, 1e9}},
}};

void append_power(std::string& out, const char* unit, int power) {
  if (power == 0) return;
  if (!out.empty()) out += '*';
  out += unit;
  if (power != 1) out += '^' + std::to_string(power);
}
}  // namespace

std::string dimension_name(Dimension d) {
  if (d == kDimensionless) return "number";
  if (d == kTime) return "time";
  if (d == kBytes) return "size";
  if (d == kTimePerByte) return "time/size";
  if (d == kBytesPerTime) return "size/time";
  std::string out;
  append_power(out, "ns", d.time);
  append_power(out, "B", d.bytes);
  return out;
}

std::optional<Unit> lookup_unit(std::string_view suffix) {
  for (const UnitEntry& e : kUnits)
    if (e.suffix == suffix) return e.unit;
  return std::nullopt;
}

const char* known_units() {
  return "ps ns us ms s, B KB MB GB KiB MiB GiB, B/s KB/s MB/s GB/s, ps/B ns/B us/B ms/B s/B";
}

std::optional<Quantity> parse_quantity(std::string_view text, std::string* error) {
  auto fail = [&](std::string message) -> std::optional<Quantity> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  std::string owned(text);
  if (owned.empty()) return fail("empty value");
  const char* begin = owned.c_str();
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(begin, &end);
  if (end == begin) return fail("'" + owned + "' is not a number");
  if (errno == ERANGE || !std::isfinite(value)) return fail("'" + owned + "' is out of range");
  std::string_view suffix(end);
  if (suffix.empty()) return Quantity{value, kDimensionless};
  auto unit = lookup_unit(suffix);
  if (!unit) return fail("unknown unit '" + std::string(suffix) + "' (known units: " + known_units() + ")");
  return Quantity{value * unit->scale, unit->dimension};
}

std::string format_quantity(const Quantity& q) {
  std::ostringstream out;
  out.precision(12);
  out << q.value;
  if (q.dimension == kTime)
    out << "ns";
  else if (q.dimension == kBytes)
    out << "B";
  else if (q.dimension == kTimePerByte)
    out << "ns/B";
  else if (q.dimension == kBytesPerTime)
    out << "GB/s";
  else if (!q.dimension.dimensionless())
    out << " [" << dimension_name(q.dimension) << "]";
  return out.str();
}

}  // namespace poems::base
