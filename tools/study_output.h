// The table of a study run (`poems run`): rows of bindings, one cell per
// compared paradigm, derived speedup and paradigm difference (filled by the
// core); printed as text, CSV or JSON and drawn with gnuplot.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/core/study.h"
#include "poems/psl/ast.h"

namespace poems::cli {

using core::StudyBinding;
using core::StudyCell;
using core::StudyRow;
using core::StudyTable;

// A bound value as the table, the CSV and the plot's labels show it (a plain
// number with 12 significant digits, else its PSL text).
std::string value_text(const psl::Value& v);
nlohmann::json table_json(const StudyTable& table);
std::string table_csv(const StudyTable& table);
std::string table_text(const StudyTable& table, const psl::StudyDecl& study);
// The notes under a text table with disagreeing rows: per later paradigm,
// how many rows differ from the first by more than the table's threshold and
// the known cause ("" when no row disagrees).
std::string disagreement_notes(const StudyTable& table);
// What --plot draws: the file (OUT.png or OUT.svg), the x axis (--plot-x: a
// varied name or "processes"; "" = the default) and the --set values as
// typed, for the title.
struct PlotRequest {
  std::string file, x;
  std::vector<std::string> sets;
};
// The x axis the process count is called by --plot-x.
inline constexpr const char* kPlotProcesses = "processes";
// Throws UsageError("--plot-x") unless `x` is "", "processes" or one of the
// varied names `targets`; the message names the allowed choices.
void check_plot_x(const std::string& x, const std::vector<std::string>& targets);
// One panel of a drawn plot: the axes gnuplot drew, the study's points in
// it, and its plot area in terminal units (y up from the bottom).
struct PlotPanel {
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;
  double data_x_min = 0, data_x_max = 0, data_y_min = 0, data_y_max = 0;
  double term_x_min = 0, term_x_max = 0, term_y_min = 0, term_y_max = 0, term_x_size = 0, term_y_size = 0;
};
struct PlotResult {
  std::string error;  // "" when the picture was written
  std::vector<PlotPanel> panels;
  double key_bottom = 0;  // the legend's band: from this height (screen fraction) to the top
};
// plot_table, with what gnuplot reports of each panel (tools/study_plot.cpp).
PlotResult draw_plot(const StudyTable& table, const PlotRequest& plot);
// Writes OUT.png or OUT.svg; returns an error message or "". gnuplot gets a
// data file and a script in a private directory and writes to its stdout:
// neither the path nor any study text can become a gnuplot command. The x
// axis is the process count where it varies (default), else a categorical
// axis of the bindings; a numeric varied name given as `x` is drawn against
// its values. Speedup (with the ideal line) is drawn only against processes.
// The legend has a band of its own above the panels; several groups of
// bindings (up to 6) get a row of panels each; the axes fit every point.
std::string plot_table(const StudyTable& table, const PlotRequest& plot);
// `text` as a gnuplot single-quoted string: ' doubled, control characters
// (newlines included) spelled \xNN, so it can never end the command.
std::string gnuplot_string(std::string_view text);

// What `poems run` and `poems measure` print: finishes the table, writes it
// to `out` as `format` (json, csv, else text) and plots it if `plot.file`
// is given. Returns the exit code: evaluation failure if a plot could not be
// written, a cell failed or a result could not be stored.
int print_study_table(StudyTable& table, const psl::StudyDecl& study, const std::string& format,
                      const PlotRequest& plot, std::ostream& out, std::ostream& err);

}  // namespace poems::cli
