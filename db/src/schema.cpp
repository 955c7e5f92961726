// The schema, as a list of forward migrations. Never edit a released
// migration: add a new one. docs/knowledge-base.md describes every column.
#include "poems/db/schema.h"

#include <sqlite3.h>

#include "internal.h"

namespace poems::db {

namespace {

constexpr std::string_view kVersion1 = R"sql(
CREATE TABLE machines (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  parameters  TEXT NOT NULL CHECK (json_valid(parameters)),
  provenance  TEXT NOT NULL CHECK (provenance IN ('published', 'calibrated', 'user')),
  source      TEXT NOT NULL DEFAULT '',
  updated_at  TEXT NOT NULL
);
CREATE TABLE calibrations (
  id          INTEGER PRIMARY KEY,
  machine_id  INTEGER NOT NULL REFERENCES machines(id) ON DELETE CASCADE,
  parameter   TEXT NOT NULL,
  value       REAL NOT NULL,
  method      TEXT NOT NULL,
  measured_at TEXT NOT NULL
);
CREATE INDEX calibrations_by_machine ON calibrations(machine_id, parameter);
CREATE TABLE components (
  id           INTEGER PRIMARY KEY,
  name         TEXT NOT NULL,
  source_text  TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  UNIQUE (name, content_hash)
);
CREATE TABLE task_graphs (
  id         INTEGER PRIMARY KEY,
  model      TEXT NOT NULL,
  spec_hash  TEXT NOT NULL,
  summary    TEXT NOT NULL CHECK (json_valid(summary)),
  created_at TEXT NOT NULL,
  UNIQUE (model, spec_hash)
);
CREATE TABLE studies (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  spec_hash  TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (name, spec_hash)
);
CREATE TABLE runs (
  id           INTEGER PRIMARY KEY,
  run_key      TEXT NOT NULL UNIQUE,
  key_text     TEXT NOT NULL,
  model        TEXT NOT NULL,
  evaluator    TEXT NOT NULL,
  spec_hash    TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  binding      TEXT NOT NULL CHECK (json_valid(binding)),
  status       TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
  host         TEXT NOT NULL DEFAULT '',
  pid          INTEGER,
  created_at   TEXT NOT NULL,
  started_at   TEXT,
  finished_at  TEXT,
  wall_time_ns INTEGER,
  error        TEXT
);
CREATE TABLE study_runs (
  study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  PRIMARY KEY (study_id, run_id)
) WITHOUT ROWID;
CREATE TABLE results (
  run_id     INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  kind       TEXT NOT NULL CHECK (kind IN ('predicted', 'measured')),
  time_ns    REAL NOT NULL,
  compute_ns REAL,
  comm_ns    REAL,
  sync_ns    REAL,
  events     INTEGER,
  extra      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(extra))
);
CREATE TABLE teds (
  id         INTEGER PRIMARY KEY,
  run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  node       TEXT NOT NULL,
  evaluator  TEXT NOT NULL,
  parameters TEXT NOT NULL CHECK (json_valid(parameters)),
  UNIQUE (run_id, node)
);
CREATE TABLE recommender_rules (
  id            INTEGER PRIMARY KEY,
  problem_class TEXT NOT NULL,
  rule_text     TEXT NOT NULL,
  support       INTEGER NOT NULL,
  confidence    REAL NOT NULL,
  data          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(data)),
  created_at    TEXT NOT NULL
);
CREATE INDEX rules_by_class ON recommender_rules(problem_class);
)sql";

// Resume bookkeeping. A pid alone can be reused by an unrelated process, so a
// claim also records the claimant's start time (/proc/PID/stat); attempts
// counts evaluations started; the indexes serve the resume scan and
// `poems db runs --model/--evaluator`.
constexpr std::string_view kVersion2 = R"sql(
ALTER TABLE runs ADD COLUMN pid_start INTEGER;
ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET attempts = 1 WHERE status <> 'pending';
CREATE INDEX runs_by_status ON runs(status);
CREATE INDEX runs_by_model ON runs(model, evaluator);
)sql";

