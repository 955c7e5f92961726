// The recommender's question (docs/recommender.md): which values of some of
// a model's parameters minimise its time on a machine. A Problem is the
// model, the machine and the question's own binding, built from the
// evaluation core (problem_of), so its runs are keyed exactly as `poems
// analyze` and `poems simulate` key theirs and each finds the others'. The
// candidates are a product of dimensions: parameters chosen together (a
// processor grid npe_i x npe_j) and their candidate values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/components/closed_forms.h"
#include "poems/core/evaluators.h"
#include "poems/core/session.h"
#include "poems/db/run_key.h"
#include "poems/taskgraph/stg.h"

namespace poems::recommender {

inline constexpr const char* kAnalyticParadigm = "analytic[LogGP]";
inline constexpr const char* kSimulationParadigm = "simulation[MPI-Sim]";

// A bad question: the message names the parameter and its allowed range.
class QueryError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A binding by name: the model's parameter names and their values.
struct Binding {
  const std::vector<std::string>* names = nullptr;
  std::span<const double> values;
  // The value of `name`; throws QueryError when the model has no such parameter.
  double operator()(const std::string& name) const;
};

struct Problem {
  std::string model, spec_hash, tool_version;
  std::vector<std::string> parameters;  // the model's parameters, in order
  std::vector<double> values;           // their values in the question's own binding
  components::ClosedFormMachine machine;
  std::string machine_name;  // for reports, e.g. "Odin"
  std::string method;        // analytic[LogGP]'s method: closed-form, or critical-path without a closed form
  // The runs of the question's own binding, keyed as `poems analyze` and
  // `poems simulate` key them; a candidate's key is this with its values.
  db::RunKey analytic_key, simulation_key;
  // What the core evaluates for them (the graph, rates, machine).
  core::Evaluation analytic, simulation;
  std::string simulation_error;  // why the model cannot be simulated ("" = it can)
  std::shared_ptr<const taskgraph::StaticTaskGraph> graph;

  std::size_t index(const std::string& name) const;  // throws QueryError
  double value(const std::string& name) const { return values[index(name)]; }
  Binding binding() const { return {&parameters, values}; }
};

// The problem of a session's system: its model, its machine and rates, the
// --set binding; with `simulation`, also its simulation (for --confirm).
// Throws what core::Session::prepare throws, and QueryError when the binding
// cannot be evaluated.
Problem problem_of(core::Session& session, bool simulation = true);

// Parameters chosen together and their candidate values (tuples).
struct Dimension {
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;
};

// Every combination of the dimensions' values, the first dimension outermost.
class CandidateSet {
 public:
  CandidateSet() = default;
  explicit CandidateSet(std::vector<Dimension> dimensions);
  const std::vector<Dimension>& dimensions() const { return dimensions_; }
  const std::vector<std::string>& names() const { return names_; }  // every dimension's names, in order
  std::size_t size() const { return size_; }
  // Candidate i's values in names() order.
  std::vector<double> at(std::size_t i) const;
  void at(std::size_t i, std::vector<double>& values) const;
  // The candidate with these values (names() order), or npos.
  std::size_t index_of(std::span<const double> values) const;
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

 private:
  std::vector<Dimension> dimensions_;
  std::vector<std::string> names_;
  std::vector<std::size_t> strides_;
  std::size_t size_ = 0;
  // Value -> position, for the dimensions of one parameter (index_of).
  std::vector<std::unordered_map<double, std::size_t>> positions_;
};
inline constexpr std::size_t kMaxCandidates = 4'000'000;

// The values of `names` patched into the problem's binding.
void apply(const Problem& problem, const std::vector<std::string>& names, std::span<const double> candidate,
           std::vector<double>& values);
// The candidate's analytic (and simulation) run key.
db::RunKey analytic_key(const Problem& problem, const std::vector<std::string>& names, std::span<const double> c);
db::RunKey simulation_key(const Problem& problem, const std::vector<std::string>& names, std::span<const double> c);

// Processor grids npe_i x npe_j == procs with npe_i <= max_i and npe_j <=
// max_j, npe_i ascending; the most square of them (npe_i <= npe_j on a tie).
std::vector<std::pair<std::int64_t, std::int64_t>> factorizations(std::int64_t procs, std::int64_t max_i,
                                                                  std::int64_t max_j);
std::pair<std::int64_t, std::int64_t> square_grid(std::int64_t procs, std::int64_t max_i, std::int64_t max_j);
// Every way to write procs as an ordered product of `axes` factors,
// lexicographically ascending (12 over two axes: 1x12, 2x6, 3x4, 4x3, 6x2, 12x1).
std::vector<std::vector<std::int64_t>> grid_factorizations(std::int64_t procs, std::size_t axes);

}  // namespace poems::recommender
