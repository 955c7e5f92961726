#include "poems/recommender/problem_class.h"

#include <algorithm>
#include <cmath>

#include "poems/base/registry.h"

namespace poems::recommender {

namespace {

base::Registry<ProblemClass>& registry() {
  static base::Registry<ProblemClass> r;
  return r;
}

double phi(double x) { return std::log2(1.0 + std::max(0.0, x)); }

}  // namespace

void register_problem_class(ProblemClass problem_class) {
  std::string model = problem_class.model;
  registry().add(model, std::move(problem_class));
}

const ProblemClass* find_problem_class(const std::string& model) { return registry().find(model); }

std::vector<double> default_features(const Binding& b, const components::ClosedFormMachine& m) {
  std::vector<double> f;
  for (double v : b.values) f.push_back(phi(v));
  const components::LogGOPS& p = m.params;
  for (double v : {static_cast<double>(p.L) / 1e3, static_cast<double>(p.o) / 1e3, static_cast<double>(p.g) / 1e3,
                   static_cast<double>(p.G) / 1e6, static_cast<double>(p.O) / 1e6, static_cast<double>(p.S),
                   m.ns_per_work, m.rendezvous_handshake ? 1.0 : 0.0})
    f.push_back(phi(v));
  return f;
}

}  // namespace poems::recommender
