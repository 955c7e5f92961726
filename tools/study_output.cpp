#include "study_output.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "poems/base/escaped.h"
#include "poems/core/error.h"

extern char** environ;

namespace poems::cli {

namespace {

std::string group_key(const StudyTable& t, const StudyRow& r) {
  std::string key;
  for (const auto& [k, v] : r.binding)
    if (!t.process_params.count(k)) key += k + "=" + v.str() + ";";
  return key;
}

std::string number(double v, int digits = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::vector<std::string> metrics(const psl::StudyDecl& study) {
  std::vector<std::string> m;
  for (const psl::Identifier& r : study.report) m.push_back(r.name);
  if (m.empty()) m = {"time", "speedup"};
  if (std::find(m.begin(), m.end(), "time") == m.end()) m.insert(m.begin(), "time");
  return m;
}

std::string cell_metric(const StudyCell& c, const std::string& m) {
  if (!c.ok()) return c.skipped ? "-" : "failed";
  auto seconds = [](double ns) { return number(ns / 1e9); };
  if (m == "time") return seconds(c.time_ns);
  if (m == "speedup") return c.speedup ? number(*c.speedup, 4) : "-";
  if (m == "efficiency") return c.efficiency ? number(*c.efficiency, 4) : "-";
  if (m == "comm_fraction") return c.time_ns > 0 ? number(c.comm_ns / c.time_ns, 4) : "-";
  if (m == "compute") return seconds(c.compute_ns);
  if (m == "comm") return seconds(c.comm_ns);
  if (m == "sync") return seconds(c.sync_ns);
  if (m == "events") return c.events ? std::to_string(c.events) : "-";
  return "-";
}

std::string header_of(const std::string& m) {
  if (m == "time" || m == "compute" || m == "comm" || m == "sync") return m + "_s";
  return m;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string value_text(const psl::Value& v) {
  return v.kind == psl::Value::Kind::Number && v.dimension.dimensionless() ? number(v.number, 12) : v.str();
}

}  // namespace

void finish_table(StudyTable& t, const psl::StudyDecl&) {
  for (const std::string& p : t.paradigms) {
    std::map<std::string, const StudyRow*> base;
    for (const StudyRow& r : t.rows) {
      auto c = r.cells.find(p);
      if (c == r.cells.end() || !c->second.ok() || r.processes == 0) continue;
      const StudyRow*& b = base[group_key(t, r)];
      if (!b || r.processes < b->processes) b = &r;
    }
    for (StudyRow& r : t.rows) {
      auto c = r.cells.find(p);
      auto b = base.find(group_key(t, r));
      if (c == r.cells.end() || !c->second.ok() || b == base.end() || c->second.time_ns <= 0) continue;
      const StudyCell& bc = b->second->cells.at(p);
      c->second.speedup = bc.time_ns / c->second.time_ns;
      c->second.efficiency = *c->second.speedup * b->second->processes / std::max<std::uint32_t>(r.processes, 1);
    }
  }
  if (t.paradigms.size() >= 2)
    for (StudyRow& r : t.rows) {
      const StudyCell& a = r.cells[t.paradigms[0]];
      for (std::size_t k = 1; k < t.paradigms.size(); ++k) {
        const StudyCell& b = r.cells[t.paradigms[k]];
        if (a.ok() && b.ok() && a.time_ns > 0)
          r.differences_pct[t.paradigms[k]] = (b.time_ns - a.time_ns) / a.time_ns * 100.0;
      }
      auto second = r.differences_pct.find(t.paradigms[1]);
      if (second != r.differences_pct.end()) r.difference_pct = second->second;
    }
}

nlohmann::json table_json(const StudyTable& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const StudyRow& r : t.rows) {
    nlohmann::json binding = nlohmann::json::object(), times = nlohmann::json::object(),
                   speedup = nlohmann::json::object(), efficiency = nlohmann::json::object(),
                   comm = nlohmann::json::object(), breakdown = nlohmann::json::object(),
                   errors = nlohmann::json::object();
    for (const auto& [k, v] : r.binding)
      binding[k] = v.kind == psl::Value::Kind::Number && v.dimension.dimensionless() ? nlohmann::json(v.number)
                                                                                     : nlohmann::json(v.str());
    nlohmann::json skipped = nlohmann::json::object();
    for (const auto& [p, c] : r.cells) {
      if (!c.ok()) {
        (c.skipped ? skipped : errors)[p] = c.error;
        times[p] = nullptr;
        continue;
      }
      times[p] = c.time_ns;
      speedup[p] = c.speedup ? nlohmann::json(*c.speedup) : nlohmann::json();
      efficiency[p] = c.efficiency ? nlohmann::json(*c.efficiency) : nlohmann::json();
      comm[p] = c.time_ns > 0 ? nlohmann::json(c.comm_ns / c.time_ns) : nlohmann::json();
      breakdown[p] = {{"compute_ns", c.compute_ns},
                      {"comm_ns", c.comm_ns},
                      {"sync_ns", c.sync_ns},
                      {"events", c.events},
                      {"stored", c.reused}};
    }
    nlohmann::json row = {{"binding", binding},    {"processes", r.processes}, {"times_ns", times},
                          {"speedup", speedup},    {"efficiency", efficiency}, {"comm_fraction", comm},
                          {"breakdown", breakdown}};
    row["difference_pct"] = r.difference_pct ? nlohmann::json(*r.difference_pct) : nlohmann::json();
    if (t.paradigms.size() > 2) row["differences_pct"] = r.differences_pct;
    if (!errors.empty()) row["errors"] = errors;
    if (!skipped.empty()) row["skipped"] = skipped;
    rows.push_back(row);
  }
  return {{"study", t.study}, {"model", t.model}, {"paradigms", t.paradigms}, {"rows", rows}};
}

std::string table_csv(const StudyTable& t) {
  std::ostringstream out;
  for (const std::string& n : t.targets) out << csv_field(n) << ',';
  out << "processes";
  for (const std::string& p : t.paradigms)
    for (const char* m : {"time_ns", "compute_ns", "comm_ns", "sync_ns", "speedup", "efficiency", "comm_fraction"})
      out << ',' << csv_field(p + " " + m);
  out << ",difference_pct\n";
  for (const StudyRow& r : t.rows) {
    for (const std::string& n : t.targets) {
      auto it = std::find_if(r.binding.begin(), r.binding.end(), [&](const auto& b) { return b.first == n; });
      out << (it == r.binding.end() ? "" : csv_field(value_text(it->second))) << ',';
    }
    out << r.processes;
    for (const std::string& p : t.paradigms) {
      auto c = r.cells.find(p);
      if (c == r.cells.end() || !c->second.ok()) {
        out << ",,,,,,,";
        continue;
      }
      const StudyCell& x = c->second;
      out << ',' << number(x.time_ns, 17) << ',' << number(x.compute_ns, 17) << ',' << number(x.comm_ns, 17) << ','
          << number(x.sync_ns, 17) << ',' << (x.speedup ? number(*x.speedup, 17) : "") << ','
          << (x.efficiency ? number(*x.efficiency, 17) : "") << ','
          << (x.time_ns > 0 ? number(x.comm_ns / x.time_ns, 17) : "");
    }
    out << ',' << (r.difference_pct ? number(*r.difference_pct, 17) : "") << '\n';
  }
  return out.str();
}

std::string table_text(const StudyTable& t, const psl::StudyDecl& study) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header = t.targets;
  header.push_back("P");
  const auto ms = metrics(study);
  for (const std::string& p : t.paradigms)
    for (const std::string& m : ms) header.push_back(p + " " + header_of(m));
  if (t.paradigms.size() >= 2) header.push_back("diff_%");
  for (std::size_t k = 2; k < t.paradigms.size(); ++k) header.push_back("diff" + std::to_string(k + 1) + "_%");
  cells.push_back(header);
  for (const StudyRow& r : t.rows) {
    std::vector<std::string> line;
    for (const std::string& n : t.targets) {
      auto it = std::find_if(r.binding.begin(), r.binding.end(), [&](const auto& b) { return b.first == n; });
      line.push_back(it == r.binding.end() ? "" : base::escaped(value_text(it->second)));
    }
    line.push_back(std::to_string(r.processes));
    for (const std::string& p : t.paradigms) {
      auto c = r.cells.find(p);
      for (const std::string& m : ms) line.push_back(c == r.cells.end() ? "-" : cell_metric(c->second, m));
    }
    for (std::size_t k = 1; k < t.paradigms.size(); ++k) {
      auto d = r.differences_pct.find(t.paradigms[k]);
      line.push_back(d != r.differences_pct.end() ? number(d->second, 3) : "-");
    }
    cells.push_back(line);
  }
  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& l : cells)
    for (std::size_t i = 0; i < l.size(); ++i) width[i] = std::max(width[i], l[i].size());
  std::ostringstream out;
  out << "study " << t.study << " (model " << t.model << "): times in seconds; speedup relative to the fewest "
      << "processes of each group; diff_% = "
      << (t.paradigms.size() >= 2 ? t.paradigms[1] + " vs " + t.paradigms[0] : "-");
  for (std::size_t k = 2; k < t.paradigms.size(); ++k)
    out << ", diff" << k + 1 << "_% = " << t.paradigms[k] << " vs " << t.paradigms[0];
  out << "\n";
  for (const auto& l : cells) {
    for (std::size_t i = 0; i < l.size(); ++i) {
      out << (i ? "  " : "");
      out << std::string(width[i] - l[i].size(), ' ') << l[i];
    }
    out << '\n';
  }
  for (const StudyRow& r : t.rows)
    for (const auto& [p, c] : r.cells)
      if (!c.ok()) {
        std::string b;
        for (const auto& [k, v] : r.binding) b += (b.empty() ? "" : " ") + k + "=" + value_text(v);
        out << (c.skipped ? "skipped: " : "failed: ") << base::escaped(b) << " " << p << ": " << base::escaped(c.error)
            << '\n';
      }
  return out.str();
}

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

