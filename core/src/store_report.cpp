#include "poems/core/store_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/base/csv.h"
#include "poems/base/escaped.h"
#include "poems/core/error.h"
#include "poems/db/knowledge_base.h"
#include "poems/db/schema.h"

namespace poems::core {

namespace {

using Rows = std::vector<std::vector<std::string>>;  // a table; the first row is usually the header

std::string number(double value) { return nlohmann::json(value).dump(); }
std::string or_dash(const std::optional<std::string>& text) { return text ? *text : "-"; }
template <class T>
std::string or_dash(const std::optional<T>& value) {
  return value ? nlohmann::json(*value).dump() : "-";
}

// Stored text (a hostile binding, an error message) never sends a control
// character to the terminal.
std::string shown(std::string_view text) { return base::escaped(text, base::Whitespace::Hex); }

std::string significant(double v, const char* unit) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, unit);
  return buf;
}

std::string human_value(const nlohmann::json& value);

// A binding value in human units, by the unit its key ends with (the
// evaluators store L_ps, G_fs_per_byte, S_bytes, wg_ns, ns_per_work, ...);
// returns the name without the unit suffix.
std::pair<std::string, std::string> human_entry(const std::string& key, const nlohmann::json& value) {
  auto ends = [&](const std::string& suffix) {
    return key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  auto stem = [&](const std::string& suffix) { return key.substr(0, key.size() - suffix.size()); };
  if (value.is_number()) {
    const double v = value.get<double>();
    if (ends("_ps")) return {stem("_ps"), human_time_ns(v / 1e3)};
    if (ends("_fs_per_byte")) return {stem("_fs_per_byte"), significant(v / 1e6, "ns/B")};
    if (ends("_bytes")) return {stem("_bytes"), human_bytes(v)};
    if (key == "ns_per_work") return {"time_per_work", human_time_ns(v)};
    if (ends("_ns")) return {stem("_ns"), human_time_ns(v)};
  }
  return {key, human_value(value)};
}

// Objects as {name=value ...} and arrays as [...], recursively in human units.
std::string human_value(const nlohmann::json& value) {
  if (value.is_string()) return shown(value.get<std::string>());
  if (value.is_object()) {
    std::string out;
    for (const auto& [k, v] : value.items()) {
      const auto [name, text] = human_entry(k, v);
      out += (out.empty() ? "" : " ") + shown(name) + "=" + text;
    }
    return "{" + out + "}";
  }
  if (value.is_array()) {
    std::string out;
    for (const auto& v : value) out += (out.empty() ? "" : ", ") + human_value(v);
    return "[" + out + "]";
  }
  return shown(value.dump());
}

// A binding as (name, raw value) pairs: nested objects flattened with dots;
// the model's own parameters come first, without their `parameters.` prefix.
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::vector<std::pair<std::string, nlohmann::json>>& out) {
  if (!j.is_object()) {
    out.push_back({prefix.empty() ? "value" : prefix, j});
    return;
  }
  if (prefix.empty() && j.contains("parameters") && j["parameters"].is_object())
    for (const auto& [k, v] : j["parameters"].items()) out.push_back({k, v});
  for (const auto& [k, v] : j.items()) {
    if (prefix.empty() && k == "parameters" && v.is_object()) continue;
    const std::string name = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object() && !v.empty())
      flatten(v, name, out);
    else
      out.push_back({name, v});
  }
}

