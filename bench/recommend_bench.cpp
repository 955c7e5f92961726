// The recommender's question of issue 7 — which (mk, mmi) for a 255^3
// Sweep3D on 4,096 processors of Odin — cold (a new knowledge base: every
// candidate evaluated and stored) and warm (everything found), with and
// without --grid; plus the optimal-operating-point range of the 20M-cell
// problem. Library level: the specification is loaded and composed once,
// before the timings (the CLI adds that; see docs/PERFORMANCE.md).
//   recommend_bench [DIR] [REPEATS]   (scratch files in DIR, default /tmp)
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "poems/core/session.h"
#include "poems/examples/examples.h"
#include "poems/recommender/recommender.h"

using namespace poems;

namespace {

// The problem as `poems recommend --set it_g=IT --set jt_g=IT --set kt=KT --machine Odin` builds it.
recommender::Problem problem(int it, int kt) {
  examples::register_examples();
  core::SystemRequest request;
  request.files = {std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"};
  request.sets = {"it_g=" + std::to_string(it), "jt_g=" + std::to_string(it), "kt=" + std::to_string(kt)};
  static std::vector<std::unique_ptr<core::System>> systems;  // the problem points into its system's graph
  systems.push_back(core::load_system(request));
  core::Store none({true, ""});
  core::SessionOptions options;
  options.choices.machine = "Odin";
  core::Session session(*systems.back(), options, none);
  return recommender::problem_of(session);
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Timing {
  double best = 1e300, sum = 0;
  int n = 0;
  void add(double s) {
    best = std::min(best, s);
    sum += s;
    ++n;
  }
};

// One question: open the knowledge base, ask, close (as one `poems recommend`).
recommender::QueryStats ask(const std::filesystem::path& db, const recommender::Problem& p, std::int64_t procs,
                            bool grid, double& seconds) {
  const auto t = std::chrono::steady_clock::now();
  db::KnowledgeBase kb(db);
  recommender::Recommender r(&kb, p);
  const auto top = r.recommend(recommender::candidates(p, {}, {}, procs, grid), 5);
  seconds = since(t);
  if (top.empty()) std::abort();
  return r.stats();
}

void question(const std::filesystem::path& dir, const char* name, std::int64_t procs, bool grid, int repeats) {
  const recommender::Problem p = problem(255, 255);
  Timing cold, warm;
  recommender::QueryStats cold_stats, warm_stats;
  for (int rep = 0; rep < repeats; ++rep) {
    const std::filesystem::path db = dir / ("recommend_bench_" + std::to_string(::getpid()) + ".db");
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
    double s = 0;
    cold_stats = ask(db, p, procs, grid, s);
    cold.add(s);
    for (int w = 0; w < 5; ++w) {
      warm_stats = ask(db, p, procs, grid, s);
      warm.add(s);
    }
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
  }
  std::printf(
      "%-28s %6zu candidates  cold %7.1f ms (best of %d, mean %7.1f; %zu evaluated, %zu stored)  "
      "warm %5.1f ms (best of %d, mean %5.1f; %zu reused, %zu evaluated)\n",
      name, cold_stats.candidates, 1e3 * cold.best, cold.n, 1e3 * cold.sum / cold.n, cold_stats.evaluated,
      cold_stats.stored, 1e3 * warm.best, warm.n, 1e3 * warm.sum / warm.n, warm_stats.reused, warm_stats.evaluated);
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path dir = argc > 1 ? argv[1] : "/tmp";
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  question(dir, "255^3, 4096 procs (64x64)", 4096, false, repeats);
  question(dir, "255^3, 4096 procs, --grid", 4096, true, repeats);

  // The 20M-cell problem over 100..20000 processors (one grid per count).
  const recommender::Problem p = problem(280, 255);
  const std::filesystem::path db = dir / ("recommend_bench_range_" + std::to_string(::getpid()) + ".db");
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = std::chrono::steady_clock::now();
    db::KnowledgeBase kb(db);
    recommender::Recommender r(&kb, p);
    recommender::ProcsRange range;
    range.from = 100;
    range.to = 20000;
    range.others = recommender::candidates(p, {}, {}, 0, false).dimensions();
    const recommender::OperatingPoint op = r.operating_point(range);
    std::printf(
        "280x280x255, --procs-range 100..20000 (%s): %zu counts, %zu candidates, %zu evaluated, %zu stored, "
        "%.3f s; knee at %lld processors\n",
        pass == 0 ? "cold" : "warm", op.points.size(), r.stats().candidates, r.stats().evaluated, r.stats().stored,
        since(t), static_cast<long long>(op.points[*op.knee].procs));
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
  return 0;
}
