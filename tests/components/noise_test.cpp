// OS noise (poems/components/noise.h): a computation stretched by exactly the
// detours that fall into it, answers worked out by hand, the closed forms
// checked against a detour-by-detour walk, and the descriptions' errors.
#include "poems/components/noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace poems::components {
namespace {

constexpr Picoseconds us(std::uint64_t v) { return v * 1'000'000; }

Noise periodic(Picoseconds period, Picoseconds detour, bool aligned = true, std::uint64_t seed = 1) {
  NoiseSpec s;
  s.kind = NoiseKind::Periodic;
  s.period = period;
  s.detour = detour;
  s.aligned = aligned;
  s.seed = seed;
  return Noise(s);
}

// The reference: walk the detours [phase + kT + start_i, ... + length_i) one
// by one, in time order, from the first that ends after t.
Picoseconds walk(const std::vector<std::pair<Picoseconds, Picoseconds>>& cycle, Picoseconds T, Picoseconds phase,
                 Picoseconds t, Picoseconds work) {
  if (work == 0) return t;
  Picoseconds c = t;
  // Cycles start at phase - T, phase, phase + T, ...; begin one before t's.
  std::int64_t k = (static_cast<std::int64_t>(t) - static_cast<std::int64_t>(phase)) / static_cast<std::int64_t>(T) - 1;
  for (;; ++k) {
    for (const auto& [s0, l] : cycle) {
      const std::int64_t s =
          static_cast<std::int64_t>(phase) + k * static_cast<std::int64_t>(T) + static_cast<std::int64_t>(s0);
      const std::int64_t e = s + static_cast<std::int64_t>(l);
      if (e <= static_cast<std::int64_t>(c)) continue;
      if (s > static_cast<std::int64_t>(c)) {
        const Picoseconds gap = static_cast<Picoseconds>(s) - c;
        if (work <= gap) return c + work;
        work -= gap;
        c = static_cast<Picoseconds>(s);
      }
      c = std::max<Picoseconds>(c, static_cast<Picoseconds>(e));
    }
  }
}

TEST(Noise, APeriodicDetourStretchesAStepByEveryDetourThatFallsIntoIt) {
  // A detour of 25 us at 0, 1, 2, ... ms (aligned). 5 ms of work from 0:
  // the detour in progress at 0 and those at 1..5 ms, 6 x 25 us.
  const Noise n = periodic(us(1000), us(25));
  EXPECT_EQ(n.finish(0, 0, us(5000)), us(5150));
  // Started 10 us into the detour at 1 ms: waits 15 us, then 100 us.
  EXPECT_EQ(n.finish(7, us(1010), us(100)), us(1125));
  // Between detours, ending exactly where the next begins: not stretched.
  EXPECT_EQ(n.finish(0, us(25), us(975)), us(1000));
  // One picosecond more meets it.
  EXPECT_EQ(n.finish(0, us(25), us(975) + 1), us(1025) + 1);
  // No work: no wait, even inside a detour.
  EXPECT_EQ(n.finish(0, us(5), 0), us(5));
  EXPECT_DOUBLE_EQ(n.load(), 0.025);
}

TEST(Noise, RandomPhasesAreUniformPerRankAndReproducible) {
  const Noise a = periodic(us(1000), us(25), false, 7), b = periodic(us(1000), us(25), false, 7),
              c = periodic(us(1000), us(25), false, 8);
  double sum = 0;
  int differ = 0;
  const int ranks = 20000;
  for (std::uint32_t r = 0; r < static_cast<std::uint32_t>(ranks); ++r) {
    ASSERT_LT(a.phase(r), us(1000));
    EXPECT_EQ(a.phase(r), b.phase(r));
    differ += a.phase(r) != c.phase(r);
    sum += static_cast<double>(a.phase(r)) / static_cast<double>(us(1000));
  }
  EXPECT_GT(differ, ranks - 10);
  // The mean of U(0,1) over 20,000 draws: 0.5 within 4 standard errors (0.0082).
  EXPECT_NEAR(sum / ranks, 0.5, 4 * std::sqrt(1.0 / 12 / ranks));
  EXPECT_EQ(periodic(us(1000), us(25), true).phase(123), 0u);
}

TEST(Noise, PeriodicClosedFormMatchesTheWalkDetourByDetour) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    const Picoseconds T = 1 + rng() % 5000, d = 1 + rng() % T;
    if (d >= T) continue;
    const Noise n = periodic(T, d, false, rng());
    const std::uint32_t rank = static_cast<std::uint32_t>(rng() % 1000);
    const Picoseconds t = rng() % 100000, work = rng() % (i % 2 ? 50000 : 3000);
    ASSERT_EQ(n.finish(rank, t, work), walk({{0, d}}, T, n.phase(rank), t, work))
        << "T " << T << " d " << d << " t " << t << " work " << work;
  }
}

