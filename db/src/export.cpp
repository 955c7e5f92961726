// JSON and CSV forms of the knowledge base.
#include "internal.h"
#include "poems/base/csv.h"

namespace poems::db {

namespace {

nlohmann::json opt(const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
nlohmann::json opt(const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::string field(const std::optional<std::string>& v) { return v.value_or(""); }
std::string field(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : ""; }
std::string field(const std::optional<double>& v) { return v ? detail::format_double(*v) : ""; }

const std::vector<std::string> kRunCsvColumns = {
    "id",   "run_key", "model",      "evaluator",  "spec_hash",  "tool_version", "binding",      "status",
    "host", "pid",     "attempts",   "created_at", "started_at", "finished_at",  "wall_time_ns", "error",
    "kind", "time_ns", "compute_ns", "comm_ns",    "sync_ns",    "events",       "extra"};

std::string cell_text(const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) return detail::format_double(*d);
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return "";
}

nlohmann::json cell_json(const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return *i;
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return nullptr;
}

// One consistent snapshot for a multi-table read.
template <class F>
void read_snapshot(sql::Connection& conn, F&& body) {
  if (conn.in_transaction()) {
    body();
    return;
  }
  conn.prepare("BEGIN").run();
  try {
    body();
  } catch (...) {
    sqlite3_exec(conn.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  conn.prepare("COMMIT").run();
}

}  // namespace

nlohmann::json to_json(const Result& r) {
  return {{"kind", to_string(r.kind)}, {"time_ns", r.time_ns},      {"compute_ns", opt(r.compute_ns)},
          {"comm_ns", opt(r.comm_ns)}, {"sync_ns", opt(r.sync_ns)}, {"events", opt(r.events)},
          {"extra", r.extra}};
}

nlohmann::json to_json(const Run& run) {
  return {{"id", run.id},
          {"run_key", run.run_key},
          {"model", run.model},
          {"evaluator", run.evaluator},
          {"spec_hash", run.spec_hash},
          {"tool_version", run.tool_version},
          {"binding", run.binding},
          {"status", to_string(run.status)},
          {"host", run.host},
          {"pid", opt(run.pid)},
          {"attempts", run.attempts},
          {"created_at", run.created_at},
          {"started_at", opt(run.started_at)},
          {"finished_at", opt(run.finished_at)},
          {"wall_time_ns", opt(run.wall_time_ns)},
          {"error", opt(run.error)},
          {"result", run.result ? to_json(*run.result) : nlohmann::json()}};
}

std::string runs_to_csv(const std::vector<Run>& runs) {
  std::string out;
  base::append_csv_row(out, kRunCsvColumns);
  for (const Run& run : runs) {
    std::vector<std::string> f = {std::to_string(run.id),
                                  run.run_key,
                                  run.model,
                                  run.evaluator,
                                  run.spec_hash,
                                  run.tool_version,
                                  canonical_json(run.binding),
                                  std::string(to_string(run.status)),
                                  run.host,
                                  field(run.pid),
                                  std::to_string(run.attempts),
                                  run.created_at,
                                  field(run.started_at),
                                  field(run.finished_at),
                                  field(run.wall_time_ns),
                                  field(run.error)};
    if (run.result) {
      const Result& r = *run.result;
      for (std::string v : {std::string(to_string(r.kind)), detail::format_double(r.time_ns), field(r.compute_ns),
                            field(r.comm_ns), field(r.sync_ns), field(r.events), r.extra.dump()})
        f.push_back(std::move(v));
    } else {
      f.resize(kRunCsvColumns.size());
    }
    base::append_csv_row(out, f);
  }
  return out;
}

std::string query_to_csv(const QueryResult& result) {
  std::string out;
  base::append_csv_row(out, result.columns);
  for (const auto& row : result.rows) {
    std::vector<std::string> f;
    for (const Cell& c : row) f.push_back(cell_text(c));
    base::append_csv_row(out, f);
  }
  return out;
}

nlohmann::json query_to_json(const QueryResult& result) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : result.rows) {
    nlohmann::json object = nlohmann::json::object();
    for (std::size_t i = 0; i < row.size() && i < result.columns.size(); ++i)
      object[result.columns[i]] = cell_json(row[i]);
    out.push_back(std::move(object));
  }
  return out;
}

std::string KnowledgeBase::export_csv() const {
  std::string out;
  read_snapshot(*impl_->conn, [&] { out = runs_to_csv(runs()); });
  return out;
}

nlohmann::json KnowledgeBase::export_json() const {
  nlohmann::json out = {{"format", "poems-knowledge-base"}, {"schema_version", schema_version()}};
  read_snapshot(*impl_->conn, [&] {
    nlohmann::json& machines_json = out["machines"] = nlohmann::json::array();
    for (const Machine& m : machines())
      machines_json.push_back({{"name", m.name},
                               {"parameters", m.parameters},
                               {"provenance", to_string(m.provenance)},
                               {"source", m.source},
                               {"updated_at", m.updated_at}});
    nlohmann::json& calibrations_json = out["calibrations"] = nlohmann::json::array();
    for (const Calibration& c : calibrations(""))
      calibrations_json.push_back({{"id", c.id},
                                   {"machine", c.machine},
                                   {"parameter", c.parameter},
                                   {"value", c.value},
                                   {"method", c.method},
                                   {"measured_at", c.measured_at}});
    nlohmann::json& components_json = out["components"] = nlohmann::json::array();
    for (const Component& c : components())
      components_json.push_back(
          {{"id", c.id}, {"name", c.name}, {"content_hash", c.content_hash}, {"source_text", c.source_text}});
    nlohmann::json& graphs_json = out["task_graphs"] = nlohmann::json::array();
    for (const TaskGraphRecord& g : task_graphs())
      graphs_json.push_back({{"id", g.id}, {"model", g.model}, {"spec_hash", g.spec_hash}, {"summary", g.summary}});
    nlohmann::json& studies_json = out["studies"] = nlohmann::json::array();
    for (const Study& s : studies()) {
      nlohmann::json ids = nlohmann::json::array();
      for (const Run& r : runs({.study = s.id})) ids.push_back(r.id);
      studies_json.push_back({{"id", s.id}, {"name", s.name}, {"spec_hash", s.spec_hash}, {"runs", ids}});
    }
    nlohmann::json& runs_json = out["runs"] = nlohmann::json::array();
    for (const Run& r : runs()) {
      nlohmann::json j = to_json(r);
      nlohmann::json teds_json = nlohmann::json::array();
      for (const Ted& t : teds(r.id))
        teds_json.push_back({{"node", t.node}, {"evaluator", t.evaluator}, {"parameters", t.parameters}});
      j["teds"] = std::move(teds_json);
      runs_json.push_back(std::move(j));
    }
    nlohmann::json& rules_json = out["rules"] = nlohmann::json::array();
    for (const Rule& r : rules(""))
      rules_json.push_back({{"id", r.id},
                            {"problem_class", r.problem_class},
                            {"rule_text", r.rule_text},
                            {"support", r.support},
                            {"confidence", r.confidence},
                            {"data", r.data}});
  });
  return out;
}

}  // namespace poems::db
