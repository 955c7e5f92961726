// OS noise: detours that stretch computation (noise.h, docs/simulator.md).
#include "poems/components/noise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "poems/base/splitmix.h"
#include "poems/base/units.h"
#include "poems/components/loggops.h"

namespace poems::components {

namespace {

// Counter-based, so that a rank's phase and a window's detours need no
// state and come out the same in any order.
constexpr std::uint64_t mix(std::uint64_t x) { return base::splitmix64(x); }
std::uint64_t stream(std::uint64_t seed, std::uint64_t a, std::uint64_t b) { return mix(mix(mix(seed) ^ a) ^ b); }
// Uniform in [0, n).
Picoseconds below(std::uint64_t h, Picoseconds n) {
  return static_cast<Picoseconds>((static_cast<unsigned __int128>(h) * n) >> 64);
}
// Uniform in (0, 1).
double open_unit(std::uint64_t h) { return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53; }

// A Poisson window spans this many mean intervals: a query touches one or
// two windows, and a window's detours are drawn again on each query.
constexpr Picoseconds kIntervalsPerWindow = 64;

constexpr Picoseconds kMaxTime = Picoseconds{1} << 61;  // the engine's bound on a calc

[[noreturn]] void bad(const std::string& what) { throw NoiseError(what); }

Picoseconds time_field(const std::string& name, const std::string& text) {
  std::string error;
  auto q = base::parse_quantity(text, &error);
  if (!q) bad("noise " + name + " '" + text + "': " + error);
  if (!q->dimension.dimensionless() && !(q->dimension == base::kTime))
    bad("noise " + name + " '" + text + "' is a " + base::dimension_name(q->dimension) +
        "; expected a time, e.g. 25us");
  auto ps = q->value <= 1e12 ? ns_to_ps(q->value) : std::nullopt;
  if (!ps) bad("noise " + name + " '" + text + "' is out of range; it must be a time from 0 to 1e12 ns");
  return *ps;
}

std::uint64_t hash_detours(const std::vector<std::pair<Picoseconds, Picoseconds>>& detours) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& [s, l] : detours)
    for (Picoseconds v : {s, l})
      for (int i = 0; i < 8; ++i) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
      }
  return h;
}

}  // namespace

const char* noise_kind_name(NoiseKind k) {
  switch (k) {
    case NoiseKind::None: return "none";
    case NoiseKind::Periodic: return "periodic";
    case NoiseKind::Poisson: return "poisson";
    case NoiseKind::Trace: return "trace";
  }
  return "?";
}

std::vector<std::pair<Picoseconds, Picoseconds>> read_noise_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) bad("cannot read the noise file '" + path + "'");
  std::vector<std::pair<Picoseconds, Picoseconds>> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string start, length, extra;
    if (!(words >> start)) continue;
    const std::string at = path + ":" + std::to_string(number) + ": ";
    if (!(words >> length) || (words >> extra)) bad(at + "expected \"start length\" (ns, or with units: 1.5ms 20us)");
    Picoseconds s = 0, l = 0;
    try {
      s = time_field("start", start);
      l = time_field("length", length);
    } catch (const NoiseError& e) {
      bad(at + e.what());
    }
    if (l == 0) bad(at + "a detour of length 0");
    if (!out.empty() && s < out.back().first + out.back().second)
      bad(at + "this detour starts before the one on the line before it ends (the file lists detours in time order)");
    out.emplace_back(s, l);
  }
  if (out.empty()) bad("the noise file '" + path + "' lists no detour");
  return out;
}

