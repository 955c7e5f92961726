// `poems db runs|show|study|stats|export|query|migrate`: read the knowledge
// base (docs/knowledge-base.md). Every command but `migrate` opens the file
// read-only: it never changes (or creates) a file. Tables show times and
// bindings in human units; CSV and JSON keep the stored numbers exactly.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <set>

#include "cli_common.h"
#include "poems/db/knowledge_base.h"
#include "poems/db/schema.h"

namespace poems::cli {

namespace {

using Table = TextTable;  // first row: header

std::string number(double value) { return nlohmann::json(value).dump(); }
std::string or_dash(const std::optional<std::string>& text) { return text ? *text : "-"; }
template <class T>
std::string or_dash(const std::optional<T>& value) {
  return value ? nlohmann::json(*value).dump() : "-";
}

// Control characters of stored text (a hostile binding, an error message)
// never reach the terminal.
std::string shown(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// ------------------------------------------------------------ human units

std::string significant(double v, const char* unit) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, unit);
  return buf;
}

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
void print_aligned(const Table& table, std::ostream& out) {
  std::vector<std::size_t> width;
  for (const auto& row : table)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], display_width(row[c]));
    }
  for (const auto& row : table) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - display_width(row[c]) + 2, ' ');
    }
    out << line << '\n';
  }
}

// "2026-11-22T04:23:08.992Z" -> "2026-11-22 04:23:08".
std::string human_date(const std::optional<std::string>& iso) {
  if (!iso || iso->size() < 19) return or_dash(iso);
  std::string s = iso->substr(0, 19);
  s[10] = ' ';
  return s;
}

// ------------------------------------------------------------ tables

void print_runs_table(const std::vector<db::Run>& runs, std::ostream& out) {
  Table table = {{"id", "status", "model", "evaluator", "time", "attempts", "finished", "binding"}};
  for (const db::Run& r : runs)
    table.push_back({std::to_string(r.id), std::string(db::to_string(r.status)), shown(r.model), shown(r.evaluator),
                     r.result ? human_time_ns(r.result->time_ns) : "-", std::to_string(r.attempts),
                     human_date(r.finished_at), human_binding(r.binding, 100)});
  print_aligned(table, out);
}

void print_run_details(const db::Run& r, const std::vector<db::Ted>& teds, std::ostream& out) {
  Table fields = {{"run", std::to_string(r.id)},
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
  print_aligned(fields, out);
}

std::string cell_text(const db::Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) return number(*d);
  if (const auto* s = std::get_if<std::string>(&cell)) return shown(*s);
  return "NULL";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// One study as one table: a row per run, a column per binding entry (raw
// names and numbers in CSV and JSON; human units, varying entries only, in
// the table), the evaluator and the result.
void print_study(const std::string& name, const std::vector<db::Run>& runs, const std::string& format,
                 std::ostream& out) {
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
  if (format == "json") {
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
    out << nlohmann::json({{"study", name}, {"runs", rows}}).dump(2) << '\n';
    return;
  }
  if (format == "csv") {
    out << "run,model,evaluator,status";
    for (const std::string& c : columns) out << ',' << csv_field(c);
    for (const char* r : results) out << ',' << r;
    out << '\n';
    for (std::size_t i = 0; i < runs.size(); ++i) {
      out << runs[i].id << ',' << csv_field(runs[i].model) << ',' << csv_field(runs[i].evaluator) << ','
          << db::to_string(runs[i].status);
      for (const std::string& c : columns) {
        const nlohmann::json* v = value_of(i, c);
        out << ','
            << (!v || v->is_null() ? ""
                : v->is_string()   ? csv_field(v->get<std::string>())
                                   : csv_field(v->dump()));
      }
      for (int k = 0; k < 5; ++k) {
        const nlohmann::json v = result_of(runs[i], k);
        out << ',' << (v.is_null() ? "" : v.dump());
      }
      out << '\n';
    }
    return;
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
  out << "study " << shown(name) << ": " << runs.size() << " runs" << (common.empty() ? "" : "; every run: " + common)
      << '\n';
  Table table;
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
  print_aligned(table, out);
}

// `--since`: an ISO 8601 date or time ("2026-11-22", "2026-11-22T04:00"), or
// an age ("90s", "30m", "12h", "7d"); returns the ISO text to compare with.
std::string since_text(const std::string& text) {
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front())) && text.size() >= 2) {
    const char unit = text.back();
    const std::string digits = text.substr(0, text.size() - 1);
    const bool age =
        (unit == 's' || unit == 'm' || unit == 'h' || unit == 'd') &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (age && digits.size() <= 9) {
      const long long n = std::stoll(digits);
      const long long seconds = n * (unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400);
      const std::time_t then = std::time(nullptr) - static_cast<std::time_t>(seconds);
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
  if (!ok)
    throw CLI::ValidationError("--since", "'" + text +
                                              "' is not a date (2026-11-22, 2026-11-22T04:00) or an age "
                                              "(90s, 30m, 12h, 7d)");
  std::string iso = text;
  if (iso.size() > 10) iso[10] = 'T';
  return iso;
}

// Opens the knowledge base read-only and runs `body`; errors are exit 1.
template <class F>
void with_kb(const std::string& db_option, int& result, F&& body, double query_timeout_s = 10) {
  try {
    db::Options options;
    options.read_only = true;  // reading commands never create or change a file
    options.query_time_limit_ms = static_cast<int>(query_timeout_s * 1000);
    db::KnowledgeBase kb(db::resolve_path(db_option), options);
    body(kb);
  } catch (const CLI::Error&) {
    throw;
  } catch (const std::exception& e) {
    std::cerr << "poems: error: " << shown(e.what()) << '\n';
    result = kExitInputError;
  }
}

CLI::Option* add_db_option(CLI::App* cmd, std::string& db) {
  return cmd->add_option("--db", db, "Knowledge base file (default: $POEMS_DB, else ./poems.db)");
}

}  // namespace

