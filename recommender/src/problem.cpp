#include "poems/recommender/problem.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace poems::recommender {

namespace {

constexpr std::int64_t kMaxInt = std::int64_t{1} << 31;

std::int64_t integer(const nlohmann::json& parameters, const char* name) {
  auto it = parameters.find(name);
  if (it == parameters.end() || !it->is_number())
    throw QueryError(std::string("the Sweep3D recommender needs the model parameter '") + name + "'");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v != std::trunc(v) || std::fabs(v) > 9e15)
    throw QueryError(std::string(name) + " = " + it->dump() + " is not an integer");
  return static_cast<std::int64_t>(v);
}

void check(bool ok, const std::string& name, std::int64_t value, const std::string& range) {
  if (!ok) throw QueryError(name + " = " + std::to_string(value) + " is out of range; expected " + range);
}

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

std::string list(const std::vector<std::int64_t>& values) {
  std::string out;
  for (std::int64_t v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

}  // namespace

components::Sweep3DConfig Problem::config(const Candidate& c) const {
  components::Sweep3DConfig out;
  out.it_g = integer(parameters, "it_g");
  out.jt_g = integer(parameters, "jt_g");
  out.kt = integer(parameters, "kt");
  out.mm = integer(parameters, "mm");
  out.iterations = integer(parameters, "iterations");
  out.mk = c.mk;
  out.mmi = c.mmi;
  out.npe_i = c.npe_i;
  out.npe_j = c.npe_j;
  return out;
}

Candidate Problem::defaults() const {
  return {integer(parameters, "mk"), integer(parameters, "mmi"), integer(parameters, "npe_i"),
          integer(parameters, "npe_j")};
}

void validate(const Problem& problem) {
  const components::Sweep3DConfig c = problem.config(problem.defaults());
  const std::string positive = "an integer in 1.." + std::to_string(kMaxInt);
  check(c.it_g >= 1 && c.it_g <= kMaxInt, "it_g", c.it_g, positive);
  check(c.jt_g >= 1 && c.jt_g <= kMaxInt, "jt_g", c.jt_g, positive);
  check(c.kt >= 1 && c.kt <= kMaxInt, "kt", c.kt, positive);
  check(c.mm >= 1 && c.mm <= 4096, "mm", c.mm, "an integer in 1..4096");
  check(c.iterations >= 0 && c.iterations <= kMaxInt, "iterations", c.iterations,
        "an integer in 0.." + std::to_string(kMaxInt));
  const double wg = problem.machine.wg_ns;
  if (!(wg >= 0) || !std::isfinite(wg) || wg > 1e9)
    throw QueryError("Wg = " + std::to_string(wg) + " ns is out of range; expected a time in 0..1e9 ns");
}

std::vector<std::pair<std::int64_t, std::int64_t>> factorizations(std::int64_t procs, std::int64_t it_g,
                                                                  std::int64_t jt_g) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (procs < 1) return out;
  for (std::int64_t d = 1; d * d <= procs; ++d) {
    if (procs % d != 0) continue;
    for (auto grid : {std::pair{d, procs / d}, std::pair{procs / d, d}})
      if (grid.first <= it_g && grid.second <= jt_g && (out.empty() || out.back() != grid)) out.push_back(grid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::pair<std::int64_t, std::int64_t> square_grid(std::int64_t procs, std::int64_t it_g, std::int64_t jt_g) {
  const auto grids = factorizations(procs, it_g, jt_g);
  if (grids.empty())
    throw QueryError("procs = " + std::to_string(procs) +
                     " has no processor grid npe_i x npe_j with npe_i <= it_g = " + std::to_string(it_g) +
                     " and npe_j <= jt_g = " + std::to_string(jt_g) + "; expected at most it_g * jt_g processors");
  auto best = grids.front();
  for (const auto& g : grids) {
    const std::int64_t d = std::llabs(g.first - g.second), bd = std::llabs(best.first - best.second);
    if (d < bd || (d == bd && g.first <= g.second && best.first > best.second)) best = g;
  }
  return best;
}

Candidate CandidateSet::at(std::size_t i) const {
  const std::size_t per_grid = mk.size() * mmi.size();
  const auto& grid = grids[i / per_grid];
  const std::size_t rest = i % per_grid;
  return {mk[rest / mmi.size()], mmi[rest % mmi.size()], grid.first, grid.second};
}

CandidateSet candidates(const Problem& problem, const CandidateSpace& space) {
  validate(problem);
  const components::Sweep3DConfig base = problem.config(problem.defaults());
  CandidateSet set;
  std::int64_t procs = space.procs;
  if (procs == 0 && space.npe_i > 0 && space.npe_j > 0) procs = space.npe_i * space.npe_j;
  check(procs >= 1 && procs <= kMaxInt, "procs", procs, "an integer in 1.." + std::to_string(kMaxInt));
  if (space.all_grids) {
    set.grids = factorizations(procs, base.it_g, base.jt_g);
    if (set.grids.empty()) square_grid(procs, base.it_g, base.jt_g);  // throws, naming the limits
  } else if (space.npe_i > 0 || space.npe_j > 0) {
    check(space.npe_i >= 1 && space.npe_i <= base.it_g, "npe_i", space.npe_i,
          "an integer in 1..it_g = " + std::to_string(base.it_g));
    check(space.npe_j >= 1 && space.npe_j <= base.jt_g, "npe_j", space.npe_j,
          "an integer in 1..jt_g = " + std::to_string(base.jt_g));
    if (space.npe_i * space.npe_j != procs)
      throw QueryError("npe_i * npe_j = " + std::to_string(space.npe_i * space.npe_j) +
                       " but procs = " + std::to_string(procs) + "; expected npe_i * npe_j == procs");
    set.grids.emplace_back(space.npe_i, space.npe_j);
  } else {
    set.grids.push_back(square_grid(procs, base.it_g, base.jt_g));
  }
  if (space.mk) {
    check(*space.mk >= 1 && *space.mk <= base.kt, "mk", *space.mk, "an integer in 1..kt = " + std::to_string(base.kt));
    set.mk = {*space.mk};
  } else {
    const std::size_t total = static_cast<std::size_t>(base.kt) * set.grids.size();
    if (total > kMaxCandidates)
      throw QueryError("kt = " + std::to_string(base.kt) + " gives " + std::to_string(total) +
                       " (mk, grid) candidates; expected at most " + std::to_string(kMaxCandidates) +
                       " (fix mk with --set mk=N)");
    for (std::int64_t mk = 1; mk <= base.kt; ++mk) set.mk.push_back(mk);
  }
  const std::vector<std::int64_t> allowed = divisors(base.mm);
  if (space.mmi) {
    check(*space.mmi >= 1 && base.mm % *space.mmi == 0 && *space.mmi <= base.mm, "mmi", *space.mmi,
          "a divisor of mm = " + std::to_string(base.mm) + ": " + list(allowed));
    set.mmi = {*space.mmi};
  } else {
    set.mmi = allowed;
  }
  if (set.size() > kMaxCandidates)
    throw QueryError("the question has " + std::to_string(set.size()) + " candidates; expected at most " +
                     std::to_string(kMaxCandidates) + " (fix mk or mmi with --set, or drop --grid)");
  return set;
}

nlohmann::json machine_json(const components::Sweep3DMachine& m) {
  return components::machine_key_json(m.params, m.rendezvous_handshake);
}

namespace {

nlohmann::json candidate_parameters(const Problem& problem, const Candidate& c) {
  nlohmann::json params = problem.parameters;
  params["mk"] = c.mk;
  params["mmi"] = c.mmi;
  params["npe_i"] = c.npe_i;
  params["npe_j"] = c.npe_j;
  return params;
}

}  // namespace

db::RunKey analytic_key(const Problem& problem, const Candidate& c) {
  db::RunKey key;
  key.model = problem.model;
  key.evaluator = "analytic[LogGP]";
  key.spec_hash = problem.spec_hash;
  key.tool_version = problem.tool_version;
  key.binding = {{"parameters", candidate_parameters(problem, c)},
                 {"wg_ns", problem.machine.wg_ns},
                 {"machine", machine_json(problem.machine)},
                 {"method", "closed-form"}};
  return key;
}

db::RunKey simulation_key(const Problem& problem, const Candidate& c) {
  db::RunKey key;
  key.model = problem.model;
  key.evaluator = "simulation[MPI-Sim]";
  key.spec_hash = problem.spec_hash;
  key.tool_version = problem.tool_version;
  nlohmann::json machine = machine_json(problem.machine);
  machine["cpus"] = 1;
  machine["nics"] = 1;
  key.binding = {
      {"machine", machine}, {"parameters", candidate_parameters(problem, c)}, {"wg_ns", problem.machine.wg_ns}};
  return key;
}

std::string grid_study_name(const Problem& problem, std::int64_t npe_i, std::int64_t npe_j) {
  nlohmann::json params = problem.parameters;
  params.erase("mk");
  params.erase("mmi");
  params["npe_i"] = npe_i;
  params["npe_j"] = npe_j;
  const nlohmann::json identity = {{"model", problem.model},         {"parameters", params},
                                   {"wg_ns", problem.machine.wg_ns}, {"machine", machine_json(problem.machine)},
                                   {"method", "closed-form"},        {"tool_version", problem.tool_version}};
  const components::Sweep3DConfig c = problem.config({1, 1, npe_i, npe_j});
  return "recommend " + problem.model + " " + std::to_string(c.it_g) + "x" + std::to_string(c.jt_g) + "x" +
         std::to_string(c.kt) + " on " + std::to_string(npe_i) + "x" + std::to_string(npe_j) + " " +
         db::sha256_hex(db::canonical_json(identity)).substr(0, 16);
}

}  // namespace poems::recommender
