// Studies: every binding of a study's `vary` clauses evaluated by every
// compared paradigm through a Session (so each evaluation is stored, and a
// re-run evaluates only what is missing), gathered into a StudyTable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/base/value.h"
#include "poems/core/difference.h"
#include "poems/core/session.h"
#include "poems/psl/ast.h"

namespace poems::core {

// One binding of a study: the varied names and their values, in vary order.
using StudyBinding = std::vector<std::pair<std::string, base::Value>>;

struct StudyCell {
  double time_ns = 0, compute_ns = 0, comm_ns = 0, sync_ns = 0;
  std::uint64_t events = 0;
  std::uint32_t processes = 0;
  bool reused = false;  // the knowledge base already held it
  double wall_seconds = 0;
  std::string error;        // the evaluation failed (or, when skipped, why it was not run)
  bool skipped = false;     // not evaluated by choice (a measurement that does not fit this machine)
  std::string store_error;  // evaluated, but not stored
  std::string method;       // the evaluator's method (Outcome::method: analytic[LogGP]'s closed-form or critical-path)
  // Filled by finish_study_table.
  std::optional<double> speedup, efficiency;
  nlohmann::json extra = nlohmann::json::object();  // the evaluator's extra result fields
  bool ok() const { return error.empty(); }
};

// A binding's cells; its differences (core::difference_pct of each later
// paradigm's time against the first's) and disagreements are
// finish_study_table's.
struct StudyRow {
  StudyBinding binding;
  std::uint32_t processes = 0;
  std::map<std::string, StudyCell> cells;         // by paradigm
  std::optional<double> difference_pct;           // second paradigm vs the first
  std::map<std::string, double> differences_pct;  // every later paradigm vs the first
  // The later paradigms whose difference exceeds the table's threshold, each
  // with its known cause ("" = none known; core::disagreement_cause).
  std::map<std::string, std::string> disagreements;
  bool disagrees() const { return !disagreements.empty(); }
};

struct StudyTable {
  std::string study, model;
  std::vector<std::string> paradigms;    // compare order
  std::vector<std::string> targets;      // varied names
  std::set<std::string> process_params;  // parameters of the process set
  std::vector<StudyRow> rows;
  std::size_t failures = 0;        // skipped cells are not failures
  std::size_t store_failures = 0;  // cells evaluated but not stored
  // A row disagrees where a later paradigm differs from the first by more
  // than this (percent; --disagree).
  double disagree_pct = kDisagreePct;
  bool nonblocking = false;  // the model has isend/irecv (a known cause of disagreement)
  std::size_t disagreeing_rows() const;
};

struct StudyPlan {
  std::string study;                   // name the runs are linked to; "" = none (a command-line binding)
  std::vector<std::string> paradigms;  // compare order
  std::vector<StudyBinding> bindings;
  std::vector<std::string> targets;  // varied names, for the table
};

// A study beyond this many bindings is a typo (a range without a step).
inline constexpr std::size_t kMaxBindings = 1'000'000;

// The bindings of a study's vary clauses: the cartesian product, first
// clause outermost, less those where a `where` constraint is false (names
// not varied are read from the study's settings, then `fixed`). Throws
// InputError beyond kMaxBindings bindings, for a value that is not a
// constant, or when the constraints keep no binding.
std::vector<StudyBinding> expand_study(const psl::StudyDecl& study,
                                       const std::map<std::string, base::Value>& fixed = {});
// What a study's constraints read for names it does not vary: the model's
// parameter defaults and the command line's --set values.
std::map<std::string, base::Value> fixed_values(const System& system);
// The values of one vary clause: one tuple per entry (a range's values one by one).
std::vector<std::vector<base::Value>> vary_values(const psl::VaryClause& clause);
std::string binding_text(const StudyBinding& binding);

// The plan of the system's study: its bindings by `paradigms` (default: its
// compare entries, each resolved as --paradigm names are).
StudyPlan plan_study(const System& system, const std::vector<std::string>& paradigms = {});

struct StudyProgress {
  std::size_t done = 0, total = 0;
  const StudyBinding* binding = nullptr;
  const Cell* cell = nullptr;
};

// Evaluates every binding of the plan with every paradigm; `progress` is
// told of each cell. Throws what Session::evaluate throws (the request is
// wrong as a whole); failed cells are counted in StudyTable::failures.
StudyTable run_study(Session& session, const StudyPlan& plan,
                     const std::function<void(const StudyProgress&)>& progress = {});

// The empty table of a plan, and one evaluated cell added to a row of it
// (the failure counts): what run_study builds a table with.
StudyTable study_table(Session& session, const StudyPlan& plan);
void add_cell(StudyTable& table, StudyRow& row, const std::string& paradigm, const Cell& cell);

// The derived columns of a table whose cells are all in: each paradigm's
// speedup and efficiency relative to the row with the fewest processes
// among the rows of its group (study_group), every later paradigm's
// difference from the first (core::difference_pct, the first as the
// reference) and the disagreements beyond disagree_pct. Call it once, after the last cell: with two
// or more paradigms, a row missing a paradigm's cell gets an empty one.
void finish_study_table(StudyTable& table);
// The group of a row: the rows that agree on every varied name outside the
// process set ("name=value;" for each, in binding order).
std::string study_group(const StudyTable& table, const StudyRow& row);

// The request of one binding: model parameters, Component.param overrides
// and study attributes sorted by name.
CellRequest cell_request(const System& system, const StudyBinding& binding);

// `poems measure`: measurement[mpirun] first, then `paradigms` (default:
// the study's other compare entries; "none": no prediction). With a study,
// its bindings that fit this machine (`dropped` counts the others, one of
// them with its reason in `example`); without, the one binding of --set.
struct MeasurementPlan {
  StudyPlan plan;
  std::size_t dropped = 0;
  std::string example;
};
MeasurementPlan measurement_plan(Session& session, const std::vector<std::string>& paradigms);

// The cell of one paradigm in a row of a table, from a Session's cell.
StudyCell study_cell(const Cell& cell);

}  // namespace poems::core