NoiseSpec parse_noise(std::string_view text) {
  const std::string all(text);
  NoiseSpec spec;
  if (all == "none") return spec;
  const std::size_t colon = all.find(':');
  const std::string head = all.substr(0, colon);
  std::string rest = colon == std::string::npos ? "" : all.substr(colon + 1);
  if (head == "periodic") {
    spec.kind = NoiseKind::Periodic;
  } else if (head == "poisson") {
    spec.kind = NoiseKind::Poisson;
  } else if (head == "file") {
    spec.kind = NoiseKind::Trace;
    const std::size_t comma = rest.find(',');
    spec.file = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    if (spec.file.empty()) bad("noise 'file:' names no file; write file:PATH");
  } else {
    bad("noise '" + all +
        "' is not a noise description; expected none, periodic:period=T,detour=D, poisson:interval=I,detour=D, or "
        "file:PATH");
  }
  bool period = false, interval = false, detour = false;
  std::size_t at = 0;
  while (at < rest.size()) {
    std::size_t end = rest.find(',', at);
    if (end == std::string::npos) end = rest.size();
    const std::string field = rest.substr(at, end - at);
    at = end + 1;
    const std::size_t eq = field.find('=');
    if (eq == std::string::npos) bad("noise field '" + field + "' is not name=value");
    const std::string name = field.substr(0, eq), value = field.substr(eq + 1);
    if (name == "period" && spec.kind != NoiseKind::Poisson) {
      spec.period = time_field(name, value);
      period = true;
    } else if (name == "interval" && spec.kind == NoiseKind::Poisson) {
      spec.interval = time_field(name, value);
      interval = true;
    } else if (name == "detour" && spec.kind != NoiseKind::Trace) {
      spec.detour = time_field(name, value);
      detour = true;
    } else if (name == "phase" && spec.kind != NoiseKind::Poisson) {
      if (value != "aligned" && value != "random") bad("noise phase '" + value + "' must be aligned or random");
      spec.aligned = value == "aligned";
    } else if (name == "seed") {
      if (value.empty() || value.size() > 19 || value.find_first_not_of("0123456789") != std::string::npos)
        bad("noise seed '" + value + "' must be a whole number from 0 to 999999999999999999");
      spec.seed = std::stoull(value);
    } else {
      bad(std::string("noise field '") + name + "' is not one of " + noise_kind_name(spec.kind) + " noise's (" +
          (spec.kind == NoiseKind::Periodic  ? "period, detour, phase, seed"
           : spec.kind == NoiseKind::Poisson ? "interval, detour, seed"
                                             : "period, phase, seed") +
          ")");
    }
  }
  if (spec.kind == NoiseKind::Periodic && (!period || !detour))
    bad("periodic noise needs period and detour (e.g. periodic:period=1ms,detour=25us)");
  if (spec.kind == NoiseKind::Poisson && (!interval || !detour))
    bad("poisson noise needs interval and detour (e.g. poisson:interval=1ms,detour=25us)");
  if (spec.kind == NoiseKind::Trace) spec.detours = read_noise_file(spec.file);
  check_noise(spec);
  return spec;
}

void check_noise(const NoiseSpec& s) {
  switch (s.kind) {
    case NoiseKind::None: return;
    case NoiseKind::Periodic:
      if (s.period == 0) bad("noise period must be above 0 (e.g. 1ms)");
      if (s.detour == 0 || s.detour >= s.period)
        bad("noise detour = " + format_ps(s.detour) + " is out of range; it must be above 0 and below the period (" +
            format_ps(s.period) + ")");
      return;
    case NoiseKind::Poisson:
      if (s.interval == 0) bad("noise interval must be above 0 (e.g. 1ms)");
      if (s.detour == 0 || s.detour >= s.interval)
        bad("noise detour = " + format_ps(s.detour) +
            " is out of range; it must be above 0 and below the mean interval (" + format_ps(s.interval) + ")");
      return;
    case NoiseKind::Trace: {
      if (s.detours.empty()) bad("a noise trace needs at least one detour");
      const auto& last = s.detours.back();
      const Picoseconds end = last.first + last.second;
      if (s.period != 0 && s.period < end)
        bad("noise period = " + format_ps(s.period) + " is shorter than the trace, whose last detour ends at " +
            format_ps(end));
      Picoseconds busy = 0;
      for (const auto& [start, length] : s.detours) busy += length;
      if (busy >= std::max(s.period, end))
        bad("the noise trace leaves the CPU no time: its detours fill the whole period");
      return;
    }
  }
}

Noise::Noise(NoiseSpec spec) : spec_(std::move(spec)) {
  check_noise(spec_);
  if (spec_.kind == NoiseKind::Trace) {
    const auto& last = spec_.detours.back();
    cycle_ = std::max(spec_.period, last.first + last.second);
    for (const auto& [start, length] : spec_.detours) cycle_busy_ += length;
  }
}

