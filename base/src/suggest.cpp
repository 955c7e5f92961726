#include "poems/base/suggest.h"

#include <algorithm>
#include <cctype>
#include <cstddef>

namespace poems::base {

namespace {

// Levenshtein distance; a difference of letter case costs nothing, so
// analytic[LogGp] finds analytic[LogGP].
std::size_t edit_distance(const std::string& a, const std::string& b) {
  auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string closest_spelling(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string& c : candidates) {
    if (c == name) continue;
    const std::size_t d = edit_distance(name, c);
    if (d < best_distance || (d == best_distance && !best.empty() && c < best)) {
      best_distance = d;
      best = c;
    }
  }
  if (best.empty() || best_distance > std::max<std::size_t>(1, name.size() / 2)) return "";
  return best;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  const std::string s = closest_spelling(name, candidates);
  return s.empty() ? "" : "; did you mean '" + s + "'?";
}

std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace poems::base
