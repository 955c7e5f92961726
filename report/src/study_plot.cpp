// `--plot`: a study's table drawn with gnuplot, laid out so that a person
// reads it at a glance (docs/psl.md, "Plots"): the legend in a band of its
// own above the panels, one row of panels per group of bindings (a deck:
// what the study varies besides the process layout) when there are several,
// axes that fit every point of the study, the ideal speedup dashed.
#include "poems/report/study_plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "poems/base/child_process.h"
#include "poems/base/escaped.h"
#include "poems/base/temporary_directory.h"
#include "poems/core/error.h"
#include "poems/report/study_table.h"

namespace poems::report {

std::string gnuplot_string(std::string_view text) {
  // Inside single quotes gnuplot substitutes nothing (no backquote commands,
  // no @macros, no backslash escapes) and '' is a quote; a newline would end
  // the command, so control characters are spelled out as \xNN text.
  std::string out = "'";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\'') {
      out += "''";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "'";
}

void check_plot_x(const std::string& x, const std::vector<std::string>& targets) {
  if (x.empty() || x == kPlotProcesses || std::find(targets.begin(), targets.end(), x) != targets.end()) return;
  std::string choices;
  for (const std::string& n : targets) choices += n + ", ";
  throw core::UsageError(
      "--plot-x", "'" + base::escaped(x) + "' is not varied by the study; choose one of " + choices + kPlotProcesses);
}

namespace {

std::string plot_number(double v, int digits = 12) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

const psl::Value* bound_value(const StudyRow& r, const std::string& name) {
  for (const auto& [k, v] : r.binding)
    if (k == name) return &v;
  return nullptr;
}

// One curve: a paradigm's points in one group, (x, time s, speedup, ideal).
struct Curve {
  std::string title;
  std::size_t paradigm = 0;  // its colour and point type, the same in every row
  std::vector<std::array<double, 4>> points;
};

// A row of panels: the curves of one group of bindings.
struct Row {
  std::string label;  // the group's values ("" when there is one group)
  std::vector<Curve> curves;
};

enum class Axis { Processes, Parameter, Bindings };

// [lo, hi] widened so that every value is inside with a margin: by a factor
// on a log axis, by a share of the span on a linear one.
std::pair<double, double> fit(double lo, double hi, bool log) {
  if (log) {
    lo = std::max(lo, std::numeric_limits<double>::min());
    if (hi <= lo) return {lo / 2, hi * 2};
    return {lo / 1.3, hi * 1.3};
  }
  const double span = hi - lo;
  if (span <= 0) return {lo - std::max(1.0, std::abs(lo) * 0.1), hi + std::max(1.0, std::abs(hi) * 0.1)};
  return {lo - 0.06 * span, hi + 0.06 * span};
}

// The panels gnuplot reported ("panel" lines of its stderr).
std::vector<PlotPanel> reported_panels(const std::string& text) {
  std::vector<PlotPanel> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("panel ", 0) != 0) continue;
    PlotPanel p;
    std::istringstream fields(line.substr(6));
    fields >> p.x_min >> p.x_max >> p.y_min >> p.y_max >> p.term_x_min >> p.term_x_max >> p.term_y_min >>
        p.term_y_max >> p.term_x_size >> p.term_y_size;
    if (fields) out.push_back(p);
  }
  return out;
}

// Runs gnuplot on the script `plot.gp` in `dir`, the picture to `picture`;
// returns an error message or "", and what gnuplot printed on stderr.
std::string run_gnuplot(const std::filesystem::path& dir, const std::filesystem::path& picture, std::string& printed) {
  base::ChildOptions o;
  o.argv = {"gnuplot", "plot.gp"};
  o.working_directory = dir.string();
  o.out = base::ChildStream::file(picture.string());
  o.err = base::ChildStream::capture(1 << 20);
  o.timeout_seconds = 120;
  const base::ChildResult r = base::run_child(o);
  printed = r.err;
  if (!r.started)
    return "cannot start gnuplot (" + base::escaped(r.error) + "; install it: apt-get install gnuplot-nox)";
  if (r.ok()) return "";
  if (r.exit_code == 127) return "gnuplot is not installed (apt-get install gnuplot-nox)";
  std::istringstream in(r.err);
  std::string first, line;
  for (int n = 0; n < 4 && std::getline(in, line);)
    if (line.rfind("panel ", 0) != 0) first += (n++ ? " | " : "") + line;
  if (r.timed_out) return "gnuplot did not finish within 120 s";
  return "gnuplot failed" + (first.empty() ? std::string() : ": " + base::escaped(first.substr(0, 400)));
}

}  // namespace

