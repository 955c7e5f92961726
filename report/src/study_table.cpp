#include "poems/report/study_table.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "poems/base/csv.h"
#include "poems/base/escaped.h"
#include "poems/core/error.h"

namespace poems::report {

namespace {

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

// A row's known causes of disagreement, "; "-separated ("" = none known).
std::string causes_text(const StudyRow& r) {
  std::string out;
  for (const auto& [p, cause] : r.disagreements)
    if (!cause.empty() && out.find(cause) == std::string::npos) out += (out.empty() ? "" : "; ") + cause;
  return out;
}

std::string header_of(const std::string& m) {
  if (m == "time" || m == "compute" || m == "comm" || m == "sync") return m + "_s";
  return m;
}

}  // namespace

std::string disagreement_notes(const StudyTable& t) {
  std::ostringstream out;
  std::size_t compared = 0;  // rows with a difference
  for (const StudyRow& r : t.rows) compared += !r.differences_pct.empty();
  for (std::size_t k = 1; k < t.paradigms.size(); ++k) {
    // The rows where this paradigm disagrees with the first, by cause (first-seen order).
    std::vector<std::pair<std::string, std::size_t>> causes;
    std::size_t rows = 0;
    for (const StudyRow& r : t.rows) {
      auto d = r.disagreements.find(t.paradigms[k]);
      if (d == r.disagreements.end()) continue;
      ++rows;
      auto c = std::find_if(causes.begin(), causes.end(), [&](const auto& x) { return x.first == d->second; });
      if (c == causes.end())
        causes.emplace_back(d->second, 1);
      else
        ++c->second;
    }
    if (!rows) continue;
    out << "* disagree: " << t.paradigms[k] << " differs from " << t.paradigms[0] << " by more than "
        << number(t.disagree_pct) << "% in " << rows << " of " << compared << " rows";
    for (const auto& [cause, n] : causes)
      out << (causes.size() > 1 ? "\n  " + std::to_string(n) + " of them: " : "; ")
          << (cause.empty() ? "cause unknown" : "known cause: " + cause);
    out << '\n';
  }
  return out.str();
}

std::string value_text(const psl::Value& v) {
  return v.kind == psl::Value::Kind::Number && v.dimension.dimensionless() ? number(v.number, 12) : v.str();
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
    row["disagrees"] = r.disagrees();
    if (r.disagrees()) {
      nlohmann::json causes = nlohmann::json::object();
      for (const auto& [p, cause] : r.disagreements)
        causes[p] = cause.empty() ? nlohmann::json() : nlohmann::json(cause);
      row["disagreements"] = causes;
    }
    if (!errors.empty()) row["errors"] = errors;
    if (!skipped.empty()) row["skipped"] = skipped;
    rows.push_back(row);
  }
  return {{"study", t.study},
          {"model", t.model},
          {"paradigms", t.paradigms},
          {"disagree_pct", t.disagree_pct},
          {"rows", rows}};
}

std::string table_csv(const StudyTable& t) {
  std::ostringstream out;
  for (const std::string& n : t.targets) out << base::csv_field(n) << ',';
  out << "processes";
  for (const std::string& p : t.paradigms)
    for (const char* m : {"time_ns", "compute_ns", "comm_ns", "sync_ns", "speedup", "efficiency", "comm_fraction"})
      out << ',' << base::csv_field(p + " " + m);
  out << ",difference_pct";
  // Only a table with a disagreeing row has these (the others keep their columns).
  const bool flagged = t.disagreeing_rows() > 0;
  if (flagged) out << ",disagrees,disagreement_cause";
  out << '\n';
  for (const StudyRow& r : t.rows) {
    for (const std::string& n : t.targets) {
      auto it = std::find_if(r.binding.begin(), r.binding.end(), [&](const auto& b) { return b.first == n; });
      out << (it == r.binding.end() ? "" : base::csv_field(value_text(it->second))) << ',';
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
    out << ',' << (r.difference_pct ? number(*r.difference_pct, 17) : "");
    if (flagged) out << ',' << (r.disagrees() ? "true" : "false") << ',' << base::csv_field(causes_text(r));
    out << '\n';
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
  // A marker column only in a table with a disagreeing row (the notes below the table say why).
  const bool flagged = t.disagreeing_rows() > 0;
  if (flagged) header.push_back("disagree");
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
    if (flagged) line.push_back(r.disagrees() ? "*" : "");
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
    std::string line;
    for (std::size_t i = 0; i < l.size(); ++i) {
      line += (i ? "  " : "");
      line += std::string(width[i] - l[i].size(), ' ') + l[i];
    }
    // An unmarked row's empty `disagree` cell leaves no trailing blanks.
    if (flagged) line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  }
  out << disagreement_notes(t);
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

bool write_study_table(StudyTable& table, const psl::StudyDecl& study, const std::string& format,
                       const PlotRequest& plot, std::ostream& out, std::ostream& err) {
  core::finish_study_table(table);
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
      return false;
    }
    err << "plot written to " << base::escaped(plot.file) << '\n';
  }
  return !table.failures && !table.store_failures;
}

void write_study_progress(const core::StudyProgress& p, std::ostream& err) {
  const core::Cell& c = *p.cell;
  char head[64];
  std::snprintf(head, sizeof head, "[%zu/%zu] ", p.done, p.total);
  err << head << base::escaped(core::binding_text(*p.binding)) << " " << c.paradigm << ": "
      << (!c.error.empty() ? base::escaped(c.error)
          : c.reused       ? "stored result"
                           : "evaluated")
      << '\n';
  if (!c.store_error.empty()) err << "poems: error: " << c.store_error << '\n';
}

nlohmann::json measured_binding_json(const StudyTable& table, const std::string& measured_paradigm,
                                     const std::vector<std::string>& paradigms) {
  const StudyRow& row = table.rows.front();
  const StudyCell& measured = row.cells.at(measured_paradigm);
  nlohmann::json out = {{"model", table.model}, {"processes", row.processes}};
  nlohmann::json b = nlohmann::json::object();
  for (const auto& [k, v] : row.binding) b[k] = v.number;
  out["binding"] = b;
  if (!measured.ok()) {
    out["measured_ns"] = nullptr;
    out[measured.skipped ? "skipped" : "error"] = measured.error;
  } else {
    out["measured_ns"] = measured.time_ns;
    out["measurement"] = {{"compute_ns", measured.compute_ns},
                          {"comm_ns", measured.comm_ns},
                          {"sync_ns", measured.sync_ns},
                          {"stored", measured.reused},
                          {"extra", measured.extra}};
  }
  nlohmann::json predictions = nlohmann::json::object();
  for (std::size_t k = 1; k < paradigms.size(); ++k) {
    const StudyCell& c = row.cells.at(paradigms[k]);
    predictions[paradigms[k]] = c.ok() ? nlohmann::json(c.time_ns) : nlohmann::json(c.error);
    if (k == 1) {
      out["paradigm"] = paradigms[k];
      out["predicted_ns"] = c.ok() ? nlohmann::json(c.time_ns) : nlohmann::json();
      // The study table's difference (core::difference_pct, the measurement the reference).
      auto d = row.differences_pct.find(paradigms[k]);
      if (d != row.differences_pct.end()) {
        out["difference_pct"] = d->second;
        out["disagrees"] = row.disagreements.count(paradigms[k]) > 0;
      }
    }
  }
  if (paradigms.size() > 1) out["predictions"] = predictions;
  return out;
}

}  // namespace poems::report