void register_db(CLI::App& app, int& result) {
  struct Options {
    std::string db, format = "table", status, model, evaluator, study, since, sql, name;
    std::optional<std::size_t> limit;
    double timeout = 10;
    db::RowId id = 0;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* group = app.add_subcommand("db", "Inspect the knowledge base: runs, studies, size, export, read-only SQL");
  group->require_subcommand(1);

  CLI::App* runs = group->add_subcommand("runs", "List stored runs (the latest 50 in a table; --limit 0 for all)");
  add_db_option(runs, opts->db);
  runs->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  runs->add_option("--status", opts->status, "Only runs with this status")
      ->check(CLI::IsMember({"pending", "running", "done", "failed"}));
  runs->add_option("--model", opts->model, "Only runs of this model");
  runs->add_option("--evaluator", opts->evaluator, "Only runs of this evaluator, e.g. analytic[LogGP]");
  runs->add_option("--study", opts->study, "Only runs of this study");
  runs->add_option("--since", opts->since, "Only runs created since a date (2026-11-22T04:00) or an age (12h, 7d)");
  runs->add_option("--limit", opts->limit,
                   "At most N runs, the latest (default: 50 in a table, all in json and csv; 0: all)");
  runs->callback([opts, &result] {
    db::RunFilter filter;
    if (!opts->status.empty()) filter.status = db::parse_run_status(opts->status);
    if (!opts->model.empty()) filter.model = opts->model;
    if (!opts->evaluator.empty()) filter.evaluator = opts->evaluator;
    if (!opts->study.empty()) filter.study_name = opts->study;
    if (!opts->since.empty()) filter.since = since_text(opts->since);
    const std::size_t limit = opts->limit.value_or(opts->format == "table" ? 50 : 0);
    with_kb(opts->db, result, [&](db::KnowledgeBase& kb) {
      db::RunFilter page = filter;
      if (limit > 0) {
        page.limit = limit;
        page.newest_first = true;  // the latest N, printed oldest first
      }
      std::vector<db::Run> list = kb.runs(page);
      if (page.newest_first) std::reverse(list.begin(), list.end());
      if (opts->format == "json") {
        nlohmann::json array = nlohmann::json::array();
        for (const db::Run& r : list) array.push_back(db::to_json(r));
        std::cout << array.dump(2) << '\n';
      } else if (opts->format == "csv") {
        std::cout << db::runs_to_csv(list);
      } else {
        print_runs_table(list, std::cout);
        if (limit > 0 && list.size() == limit) {
          const std::int64_t all = kb.count_runs(filter);
          if (all > static_cast<std::int64_t>(limit))
            std::cerr << "the latest " << limit << " of " << all << " runs; --limit N for more (0: all)\n";
        }
      }
    });
  });

  CLI::App* show = group->add_subcommand("show", "Show one run: key, status, result, TEDs");
  show->add_option("id", opts->id, "Run id")->required();
  add_db_option(show, opts->db);
  show->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  show->callback([opts, &result] {
    with_kb(opts->db, result, [&](db::KnowledgeBase& kb) {
      std::optional<db::Run> run = kb.run(opts->id);
      if (!run) throw db::Error("no run " + std::to_string(opts->id) + " in '" + kb.path().string() + "'");
      std::vector<db::Ted> teds = kb.teds(run->id);
      if (opts->format == "json") {
        nlohmann::json j = db::to_json(*run);
        j["teds"] = nlohmann::json::array();
        for (const db::Ted& t : teds)
          j["teds"].push_back({{"node", t.node}, {"evaluator", t.evaluator}, {"parameters", t.parameters}});
        std::cout << j.dump(2) << '\n';
      } else if (opts->format == "csv") {
        std::cout << db::runs_to_csv({*run});
      } else {
        print_run_details(*run, teds, std::cout);
      }
    });
  });

  CLI::App* study = group->add_subcommand("study", "A study's runs as one table: binding, evaluator, result");
  study->add_option("name", opts->name, "Study name")->required();
  add_db_option(study, opts->db);
  study->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  study->callback([opts, &result] {
    with_kb(opts->db, result, [&](db::KnowledgeBase& kb) {
      db::RunFilter filter;
      filter.study_name = opts->name;
      std::vector<db::Run> list = kb.runs(filter);
      if (list.empty()) {
        std::string names;
        int n = 0;
        for (const db::Study& s : kb.studies())
          if (names.find("'" + s.name + "'") == std::string::npos && n++ < 20)
            names += (names.empty() ? "" : ", ") + ("'" + s.name + "'");
        throw db::Error("no runs of a study named '" + opts->name + "' in '" + kb.path().string() + "'" +
                        (names.empty() ? " (it has no studies)" : " (studies: " + names + ")"));
      }
      print_study(opts->name, list, opts->format, std::cout);
    });
  });

  CLI::App* stats = group->add_subcommand("stats", "Size of the knowledge base: file, rows, bytes per run");
  add_db_option(stats, opts->db);
  stats->callback([opts, &result] {
    with_kb(opts->db, result, [&](db::KnowledgeBase& kb) {
      const db::KnowledgeBase::Size s = kb.size();
      Table t = {
          {"file", kb.path().string()},
          {"schema_version", std::to_string(kb.schema_version())},
          {"size", human_bytes(static_cast<double>(s.file_bytes)) + " (" + std::to_string(s.file_bytes) + " B)"},
          {"runs", std::to_string(s.runs)},
          {"results", std::to_string(s.results)},
          {"teds", std::to_string(s.teds)},
          {"studies", std::to_string(s.studies) + " (" + std::to_string(s.study_runs) + " memberships)"},
          {"bytes_per_run",
           s.runs > 0 ? std::to_string(static_cast<long long>(std::llround(double(s.file_bytes) / double(s.runs))))
                      : std::string("-")}};
      print_aligned(t, std::cout);
    });
  });

  CLI::App* exp = group->add_subcommand("export", "Export everything (json) or every run with its result (csv)");
  add_db_option(exp, opts->db);
  exp->add_option("--format", opts->format, "Output format")->required()->check(CLI::IsMember({"json", "csv"}));
  exp->callback([opts, &result] {
    with_kb(opts->db, result, [&](db::KnowledgeBase& kb) {
      if (opts->format == "json")
        std::cout << kb.export_json().dump(2) << '\n';
      else
        std::cout << kb.export_csv();
    });
  });

  CLI::App* query = group->add_subcommand("query", "Run one read-only SQL statement (SELECT, WITH, read pragmas)");
  query->add_option("sql", opts->sql, "The statement")->required();
  add_db_option(query, opts->db);
  query->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  query->add_option("--timeout", opts->timeout, "Seconds the statement may run before it is stopped")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  query->callback([opts, &result] {
    with_kb(
        opts->db, result,
        [&](db::KnowledgeBase& kb) {
          db::QueryResult rows = kb.query_readonly(opts->sql);
          if (opts->format == "json") {
            std::cout << db::query_to_json(rows).dump(2) << '\n';
          } else if (opts->format == "csv") {
            std::cout << db::query_to_csv(rows);
          } else {
            Table table = {rows.columns};
            for (std::string& c : table[0]) c = shown(c);
            for (const auto& row : rows.rows) {
              std::vector<std::string> line;
              for (const db::Cell& c : row) line.push_back(cell_text(c));
              table.push_back(std::move(line));
            }
            print_aligned(table, std::cout);
          }
        },
        opts->timeout);
  });

  CLI::App* migrate = group->add_subcommand("migrate", "Upgrade a knowledge base to this poems' schema (writes)");
  add_db_option(migrate, opts->db);
  migrate->callback([opts, &result] {
    try {
      db::Options options;
      options.create_if_missing = false;
      db::KnowledgeBase kb(db::resolve_path(opts->db), options);
      std::cout << kb.path().string() << ": schema version " << kb.schema_version() << '\n';
    } catch (const std::exception& e) {
      std::cerr << "poems: error: " << shown(e.what()) << '\n';
      result = kExitInputError;
    }
  });
}

}  // namespace poems::cli