TEST(Noise, ATraceRepeatsWithItsPeriodAndMatchesTheWalk) {
  NoiseSpec s;
  s.kind = NoiseKind::Trace;
  s.detours = {{100, 50}, {400, 10}, {700, 250}};  // ends at 950
  s.period = 1000;
  s.seed = 3;
  const Noise n(s);
  EXPECT_DOUBLE_EQ(n.load(), 0.31);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t rank = static_cast<std::uint32_t>(rng() % 100);
    const Picoseconds t = rng() % 20000, work = rng() % (i % 2 ? 20000 : 700);
    ASSERT_EQ(n.finish(rank, t, work), walk(s.detours, 1000, n.phase(rank), t, work)) << "t " << t << " work " << work;
  }
  // By hand (aligned): from 90, 300 of work meets the detours at 100 and 400
  // (10 before the first, 250 between them, 40 after).
  s.aligned = true;
  EXPECT_EQ(Noise(s).finish(0, 90, 300), 450u);
  // One detour per period is periodic noise with the same phases.
  NoiseSpec one;
  one.kind = NoiseKind::Trace;
  one.detours = {{0, 25}};
  one.period = 1000;
  one.seed = 11;
  const Noise trace(one), same = periodic(1000, 25, false, 11);
  for (std::uint32_t r = 0; r < 50; ++r) EXPECT_EQ(trace.finish(r, 12345 + r, 5000), same.finish(r, 12345 + r, 5000));
}

