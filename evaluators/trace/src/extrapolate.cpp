// A recorded run of P ranks replayed as Q ranks (extrapolate.h).
#include "poems/trace/extrapolate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "compute_variation.h"

namespace poems::trace {

namespace {

std::string dims_text(const std::vector<std::uint32_t>& dims) {
  std::string s;
  for (std::uint32_t d : dims) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s;
}

std::vector<std::uint32_t> coords(std::uint32_t rank, const std::vector<std::uint32_t>& dims) {
  std::vector<std::uint32_t> c(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) {
    c[k] = rank % dims[k];
    rank /= dims[k];
  }
  return c;
}

std::uint32_t rank_of(const std::vector<std::uint32_t>& c, const std::vector<std::uint32_t>& dims) {
  std::uint32_t r = 0;
  for (std::size_t k = dims.size(); k-- > 0;) r = r * dims[k] + c[k];
  return r;
}

// The step from a to b along a dimension of n ranks: -1, 0 or 1 (wrapping
// around when `periodic`), or 2 when it is farther.
int offset(std::uint32_t a, std::uint32_t b, std::uint32_t n, bool periodic) {
  const int d = static_cast<int>(b) - static_cast<int>(a);
  if (d >= -1 && d <= 1) return d;
  // Wrapping around 3 ranks makes every pair neighbours: no pattern to tell.
  if (periodic && n > 3) {
    if (d == static_cast<int>(n) - 1) return -1;
    if (d == 1 - static_cast<int>(n)) return 1;
  }
  return 2;
}

// Does every message fit `dims` (nearest neighbours), and which dimensions wrap?
bool fits(const Trace& t, const std::vector<std::uint32_t>& dims, std::vector<bool>& periodic) {
  periodic.assign(dims.size(), false);
  for (const Message& m : t.messages) {
    const auto a = coords(m.sender, dims), b = coords(m.receiver, dims);
    for (std::size_t k = 0; k < dims.size(); ++k) {
      const int d = offset(a[k], b[k], dims[k], false);
      if (d != 2) continue;
      if (offset(a[k], b[k], dims[k], true) == 2) return false;
      periodic[k] = true;
    }
  }
  return true;
}

bool collective_extrapolates(Collective c) {
  switch (c) {
    case Collective::Gatherv:
    case Collective::Scatterv:
    case Collective::Allgatherv:
    case Collective::Alltoallv:
    case Collective::Alltoallw:
    case Collective::ReduceScatter:
    case Collective::Other: return false;
    default: return true;
  }
}

}  // namespace

std::string GridPattern::describe() const {
  if (dims.size() == 1) return (periodic[0] ? "ring of " : "line of ") + std::to_string(dims[0]);
  std::string s = std::to_string(dims.size()) + "-D grid " + dims_text(dims);
  bool any = false;
  for (bool p : periodic) any = any || p;
  return any ? s + " (wrapping around)" : s;
}

bool parse_extrapolation(std::string_view text, Extrapolation& out, std::string& error) {
  out = Extrapolation{};
  const std::string all(text);
  std::size_t at = 0;
  std::vector<std::uint32_t> parts;
  while (at <= all.size()) {
    std::size_t end = all.find('x', at);
    if (end == std::string::npos) end = all.size();
    const std::string part = all.substr(at, end - at);
    if (part.empty() || part.size() > 8 || part.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(part) < 1) {
      error = "'" + all + "' is not a rank count or a grid; expected e.g. 1024 or 32x32";
      return false;
    }
    parts.push_back(static_cast<std::uint32_t>(std::stoul(part)));
    at = end + 1;
  }
  std::uint64_t product = 1;
  for (std::uint32_t p : parts) product *= p;
  if (parts.size() > 3 || product > (1u << 24)) {
    error = "'" + all + "': at most 3 dimensions and 16777216 ranks";
    return false;
  }
  out.ranks = static_cast<std::uint32_t>(product);
  if (parts.size() > 1) out.grid = parts;
  return true;
}

GridPattern recognize_grid(const Trace& t) {
  const auto P = static_cast<std::uint32_t>(t.ranks.size());
  if (P < 2) throw TraceError("a trace of one rank has no communication pattern to extrapolate");
  // Only the world communicator: another one's members do not follow from the grid.
  for (std::uint32_t r = 0; r < P; ++r)
    for (const Step& s : t.ranks[r].steps) {
      if (s.kind != StepKind::Send && s.kind != StepKind::Recv && s.kind != StepKind::Collective) continue;
      if (s.comm != 0)
        throw TraceError("rank " + std::to_string(r) + " communicates on " + t.comms[s.comm].name +
                         "; only a program on MPI_COMM_WORLD alone is extrapolated (its members follow from the "
                         "grid, another communicator's do not)");
      if (s.kind == StepKind::Collective && !collective_extrapolates(s.collective))
        throw TraceError("rank " + std::to_string(r) + " calls " + std::string(collective_name(s.collective)) +
                         ", whose per-rank counts do not follow from the grid; it is not extrapolated");
    }
  GridPattern g;
  // Without point-to-point messages: a line (the first and the last rank
  // may still differ, as a root).
  if (t.messages.empty()) {
    g.dims = {P};
    g.periodic = {false};
    return g;
  }
  std::vector<std::vector<std::uint32_t>> candidates = {{P}};
  std::vector<std::uint32_t> sides;
  for (std::uint32_t a = 2; a * 2 <= P; ++a)
    if (P % a == 0) sides.push_back(a);
  // Squarer first.
  std::sort(sides.begin(), sides.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::abs(std::log(static_cast<double>(a) * a / P)) < std::abs(std::log(static_cast<double>(b) * b / P));
  });
  for (std::uint32_t a : sides) candidates.push_back({a, P / a});
  // Then 3-D grids, cubic first: a 3-D stencil's messages fit no 2-D grid
  // (a step along the third dimension is a jump of a x b ranks).
  std::vector<std::vector<std::uint32_t>> cubes;
  for (std::uint32_t a : sides)
    for (std::uint32_t b : sides)
      if ((P / a) % b == 0 && P / a / b >= 2) cubes.push_back({a, b, P / a / b});
  std::sort(cubes.begin(), cubes.end(), [&](const auto& x, const auto& y) {
    auto spread = [&](const std::vector<std::uint32_t>& d) {
      const double side = std::cbrt(static_cast<double>(P));
      double sum = 0;
      for (std::uint32_t n : d) sum += std::abs(std::log(n / side));
      return sum;
    };
    return spread(x) < spread(y) || (spread(x) == spread(y) && x < y);
  });
  candidates.insert(candidates.end(), cubes.begin(), cubes.end());
  for (const auto& dims : candidates) {
    std::vector<bool> periodic;
    if (fits(t, dims, periodic)) {
      g.dims = dims;
      g.periodic = periodic;
      return g;
    }
  }
  // Say what does not fit: the farthest message on the squarest 2-D grid.
  const Message& m = t.messages.front();
  throw TraceError(
      "no Cartesian pattern: the messages are not between neighbours of a line, a ring, a 2-D or a 3-D grid "
      "of " +
      std::to_string(P) + " ranks (e.g. rank " + std::to_string(m.sender) + " sends to rank " +
      std::to_string(m.receiver) + "); a master and its workers and all-to-all patterns are not extrapolated");
}