namespace {

// Runs gnuplot on `script` in `dir` (no shell: argv only), its stdout to
// `output`; returns an error message or "".
std::string run_gnuplot(const std::filesystem::path& dir, const std::string& script,
                        const std::filesystem::path& output) {
  {
    std::ofstream s(dir / "plot.gp", std::ios::binary);
    s << script;
    if (!s) return "cannot write the gnuplot script in " + dir.string();
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const std::string errors = (dir / "gnuplot.err").string();
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string program = "gnuplot", script_name = "plot.gp";
  char* argv[] = {program.data(), script_name.data(), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return "cannot start gnuplot (" + std::string(std::strerror(rc)) + "; install it: apt-get install gnuplot-nox)";
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return "gnuplot is not installed (apt-get install gnuplot-nox)";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  std::ifstream in(errors);
  std::string first, line;
  for (int n = 0; n < 4 && std::getline(in, line); ++n) first += (first.empty() ? "" : " | ") + line;
  return "gnuplot failed" + (first.empty() ? std::string() : ": " + base::escaped(first.substr(0, 400)));
}

}  // namespace

void check_plot_x(const std::string& x, const std::vector<std::string>& targets) {
  if (x.empty() || x == kPlotProcesses || std::find(targets.begin(), targets.end(), x) != targets.end()) return;
  std::string choices;
  for (const std::string& n : targets) choices += n + ", ";
  throw core::UsageError(
      "--plot-x", "'" + base::escaped(x) + "' is not varied by the study; choose one of " + choices + kPlotProcesses);
}

namespace {

// One curve: its title and its points (x, time s, speedup, ideal speedup).
struct Curve {
  std::string title;
  std::vector<std::array<double, 4>> points;
};

const psl::Value* bound(const StudyRow& r, const std::string& name) {
  for (const auto& [k, v] : r.binding)
    if (k == name) return &v;
  return nullptr;
}

}  // namespace

std::string plot_table(const StudyTable& t, const PlotRequest& plot) {
  const std::string& path = plot.file;
  check_plot_x(plot.x, t.targets);
  const bool svg = path.size() > 4 && path.substr(path.size() - 4) == ".svg";
  std::set<std::uint32_t> process_counts;
  for (const StudyRow& r : t.rows) process_counts.insert(r.processes);
  // The x axis: the process count where it varies (speedup only makes sense
  // against it), a numeric varied name, else the bindings one by one.
  enum class Axis { Processes, Parameter, Bindings } axis = Axis::Bindings;
  if (plot.x == kPlotProcesses || plot.x.empty()) {
    if (process_counts.size() > 1) axis = Axis::Processes;
  } else {
    std::set<double> values;
    bool numeric = true;
    for (const StudyRow& r : t.rows) {
      const psl::Value* v = bound(r, plot.x);
      numeric = numeric && v && v->kind == psl::Value::Kind::Number;
      if (numeric) values.insert(v->number);
    }
    if (numeric && values.size() > 1) axis = Axis::Parameter;
  }
  std::vector<Curve> curves;
  std::vector<std::string> labels;  // the bindings axis: one per row, in order
  for (const StudyRow& r : t.rows) {
    std::string label;
    for (const std::string& n : t.targets)
      if (const psl::Value* v = bound(r, n)) label += (label.empty() ? "" : ", ") + n + "=" + value_text(*v);
    labels.push_back(label.empty() ? "P=" + std::to_string(r.processes) : label);
  }
  for (const std::string& p : t.paradigms) {
    std::map<std::string, std::size_t> index;
    for (std::size_t row = 0; row < t.rows.size(); ++row) {
      const StudyRow& r = t.rows[row];
      auto c = r.cells.find(p);
      if (c == r.cells.end() || !c->second.ok() || !r.processes) continue;
      // A curve per paradigm and group: the rows that differ only in x.
      std::string key;
      double x = static_cast<double>(row);
      if (axis == Axis::Processes) {
        key = group_key(t, r);
        x = static_cast<double>(r.processes);
      } else if (axis == Axis::Parameter) {
        for (const auto& [k, v] : r.binding)
          if (k != plot.x) key += k + "=" + v.str() + ";";
        x = bound(r, plot.x)->number;
      }
      std::string title = p + (key.empty() ? "" : " " + key.substr(0, key.size() - 1));
      auto [it, fresh] = index.emplace(key, curves.size());
      if (fresh) curves.push_back({title, {}});
      curves[it->second].points.push_back({x, c->second.time_ns / 1e9, c->second.speedup.value_or(0), 0});
    }
  }
  if (curves.empty()) return "nothing to plot: no evaluation succeeded";
  for (Curve& c : curves) {
    std::sort(c.points.begin(), c.points.end());
    // Ideal speedup against the curve's fewest processes (finish_table's base).
    for (auto& point : c.points) point[3] = point[0] / c.points.front()[0];
  }
  // gnuplot reads numbers from a data file and a script whose only variable
  // parts are strings quoted by gnuplot_string(); it writes the picture to
  // its stdout, which goes to a file in a private directory: the output path
  // never reaches gnuplot, and no text of the study is ever a command.
  std::error_code ec;
  std::string pattern = (std::filesystem::temp_directory_path(ec) / "poems-plot-XXXXXX").string();
  if (ec || !::mkdtemp(pattern.data())) return "cannot create a temporary directory for gnuplot";
  const std::filesystem::path dir = pattern;
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } cleanup{dir};
  std::ofstream data(dir / "curves.dat", std::ios::binary);
  for (const Curve& c : curves) {
    for (const auto& point : c.points)
      data << number(point[0], 12) << ' ' << number(point[1], 12) << ' ' << number(point[2], 12) << ' '
           << number(point[3], 12) << '\n';
    data << "\n\n";  // the next index
  }
  data.close();
  if (!data) return "cannot write the plot's data in " + dir.string();
  const bool speedup = axis == Axis::Processes;
  std::string title = "POEMS study " + t.study + ", model " + t.model;
  if (!plot.sets.empty()) {
    title += " (--set ";
    for (std::size_t i = 0; i < plot.sets.size(); ++i) title += (i ? ", " : "") + plot.sets[i];
    title += ")";
  }
  std::ostringstream script;
  script << (svg ? "set terminal svg size 1100,460 dynamic\n" : "set terminal pngcairo size 1100,460\n");
  script << "set multiplot layout 1," << (speedup ? 2 : 1) << " title " << gnuplot_string(title) << " noenhanced\n";
  script << "set grid\nset key top right font ',8' noenhanced\n";
  if (axis == Axis::Processes) {
    script << "set logscale x\nset xlabel 'processes'\n";
  } else if (axis == Axis::Parameter) {
    script << "set xlabel " << gnuplot_string(plot.x) << " noenhanced\n";
  } else {
    script << "set xlabel 'binding'\nset xrange [-0.5:" << t.rows.size() - 0.5 << "]\n";
    script << "set xtics noenhanced rotate by -20 font ',8' (";
    for (std::size_t i = 0; i < labels.size(); ++i) script << (i ? ", " : "") << gnuplot_string(labels[i]) << ' ' << i;
    script << ")\n";
  }
  for (int panel = 0; panel < (speedup ? 2 : 1); ++panel) {
    script << (panel == 0 ? "set logscale y\nset ylabel 'time (s)'\n" : "unset logscale y\nset ylabel 'speedup'\n");
    script << "plot ";
    for (std::size_t i = 0; i < curves.size(); ++i)
      script << (i ? ", " : "") << "'curves.dat' index " << i << " using 1:" << (panel == 0 ? 2 : 3)
             << " with linespoints title " << gnuplot_string(curves[i].title) << " noenhanced";
    if (panel == 1)
      for (std::size_t i = 0; i < curves.size(); ++i)
        script << ", 'curves.dat' index " << i << " using 1:4 with lines dashtype 2 linecolor 'black' "
               << (i ? "notitle" : "title 'ideal'");
    script << "\n";
  }
  script << "unset multiplot\n";
  const std::filesystem::path picture = dir / (svg ? "plot.svg" : "plot.png");
  if (std::string error = run_gnuplot(dir, script.str(), picture); !error.empty())
    return error + " (drawing " + base::escaped(path) + ")";
  // Copied by content, not copy_file(): that would give the picture the
  // private directory's 0600; a new file gets 0666 less the umask, an
  // existing one keeps its mode.
  std::ifstream in(picture, std::ios::binary);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  out.close();
  if (!in || !out) return "cannot write '" + base::escaped(path) + "'";
  return "";
}

int print_study_table(StudyTable& table, const psl::StudyDecl& study, const std::string& format,
                      const PlotRequest& plot, std::ostream& out, std::ostream& err) {
  finish_table(table, study);
  if (format == "json")
    out << table_json(table).dump(2) << '\n';
  else if (format == "csv")
    out << table_csv(table);
  else
    out << table_text(table, study);
  if (!plot.file.empty()) {
    const std::string error = plot_table(table, plot);
    if (!error.empty()) {
      err << "poems: error: " << error << '\n';
      return kExitEvaluation;
    }
    err << "plot written to " << base::escaped(plot.file) << '\n';
  }
  return table.failures || table.store_failures ? kExitEvaluation : kExitOk;
}

}  // namespace poems::cli
