// Machines, calibrations, components, task graphs, studies and rules.
#include "internal.h"

namespace poems::db {

namespace {

RowId last_id(sql::Connection& conn) { return sqlite3_last_insert_rowid(conn.handle()); }

Provenance parse_provenance(const std::string& text) {
  if (text == "published") return Provenance::kPublished;
  if (text == "calibrated") return Provenance::kCalibrated;
  return Provenance::kUser;
}

Machine read_machine(const sql::Statement& s) {
  return {s.text(0), detail::parse_column(s, 1, "machine '" + s.text(0) + "'", "parameters", 0),
          parse_provenance(s.text(2)), s.text(3), s.text(4)};
}

constexpr const char* kMachineColumns = "SELECT name, parameters, provenance, source, updated_at FROM machines";

}  // namespace

RowId KnowledgeBase::put_machine(const Machine& machine) {
  sql::Connection& conn = *impl_->conn;
  RowId id = 0;
  conn.write([&] {
    // An upsert keeps the id, so calibrations stay attached.
    sql::Statement s = conn.prepare(
        "INSERT INTO machines (name, parameters, provenance, source, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) "
        "ON CONFLICT (name) DO UPDATE SET parameters = excluded.parameters, provenance = excluded.provenance, "
        "source = excluded.source, updated_at = excluded.updated_at RETURNING id");
    s.with(machine.name, machine.parameters.dump(), to_string(machine.provenance), machine.source,
           detail::now_iso8601());
    if (!s.step()) throw Error("storing machine '" + machine.name + "' returned no id");
    id = s.int64(0);
  });
  return id;
}

std::optional<Machine> KnowledgeBase::machine(const std::string& name) const {
  sql::Statement s = impl_->conn->prepare(std::string(kMachineColumns) + " WHERE name = ?1");
  s.with(name);
  if (!s.step()) return std::nullopt;
  return read_machine(s);
}

std::vector<Machine> KnowledgeBase::machines() const {
  sql::Statement s = impl_->conn->prepare(std::string(kMachineColumns) + " ORDER BY name");
  std::vector<Machine> out;
  while (s.step()) out.push_back(read_machine(s));
  return out;
}

RowId KnowledgeBase::add_calibration(const Calibration& c) {
  sql::Connection& conn = *impl_->conn;
  RowId id = 0;
  conn.write([&] {
    sql::Statement find = conn.prepare("SELECT id FROM machines WHERE name = ?1");
    find.with(c.machine);
    if (!find.step()) throw Error("no machine '" + c.machine + "' to calibrate");
    RowId machine = find.int64(0);
    conn.prepare(
            "INSERT INTO calibrations (machine_id, parameter, value, method, measured_at) VALUES (?1, ?2, ?3, ?4, ?5)")
        .with(machine, c.parameter, c.value, c.method, c.measured_at.empty() ? detail::now_iso8601() : c.measured_at)
        .run();
    id = last_id(conn);
  });
  return id;
}

std::vector<Calibration> KnowledgeBase::calibrations(const std::string& machine) const {
  sql::Statement s = impl_->conn->prepare(
      "SELECT c.id, m.name, c.parameter, c.method, c.value, c.measured_at FROM calibrations c "
      "JOIN machines m ON m.id = c.machine_id WHERE ?1 = '' OR m.name = ?1 ORDER BY c.id");
  s.with(machine);
  std::vector<Calibration> out;
  while (s.step()) out.push_back({s.int64(0), s.text(1), s.text(2), s.text(3), s.real(4), s.text(5)});
  return out;
}

RowId KnowledgeBase::put_component(const std::string& name, const std::string& source_text) {
  sql::Connection& conn = *impl_->conn;
  std::string hash = sha256_hex(source_text);
  RowId id = 0;
  conn.write([&] {
    // DO UPDATE (a no-op) rather than DO NOTHING, so RETURNING gives the existing id.
    sql::Statement s = conn.prepare(
        "INSERT INTO components (name, source_text, content_hash, created_at) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (name, content_hash) DO UPDATE SET name = excluded.name RETURNING id");
    s.with(name, source_text, hash, detail::now_iso8601());
    if (!s.step()) throw Error("storing component '" + name + "' returned no id");
    id = s.int64(0);
  });
  return id;
}

std::vector<Component> KnowledgeBase::components() const {
  sql::Statement s = impl_->conn->prepare("SELECT id, name, source_text, content_hash FROM components ORDER BY id");
  std::vector<Component> out;
  while (s.step()) out.push_back({s.int64(0), s.text(1), s.text(2), s.text(3)});
  return out;
}

RowId KnowledgeBase::put_task_graph(const std::string& model, const std::string& spec_hash,
                                    const nlohmann::json& summary) {
  sql::Connection& conn = *impl_->conn;
  RowId id = 0;
  conn.write([&] {
    sql::Statement s = conn.prepare(
        "INSERT INTO task_graphs (model, spec_hash, summary, created_at) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (model, spec_hash) DO UPDATE SET summary = excluded.summary RETURNING id");
    s.with(model, spec_hash, summary.dump(), detail::now_iso8601());
    if (!s.step()) throw Error("storing task graph of '" + model + "' returned no id");
    id = s.int64(0);
  });
  return id;
}

std::vector<TaskGraphRecord> KnowledgeBase::task_graphs() const {
  sql::Statement s = impl_->conn->prepare("SELECT id, model, spec_hash, summary FROM task_graphs ORDER BY id");
  std::vector<TaskGraphRecord> out;
  while (s.step())
    out.push_back({s.int64(0), s.text(1), s.text(2),
                   detail::parse_column(s, 3, "task graph " + std::to_string(s.int64(0)), "summary", s.int64(0))});
  return out;
}

RowId KnowledgeBase::put_study(const std::string& name, const std::string& spec_hash) {
  sql::Connection& conn = *impl_->conn;
  RowId id = 0;
  conn.write([&] {
    sql::Statement s = conn.prepare(
        "INSERT INTO studies (name, spec_hash, created_at) VALUES (?1, ?2, ?3) "
        "ON CONFLICT (name, spec_hash) DO UPDATE SET name = excluded.name RETURNING id");
    s.with(name, spec_hash, detail::now_iso8601());
    if (!s.step()) throw Error("storing study '" + name + "' returned no id");
    id = s.int64(0);
  });
  return id;
}

void KnowledgeBase::add_run_to_study(RowId study, RowId run) {
  impl_->conn->write([&] {
    impl_->conn->prepare("INSERT OR IGNORE INTO study_runs (study_id, run_id) VALUES (?1, ?2)").with(study, run).run();
  });
}

std::vector<Study> KnowledgeBase::studies() const {
  sql::Statement s = impl_->conn->prepare("SELECT id, name, spec_hash FROM studies ORDER BY id");
  std::vector<Study> out;
  while (s.step()) out.push_back({s.int64(0), s.text(1), s.text(2)});
  return out;
}

RowId KnowledgeBase::add_rule(const Rule& rule) {
  sql::Connection& conn = *impl_->conn;
  RowId id = 0;
  conn.write([&] {
    conn.prepare(
            "INSERT INTO recommender_rules (problem_class, rule_text, support, confidence, data, created_at) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .with(rule.problem_class, rule.rule_text, rule.support, rule.confidence, rule.data.dump(),
              detail::now_iso8601())
        .run();
    id = last_id(conn);
  });
  return id;
}

void KnowledgeBase::replace_rules(const std::string& problem_class, const std::vector<Rule>& rules) {
  sql::Connection& conn = *impl_->conn;
  conn.write([&] {
    conn.prepare("DELETE FROM recommender_rules WHERE problem_class = ?1").with(problem_class).run();
    for (Rule rule : rules) {
      rule.problem_class = problem_class;
      add_rule(rule);  // joins this transaction
    }
  });
}

std::vector<Rule> KnowledgeBase::rules(const std::string& problem_class) const {
  sql::Statement s = impl_->conn->prepare(
      "SELECT id, problem_class, rule_text, support, confidence, data FROM recommender_rules "
      "WHERE ?1 = '' OR problem_class = ?1 ORDER BY id");
  s.with(problem_class);
  std::vector<Rule> out;
  while (s.step())
    out.push_back({s.int64(0), s.text(1), s.text(2), s.int64(3), s.real(4),
                   detail::parse_column(s, 5, "rule " + std::to_string(s.int64(0)), "data", s.int64(0))});
  return out;
}

}  // namespace poems::db