TEST(Noise, PoissonDetoursTakeTheirShareAndComeOutTheSameInAnyOrder) {
  NoiseSpec s;
  s.kind = NoiseKind::Poisson;
  s.interval = us(100);
  s.detour = us(10);
  s.seed = 9;
  const Noise n(s);
  // Over a long computation the CPU is taken 1 - exp(-d/I) of the time
  // (merged detours). 64 ranks x 1 s: about 640,000 detours.
  double stolen = 0, work_total = 0;
  const Picoseconds work = us(1'000'000);
  for (std::uint32_t r = 0; r < 64; ++r) {
    const Picoseconds end = n.finish(r, 0, work);
    stolen += static_cast<double>(end - work);
    work_total += static_cast<double>(end);
  }
  EXPECT_NEAR(stolen / work_total, 1 - std::exp(-0.1), 0.002);
  // Counter-based: a later query first gives the same answers.
  const Picoseconds late = n.finish(5, us(777'777), us(300));
  const Picoseconds early = n.finish(5, us(10), us(300));
  EXPECT_EQ(n.finish(5, us(777'777), us(300)), late);
  EXPECT_EQ(n.finish(5, us(10), us(300)), early);
  // Continuity: finishing in two pieces is finishing in one.
  for (Picoseconds t = 0; t < us(5000); t += us(37)) {
    const Picoseconds mid = n.finish(3, t, us(123));
    EXPECT_EQ(n.finish(3, mid, us(200)), n.finish(3, t, us(323)));
  }
}

TEST(Noise, DescriptionsParseAndNameTheirErrors) {
  NoiseSpec p = parse_noise("periodic:period=1ms,detour=25us,phase=aligned,seed=4");
  EXPECT_EQ(p.kind, NoiseKind::Periodic);
  EXPECT_EQ(p.period, us(1000));
  EXPECT_EQ(p.detour, us(25));
  EXPECT_TRUE(p.aligned);
  EXPECT_EQ(p.seed, 4u);
  EXPECT_EQ(parse_noise("poisson:interval=2000,detour=100").interval, 2'000'000u);
  EXPECT_EQ(parse_noise("none").kind, NoiseKind::None);
  auto error = [](const std::string& text) {
    try {
      parse_noise(text);
    } catch (const NoiseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("periodic:period=1ms"),
            "periodic noise needs period and detour (e.g. periodic:period=1ms,detour=25us)");
  EXPECT_EQ(error("periodic:period=1ms,detour=1ms"),
            "noise detour = 1000000ns is out of range; it must be above 0 and below the period (1000000ns)");
  EXPECT_EQ(error("periodic:period=1KB,detour=1us"), "noise period '1KB' is a size; expected a time, e.g. 25us");
  EXPECT_EQ(error("poisson:interval=1ms,detour=5us,phase=aligned"),
            "noise field 'phase' is not one of poisson noise's (interval, detour, seed)");
  EXPECT_EQ(error("periodic:period=1ms,detour=5us,seed=-1"),
            "noise seed '-1' must be a whole number from 0 to 999999999999999999");
  EXPECT_NE(error("jitter:1ms").find("is not a noise description"), std::string::npos);
  EXPECT_EQ(error("file:/nonexistent/noise.txt"), "cannot read the noise file '/nonexistent/noise.txt'");
}

TEST(Noise, ATraceFileIsReadLineByLineAndItsErrorsLocated) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("poems_noise_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string good = write("good.txt", "# start length\n0 10us\n1.5ms 20us  # a timer tick\n\n2ms 1000\n");
  NoiseSpec s = parse_noise("file:" + good + ",period=10ms,phase=aligned");
  ASSERT_EQ(s.detours.size(), 3u);
  EXPECT_EQ(s.detours[1], (std::pair<Picoseconds, Picoseconds>{us(1500), us(20)}));
  EXPECT_EQ(s.detours[2].second, us(1));
  EXPECT_EQ(s.period, us(10000));
  const Noise n(s);
  EXPECT_EQ(n.finish(0, 0, us(1000)), us(1010));           // the detour at 0
  EXPECT_EQ(n.finish(0, us(10000), us(1500)), us(11530));  // the next cycle: 0 and 1.5 ms
  auto error = [&](const std::string& text) {
    try {
      parse_noise("file:" + write("bad.txt", text));
    } catch (const NoiseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string bad = (dir / "bad.txt").string();
  EXPECT_EQ(
      error("0 10us\n5us 1us\n"),
      bad + ":2: this detour starts before the one on the line before it ends (the file lists detours in time order)");
  EXPECT_EQ(error("0\n"), bad + ":1: expected \"start length\" (ns, or with units: 1.5ms 20us)");
  EXPECT_EQ(error("0 1KiB\n"), bad + ":1: noise length '1KiB' is a size; expected a time, e.g. 25us");
  EXPECT_EQ(error("# nothing\n"), "the noise file '" + bad + "' lists no detour");
  // Without a period the trace repeats from its last detour's end: one
  // detour from 0 then leaves no time.
  EXPECT_EQ(error("0 10\n"), "the noise trace leaves the CPU no time: its detours fill the whole period");
  EXPECT_EQ(error("5 10\n"), "no error");
  std::filesystem::remove_all(dir);
}

TEST(Noise, SpecsRoundTripThroughJsonAndKeysSeeTheDetours) {
  NoiseSpec s;
  s.kind = NoiseKind::Trace;
  s.detours = {{0, 10}, {50, 5}};
  s.period = 100;
  s.seed = 77;
  const NoiseSpec back = noise_spec_from_json(noise_spec_json(s));
  EXPECT_EQ(back.detours, s.detours);
  EXPECT_EQ(back.period, 100u);
  EXPECT_EQ(back.seed, 77u);
  NoiseSpec other = s;
  other.detours[1].second = 6;
  EXPECT_NE(noise_key_json(s), noise_key_json(other));
  EXPECT_THROW(noise_spec_from_json(nlohmann::json{{"kind", "jitter"}}), NoiseError);
}

}  // namespace
}  // namespace poems::components