// Code points of UTF-8 text: what a terminal column count is made of.
std::size_t display_width(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// The first `width` code points of `text`, "..." marking a cut.
std::string cut(const std::string& text, std::size_t width) {
  if (width < 4 || display_width(text) <= width) return text;
  std::size_t points = 0, i = 0;
  for (; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && points++ == width - 3) break;
  return text.substr(0, i) + "...";
}

// "it_g=150 npe_i=2 machine.L=5.3 µs ..." (cut at `width` code points; 0: whole).
std::string human_binding(const nlohmann::json& binding, std::size_t width) {
  std::vector<std::pair<std::string, nlohmann::json>> entries;
  flatten(binding, "", entries);
  std::string out;
  for (const auto& [k, v] : entries) {
    const auto [name, text] = human_entry(k, v);
    out += (out.empty() ? "" : " ") + shown(name) + "=" + text;
  }
  return cut(out, width);
}

// Columns two spaces apart, aligned by code points (µs is one column, two bytes).
std::string aligned(const Rows& table) {
  std::vector<std::size_t> width;
  for (const auto& row : table)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], display_width(row[c]));
    }
  std::string out;
  for (const auto& row : table) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      out += row[c];
      if (c + 1 < row.size()) out += std::string(width[c] - display_width(row[c]) + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

// "2026-11-22T04:23:08.992Z" -> "2026-11-22 04:23:08".
std::string human_date(const std::optional<std::string>& iso) {
  if (!iso || iso->size() < 19) return or_dash(iso);
  std::string s = iso->substr(0, 19);
  s[10] = ' ';
  return s;
}

std::string runs_table(const std::vector<db::Run>& runs) {
  Rows table = {{"id", "status", "model", "evaluator", "time", "attempts", "finished", "binding"}};
  for (const db::Run& r : runs)
    table.push_back({std::to_string(r.id), std::string(db::to_string(r.status)), shown(r.model), shown(r.evaluator),
                     r.result ? human_time_ns(r.result->time_ns) : "-", std::to_string(r.attempts),
                     human_date(r.finished_at), human_binding(r.binding, 100)});
  return aligned(table);
}

std::string run_details(const db::Run& r, const std::vector<db::Ted>& teds) {
  Rows fields = {{"run", std::to_string(r.id)},
                 {"status", std::string(db::to_string(r.status))},
                 {"model", shown(r.model)},
                 {"evaluator", shown(r.evaluator)},
                 {"binding", human_binding(r.binding, 0)},
                 {"binding_json", shown(db::canonical_json(r.binding))},
                 {"spec_hash", r.spec_hash},
                 {"tool_version", r.tool_version},
                 {"run_key", r.run_key},
                 {"host", r.host.empty() ? "-" : shown(r.host)},
                 {"pid", or_dash(r.pid)},
                 {"attempts", std::to_string(r.attempts)},
                 {"created_at", r.created_at},
                 {"started_at", or_dash(r.started_at)},
                 {"finished_at", or_dash(r.finished_at)},
                 {"wall_time", r.wall_time_ns ? human_time_ns(static_cast<double>(*r.wall_time_ns)) : "-"},
                 {"error", r.error ? shown(*r.error) : "-"}};
  if (r.result) {
    const db::Result& res = *r.result;
    auto time = [](const std::optional<double>& ns) {
      return ns ? human_time_ns(*ns) + " (" + number(*ns) + " ns)" : "-";
    };
    fields.push_back({"result", std::string(db::to_string(res.kind))});
    fields.push_back({"time", time(res.time_ns)});
    fields.push_back({"compute", time(res.compute_ns)});
    fields.push_back({"comm", time(res.comm_ns)});
    fields.push_back({"sync", time(res.sync_ns)});
    fields.push_back({"events", or_dash(res.events)});
    fields.push_back({"extra", shown(res.extra.dump())});
  } else {
    fields.push_back({"result", "-"});
  }
  for (const db::Ted& t : teds)
    fields.push_back({"ted " + shown(t.node),
                      shown(t.evaluator) + (t.parameters.empty() ? "" : " " + human_binding(t.parameters, 0))});
  return aligned(fields);
}

std::string cell_text(const db::Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) return number(*d);
  if (const auto* s = std::get_if<std::string>(&cell)) return shown(*s);
  return "NULL";
}

std::string run_json(const db::Run& run, const std::vector<db::Ted>& teds) {
  nlohmann::json j = db::to_json(run);
  j["teds"] = nlohmann::json::array();
  for (const db::Ted& t : teds)
    j["teds"].push_back({{"node", t.node}, {"evaluator", t.evaluator}, {"parameters", t.parameters}});
  return j.dump(2) + '\n';
}