Picoseconds Noise::phase(std::uint32_t rank) const {
  if (spec_.aligned) return 0;
  const Picoseconds span = spec_.kind == NoiseKind::Trace ? cycle_ : spec_.period;
  if (span == 0) return 0;
  return below(stream(spec_.seed, rank, ~std::uint64_t{0}), span);
}

double Noise::load() const {
  switch (spec_.kind) {
    case NoiseKind::None: return 0;
    case NoiseKind::Periodic: return static_cast<double>(spec_.detour) / static_cast<double>(spec_.period);
    case NoiseKind::Poisson:
      return 1 - std::exp(-static_cast<double>(spec_.detour) / static_cast<double>(spec_.interval));
    case NoiseKind::Trace: return static_cast<double>(cycle_busy_) / static_cast<double>(cycle_);
  }
  return 0;
}

std::string Noise::describe() const {
  const std::string phases =
      spec_.aligned ? "aligned phases" : "random phases (seed " + std::to_string(spec_.seed) + ")";
  switch (spec_.kind) {
    case NoiseKind::None: return "no noise";
    case NoiseKind::Periodic:
      return "periodic noise: " + format_ps(spec_.detour) + " every " + format_ps(spec_.period) + ", " + phases;
    case NoiseKind::Poisson:
      return "poisson noise: " + format_ps(spec_.detour) + " detours, one every " + format_ps(spec_.interval) +
             " on average (seed " + std::to_string(spec_.seed) + ")";
    case NoiseKind::Trace:
      return "noise trace " + spec_.file + ": " + std::to_string(spec_.detours.size()) + " detours every " +
             format_ps(cycle_) + ", " + phases;
  }
  return "";
}

Picoseconds Noise::finish(std::uint32_t rank, Picoseconds t, Picoseconds work) const {
  if (work == 0) return t;
  Picoseconds end = t + work;
  switch (spec_.kind) {
    case NoiseKind::None: break;
    case NoiseKind::Periodic: end = finish_periodic(t, work, phase(rank)); break;
    case NoiseKind::Poisson: end = finish_poisson(rank, t, work); break;
    case NoiseKind::Trace: end = finish_trace(t, work, phase(rank)); break;
  }
  return std::min(end, kMaxTime);
}

// Detours at phase + kT, each [start, start + d): in closed form, so a long
// computation costs no more than a short one.
Picoseconds Noise::finish_periodic(Picoseconds t, Picoseconds work, Picoseconds phase) const {
  const Picoseconds T = spec_.period, d = spec_.detour, free_per_period = T - d;
  Picoseconds x = (t % T + T - phase) % T;  // where t falls in its period (a detour takes [0, d))
  Picoseconds c = t;
  if (x < d) {  // a detour in progress: the computation waits for its end
    c += d - x;
    x = d;
  }
  const Picoseconds free = T - x;  // until the next detour
  if (work <= free) return c + work;
  work -= free;
  c += free + d;  // the next detour; now at the start of a free span of T - d
  const Picoseconds whole = (work - 1) / free_per_period;
  return c + whole * T + (work - whole * free_per_period);
}

// The trace's detours, repeated every cycle_ from the rank's phase.
Picoseconds Noise::finish_trace(Picoseconds t, Picoseconds work, Picoseconds phase) const {
  const auto& d = spec_.detours;
  const Picoseconds C = cycle_, free_per_cycle = C - cycle_busy_;
  const Picoseconds y = (t % C + C - phase) % C;
  Picoseconds base = t - y, c = y;  // c: time into the current cycle
  auto it = std::upper_bound(d.begin(), d.end(), y, [](Picoseconds v, const std::pair<Picoseconds, Picoseconds>& e) {
    return v < e.first + e.second;
  });
  std::size_t i = static_cast<std::size_t>(it - d.begin());
  for (;;) {
    if (i == d.size()) {
      const Picoseconds free = C - c;
      if (work <= free) return base + c + work;
      work -= free;
      base += C;
      c = 0;
      i = 0;
      if (work > free_per_cycle) {
        const Picoseconds whole = (work - 1) / free_per_cycle;
        base += whole * C;
        work -= whole * free_per_cycle;
      }
      continue;
    }
    const auto [s, l] = d[i];
    if (s > c) {
      if (work <= s - c) return base + c + work;
      work -= s - c;
      c = s;
    }
    c = std::max(c, s + l);
    ++i;
  }
}

