// `--plot`: a study's table drawn with gnuplot (docs/psl.md, "Plots").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "poems/core/study.h"

namespace poems::report {

// What a plot draws: the file (OUT.png or OUT.svg), the x axis (a varied
// name or "processes"; "" = the default) and the --set values as typed, for
// the title.
struct PlotRequest {
  std::string file, x;
  std::vector<std::string> sets;
};
// The x axis the process count is called by.
inline constexpr const char* kPlotProcesses = "processes";
// Throws core::UsageError("--plot-x") unless `x` is "", "processes" or one
// of the varied names `targets`; the message names the allowed choices.
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
// plot_table, with what gnuplot reports of each panel.
PlotResult draw_plot(const core::StudyTable& table, const PlotRequest& plot);
// Writes OUT.png or OUT.svg; returns an error message or "". gnuplot gets a
// data file and a script in a private directory and writes to its stdout:
// neither the path nor any study text can become a gnuplot command. The x
// axis is the process count where it varies (default), else a categorical
// axis of the bindings; a numeric varied name given as `x` is drawn against
// its values. Speedup (with the ideal line) is drawn only against processes.
// The legend has a band of its own above the panels; several groups of
// bindings (up to 6) get a row of panels each; the axes fit every point.
std::string plot_table(const core::StudyTable& table, const PlotRequest& plot);
// `text` as a gnuplot single-quoted string: ' doubled, control characters
// (newlines included) spelled \xNN, so it can never end the command.
std::string gnuplot_string(std::string_view text);

}  // namespace poems::report
