// Reports of the knowledge base (docs/knowledge-base.md) as `poems db` prints
// them: runs, one run, a study as one table, the file's size, the export and
// read-only SQL, each as a table in human units, JSON or CSV. Tables show
// times and bindings in human units and stored text with its control
// characters as \xNN; CSV and JSON keep the stored numbers exactly. Reading
// opens the file read-only: it never changes (or creates) a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include "poems/db/records.h"

namespace poems::db {
class KnowledgeBase;
}

namespace poems::core {

using RunId = db::RowId;

enum class ReportFormat { Table, Json, Csv };
// "table", "json" or "csv" (a command line checks the name first).
ReportFormat report_format(const std::string& name);

// Which runs `runs` lists; empty strings select any.
struct RunsRequest {
  std::string status = {};  // pending, running, done or failed
  std::string model = {}, evaluator = {}, study = {};
  std::string since = {};  // ISO 8601 UTC time (since_time): runs created at or after it
  std::size_t limit = 0;   // the latest `limit` runs, printed oldest first; 0: all
  ReportFormat format = ReportFormat::Table;
};

struct RunsReport {
  std::string text;
  // When a table was cut at the limit: how many runs the request selects.
  std::optional<std::int64_t> selected;
};

class StoreReader {
 public:
  // Opens the knowledge base at `path_option` ("" = $POEMS_DB, else
  // ./poems.db) read-only; a query may run `query_timeout_s` seconds. Throws
  // db::Error when it is missing, not a knowledge base or too new.
  explicit StoreReader(const std::string& path_option, double query_timeout_s = 10);
  ~StoreReader();
  StoreReader(const StoreReader&) = delete;
  StoreReader& operator=(const StoreReader&) = delete;

  RunsReport runs(const RunsRequest& request) const;
  // One run: key, status, result and TEDs. Throws InputError for an unknown id.
  std::string run(RunId id, ReportFormat format) const;
  // A study's runs as one table: a row per run, a column per binding entry
  // (in a table only the entries that vary, the others on a line above),
  // the evaluator and the result. Throws InputError naming the studies there
  // are when none has the name.
  std::string study(const std::string& name, ReportFormat format) const;
  // File size, rows and bytes per run.
  std::string stats() const;
  // Everything (Json) or every run with its result (Csv).
  std::string export_all(ReportFormat format) const;
  // One read-only SQL statement's answer (db::KnowledgeBase::query_readonly).
  std::string query(const std::string& sql, ReportFormat format) const;

 private:
  std::unique_ptr<db::KnowledgeBase> kb_;
};

// Opens the knowledge base for writing, upgrading it to this poems' schema;
// returns "PATH: schema version N". Never creates a file.
std::string migrate_store(const std::string& path_option);

// `--since`: an ISO 8601 date or time ("2026-11-22", "2026-11-22T04:00",
// "2026-11-22 04:00:30") or an age before `now` ("90s", "30m", "12h", "7d"),
// as the ISO 8601 UTC text runs' creation times compare with; nullopt for
// anything else.
std::optional<std::string> since_time(const std::string& text, std::time_t now);

// Human units of the tables: 1234567800 ns -> "1.235 s", 5300 ns -> "5.3 µs".
std::string human_time_ns(double ns);
// 32768 -> "32 KiB"; 1000 -> "1000 B".
std::string human_bytes(double bytes);

}  // namespace poems::core
