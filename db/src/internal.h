// Shared by the poems_db sources; not installed.
#pragma once

#include <memory>
#include <string>

#include "poems/base/escaped.h"
#include "poems/db/knowledge_base.h"
#include "sqlite.h"

namespace poems::db {

namespace detail {
int user_version(sql::Connection& conn);
// The schema version of a file opened read-only; throws SchemaTooNewError
// for a newer one and Error for an SQLite file that is not a knowledge base.
int inspect_schema(sql::Connection& conn, const std::string& path);
// Checks the version, switches to WAL, turns on foreign keys.
void prepare_connection(sql::Connection& conn, const std::string& path);
// Runs the migrations up to `target` in one write transaction.
void migrate(sql::Connection& conn, const std::string& path, int target);

// A JSON column of a row, parsed; a value the JSON reader refuses is a
// DamagedRowError naming the table, the row and the column.
// `which` names the row for people ("run 42", "machine 'Odin'").
nlohmann::json parse_column(const sql::Statement& stmt, int column, const std::string& which, const char* column_name,
                            std::int64_t row);
// `text` safe for messages: control characters (newline and tab too) and
// bytes that are not UTF-8 as \xNN.
inline std::string printable(std::string_view text) { return base::escaped(text, base::Whitespace::Hex); }
// "its file and what to do" for messages about damaged files.
std::string damaged_advice(const std::string& path);

// UTC now as "2025-01-31T12:34:56.789Z".
std::string now_iso8601();
// Shortest text that reads back to the same double.
std::string format_double(double value);

// Who claims a run: host name, pid and the pid's start time, so that a
// recycled pid is not mistaken for the claimant.
struct ProcessIdentity {
  std::string host;
  std::int64_t pid = 0;
  std::optional<std::int64_t> start_ticks;  // /proc/PID/stat field 22; none off Linux
};
const ProcessIdentity& this_process();
// True when the claimant still runs. Only meaningful on the same host.
bool process_alive(std::int64_t pid, std::optional<std::int64_t> start_ticks);

// RunKey::canonical_text() given the canonical text of its binding.
std::string canonical_key_text(const RunKey& key, const std::string& binding_text);

// Column list and reader shared by run(), runs() and export.
extern const char* const kRunColumns;  // "runs.id, ..., results.*"
Run read_run(const sql::Statement& stmt);
}  // namespace detail

struct KnowledgeBase::Impl {
  std::filesystem::path path;
  Options options;
  std::unique_ptr<sql::Connection> conn;
  mutable std::unique_ptr<sql::Connection> readonly;  // opened by the first query_readonly
};

}  // namespace poems::db
