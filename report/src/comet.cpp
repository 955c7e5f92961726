// `poems comet`'s tables and plots (docs/comet.md).
#include "poems/report/comet.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "poems/base/child_process.h"
#include "poems/base/csv.h"
#include "poems/base/escaped.h"
#include "poems/base/temporary_directory.h"
#include "poems/report/study_plot.h"
#include "poems/report/text_table.h"

namespace poems::report {

namespace {

std::string fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

std::string size_text(std::uint64_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

std::string ns_text(const std::optional<double>& ns) { return ns ? fixed(*ns, 1) : "-"; }
std::string pct_text(const std::optional<double>& pct) {
  return pct ? (*pct >= 0 ? "+" : "") + fixed(*pct, 1) + " %" : "-";
}

std::optional<double> measured_of(const core::CometPoint& p) {
  return p.measured ? std::optional<double>(p.measured->median_ns) : std::nullopt;
}
std::optional<double> direct_of(const core::CometPoint& p) {
  return p.direct ? std::optional<double>(p.direct->median_ns) : std::nullopt;
}
std::optional<double> simulated_of(const core::CometPoint& p) {
  return p.simulated ? std::optional<double>(p.simulated->median_ns) : std::nullopt;
}

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

void write_text(const core::CometReport& r, std::ostream& out) {
  out << "CoMet on " << r.procs << " ranks, " << r.reps << " repetitions (median ns per kernel and size)\n";
  out << "measured:  " << (r.measured ? r.host : std::string("no (--no-measure, or --machine is not this host)"))
      << '\n';
  if (r.measured && r.load_average >= 0) out << "load:      " << fixed(r.load_average, 2) << " (1-minute average)\n";
  out << "predicted: " << r.machine << '\n';
  for (const core::CometKernelResult& k : r.kernels) {
    out << "\n" << k.name;
    if (!k.closed_form.empty()) out << "  (closed form: " << k.closed_form << ")";
    out << '\n';
    if (!k.note.empty()) out << "  " << k.note << '\n';
    if (k.points.empty()) continue;
    TextTable t;
    std::vector<std::string> head = {"  size"};
    if (r.measured) head.insert(head.end(), {"measured", "min", "max"});
    head.push_back("direct");
    if (r.measured) head.push_back("error");
    head.push_back("simulation");
    if (r.measured) head.push_back("error");
    head.push_back("closed form");
    if (r.measured) head.push_back("error");
    t.push_back(head);
    for (const core::CometPoint& p : k.points) {
      std::vector<std::string> row = {"  " + size_text(p.bytes)};
      if (r.measured) {
        row.push_back(ns_text(measured_of(p)));
        row.push_back(p.measured ? fixed(p.measured->min_ns, 1) : "-");
        row.push_back(p.measured ? fixed(p.measured->max_ns, 1) : "-");
      }
      row.push_back(ns_text(direct_of(p)));
      if (r.measured) row.push_back(pct_text(comet_error_pct(direct_of(p), measured_of(p))));
      row.push_back(ns_text(simulated_of(p)));
      if (r.measured) row.push_back(pct_text(comet_error_pct(simulated_of(p), measured_of(p))));
      row.push_back(ns_text(p.closed_form_ns));
      if (r.measured) row.push_back(pct_text(comet_error_pct(p.closed_form_ns, measured_of(p))));
      t.push_back(row);
    }
    print_table(t, out);
  }
  for (const std::string& w : r.warnings) out << "warning: " << w << '\n';
}

void write_csv(const core::CometReport& r, std::ostream& out) {
  out << base::csv_row({"kernel", "bytes", "procs", "reps", "measured_median_ns", "measured_min_ns", "measured_max_ns",
                        "direct_median_ns", "direct_error_pct", "simulation_median_ns", "simulation_error_pct",
                        "closed_form_ns", "closed_form_error_pct"});
  auto cell = [](const std::optional<double>& v) { return v ? fixed(*v, 3) : std::string(); };
  for (const core::CometKernelResult& k : r.kernels)
    for (const core::CometPoint& p : k.points)
      out << base::csv_row({k.name, std::to_string(p.bytes), std::to_string(r.procs), std::to_string(r.reps),
                            cell(measured_of(p)),
                            cell(p.measured ? std::optional<double>(p.measured->min_ns) : std::nullopt),
                            cell(p.measured ? std::optional<double>(p.measured->max_ns) : std::nullopt),
                            cell(direct_of(p)), cell(comet_error_pct(direct_of(p), measured_of(p))),
                            cell(simulated_of(p)), cell(comet_error_pct(simulated_of(p), measured_of(p))),
                            cell(p.closed_form_ns), cell(comet_error_pct(p.closed_form_ns, measured_of(p)))});
}

void write_json(const core::CometReport& r, std::ostream& out) {
  nlohmann::json doc = {{"procs", r.procs},       {"reps", r.reps},
                        {"measured", r.measured}, {"machine", r.machine},
                        {"host", r.host},         {"load_average", r.load_average},
                        {"stored", r.stored},     {"already_stored", r.already_stored}};
  nlohmann::json kernels = nlohmann::json::array();
  for (const core::CometKernelResult& k : r.kernels) {
    nlohmann::json points = nlohmann::json::array();
    for (const core::CometPoint& p : k.points) {
      nlohmann::json j = {{"bytes", p.bytes}};
      if (p.measured)
        j["measured"] = {
            {"median_ns", p.measured->median_ns}, {"min_ns", p.measured->min_ns}, {"max_ns", p.measured->max_ns}};
      if (p.direct)
        j["direct"] = {{"median_ns", p.direct->median_ns},
                       {"min_ns", p.direct->min_ns},
                       {"max_ns", p.direct->max_ns},
                       {"error_pct", optional_json(comet_error_pct(direct_of(p), measured_of(p)))}};
      if (p.simulated)
        j["simulation"] = {{"median_ns", p.simulated->median_ns},
                           {"min_ns", p.simulated->min_ns},
                           {"max_ns", p.simulated->max_ns},
                           {"error_pct", optional_json(comet_error_pct(simulated_of(p), measured_of(p)))}};
      if (p.closed_form_ns)
        j["closed_form"] = {{"ns", *p.closed_form_ns},
                            {"error_pct", optional_json(comet_error_pct(p.closed_form_ns, measured_of(p)))}};
      points.push_back(j);
    }
    nlohmann::json kj = {{"kernel", k.name}, {"points", points}};
    if (!k.closed_form.empty()) kj["closed_form"] = k.closed_form;
    if (!k.note.empty()) kj["note"] = k.note;
    kernels.push_back(kj);
  }
  doc["measure_command"] = r.measure_command;  // one kernel's command lines
  doc["direct_command"] = r.direct_command;
  doc["kernels"] = kernels;
  doc["warnings"] = r.warnings;
  out << doc.dump(2) << '\n';
}

std::string number(const std::optional<double>& v) {
  if (!v) return "?";
  std::ostringstream s;
  s.precision(12);
  s << *v;
  return s.str();
}

// One kernel's picture; returns an error or "".
std::string plot_kernel(const core::CometReport& r, const core::CometKernelResult& k, const std::string& picture,
                        bool svg) {
  const base::TemporaryDirectory scratch("poems-comet-plot-");
  if (!scratch.created()) return "cannot create a temporary directory for gnuplot: " + scratch.error();
  const std::filesystem::path dir = scratch.path();
  std::ofstream data(dir / "comet.dat", std::ios::binary);
  bool any_measured = false, any_direct = false, any_simulated = false, any_closed = false;
  for (const core::CometPoint& p : k.points) {
    const double x = p.bytes == 0 ? 1.0 : static_cast<double>(p.bytes);  // 0 B is drawn at 1 B
    data << number(x) << ' ' << number(measured_of(p)) << ' '
         << number(p.measured ? std::optional<double>(p.measured->min_ns) : std::nullopt) << ' '
         << number(p.measured ? std::optional<double>(p.measured->max_ns) : std::nullopt) << ' ' << number(direct_of(p))
         << ' ' << number(p.closed_form_ns) << ' ' << number(simulated_of(p)) << '\n';
    any_measured |= p.measured.has_value(), any_direct |= p.direct.has_value();
    any_simulated |= p.simulated.has_value();
    any_closed |= p.closed_form_ns.has_value();
  }
  data.close();
  if (!data) return "cannot write the plot's data in " + dir.string();
  const std::string title = "CoMet " + k.name + ", " + std::to_string(r.procs) +
                            " ranks: measured and predicted (median of " + std::to_string(r.reps) + ")";
  std::ostringstream s;
  s << (svg ? "set terminal svg size 900,560 dynamic\n" : "set terminal pngcairo size 900,560\n");
  s << "set datafile missing '?'\n";
  // The title, then the legend in a band of its own, then the plot area
  // (fixed: no label or key entry ever covers a point).
  s << "set label 1000 " << gnuplot_string(title) << " at screen 0.5, screen 0.965 center noenhanced font ',12'\n";
  s << "set lmargin at screen 0.12\nset rmargin at screen 0.96\nset bmargin at screen 0.12\n"
       "set tmargin at screen 0.80\n";
  s << "set key at screen 0.12, screen 0.93 left top reverse Left horizontal maxcols 2 width 4 font ',10' "
       "noenhanced samplen 3\n";
  // Sizes are powers of two: ticks every factor 16, in binary units.
  s << "set grid\nset logscale x 2\nset logscale y\nset xtics 16\nset format x '%.0b %BB'\n";
  s << "set xlabel 'message size (0 B drawn at 1 B)' noenhanced\nset ylabel 'time (ns)' offset 1,0\n";
  std::vector<std::string> curves;
  if (any_measured) {
    curves.push_back("'comet.dat' using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#1f77b4' title " +
                     gnuplot_string("measured (mpirun; bars: min..max)"));
  }
  if (any_direct)
    curves.push_back("'comet.dat' using 1:5 with linespoints lw 2 pt 5 lc rgb '#d62728' title " +
                     gnuplot_string("direct execution (simulation[direct])"));
  if (any_simulated)
    curves.push_back("'comet.dat' using 1:7 with linespoints lw 2 dt 3 pt 6 ps 1.5 lc rgb '#9467bd' title " +
                     gnuplot_string("simulation (comet.psl, simulation[MPI-Sim])"));
  if (any_closed)
    curves.push_back("'comet.dat' using 1:6 with linespoints lw 2 dt 2 pt 9 lc rgb '#2ca02c' title " +
                     gnuplot_string("closed form (LogGOPS)"));
  if (curves.empty()) return "";
  s << "plot ";
  for (std::size_t i = 0; i < curves.size(); ++i) s << (i ? ", " : "") << curves[i];
  s << '\n';
  std::ofstream script(dir / "plot.gp", std::ios::binary);
  script << s.str();
  script.close();
  if (!script) return "cannot write the gnuplot script in " + dir.string();
  base::ChildOptions o;
  o.argv = {"gnuplot", "plot.gp"};
  o.working_directory = dir.string();
  o.out = base::ChildStream::file(picture);
  o.err = base::ChildStream::capture(1 << 20);
  o.timeout_seconds = 120;
  const base::ChildResult c = base::run_child(o);
  if (!c.started)
    return "cannot start gnuplot (" + base::escaped(c.error) + "; install it: apt-get install gnuplot-nox)";
  if (!c.ok()) return "gnuplot failed on " + k.name + ": " + base::escaped(c.err.substr(0, 400));
  return "";
}

}  // namespace

std::optional<double> comet_error_pct(const std::optional<double>& predicted, const std::optional<double>& measured) {
  if (!predicted || !measured || *measured <= 0) return std::nullopt;
  return (*predicted - *measured) / *measured * 100.0;
}

void write_comet_report(const core::CometReport& report, const std::string& format, std::ostream& out) {
  if (format == "json")
    write_json(report, out);
  else if (format == "csv")
    write_csv(report, out);
  else
    write_text(report, out);
}

std::vector<std::string> write_comet_plots(const core::CometReport& report, const std::string& directory, bool svg,
                                           std::string& error) {
  std::vector<std::string> written;
  error.clear();
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) {
    error = "cannot create " + directory + ": " + ec.message();
    return written;
  }
  for (const core::CometKernelResult& k : report.kernels) {
    if (k.points.empty()) continue;
    // Absolute: gnuplot runs in its scratch directory.
    const std::string picture =
        std::filesystem::absolute(std::filesystem::path(directory) / ("comet-" + k.name + (svg ? ".svg" : ".png")))
            .string();
    if (std::string e = plot_kernel(report, k, picture, svg); !e.empty()) {
      error = e;
      return written;
    }
    written.push_back(picture);
  }
  return written;
}

}  // namespace poems::report
