// The recommender's question of issue 7 — which (mk, mmi) for a 255^3
// Sweep3D on 4,096 processors of Odin — cold (a new knowledge base: every
// candidate evaluated and stored) and warm (everything found), with and
// without --grid; plus the optimal-operating-point range of the 20M-cell
// problem. Library level: the spec is not parsed (the CLI adds that; see
// docs/PERFORMANCE.md).
//   recommend_bench [DIR] [REPEATS]   (scratch files in DIR, default /tmp)
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "poems/recommender/recommender.h"

using namespace poems;

namespace {

recommender::Problem problem(int it, int kt) {
  recommender::Problem p;
  p.parameters = {{"it_g", it}, {"jt_g", it}, {"kt", kt}, {"npe_i", 2},      {"npe_j", 3},
                  {"mk", 10},   {"mmi", 3},   {"mm", 6},  {"iterations", 12}};
  p.machine.params.L = 5'300'000;  // Odin (examples/sweep3d/machines.psl)
  p.machine.params.o = 2'300'000;
  p.machine.params.g = 2'000'000;
  p.machine.params.G = 2'500'000;
  p.machine.params.O = 1'000'000;
  p.machine.params.S = 32768;
  p.machine.wg_ns = 60;
  p.machine_name = "Odin";
  p.spec_hash = "bench";
  p.tool_version = "bench";
  return p;
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
recommender::QueryStats ask(const std::filesystem::path& db, const recommender::Problem& p,
                            const recommender::CandidateSpace& space, double& seconds) {
  const auto t = std::chrono::steady_clock::now();
  db::KnowledgeBase kb(db);
  recommender::Recommender r(&kb, p);
  const auto top = r.recommend(space, 5);
  seconds = since(t);
  if (top.empty()) std::abort();
  return r.stats();
}

void question(const std::filesystem::path& dir, const char* name, const recommender::CandidateSpace& space,
              int repeats) {
  const recommender::Problem p = problem(255, 255);
  Timing cold, warm;
  recommender::QueryStats cold_stats, warm_stats;
  for (int rep = 0; rep < repeats; ++rep) {
    const std::filesystem::path db = dir / ("recommend_bench_" + std::to_string(::getpid()) + ".db");
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
    double s = 0;
    cold_stats = ask(db, p, space, s);
    cold.add(s);
    for (int w = 0; w < 5; ++w) {
      warm_stats = ask(db, p, space, s);
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
  question(dir, "255^3, 4096 procs (64x64)", {4096, false, 0, 0, {}, {}}, repeats);
  question(dir, "255^3, 4096 procs, --grid", {4096, true, 0, 0, {}, {}}, repeats);

  // The 20M-cell problem over 100..20000 processors (one grid per count).
  const recommender::Problem p = problem(280, 255);
  const std::filesystem::path db = dir / ("recommend_bench_range_" + std::to_string(::getpid()) + ".db");
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = std::chrono::steady_clock::now();
    db::KnowledgeBase kb(db);
    recommender::Recommender r(&kb, p);
    const recommender::OperatingPoint op = r.operating_point({100, 20000, 0.10, false, {}, {}});
    std::printf(
        "280x280x255, --procs-range 100..20000 (%s): %zu counts, %zu candidates, %zu evaluated, %zu stored, "
        "%.3f s; knee at %lld processors\n",
        pass == 0 ? "cold" : "warm", op.points.size(), r.stats().candidates, r.stats().evaluated, r.stats().stored,
        since(t), static_cast<long long>(op.points[*op.knee].procs));
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
  return 0;
}
