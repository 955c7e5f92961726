// The table of a study run (`poems run`, `poems measure`): rows of bindings,
// one cell per compared paradigm, derived speedup and paradigm difference
// (filled by the core, core/study.h); rendered as text, CSV or JSON.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "poems/core/study.h"
#include "poems/psl/ast.h"
#include "poems/report/study_plot.h"

namespace poems::report {

using core::StudyBinding;
using core::StudyCell;
using core::StudyRow;
using core::StudyTable;

// A bound value as the table, the CSV and the plot's labels show it (a plain
// number with 12 significant digits, else its PSL text).
std::string value_text(const psl::Value& v);
nlohmann::json table_json(const StudyTable& table);
std::string table_csv(const StudyTable& table);
// The text table; `study` gives the metrics its `report` clause names.
std::string table_text(const StudyTable& table, const psl::StudyDecl& study);
// The notes under a text table with disagreeing rows: per later paradigm,
// how many rows differ from the first by more than the table's threshold and
// the known cause ("" when no row disagrees).
std::string disagreement_notes(const StudyTable& table);

// Finishes the table (core::finish_study_table), writes it to `out` as
// `format` (json, csv, else text) and plots it if `plot.file` is given,
// saying on `err` where the plot went or why it could not be drawn. False
// when something failed: the plot, a cell, or the storing of a result.
bool write_study_table(StudyTable& table, const psl::StudyDecl& study, const std::string& format,
                       const PlotRequest& plot, std::ostream& out, std::ostream& err);

// "[3/12] mk=5 analytic[LogGP]: evaluated" on `err` as a study's cell is done
// (with the error of a result that could not be stored).
void write_study_progress(const core::StudyProgress& progress, std::ostream& err);

// `poems measure --format json` of one binding without a study: the cell of
// `measured_paradigm` in the finished table's first row, and the
// predictions of `paradigms` after the first (the measured one).
nlohmann::json measured_binding_json(const StudyTable& table, const std::string& measured_paradigm,
                                     const std::vector<std::string>& paradigms);

}  // namespace poems::report