// Listing at scale (docs/PERFORMANCE.md, 10^6 runs): `poems db runs --since`
// reads runs by creation time.
constexpr std::string_view kVersion3 = R"sql(
CREATE INDEX runs_by_created ON runs(created_at);
)sql";

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> list = {
      {1, "machines, calibrations, components, task graphs, studies, runs, results, TEDs, rules", kVersion1},
      {2, "runs.pid_start and runs.attempts for resume; indexes on runs(status) and runs(model, evaluator)", kVersion2},
      {3, "index on runs(created_at) for `poems db runs --since`", kVersion3},
  };
  return list;
}

int current_schema_version() { return migrations().back().version; }

int oldest_readable_schema_version() { return 2; }

SchemaTooNewError::SchemaTooNewError(const std::string& path, int file_version, int supported_version)
    : Error("knowledge base '" + path + "' has schema version " + std::to_string(file_version) +
            ", but this poems supports up to version " + std::to_string(supported_version) + "; use a newer poems"),
      file_version_(file_version),
      supported_version_(supported_version) {}

namespace detail {

int user_version(sql::Connection& conn) {
  sql::Statement stmt = conn.prepare("PRAGMA user_version");
  return stmt.step() ? static_cast<int>(stmt.int64(0)) : 0;
}

int inspect_schema(sql::Connection& conn, const std::string& path) {
  int version = 0;
  std::int64_t tables = 0;
  conn.retry_busy([&] {
    version = user_version(conn);
    sql::Statement count = conn.prepare("SELECT count(*) FROM sqlite_schema");
    tables = count.step() ? count.int64(0) : 0;
  });
  if (version > current_schema_version()) throw SchemaTooNewError(path, version, current_schema_version());
  if (version == 0 && tables > 0) throw Error("'" + path + "' is an SQLite file but not a POEMS knowledge base");
  return version;
}

void prepare_connection(sql::Connection& conn, const std::string& path) {
  // Fails here, not later, on a file that is not SQLite at all.
  int version = 0;
  conn.retry_busy([&] { version = user_version(conn); });
  if (version > current_schema_version()) throw SchemaTooNewError(path, version, current_schema_version());
  conn.retry_busy([&] {
    std::string current;
    {
      sql::Statement mode = conn.prepare("PRAGMA journal_mode");
      current = mode.step() ? mode.text(0) : "";
    }  // reset: an active statement would hold a read transaction open
    if (current == "wal") return;
    sql::Statement set = conn.prepare("PRAGMA journal_mode = WAL");
    if (!set.step() || set.text(0) != "wal") throw Error("cannot switch '" + path + "' to WAL mode");
  });
  // NORMAL in WAL mode: a killed process loses nothing it committed; a power
  // cut may lose the last commits but never corrupts the file.
  conn.run_script("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;");
}

void migrate(sql::Connection& conn, const std::string& path, int target) {
  if (user_version(conn) >= target) return;  // cheap common case, no write lock
  conn.write([&] {
    int version = user_version(conn);  // again: another process may have migrated meanwhile
    if (version > current_schema_version()) throw SchemaTooNewError(path, version, current_schema_version());
    if (version == 0) {
      sql::Statement tables = conn.prepare("SELECT count(*) FROM sqlite_schema");
      if (tables.step() && tables.int64(0) > 0)
        throw Error("'" + path + "' is an SQLite file but not a POEMS knowledge base");
    }
    for (const Migration& m : migrations()) {
      if (m.version <= version || m.version > target) continue;
      conn.run_script(m.sql);
      // PRAGMA takes no parameters; the number is ours, not user input.
      conn.run_script("PRAGMA user_version = " + std::to_string(m.version));
    }
  });
}

}  // namespace detail

void migrate_file_to(const std::filesystem::path& path, int version) {
  if (version < 0 || version > current_schema_version()) throw Error("no schema version " + std::to_string(version));
  sql::Connection conn(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5000, 20);
  detail::prepare_connection(conn, path.string());
  detail::migrate(conn, path.string(), version);
}

}  // namespace poems::db
