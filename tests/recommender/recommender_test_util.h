// Problems, machines, scratch files and an independent brute force for the
// recommender tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "poems/core/session.h"
#include "poems/examples/examples.h"
#include "poems/recommender/recommender.h"
#include "poems/sweep3d/sweep3d_model.h"

namespace poems::recommender::testing {

// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() / ("poems_rec_" + std::string(info ? info->name() : "x") + "_" +
                                                     std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() { std::filesystem::remove_all(dir_); }
  std::filesystem::path file(const std::string& name = "poems.db") const { return dir_ / name; }

 private:
  std::filesystem::path dir_;
};

// A Sweep3D question as `poems recommend --set it_g=.. --set jt_g=.. --set kt=..
// --set mm=.. --set iterations=.. --machine MACHINE [--rendezvous-handshake]
// [--wg WG]` builds it, through the evaluation core.
struct Ask {
  int it_g = 255, jt_g = 255, kt = 255;
  std::string machine = "Odin";  // examples/sweep3d/machines.psl: Odin or BigRed
  int mm = 6, iterations = 12;
  bool handshake = false;
  std::string wg;                 // "" = the Opteron's 60ns
  std::vector<std::string> sets;  // more --set values (mk=17, ...)
};

inline Problem problem(const Ask& a) {
  examples::register_examples();
  core::SystemRequest request;
  request.files = {std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"};
  request.sets = {"it_g=" + std::to_string(a.it_g), "jt_g=" + std::to_string(a.jt_g), "kt=" + std::to_string(a.kt),
                  "mm=" + std::to_string(a.mm), "iterations=" + std::to_string(a.iterations)};
  request.sets.insert(request.sets.end(), a.sets.begin(), a.sets.end());
  const std::unique_ptr<core::System> system = core::load_system(request);
  core::Store none({true, ""});
  core::SessionOptions options;
  options.choices.machine = a.machine;
  if (a.handshake) options.machine.rendezvous_handshake = true;
  if (!a.wg.empty()) options.wg = a.wg;
  core::Session session(*system, options, none);
  return problem_of(session);  // holds the graph and the evaluations it needs
}

inline Problem problem(int it_g, int jt_g, int kt, const std::string& machine = "Odin", int mm = 6,
                       int iterations = 12) {
  return problem(Ask{it_g, jt_g, kt, machine, mm, iterations, false, "", {}});
}

// The parameters a Sweep3D candidate chooses, in CandidateSet order (the grid first).
inline const std::vector<std::string>& chosen() {
  static const std::vector<std::string> names = {"npe_i", "npe_j", "mk", "mmi"};
  return names;
}

struct Candidate {
  std::int64_t mk = 0, mmi = 0, npe_i = 0, npe_j = 0;
  auto operator<=>(const Candidate&) const = default;
  std::vector<double> values() const { return {double(npe_i), double(npe_j), double(mk), double(mmi)}; }
};

// The candidate a recommendation chose; what it does not choose (a fixed
// mmi) is the problem's value.
inline Candidate candidate_of(const Recommendation& r, const Problem* p = nullptr) {
  auto get = [&](const char* name) {
    const double v = r.value(name);
    return static_cast<std::int64_t>(std::isnan(v) && p ? p->value(name) : v);
  };
  return {get("mk"), get("mmi"), get("npe_i"), get("npe_j")};
}
inline Candidate candidate_of(const Recommendation& r, const Problem& p) { return candidate_of(r, &p); }

struct Scored {
  Candidate c;
  double time_ns;
};

// Every candidate evaluated with the closed form and sorted as the recommender
// promises (time, then mk, mmi, npe_i), written independently of it.
inline std::vector<Scored> brute_force(const Problem& p, std::int64_t procs, bool all_grids, std::int64_t npe_i = 0,
                                       std::int64_t npe_j = 0, std::int64_t fixed_mmi = 0) {
  auto get = [&](const char* name) { return static_cast<std::int64_t>(p.value(name)); };
  const std::int64_t it_g = get("it_g"), jt_g = get("jt_g"), kt = get("kt"), mm = get("mm");
  std::vector<std::pair<std::int64_t, std::int64_t>> grids;
  if (all_grids) {
    for (std::int64_t i = 1; i <= procs; ++i)
      if (procs % i == 0 && i <= it_g && procs / i <= jt_g) grids.emplace_back(i, procs / i);
  } else {
    grids.emplace_back(npe_i, npe_j);
  }
  const components::Sweep3DMachine machine{p.machine.params, p.machine.rendezvous_handshake, p.machine.ns_per_work};
  std::vector<Scored> out;
  for (const auto& [i, j] : grids)
    for (std::int64_t mk = 1; mk <= kt; ++mk)
      for (std::int64_t mmi = 1; mmi <= mm; ++mmi) {
        if (mm % mmi != 0 || (fixed_mmi && mmi != fixed_mmi)) continue;
        components::Sweep3DConfig c;
        c.it_g = it_g;
        c.jt_g = jt_g;
        c.kt = kt;
        c.mm = mm;
        c.iterations = get("iterations");
        c.npe_i = i;
        c.npe_j = j;
        c.mk = mk;
        c.mmi = mmi;
        const double t = static_cast<double>(components::predict_sweep3d(c, machine).time) / 1000.0;
        out.push_back({{mk, mmi, i, j}, t});
      }
  std::sort(out.begin(), out.end(), [](const Scored& a, const Scored& b) {
    return std::tie(a.time_ns, a.c.mk, a.c.mmi, a.c.npe_i) < std::tie(b.time_ns, b.c.mk, b.c.mmi, b.c.npe_i);
  });
  return out;
}

}  // namespace poems::recommender::testing
