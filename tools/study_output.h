// The table of a study run (`poems run`): rows of bindings, one cell per
// compared paradigm, derived speedup and paradigm difference; printed as
// text, CSV or JSON and drawn with gnuplot.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/psl/ast.h"
#include "poems/psl/value.h"

namespace poems::cli {

using StudyBinding = std::vector<std::pair<std::string, psl::Value>>;

struct StudyCell {
  double time_ns = 0, compute_ns = 0, comm_ns = 0, sync_ns = 0;
  std::uint64_t events = 0;
  std::uint32_t processes = 0;
  bool reused = false;  // the knowledge base already held it
  double wall_seconds = 0;
  std::string error;     // the evaluation failed (or, when skipped, why it was not run)
  bool skipped = false;  // not evaluated by choice (a measurement that does not fit this machine)
  std::optional<double> speedup, efficiency;
  nlohmann::json extra = nlohmann::json::object();  // the evaluator's extra result fields
  bool ok() const { return error.empty(); }
};

struct StudyRow {
  StudyBinding binding;
  std::uint32_t processes = 0;
  std::map<std::string, StudyCell> cells;         // by paradigm
  std::optional<double> difference_pct;           // second paradigm vs the first
  std::map<std::string, double> differences_pct;  // every later paradigm vs the first
};

struct StudyTable {
  std::string study, model;
  std::vector<std::string> paradigms;    // compare order
  std::vector<std::string> targets;      // varied names
  std::set<std::string> process_params;  // parameters of the process set
  std::vector<StudyRow> rows;
  std::size_t failures = 0;  // skipped cells are not failures
};

// Speedup and efficiency relative to the row with the fewest processes among
// rows that agree on every varied name outside the process set; the
// difference between the first two paradigms.
void finish_table(StudyTable& table, const psl::StudyDecl& study);

nlohmann::json table_json(const StudyTable& table);
std::string table_csv(const StudyTable& table);
std::string table_text(const StudyTable& table, const psl::StudyDecl& study);
// Writes OUT.png or OUT.svg; returns an error message or "". gnuplot gets a
// data file and a script in a private directory and writes to its stdout:
// neither the path nor any study text can become a gnuplot command.
std::string plot_table(const StudyTable& table, const std::string& out);
// `text` as a gnuplot single-quoted string: ' doubled, control characters
// (newlines included) spelled \xNN, so it can never end the command.
std::string gnuplot_string(std::string_view text);
// `text` safe for a terminal: control characters spelled \n or \xNN.
std::string printable_text(std::string_view text);

// What `poems run` and `poems measure` print: finishes the table, writes it
// to stdout as `format` (json, csv, else text) and plots it to `plot` if
// given. Returns the exit code: evaluation failure if a plot could not be
// written or a cell failed.
int print_study_table(StudyTable& table, const psl::StudyDecl& study, const std::string& format,
                      const std::string& plot);

}  // namespace poems::cli