// One study as one table: a row per run, a column per binding entry (raw
// names and numbers in CSV and JSON; human units, varying entries only, in
// the table), the evaluator and the result.
std::string study_table(const std::string& name, const std::vector<db::Run>& runs, ReportFormat format) {
  std::vector<std::vector<std::pair<std::string, nlohmann::json>>> entries(runs.size());
  std::vector<std::string> columns;  // first-seen order
  std::set<std::string> seen;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    flatten(runs[i].binding, "", entries[i]);
    for (const auto& [k, v] : entries[i])
      if (seen.insert(k).second) columns.push_back(k);
  }
  auto value_of = [&](std::size_t i, const std::string& column) -> const nlohmann::json* {
    for (const auto& [k, v] : entries[i])
      if (k == column) return &v;
    return nullptr;
  };
  const char* const results[] = {"time_ns", "compute_ns", "comm_ns", "sync_ns", "events"};
  auto result_of = [](const db::Run& r, int which) -> nlohmann::json {
    if (!r.result) return nullptr;
    const db::Result& x = *r.result;
    switch (which) {
      case 0: return x.time_ns;
      case 1: return x.compute_ns ? nlohmann::json(*x.compute_ns) : nlohmann::json();
      case 2: return x.comm_ns ? nlohmann::json(*x.comm_ns) : nlohmann::json();
      case 3: return x.sync_ns ? nlohmann::json(*x.sync_ns) : nlohmann::json();
      default: return x.events ? nlohmann::json(*x.events) : nlohmann::json();
    }
  };
  if (format == ReportFormat::Json) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      nlohmann::json row = {{"run", runs[i].id},
                            {"model", runs[i].model},
                            {"evaluator", runs[i].evaluator},
                            {"status", std::string(db::to_string(runs[i].status))}};
      for (const std::string& c : columns)
        if (const nlohmann::json* v = value_of(i, c)) row[c] = *v;
      for (int k = 0; k < 5; ++k) row[results[k]] = result_of(runs[i], k);
      rows.push_back(row);
    }
    return nlohmann::json({{"study", name}, {"runs", rows}}).dump(2) + '\n';
  }
  if (format == ReportFormat::Csv) {
    std::vector<std::string> header = {"run", "model", "evaluator", "status"};
    header.insert(header.end(), columns.begin(), columns.end());
    header.insert(header.end(), std::begin(results), std::end(results));
    std::string out = base::csv_row(header);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      std::vector<std::string> row = {std::to_string(runs[i].id), runs[i].model, runs[i].evaluator,
                                      std::string(db::to_string(runs[i].status))};
      for (const std::string& c : columns) {
        const nlohmann::json* v = value_of(i, c);
        row.push_back(!v || v->is_null() ? "" : v->is_string() ? v->get<std::string>() : v->dump());
      }
      for (int k = 0; k < 5; ++k) {
        const nlohmann::json v = result_of(runs[i], k);
        row.push_back(v.is_null() ? "" : v.dump());
      }
      base::append_csv_row(out, row);
    }
    return out;
  }
  // The table: entries every run shares go on one line above it.
  std::vector<std::string> varying;
  std::string common;
  for (const std::string& c : columns) {
    const nlohmann::json* first = value_of(0, c);
    bool same = first != nullptr;
    for (std::size_t i = 1; same && i < runs.size(); ++i) {
      const nlohmann::json* v = value_of(i, c);
      same = v && *v == *first;
    }
    if (same) {
      const auto [n, text] = human_entry(c, *first);
      common += (common.empty() ? "" : " ") + n + "=" + text;
    } else {
      varying.push_back(c);
    }
  }
  std::string out = "study " + shown(name) + ": " + std::to_string(runs.size()) + " runs" +
                    (common.empty() ? "" : "; every run: " + common) + '\n';
  Rows table;
  std::vector<std::string> header = {"run", "evaluator", "status"};
  for (const std::string& c : varying) header.push_back(human_entry(c, nlohmann::json(0)).first);
  for (const char* h : {"time", "compute", "comm", "sync"}) header.push_back(h);
  table.push_back(header);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::vector<std::string> line = {std::to_string(runs[i].id), shown(runs[i].evaluator),
                                     std::string(db::to_string(runs[i].status))};
    for (const std::string& c : varying) {
      const nlohmann::json* v = value_of(i, c);
      line.push_back(v ? human_entry(c, *v).second : "-");
    }
    for (int k = 0; k < 4; ++k) {
      const nlohmann::json v = result_of(runs[i], k);
      line.push_back(v.is_null() ? "-" : human_time_ns(v.get<double>()));
    }
    table.push_back(std::move(line));
  }
  return out + aligned(table);
}

