#include "poems/recommender/problem.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace poems::recommender {

double Binding::operator()(const std::string& name) const {
  for (std::size_t i = 0; i < names->size() && i < values.size(); ++i)
    if ((*names)[i] == name) return values[i];
  throw QueryError("the model has no parameter '" + name + "'");
}

std::size_t Problem::index(const std::string& name) const {
  auto it = std::find(parameters.begin(), parameters.end(), name);
  if (it == parameters.end()) throw QueryError("model " + model + " has no parameter '" + name + "'");
  return static_cast<std::size_t>(it - parameters.begin());
}

Problem problem_of(core::Session& session, bool simulation) {
  const taskgraph::StaticTaskGraph& graph = *session.system().graph();
  core::CellRequest request;
  request.paradigm = kAnalyticParadigm;
  const core::Session::Prepared a = session.prepare(request);
  if (!a.cell.ok()) throw QueryError(a.cell.error);
  Problem p;
  p.model = graph.model;
  p.spec_hash = a.key.spec_hash;
  p.tool_version = a.key.tool_version;
  p.parameters = graph.params;
  const core::Evaluation& e = a.cell.evaluation;
  p.values.assign(e.values.begin(), e.values.begin() + static_cast<std::ptrdiff_t>(graph.params.size()));
  p.machine = {e.machine.params, e.machine.rendezvous_handshake, e.ns_per_work};
  p.machine_name = e.machine.network;
  p.method = e.method;
  p.analytic_key = a.key;
  p.analytic = e;
  p.graph = session.system().graph();
  // The simulation (--confirm) is composed now, but a specification that
  // cannot simulate still gets its analytic answers.
  if (!simulation) {
    p.simulation_error = "the question was prepared without its simulation";
    return p;
  }
  try {
    request.paradigm = kSimulationParadigm;
    const core::Session::Prepared s = session.prepare(request);
    if (s.cell.ok()) {
      p.simulation_key = s.key;
      p.simulation = s.cell.evaluation;
    } else {
      p.simulation_error = s.cell.error;
    }
  } catch (const std::exception& x) {
    p.simulation_error = x.what();
  }
  return p;
}

CandidateSet::CandidateSet(std::vector<Dimension> dimensions) : dimensions_(std::move(dimensions)) {
  size_ = 1;
  for (const Dimension& d : dimensions_) {
    for (const std::string& n : d.names) names_.push_back(n);
    size_ *= d.values.size();
  }
  positions_.resize(dimensions_.size());
  for (std::size_t k = 0; k < dimensions_.size(); ++k)
    if (dimensions_[k].names.size() == 1)
      for (std::size_t v = 0; v < dimensions_[k].values.size(); ++v)
        positions_[k].emplace(dimensions_[k].values[v].front(), v);
  strides_.assign(dimensions_.size(), 1);
  for (std::size_t k = dimensions_.size(); k-- > 1;) strides_[k - 1] = strides_[k] * dimensions_[k].values.size();
  if (dimensions_.empty()) size_ = 1;  // the question's own binding
}

void CandidateSet::at(std::size_t i, std::vector<double>& values) const {
  values.clear();
  for (std::size_t k = 0; k < dimensions_.size(); ++k) {
    const auto& tuple = dimensions_[k].values[(i / strides_[k]) % dimensions_[k].values.size()];
    values.insert(values.end(), tuple.begin(), tuple.end());
  }
}

std::vector<double> CandidateSet::at(std::size_t i) const {
  std::vector<double> v;
  at(i, v);
  return v;
}

