// Problems, machines, scratch files and an independent brute force for the
// recommender tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "poems/components/sweep3d_model.h"
#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/recommender/recommender.h"
#include "poems/taskgraph/dtg.h"

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

// The machines of examples/sweep3d/machines.psl (seed 002, section 4.1), Wg of the Opteron.
inline components::Sweep3DMachine odin() {
  components::Sweep3DMachine m;
  m.params.L = 5'300'000;
  m.params.o = 2'300'000;
  m.params.g = 2'000'000;
  m.params.G = 2'500'000;
  m.params.O = 1'000'000;
  m.params.S = 32768;
  m.wg_ns = 60;
  return m;
}

inline components::Sweep3DMachine bigred() {
  components::Sweep3DMachine m;
  m.params.L = 2'900'000;
  m.params.o = 2'400'000;
  m.params.g = 1'700'000;
  m.params.G = 5'000'000;
  m.params.O = 2'000'000;
  m.params.S = 32768;
  m.wg_ns = 60;
  return m;
}

inline Problem problem(int it_g, int jt_g, int kt, const components::Sweep3DMachine& machine, int mm = 6,
                       int iterations = 12) {
  Problem p;
  p.parameters = {{"it_g", it_g}, {"jt_g", jt_g}, {"kt", kt},
                  {"npe_i", 2},   {"npe_j", 3},   {"mk", 10},
                  {"mmi", 3},     {"mm", mm},     {"iterations", iterations}};
  p.machine = machine;
  p.machine_name = "test";
  p.spec_hash = "spec-hash";
  p.tool_version = "test";
  return p;
}

// The Sweep3D model of the example specification (for simulations).
inline std::shared_ptr<const taskgraph::StaticTaskGraph> sweep3d_graph() {
  static std::unique_ptr<psl::Frontend> fe;
  static std::shared_ptr<const taskgraph::StaticTaskGraph> graph;
  if (!graph) {
    fe = std::make_unique<psl::Frontend>();
    EXPECT_TRUE(fe->load_files({std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"}));
    graph = std::make_shared<taskgraph::StaticTaskGraph>(psl::lower_model(fe->program(), fe->sources(), ""));
  }
  return graph;
}

struct Scored {
  Candidate c;
  double time_ns;
};

// Every candidate evaluated with the closed form and sorted as the recommender
// promises (time, then mk, mmi, npe_i), written independently of it.
inline std::vector<Scored> brute_force(const Problem& p, std::int64_t procs, bool all_grids, std::int64_t npe_i = 0,
                                       std::int64_t npe_j = 0, std::int64_t fixed_mmi = 0) {
  const std::int64_t it_g = p.parameters["it_g"], jt_g = p.parameters["jt_g"], kt = p.parameters["kt"],
                     mm = p.parameters["mm"];
  std::vector<std::pair<std::int64_t, std::int64_t>> grids;
  if (all_grids) {
    for (std::int64_t i = 1; i <= procs; ++i)
      if (procs % i == 0 && i <= it_g && procs / i <= jt_g) grids.emplace_back(i, procs / i);
  } else {
    grids.emplace_back(npe_i, npe_j);
  }
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
        c.iterations = p.parameters["iterations"];
        c.npe_i = i;
        c.npe_j = j;
        c.mk = mk;
        c.mmi = mmi;
        const double t = static_cast<double>(components::predict_sweep3d(c, p.machine).time) / 1000.0;
        out.push_back({{mk, mmi, i, j}, t});
      }
  std::sort(out.begin(), out.end(), [](const Scored& a, const Scored& b) {
    return std::tie(a.time_ns, a.c.mk, a.c.mmi, a.c.npe_i) < std::tie(b.time_ns, b.c.mk, b.c.mmi, b.c.npe_i);
  });
  return out;
}

}  // namespace poems::recommender::testing
