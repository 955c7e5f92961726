// Physical dimensions of PSL values: time and bytes with integer exponents.
// Time is kept in nanoseconds, sizes in bytes (KB = 1000 B, KiB = 1024 B).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace poems::base {

struct Dimension {
  int time = 0;   // exponent of seconds
  int bytes = 0;  // exponent of bytes

  bool dimensionless() const { return time == 0 && bytes == 0; }
  friend bool operator==(Dimension, Dimension) = default;
  friend Dimension operator*(Dimension a, Dimension b) { return {a.time + b.time, a.bytes + b.bytes}; }
  friend Dimension operator/(Dimension a, Dimension b) { return {a.time - b.time, a.bytes - b.bytes}; }
};

inline constexpr Dimension kDimensionless{0, 0};
inline constexpr Dimension kTime{1, 0};
inline constexpr Dimension kBytes{0, 1};
inline constexpr Dimension kTimePerByte{1, -1};
inline constexpr Dimension kBytesPerTime{-1, 1};

// Human name of a dimension: "time", "size", "time/size", "size/time", "number", or "s^2*B^-1".
std::string dimension_name(Dimension d);

// A unit suffix as it appears after a number ("us", "ns/B", "KB").
struct Unit {
  Dimension dimension;
  double scale;  // multiply a value in this unit by scale to get ns / B / ns-per-B ...
};
std::optional<Unit> lookup_unit(std::string_view suffix);
// The list of accepted suffixes, for error messages.
const char* known_units();

// A measured or specified quantity: value in base units (ns, B) and its dimension.
struct Quantity {
  double value = 0;
  Dimension dimension;
};

// Parses "5.3us", "0.04ns/B", "32768", "8KB" (a bare number is dimensionless).
// Returns nullopt with `error` set on bad input.
std::optional<Quantity> parse_quantity(std::string_view text, std::string* error = nullptr);

// Formats a value of a dimension with its base unit ("5300ns", "32768B").
std::string format_quantity(const Quantity& q);

}  // namespace poems::base

// The PSL front end grew these and most code still names them psl::X.
namespace poems::psl {
using base::Dimension;
using base::dimension_name;
using base::format_quantity;
using base::kBytes;
using base::kBytesPerTime;
using base::kDimensionless;
using base::known_units;
using base::kTime;
using base::kTimePerByte;
using base::lookup_unit;
using base::parse_quantity;
using base::Quantity;
using base::Unit;
}  // namespace poems::psl