PlotResult draw_plot(const StudyTable& t, const PlotRequest& plot) {
  PlotResult result;
  const std::string& path = plot.file;
  check_plot_x(plot.x, t.targets);
  const bool svg = path.size() > 4 && path.substr(path.size() - 4) == ".svg";
  std::set<std::uint32_t> process_counts;
  for (const StudyRow& r : t.rows) process_counts.insert(r.processes);
  // The x axis: the process count where it varies (speedup only makes sense
  // against it), a numeric varied name, else the bindings one by one.
  Axis axis = Axis::Bindings;
  if (plot.x == kPlotProcesses || plot.x.empty()) {
    if (process_counts.size() > 1) axis = Axis::Processes;
  } else {
    std::set<double> values;
    bool numeric = true;
    for (const StudyRow& r : t.rows) {
      const psl::Value* v = bound_value(r, plot.x);
      numeric = numeric && v && v->kind == psl::Value::Kind::Number;
      if (numeric) values.insert(v->number);
    }
    if (numeric && values.size() > 1) axis = Axis::Parameter;
  }
  std::vector<std::string> labels;  // the bindings axis: one per row, in order
  for (const StudyRow& r : t.rows) {
    std::string label;
    for (const std::string& n : t.targets)
      if (const psl::Value* v = bound_value(r, n)) label += (label.empty() ? "" : ", ") + n + "=" + value_text(*v);
    labels.push_back(label.empty() ? "P=" + std::to_string(r.processes) : label);
  }
  // Groups: against processes, the bindings that differ only in the process
  // layout (core::study_group); against a parameter, those that differ only
  // in it; the bindings axis is one group.
  std::vector<Row> rows;
  std::map<std::string, std::size_t> row_of;
  for (std::size_t paradigm = 0; paradigm < t.paradigms.size(); ++paradigm) {
    const std::string& p = t.paradigms[paradigm];
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const StudyRow& r = t.rows[i];
      auto c = r.cells.find(p);
      if (c == r.cells.end() || !c->second.ok() || !r.processes) continue;
      std::string key, label;
      double x = static_cast<double>(i);
      if (axis == Axis::Processes) {
        key = core::study_group(t, r);
        x = static_cast<double>(r.processes);
      } else if (axis == Axis::Parameter) {
        for (const auto& [k, v] : r.binding)
          if (k != plot.x) key += k + "=" + v.str() + ";";
        x = bound_value(r, plot.x)->number;
      }
      for (std::size_t at = 0; (at = key.find(';', at)) != std::string::npos;) key.replace(at, 1, ", ");
      if (key.size() >= 2) key.resize(key.size() - 2);
      auto [it, fresh] = row_of.emplace(key, rows.size());
      if (fresh) rows.push_back({key, {}});
      std::vector<Curve>& curves = rows[it->second].curves;
      auto curve = std::find_if(curves.begin(), curves.end(), [&](const Curve& k) { return k.paradigm == paradigm; });
      if (curve == curves.end()) curve = curves.insert(curves.end(), Curve{p, paradigm, {}});
      curve->points.push_back({x, c->second.time_ns / 1e9, c->second.speedup.value_or(0), 0});
    }
  }
  if (rows.empty()) {
    result.error = "nothing to plot: no evaluation succeeded";
    return result;
  }
  // Many groups: one panel whose curves are named by paradigm and group,
  // rather than rows too small to read.
  constexpr std::size_t kMaxRows = 6;
  if (rows.size() > kMaxRows) {
    Row all{"", {}};
    for (Row& r : rows)
      for (Curve& c : r.curves) {
        c.title += " " + r.label;
        all.curves.push_back(std::move(c));
      }
    rows = {std::move(all)};
  }
  const bool speedup = axis == Axis::Processes;
  for (Row& r : rows)
    for (Curve& c : r.curves) {
      std::sort(c.points.begin(), c.points.end());
      // Ideal speedup against the curve's fewest processes (core::finish_study_table's base).
      for (auto& point : c.points) point[3] = point[0] / c.points.front()[0];
    }

  // gnuplot reads numbers from a data file and a script whose only variable
  // parts are strings quoted by gnuplot_string(); it writes the picture to
  // its stdout, which goes to a file in a private directory: the output path
  // never reaches gnuplot, and no text of the study is ever a command.
  const base::TemporaryDirectory scratch("poems-plot-");
  if (!scratch.created()) {
    result.error = "cannot create a temporary directory for gnuplot: " + scratch.error();
    return result;
  }
  const std::filesystem::path& dir = scratch.path();
  std::ofstream data(dir / "curves.dat", std::ios::binary);
  std::size_t index = 0;
  std::vector<std::vector<std::size_t>> indices(rows.size());  // data file index of each curve
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (const Curve& c : rows[r].curves) {
      for (const auto& point : c.points)
        data << plot_number(point[0]) << ' ' << plot_number(point[1]) << ' ' << plot_number(point[2]) << ' '
             << plot_number(point[3]) << '\n';
      data << "\n\n";  // the next index
      indices[r].push_back(index++);
    }
  data.close();
  if (!data) {
    result.error = "cannot write the plot's data in " + dir.string();
    return result;
  }

  // The layout, in pixels: the title and the legend in a band at the top,
  // then one row per group; every panel's plot area is fixed (margins "at
  // screen"), so tick labels, axis labels and the legend never cover data.
  std::size_t entries = 0;
  for (const Row& r : rows) entries = std::max(entries, r.curves.size());
  const bool long_titles = rows.size() == 1 && rows.front().curves.size() > t.paradigms.size();
  const int columns = long_titles ? 2 : 4;
  const int key_lines = static_cast<int>((entries + (speedup ? 1 : 0) + columns - 1) / columns);
  const double width = 1100, title_px = 40, key_px = 20.0 * key_lines + 12;
  const double row_title_px = rows.size() > 1 ? 34 : 10, bottom_px = axis == Axis::Bindings ? 110 : 56;
  const double panel_px = 230, row_px = row_title_px + panel_px + bottom_px;
  const double height = title_px + key_px + row_px * static_cast<double>(rows.size()) + 8;
  const int panels = speedup ? 2 : 1;
  const double left_px = 84, right_px = 24, gap_px = 96;
  const double panel_w = (width - left_px - right_px - gap_px * (panels - 1)) / panels;
  result.key_bottom = 1 - (title_px + key_px) / height;

  std::string title = "POEMS study " + t.study + ", model " + t.model;
  if (!plot.sets.empty()) {
    title += " (--set ";
    for (std::size_t i = 0; i < plot.sets.size(); ++i) title += (i ? ", " : "") + plot.sets[i];
    title += ")";
  }
  std::ostringstream script;
  script << (svg ? "set terminal svg size " : "set terminal pngcairo size ") << plot_number(width) << ','
         << plot_number(height) << (svg ? " dynamic\n" : "\n");
  script << "set multiplot\n";
  script << "set label 1000 " << gnuplot_string(title) << " at screen 0.5, screen " << plot_number(1 - 22 / height, 6)
         << " center noenhanced font ',13'\n";
  script << "set grid\nset mxtics default\n";
  // The legend: in the band below the title, in columns, drawn once.
  script << "set key at screen " << plot_number(left_px / width, 6) << ", screen "
         << plot_number(1 - title_px / height, 6) << " left top horizontal maxcols " << columns
         << " width 2 font ',9' noenhanced samplen 3\n";
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  for (const Row& r : rows)
    for (const Curve& c : r.curves)
      for (const auto& point : c.points) x_lo = std::min(x_lo, point[0]), x_hi = std::max(x_hi, point[0]);
  std::pair<double, double> xr = fit(x_lo, x_hi, axis == Axis::Processes);
  if (axis == Axis::Processes) {
    script << "set logscale x\nset xlabel 'processes' offset 0,0.5\n";
    // A tick at every process count when there are few (a log axis under a
    // decade has no labels of its own).
    if (process_counts.size() <= 16) {
      script << "set xtics (";
      bool first = true;
      for (std::uint32_t p : process_counts)
        if (p) script << (first ? "" : ", ") << p, first = false;
      script << ")\n";
    }
  } else if (axis == Axis::Parameter) {
    script << "set xlabel " << gnuplot_string(plot.x) << " noenhanced offset 0,0.5\n";
  } else {
    xr = {-0.5, static_cast<double>(t.rows.size()) - 0.5};
    script << "set xlabel 'binding'\n";
    script << "set xtics noenhanced rotate by -20 font ',8' (";
    for (std::size_t i = 0; i < labels.size(); ++i) script << (i ? ", " : "") << gnuplot_string(labels[i]) << ' ' << i;
    script << ")\n";
  }
  script << "set xrange [" << plot_number(xr.first) << ':' << plot_number(xr.second) << "]\n";
  bool key_drawn = false;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double top_px = title_px + key_px + row_px * static_cast<double>(r) + row_title_px;
    const double bottom = 1 - (top_px + panel_px) / height, top = 1 - top_px / height;
    for (int panel = 0; panel < panels; ++panel) {
      const double l = left_px + (panel_w + gap_px) * panel;
      script << "set lmargin at screen " << plot_number(l / width, 6) << "\nset rmargin at screen "
             << plot_number((l + panel_w) / width, 6) << "\nset tmargin at screen " << plot_number(top, 6)
             << "\nset bmargin at screen " << plot_number(bottom, 6) << '\n';
      // Every point of the row inside the frame: the axes fitted to the data
      // (the ideal line may leave the frame; the points never do).
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (const Curve& c : rows[r].curves)
        for (const auto& point : c.points) {
          const double v = panel == 0 ? point[1] : point[2];
          lo = std::min(lo, v), hi = std::max(hi, v);
        }
      // Times on a log axis when they span more than a decade and a half
      // (under that, it would have no labels).
      const bool log_time = panel == 0 && lo > 0 && hi / lo > 20;
      const std::pair<double, double> yr =
          panel == 0 ? fit(lo, hi, log_time) : std::pair<double, double>{0, std::max(1.0, hi) * 1.1};
      PlotPanel p;
      p.data_x_min = x_lo, p.data_x_max = x_hi, p.data_y_min = lo, p.data_y_max = hi;
      result.panels.push_back(p);
      script << (log_time ? "set logscale y\n" : "unset logscale y\n")
             << (panel == 0 ? "set ylabel 'time (s)'\n" : "set ylabel 'speedup'\n");
      script << "set yrange [" << plot_number(yr.first) << ':' << plot_number(yr.second) << "]\n";
      script << "set title " << gnuplot_string(panel == 0 ? rows[r].label : "") << " noenhanced font ',10'\n";
      // The legend once: every paradigm of the study, in the first panel
      // (a paradigm without points there gets an empty entry).
      const bool with_key = !key_drawn;
      script << (with_key ? "set key\n" : "unset key\n");
      script << "plot ";
      std::set<std::size_t> shown;
      for (std::size_t i = 0; i < rows[r].curves.size(); ++i) {
        const Curve& c = rows[r].curves[i];
        const bool titled = with_key && shown.insert(c.paradigm).second;
        script << (i ? ", " : "") << "'curves.dat' index " << indices[r][i] << " using 1:" << (panel == 0 ? 2 : 3)
               << " with linespoints linecolor " << (long_titles ? i : c.paradigm) + 1 << " pointtype "
               << (long_titles ? i : c.paradigm) + 1 << ' '
               << (titled || long_titles ? "title " + gnuplot_string(c.title) + " noenhanced" : "notitle");
      }
      if (with_key && !long_titles)
        for (std::size_t p = 0; p < t.paradigms.size(); ++p)
          if (!shown.count(p))
            script << ", 1/0 with linespoints linecolor " << p + 1 << " pointtype " << p + 1 << " title "
                   << gnuplot_string(t.paradigms[p]) << " noenhanced";
      if (with_key && speedup) script << ", 1/0 with lines dashtype 2 linecolor 'black' title 'ideal'";
      if (panel == 1)
        for (std::size_t i = 0; i < rows[r].curves.size(); ++i)
          script << ", 'curves.dat' index " << indices[r][i]
                 << " using 1:4 with lines dashtype 2 linecolor 'black' notitle";
      script << "\n";
      key_drawn = key_drawn || with_key;
      // What the panel became, for the checks of tests/cli/plot_test.cpp.
      script << "print sprintf('panel %g %g %g %g %g %g %g %g %g %g', GPVAL_X_MIN, GPVAL_X_MAX, GPVAL_Y_MIN, "
                "GPVAL_Y_MAX, GPVAL_TERM_XMIN, GPVAL_TERM_XMAX, GPVAL_TERM_YMIN, GPVAL_TERM_YMAX, "
                "GPVAL_TERM_XSIZE, GPVAL_TERM_YSIZE)\n";
    }
  }
  script << "unset multiplot\n";
  {
    std::ofstream s(dir / "plot.gp", std::ios::binary);
    s << script.str();
    if (!s) {
      result.error = "cannot write the gnuplot script in " + dir.string();
      return result;
    }
  }
  const std::filesystem::path picture = dir / (svg ? "plot.svg" : "plot.png");
  std::string printed;
  if (std::string error = run_gnuplot(dir, picture, printed); !error.empty()) {
    result.error = error + " (drawing " + base::escaped(path) + ")";
    return result;
  }
  const std::vector<PlotPanel> drawn = reported_panels(printed);
  for (std::size_t i = 0; i < drawn.size() && i < result.panels.size(); ++i) {
    PlotPanel& p = result.panels[i];
    const PlotPanel& d = drawn[i];
    p.x_min = d.x_min, p.x_max = d.x_max, p.y_min = d.y_min, p.y_max = d.y_max;
    p.term_x_min = d.term_x_min, p.term_x_max = d.term_x_max, p.term_y_min = d.term_y_min;
    p.term_y_max = d.term_y_max, p.term_x_size = d.term_x_size, p.term_y_size = d.term_y_size;
  }
  // Copied by content, not copy_file(): that would give the picture the
  // private directory's 0600; a new file gets 0666 less the umask, an
  // existing one keeps its mode.
  std::ifstream in(picture, std::ios::binary);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  out.close();
  if (!in || !out) result.error = "cannot write '" + base::escaped(path) + "'";
  return result;
}

std::string plot_table(const StudyTable& t, const PlotRequest& plot) { return draw_plot(t, plot).error; }

}  // namespace poems::report