bool all_digits(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

// 1234567800 ns -> "1.235 s"; 5300 ns -> "5.3 µs".
std::string human_time_ns(double ns) {
  const double a = std::fabs(ns);
  if (a == 0) return "0 s";
  if (a < 1e3) return significant(ns, "ns");
  if (a < 1e6) return significant(ns / 1e3, "µs");
  if (a < 1e9) return significant(ns / 1e6, "ms");
  return significant(ns / 1e9, "s");
}

// 32768 -> "32 KiB"; 1000 -> "1000 B".
std::string human_bytes(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && std::fabs(bytes) >= 1024 && std::fmod(bytes, 1024) == 0) {
    bytes /= 1024;
    ++u;
  }
  if (u == 0 && std::fabs(bytes) >= 1024 * 1024)  // not a power-of-two multiple: still readable
    return significant(bytes / (1024.0 * 1024.0), "MiB");
  return significant(bytes, units[u]);
}

ReportFormat report_format(const std::string& name) {
  if (name == "json") return ReportFormat::Json;
  if (name == "csv") return ReportFormat::Csv;
  if (name == "table") return ReportFormat::Table;
  throw UsageError("--format", "'" + name + "' is not a format; expected table, json or csv");
}

std::optional<std::string> since_time(const std::string& text, std::time_t now) {
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front())) && text.size() >= 2) {
    const char unit = text.back();
    const std::string digits = text.substr(0, text.size() - 1);
    const bool age = (unit == 's' || unit == 'm' || unit == 'h' || unit == 'd') && all_digits(digits);
    if (age && digits.size() <= 9) {
      const long long n = std::stoll(digits);
      const long long seconds = n * (unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400);
      const std::time_t then = now - static_cast<std::time_t>(seconds);
      std::tm utc{};
      gmtime_r(&then, &utc);
      char buf[32];
      std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
      return buf;
    }
  }
  // YYYY-MM-DD, then optionally THH, :MM, :SS.
  static const char pattern[] = "dddd-dd-ddTdd:dd:dd";
  bool ok = text.size() >= 10 && text.size() <= 19 && text.size() != 11;
  for (std::size_t i = 0; ok && i < text.size(); ++i)
    ok = pattern[i] == 'd' ? std::isdigit(static_cast<unsigned char>(text[i])) != 0
                           : text[i] == pattern[i] || (i == 10 && text[i] == ' ');
  if (!ok) return std::nullopt;
  std::string iso = text;
  if (iso.size() > 10) iso[10] = 'T';
  return iso;
}

StoreReader::StoreReader(const std::string& path_option, double query_timeout_s) {
  db::Options options;
  options.read_only = true;  // reading never creates or changes a file
  options.query_time_limit_ms = static_cast<int>(query_timeout_s * 1000);
  kb_ = std::make_unique<db::KnowledgeBase>(db::resolve_path(path_option), options);
}

StoreReader::~StoreReader() = default;

