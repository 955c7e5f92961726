// SplitMix64 (Steele, Lea and Flood): a counter-based generator. A draw is a
// pure function of its counter, so seeded random choices (a rank's noise
// phase, a resampled step) need no state and come out the same in any order.
#pragma once

#include <cstdint>

namespace poems::base {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace poems::base
