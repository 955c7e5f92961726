// How often the scaling models choose the true law and predict far outside
// the runs within 10 %, on synthetic data with multiplicative Gaussian noise
// (docs/scaling.md, "Two parameters"): for each law, grid of runs and noise
// level, 500 draws (seeded), fitted by poems::scaling::fit2.
// Usage: scaling_accuracy [DRAWS]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "poems/scaling/pmnf2.h"

namespace {

struct Law {
  std::string name;
  std::function<double(double, double)> f;
  double p_i;
  int p_j;
  double n_i;
  int n_j;
};

}  // namespace

int main(int argc, char** argv) {
  using poems::scaling::Point2;
  const int draws = argc > 1 ? std::atoi(argv[1]) : 500;
  if (draws < 1) {
    std::fprintf(stderr, "scaling_accuracy: DRAWS must be >= 1\n");
    return 2;
  }
  const std::vector<Law> laws = {
      {"2e-3 + 4e-9 n^3/p", [](double p, double n) { return 2e-3 + 4e-9 * n * n * n / p; }, -1, 0, 3, 0},
      {"1e-7 n^2/p", [](double p, double n) { return 1e-7 * n * n / p; }, -1, 0, 2, 0},
      {"5e-5 log2 p + 3e-8 n^2", [](double p, double n) { return 5e-5 * std::log2(p) + 3e-8 * n * n; }, 0, 1, 2, 0},
      {"1e-3 + 2e-6 n log2 n", [](double, double n) { return 1e-3 + 2e-6 * n * std::log2(n); }, 0, 0, 1, 1},
  };
  struct Grid {
    const char* name;
    std::vector<double> ps, ns;
  };
  const std::vector<Grid> grids = {{"3 x 3 (p 4..16, n 64..256)", {4, 8, 16}, {64, 128, 256}},
                                   {"5 x 5 (p 4..64, n 32..512)", {4, 8, 16, 32, 64}, {32, 64, 128, 256, 512}}};
  std::printf("%-26s %-28s %6s %12s %8s   (of %d; predicted at p = 1,024, n = 1,024)\n", "law", "runs", "noise",
              "within 10 %", "terms", draws);
  for (const Law& law : laws)
    for (const Grid& g : grids)
      for (double noise : {0.01, 0.03}) {
        std::mt19937_64 rng(46);
        std::normal_distribution<double> z(0, 1);
        int within = 0, terms = 0;
        for (int d = 0; d < draws; ++d) {
          std::vector<Point2> pts;
          for (double p : g.ps)
            for (double n : g.ns) pts.push_back({p, n, law.f(p, n) * (1 + noise * z(rng))});
          const auto m = poems::scaling::fit2(pts);
          const double truth = law.f(1024, 1024);
          within += std::abs(m.at(1024, 1024) - truth) / truth < 0.10;
          const bool p_ok = (law.p_i == 0 && law.p_j == 0)
                                ? !(m.has_p || m.has_pn)
                                : (m.has_p || m.has_pn) && m.p_term.i == law.p_i && m.p_term.j == law.p_j;
          const bool n_ok = (m.has_n || m.has_pn) && m.n_term.i == law.n_i && m.n_term.j == law.n_j;
          terms += p_ok && n_ok;
        }
        std::printf("%-26s %-28s %5.0f%% %12d %8d\n", law.name.c_str(), g.name, noise * 100, within, terms);
      }
  return 0;
}