std::size_t CandidateSet::index_of(std::span<const double> values) const {
  if (values.size() != names_.size()) return npos;
  std::size_t index = 0, offset = 0;
  for (std::size_t k = 0; k < dimensions_.size(); ++k) {
    const Dimension& d = dimensions_[k];
    const std::span<const double> mine = values.subspan(offset, d.names.size());
    offset += d.names.size();
    if (d.names.size() == 1) {
      const auto p = positions_[k].find(mine.front());
      if (p == positions_[k].end()) return npos;
      index += p->second * strides_[k];
      continue;
    }
    auto it = std::find_if(d.values.begin(), d.values.end(),
                           [&](const std::vector<double>& t) { return std::equal(t.begin(), t.end(), mine.begin()); });
    if (it == d.values.end()) return npos;
    index += static_cast<std::size_t>(it - d.values.begin()) * strides_[k];
  }
  return index;
}

void apply(const Problem& problem, const std::vector<std::string>& names, std::span<const double> candidate,
           std::vector<double>& values) {
  values = problem.values;
  for (std::size_t k = 0; k < names.size(); ++k) values[problem.index(names[k])] = candidate[k];
}

namespace {

db::RunKey patched(db::RunKey key, const std::vector<std::string>& names, std::span<const double> c) {
  nlohmann::json& parameters = key.binding["parameters"];
  for (std::size_t k = 0; k < names.size(); ++k) parameters[names[k]] = c[k];
  return key;
}

}  // namespace

db::RunKey analytic_key(const Problem& problem, const std::vector<std::string>& names, std::span<const double> c) {
  return patched(problem.analytic_key, names, c);
}

db::RunKey simulation_key(const Problem& problem, const std::vector<std::string>& names, std::span<const double> c) {
  return patched(problem.simulation_key, names, c);
}

std::vector<std::pair<std::int64_t, std::int64_t>> factorizations(std::int64_t procs, std::int64_t max_i,
                                                                  std::int64_t max_j) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (procs < 1) return out;
  for (std::int64_t d = 1; d * d <= procs; ++d) {
    if (procs % d != 0) continue;
    for (auto grid : {std::pair{d, procs / d}, std::pair{procs / d, d}})
      if (grid.first <= max_i && grid.second <= max_j && (out.empty() || out.back() != grid)) out.push_back(grid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::vector<std::int64_t>> grid_factorizations(std::int64_t procs, std::size_t axes) {
  std::vector<std::vector<std::int64_t>> out;
  if (procs < 1 || axes == 0) return out;
  std::vector<std::int64_t> divisors, large;
  for (std::int64_t d = 1; d * d <= procs; ++d)
    if (procs % d == 0) {
      divisors.push_back(d);
      if (d != procs / d) large.push_back(procs / d);
    }
  divisors.insert(divisors.end(), large.rbegin(), large.rend());  // ascending
  std::vector<std::int64_t> grid;
  // Depth first over the axes, each axis's divisor ascending: lexicographic order.
  const auto extend = [&](auto& self, std::int64_t rest) -> void {
    if (grid.size() + 1 == axes) {
      grid.push_back(rest);
      out.push_back(grid);
      grid.pop_back();
      return;
    }
    for (std::int64_t d : divisors) {
      if (d > rest) break;
      if (rest % d != 0) continue;
      grid.push_back(d);
      self(self, rest / d);
      grid.pop_back();
    }
  };
  extend(extend, procs);
  return out;
}

std::pair<std::int64_t, std::int64_t> square_grid(std::int64_t procs, std::int64_t max_i, std::int64_t max_j) {
  const auto grids = factorizations(procs, max_i, max_j);
  if (grids.empty())
    throw QueryError("procs = " + std::to_string(procs) + " has no grid with at most " + std::to_string(max_i) + " x " +
                     std::to_string(max_j) + " processes along its axes; expected at most " +
                     std::to_string(max_i * max_j) + " processors");
  auto best = grids.front();
  for (const auto& g : grids) {
    const std::int64_t d = std::llabs(g.first - g.second), bd = std::llabs(best.first - best.second);
    if (d < bd || (d == bd && g.first <= g.second && best.first > best.second)) best = g;
  }
  return best;
}

}  // namespace poems::recommender