bool parse_variation(std::string_view text, Extrapolation& out, std::string& error) {
  if (text == "copy") {
    out.resample = false;
    return true;
  }
  const std::string_view head = "resample";
  if (text.substr(0, head.size()) != head) {
    error = "'" + std::string(text) + "' is not allowed; allowed: copy, resample or resample,seed=N";
    return false;
  }
  out.resample = true;
  std::string_view rest = text.substr(head.size());
  if (rest.empty()) return true;
  const std::string_view key = ",seed=";
  std::uint64_t seed = 0;
  bool digits = rest.substr(0, key.size()) == key && rest.size() > key.size() && rest.size() - key.size() <= 19;
  for (char c : rest.substr(std::min(rest.size(), key.size()))) digits = digits && c >= '0' && c <= '9';
  if (!digits) {
    error =
        "'" + std::string(text) + "' is not allowed; allowed: copy, resample or resample,seed=N (N: 0 to 10^19 - 1)";
    return false;
  }
  for (char c : rest.substr(key.size())) seed = seed * 10 + static_cast<std::uint64_t>(c - '0');
  out.seed = seed;
  return true;
}

Trace extrapolate(const Trace& t, const Extrapolation& x) {
  if (!(x.compute_factor >= 0) || !std::isfinite(x.compute_factor))
    throw TraceError("the computation factor must be a finite number >= 0");
  const GridPattern g = recognize_grid(t);
  const std::size_t D = g.dims.size();
  std::vector<std::uint32_t> target = x.grid;
  if (target.empty()) {
    if (D == 1) {
      target = {x.ranks};
    } else if (D == 3) {
      // The factorization of Q closest to the traced grid scaled evenly.
      const double scale = std::cbrt(static_cast<double>(x.ranks) / (g.dims[0] * g.dims[1] * g.dims[2]));
      double best = std::numeric_limits<double>::infinity();
      for (std::uint32_t a = 1; a <= x.ranks; ++a) {
        if (x.ranks % a != 0) continue;
        for (std::uint32_t b = 1; b <= x.ranks / a; ++b) {
          if ((x.ranks / a) % b != 0) continue;
          const std::uint32_t c = x.ranks / a / b;
          double d = 0;
          const std::uint32_t t[3] = {a, b, c};
          for (int k = 0; k < 3; ++k) d += std::abs(std::log(t[k] / (g.dims[static_cast<std::size_t>(k)] * scale)));
          if (d < best - 1e-12) {
            best = d;
            target = {a, b, c};
          }
        }
      }
    } else {
      // The factorization of Q closest to the traced grid's shape.
      const double aspect = static_cast<double>(g.dims[0]) / g.dims[1];
      double best = std::numeric_limits<double>::infinity();
      for (std::uint32_t a = 1; a <= x.ranks; ++a)
        if (x.ranks % a == 0) {
          const double d = std::abs(std::log(static_cast<double>(a) / (x.ranks / a) / aspect));
          if (d < best) {
            best = d;
            target = {a, x.ranks / a};
          }
        }
    }
  }
  if (target.size() != D)
    throw TraceError("the trace is a " + g.describe() + "; a grid of " + std::to_string(target.size()) +
                     " dimension(s) does not extend it");
  for (std::size_t k = 0; k < D; ++k) {
    const std::uint32_t N = g.dims[k], n = target[k];
    const std::string which = D == 1 ? "the line" : "dimension " + std::to_string(k + 1);
    if (g.periodic[k] && n < 4)
      throw TraceError("the trace's " + g.describe() + " wraps around " + which +
                       "; it needs 4 or more ranks along it, not " + std::to_string(n));
    if (n < 2 && N >= 2)
      throw TraceError("the trace is a " + g.describe() + "; " + which + " cannot shrink to " + std::to_string(n));
    // Without messages the middle is copied from rank 1 even of two.
    if (n >= 3 && N < 3 && !t.messages.empty())
      throw TraceError("the trace is a " + g.describe() + ": no rank is in the middle of " + which +
                       ", so none shows what a rank with neighbours on both sides does; trace 3 or more along it "
                       "to extrapolate to " +
                       dims_text(target));
  }
  std::uint64_t Q = 1;
  for (std::uint32_t n : target) Q *= n;

  Trace out;
  out.path = t.path;
  out.creator = t.creator;
  out.regions = t.regions;
  out.timer_resolution = t.timer_resolution;
  out.cpu_time = t.cpu_time;
  out.events = t.events;
  out.warnings = t.warnings;
  Communicator world = t.comms.empty() ? Communicator{"MPI_COMM_WORLD", {}, false} : t.comms[0];
  world.members.resize(Q);
  for (std::uint32_t r = 0; r < Q; ++r) world.members[r] = r;
  out.comms = {world};
  out.ranks.resize(Q);
  std::optional<ComputeVariation> variation;
  if (x.resample) variation.emplace(t, x.cpu_time, Picoseconds{10'000'000});
  auto scaled = [&](std::uint64_t v) {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(v) * x.compute_factor));
  };
  for (std::uint32_t r = 0; r < Q; ++r) {
    const std::vector<std::uint32_t> c = coords(r, target);
    // The traced rank in the same role: first, last or the first in the
    // middle of each dimension (in a ring too: its first rank may start it).
    std::vector<std::uint32_t> tc(D);
    for (std::size_t k = 0; k < D; ++k) {
      const std::uint32_t N = g.dims[k], n = target[k];
      tc[k] = c[k] == 0 ? 0 : c[k] == n - 1 ? N - 1 : std::min<std::uint32_t>(1, N - 1);
    }
    const std::uint32_t from = rank_of(tc, g.dims);
    Rank rank = t.ranks[from];
    if (variation) variation->apply(rank, from, r, x.seed);
    for (Step& s : rank.steps) {
      s.message = kNone;
      if (s.kind == StepKind::Compute) {
        s.value = scaled(s.value);
        s.cpu = scaled(s.cpu);
      } else if (s.kind == StepKind::Send || s.kind == StepKind::Recv) {
        const std::vector<std::uint32_t> peer = coords(static_cast<std::uint32_t>(s.peer), g.dims);
        std::vector<std::uint32_t> moved(D);
        for (std::size_t k = 0; k < D; ++k) {
          const int d = offset(tc[k], peer[k], g.dims[k], g.periodic[k]);
          const auto n = static_cast<std::int64_t>(target[k]);
          moved[k] = static_cast<std::uint32_t>(((static_cast<std::int64_t>(c[k]) + d) % n + n) % n);
        }
        s.peer = static_cast<std::int32_t>(rank_of(moved, target));
      }
    }
    out.ranks[r] = std::move(rank);
  }
  if (variation)
    out.warnings.push_back(
        "each rank's computation resampled from " + std::to_string(variation->samples()) +
        " samples: the computation steps (code region and visit) that two or more traced ranks make, " +
        std::to_string(variation->keys()) + " of them (seed " + std::to_string(x.seed) + ")");
  out.warnings.push_back("extrapolated from " + std::to_string(t.ranks.size()) + " ranks (" + g.describe() + ") to " +
                         std::to_string(Q) + " (" + dims_text(target) + ")");
  const std::size_t before = out.warnings.size();
  link(out);
  if (out.warnings.size() > before)
    throw TraceError("the extrapolated program does not match up (" + out.warnings.back() +
                     "): the ranks' programs depend on more than their place in the " + g.describe() +
                     ", so the trace is not extrapolated");
  return out;
}

}  // namespace poems::trace