RunsReport StoreReader::runs(const RunsRequest& request) const {
  db::RunFilter filter;
  if (!request.status.empty()) filter.status = db::parse_run_status(request.status);
  if (!request.model.empty()) filter.model = request.model;
  if (!request.evaluator.empty()) filter.evaluator = request.evaluator;
  if (!request.study.empty()) filter.study_name = request.study;
  if (!request.since.empty()) filter.since = request.since;
  db::RunFilter page = filter;
  if (request.limit > 0) {
    page.limit = request.limit;
    page.newest_first = true;  // the latest N, printed oldest first
  }
  std::vector<db::Run> list = kb_->runs(page);
  if (page.newest_first) std::reverse(list.begin(), list.end());
  RunsReport report;
  if (request.format == ReportFormat::Json) {
    nlohmann::json array = nlohmann::json::array();
    for (const db::Run& r : list) array.push_back(db::to_json(r));
    report.text = array.dump(2) + '\n';
  } else if (request.format == ReportFormat::Csv) {
    report.text = db::runs_to_csv(list);
  } else {
    report.text = runs_table(list);
    if (request.limit > 0 && list.size() == request.limit) {
      const std::int64_t all = kb_->count_runs(filter);
      if (all > static_cast<std::int64_t>(request.limit)) report.selected = all;
    }
  }
  return report;
}

std::string StoreReader::run(RunId id, ReportFormat format) const {
  std::optional<db::Run> run = kb_->run(id);
  if (!run) throw InputError("no run " + std::to_string(id) + " in '" + kb_->path().string() + "'");
  const std::vector<db::Ted> teds = kb_->teds(run->id);
  if (format == ReportFormat::Csv) return db::runs_to_csv({*run});
  return format == ReportFormat::Json ? run_json(*run, teds) : run_details(*run, teds);
}

std::string StoreReader::study(const std::string& name, ReportFormat format) const {
  db::RunFilter filter;
  filter.study_name = name;
  const std::vector<db::Run> list = kb_->runs(filter);
  if (list.empty()) {
    std::string names;
    int n = 0;
    for (const db::Study& s : kb_->studies())
      if (names.find("'" + s.name + "'") == std::string::npos && n++ < 20)
        names += (names.empty() ? "" : ", ") + ("'" + s.name + "'");
    throw InputError("no runs of a study named '" + name + "' in '" + kb_->path().string() + "'" +
                     (names.empty() ? " (it has no studies)" : " (studies: " + names + ")"));
  }
  return study_table(name, list, format);
}

std::string StoreReader::stats() const {
  const db::KnowledgeBase::Size s = kb_->size();
  const Rows table = {
      {"file", kb_->path().string()},
      {"schema_version", std::to_string(kb_->schema_version())},
      {"size", human_bytes(static_cast<double>(s.file_bytes)) + " (" + std::to_string(s.file_bytes) + " B)"},
      {"runs", std::to_string(s.runs)},
      {"results", std::to_string(s.results)},
      {"teds", std::to_string(s.teds)},
      {"studies", std::to_string(s.studies) + " (" + std::to_string(s.study_runs) + " memberships)"},
      {"bytes_per_run",
       s.runs > 0 ? std::to_string(static_cast<long long>(std::llround(double(s.file_bytes) / double(s.runs))))
                  : std::string("-")}};
  return aligned(table);
}

std::string StoreReader::export_all(ReportFormat format) const {
  return format == ReportFormat::Json ? kb_->export_json().dump(2) + '\n' : kb_->export_csv();
}

std::string StoreReader::query(const std::string& sql, ReportFormat format) const {
  const db::QueryResult rows = kb_->query_readonly(sql);
  if (format == ReportFormat::Json) return db::query_to_json(rows).dump(2) + '\n';
  if (format == ReportFormat::Csv) return db::query_to_csv(rows);
  Rows table = {rows.columns};
  for (std::string& c : table[0]) c = shown(c);
  for (const auto& row : rows.rows) {
    std::vector<std::string> line;
    for (const db::Cell& c : row) line.push_back(cell_text(c));
    table.push_back(std::move(line));
  }
  return aligned(table);
}

std::string migrate_store(const std::string& path_option) {
  db::Options options;
  options.create_if_missing = false;
  const db::KnowledgeBase kb(db::resolve_path(path_option), options);
  return kb.path().string() + ": schema version " + std::to_string(kb.schema_version()) + '\n';
}

}  // namespace poems::core