// Poisson detours, drawn window by window from the rank's stream: the
// arrivals in disjoint windows are independent, so restarting the draw at
// each window's start is exactly a Poisson process.
Picoseconds Noise::finish_poisson(std::uint32_t rank, Picoseconds t, Picoseconds work) const {
  const Picoseconds I = spec_.interval, d = spec_.detour, W = I * kIntervalsPerWindow;
  const double mean = static_cast<double>(I);
  Picoseconds c = t;
  // Detours that started up to d before t may still be in progress.
  for (Picoseconds k = (t >= d ? t - d : 0) / W;; ++k) {
    std::uint64_t state = stream(spec_.seed, rank, k);
    const Picoseconds end = (k + 1) * W;
    Picoseconds s = k * W;
    for (;;) {
      state = mix(state);
      const double gap = -std::log(open_unit(state)) * mean;
      if (gap >= static_cast<double>(end - s)) break;
      s += static_cast<Picoseconds>(gap);
      if (s + d <= c) continue;  // over before the computation gets there
      if (s > c) {
        if (work <= s - c) return c + work;
        work -= s - c;
        c = s;
      }
      c = std::max(c, s + d);
    }
    // No detour starts in the rest of the window.
    if (c < end) {
      if (work <= end - c) return c + work;
      work -= end - c;
      c = end;
    }
    if (c >= kMaxTime) return kMaxTime;
  }
}

nlohmann::json noise_key_json(const NoiseSpec& s) {
  nlohmann::json k = {{"kind", noise_kind_name(s.kind)}};
  if (s.kind == NoiseKind::None) return k;
  if (s.kind == NoiseKind::Poisson) {
    k["interval_ps"] = s.interval;
  } else {
    k["period_ps"] = s.period;
    k["aligned"] = s.aligned;
  }
  if (s.kind != NoiseKind::Trace) k["detour_ps"] = s.detour;
  if (s.kind == NoiseKind::Trace) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_detours(s.detours)));
    k["detours_fnv1a"] = text;
    k["detours"] = s.detours.size();
  }
  k["seed"] = s.seed;
  return k;
}

nlohmann::json noise_spec_json(const NoiseSpec& s) {
  nlohmann::json j = {{"kind", noise_kind_name(s.kind)},
                      {"period_ps", s.period},
                      {"interval_ps", s.interval},
                      {"detour_ps", s.detour},
                      {"aligned", s.aligned},
                      {"seed", s.seed},
                      {"file", s.file},
                      {"detours", nlohmann::json::array()}};
  for (const auto& [start, length] : s.detours) j["detours"].push_back({start, length});
  return j;
}

NoiseSpec noise_spec_from_json(const nlohmann::json& j) {
  NoiseSpec s;
  try {
    const std::string kind = j.at("kind").get<std::string>();
    bool known = false;
    for (NoiseKind k : {NoiseKind::None, NoiseKind::Periodic, NoiseKind::Poisson, NoiseKind::Trace})
      if (kind == noise_kind_name(k)) {
        s.kind = k;
        known = true;
      }
    if (!known) bad("noise kind '" + kind + "' is not none, periodic, poisson or trace");
    s.period = j.at("period_ps").get<Picoseconds>();
    s.interval = j.at("interval_ps").get<Picoseconds>();
    s.detour = j.at("detour_ps").get<Picoseconds>();
    s.aligned = j.at("aligned").get<bool>();
    s.seed = j.at("seed").get<std::uint64_t>();
    s.file = j.at("file").get<std::string>();
    for (const auto& d : j.at("detours"))
      s.detours.emplace_back(d.at(0).get<Picoseconds>(), d.at(1).get<Picoseconds>());
  } catch (const nlohmann::json::exception& e) {
    bad(std::string("malformed noise description: ") + e.what());
  }
  check_noise(s);
  return s;
}

}  // namespace poems::components
