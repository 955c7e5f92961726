// The recommender's question (docs/recommender.md): a Sweep3D problem on a
// machine, the candidates (mk, mmi) — and processor grids — to rank, and how
// their evaluations are keyed in the knowledge base (exactly as `poems
// analyze` and `poems simulate` key theirs, so each command finds the others'
// results).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/components/sweep3d_model.h"
#include "poems/db/run_key.h"
#include "poems/taskgraph/stg.h"

namespace poems::recommender {

// A bad question: the message names the parameter and its allowed range.
class QueryError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// One point of the design space: blocking factors and processor grid.
struct Candidate {
  std::int64_t mk = 0, mmi = 0, npe_i = 0, npe_j = 0;
  auto operator<=>(const Candidate&) const = default;
};

// A Sweep3D problem on a machine, and what keys its runs.
struct Problem {
  // Every model parameter of the specification by name (it_g, jt_g, kt, npe_i,
  // npe_j, mk, mmi, mm, iterations, ...); a candidate's values replace mk,
  // mmi, npe_i and npe_j.
  nlohmann::json parameters = nlohmann::json::object();
  components::Sweep3DMachine machine;
  std::string machine_name;  // for reports, e.g. "Odin"
  std::string model = "Sweep3D";
  std::string spec_hash, tool_version;
  // The model's task graph, for --confirm (simulation); may be null otherwise.
  std::shared_ptr<const taskgraph::StaticTaskGraph> graph;

  // The closed form's configuration at `c` (mk, mmi, npe from the candidate).
  components::Sweep3DConfig config(const Candidate& c) const;
  // The problem's own values of the candidate parameters.
  Candidate defaults() const;
};

// Checks every problem parameter the candidates do not vary (it_g, jt_g, kt,
// mm, iterations) and the machine; throws QueryError naming the first bad one.
void validate(const Problem& problem);

// Which candidates to rank.
struct CandidateSpace {
  std::int64_t procs = 0;  // processors
  // false: the one grid npe_i x npe_j (both given) or, when they are 0, the
  // most square factorization of procs; true: every usable factorization.
  bool all_grids = false;
  std::int64_t npe_i = 0, npe_j = 0;
  // Fixed by the user; otherwise mk runs over 1..kt and mmi over the divisors of mm.
  std::optional<std::int64_t> mk, mmi;
};

// Processor grids npe_i x npe_j == procs that leave every process at least
// one cell column (npe_i <= it_g, npe_j <= jt_g), npe_i ascending.
std::vector<std::pair<std::int64_t, std::int64_t>> factorizations(std::int64_t procs, std::int64_t it_g,
                                                                  std::int64_t jt_g);
// The usable factorization with npe_i and npe_j closest (npe_i <= npe_j on a
// tie); throws QueryError when there is none.
std::pair<std::int64_t, std::int64_t> square_grid(std::int64_t procs, std::int64_t it_g, std::int64_t jt_g);

// The grids of `space`, each with the same (mk, mmi) list. Throws QueryError
// for a bad procs, grid, mk or mmi, or more than kMaxCandidates candidates.
struct CandidateSet {
  std::vector<std::pair<std::int64_t, std::int64_t>> grids;
  std::vector<std::int64_t> mk;   // ascending
  std::vector<std::int64_t> mmi;  // ascending
  std::size_t size() const { return grids.size() * mk.size() * mmi.size(); }
  // Candidate number i: grid-major, then mk, then mmi.
  Candidate at(std::size_t i) const;
};
constexpr std::size_t kMaxCandidates = 4'000'000;
CandidateSet candidates(const Problem& problem, const CandidateSpace& space);

// --- run keys (docs/knowledge-base.md) ---------------------------------
// The machine as `poems analyze` stores it in a binding.
nlohmann::json machine_json(const components::Sweep3DMachine& machine);
// `poems analyze SPEC --set ...` of the candidate: analytic[LogGP], closed form.
db::RunKey analytic_key(const Problem& problem, const Candidate& c);
// `poems simulate SPEC --set ...` of the candidate: simulation[MPI-Sim], one CPU and NIC.
db::RunKey simulation_key(const Problem& problem, const Candidate& c);
// The study that names the candidate runs of one grid: everything of the
// problem but mk and mmi. Name and spec hash, as the studies table keys it.
std::string grid_study_name(const Problem& problem, std::int64_t npe_i, std::int64_t npe_j);

}  // namespace poems::recommender
