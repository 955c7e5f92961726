// The POEMS knowledge base: one SQLite file (docs/knowledge-base.md).
//
//   KnowledgeBase kb(resolve_path(""));
//   RunStart start = kb.begin_run(key);
//   if (start.state == RunStart::State::kClaimed) kb.complete_run(start.handle, evaluate(...));
//
// One object per thread; several processes may share a file.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "poems/db/error.h"
#include "poems/db/records.h"
#include "poems/db/run_key.h"

namespace poems::db {

// The file the CLI uses: `explicit_path` if not empty, else $POEMS_DB if set
// and not empty, else ./poems.db.
std::filesystem::path resolve_path(const std::string& explicit_path);

// The columns of a run's row that a claim overwrites, as they were before it.
struct ClaimedColumns {
  RunStatus status = RunStatus::kPending;
  std::string host;
  std::optional<std::int64_t> pid, pid_start;
  std::int64_t attempts = 0;
  std::optional<std::string> started_at, finished_at;
  std::optional<std::int64_t> wall_time_ns;
  std::optional<std::string> error;
};

// Proof that this process claimed a run and should evaluate it.
struct RunHandle {
  RowId id = 0;
  std::chrono::steady_clock::time_point claimed_at;  // for the run's wall time
  bool created = false;                              // the claim inserted the run's row (no earlier attempt)
  ClaimedColumns before;                             // what abandon_run writes back to an earlier attempt's run
};

struct RunStart {
  enum class State {
    kClaimed,      // evaluate it, then complete_run or fail_run
    kAlreadyDone,  // `run.result` holds the stored result: nothing to do
    kBusy,         // another live process on this host is evaluating it
  };
  State state = State::kClaimed;
  RunHandle handle;  // kClaimed
  Run run;           // the row after the call
};

// An evaluation that already happened, to be recorded as a done run.
struct CompletedRun {
  RunKey key;
  Result result;
  std::optional<std::int64_t> wall_time_ns = {};
};

struct RecordedRun {
  enum class State {
    kStored,       // a new result: the run is done with it
    kAlreadyDone,  // the run was done before: its stored result stays
    kBusy,         // a live process is evaluating it: left to that process
  };
  RowId id = 0;
  State state = State::kStored;
};

struct RunFilter {
  std::optional<RunStatus> status = {};
  std::optional<std::string> model = {}, evaluator = {}, spec_hash = {};
  std::optional<RowId> study = {};
  std::optional<std::string> study_name = {};  // runs of every study of this name (any specification)
  std::optional<std::string> since = {};       // created at or after this ISO 8601 UTC time ("2026-11-22T04:00")
  std::optional<std::size_t> limit = {};       // at most this many runs
  bool newest_first = false;                   // latest runs first (with `limit`: the latest N)
};

// A read-only query's answer; blobs are given as lowercase hex text.
using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;
struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
};

struct Options {
  bool create_if_missing = true;  // false: a missing file is an Error
  // Reading only: the file is opened SQLITE_OPEN_READONLY and never changed
  // (no WAL switch, no migration); an older schema is an Error saying how to
  // upgrade it. Every file is inspected read-only first in any case: one
  // that is not a POEMS knowledge base is refused before anything is written.
  bool read_only = false;
  int busy_timeout_ms = 5000;  // per attempt, then a jittered retry
  int busy_retries = 20;
  // Budget of one query_readonly(): wall time, SQLite VM steps, result size.
  int query_time_limit_ms = 10'000;
  std::int64_t query_step_limit = 2'000'000'000;
  std::size_t query_max_rows = 1'000'000;
  std::size_t query_max_bytes = std::size_t{256} << 20;
};

class KnowledgeBase {
 public:
  // Opens (creating when allowed) and migrates the file to the current schema.
  // Throws SchemaTooNewError for files written by a newer poems, CorruptError
  // for files that are not SQLite (truncated, damaged: never replaced),
  // Error otherwise.
  explicit KnowledgeBase(const std::filesystem::path& path, const Options& options = {});
  ~KnowledgeBase();
  KnowledgeBase(const KnowledgeBase&) = delete;
  KnowledgeBase& operator=(const KnowledgeBase&) = delete;

  const std::filesystem::path& path() const;
  int schema_version() const;  // the file's, after migration

  // Runs a group of writes as one transaction (much faster than one each);
  // the API's own writes inside it join it. Rolls back if `body` throws.
  void transaction(const std::function<void()>& body);

  // --- runs -------------------------------------------------------------
  // Finds the run of `key`, creating it as pending. Never claims.
  Run find_or_create_run(const RunKey& key);
  // Finds or creates the run and claims it for this process, unless it is done
  // (the stored result is returned) or a live process holds it. Pending, failed
  // and stale running runs are claimed (the resume rule in docs/knowledge-base.md).
  RunStart begin_run(const RunKey& key);
  // Stores the result and marks the run done, atomically. Returns false when
  // the run was already done (another claimant finished first; its result stays).
  bool complete_run(const RunHandle& handle, const Result& result);
  // Marks a claimed run failed with a message; the next begin_run retries it.
  void fail_run(const RunHandle& handle, const std::string& error);
  // Gives back a claim whose evaluation never started (a parallel study that
  // claimed ahead and then stopped): a run the claim created is deleted, as
  // if never begun; an earlier attempt's run gets back every column the claim
  // changed (status, error, times, claimant, attempts), as if never claimed.
  // A run no longer held by this claim (done, failed, claimed again) is left as it is.
  void abandon_run(const RunHandle& handle);
  // begin_run, then `evaluate` when claimed (failing the run if it throws).
  // Returns the stored or fresh result, or nothing when another process holds it.
  std::optional<Result> evaluate_once(const RunKey& key, const std::function<Result()>& evaluate);

  // Records evaluations that already happened (cheap analytic ones, evaluated
  // in a batch): each run is found or created and completed with its result,
  // in one transaction (or the caller's). Pending, failed and stale runs are
  // completed as begin_run + complete_run would; done runs keep their result.
  std::vector<RecordedRun> record_runs(const std::vector<CompletedRun>& runs);
  // The run of `key` if it is done (never creates or claims).
  std::optional<Run> find_done_run(const RunKey& key) const;

  std::optional<Run> run(RowId id) const;
  // Runs matching every given filter, in id order (or newest first). Each
  // filter has an index (schema v3), so a filtered page of a 10^6-run base
  // is answered in milliseconds (docs/PERFORMANCE.md).
  std::vector<Run> runs(const RunFilter& filter = {}) const;
  // How many runs match (the limit ignored).
  std::int64_t count_runs(const RunFilter& filter = {}) const;
  // Bytes of the file (pages in use and free) and rows of the big tables.
  struct Size {
    std::int64_t file_bytes = 0, runs = 0, results = 0, teds = 0, studies = 0, study_runs = 0;
  };
  Size size() const;

  void store_teds(RowId run, const std::vector<Ted>& teds);  // replaces the run's TEDs
  std::vector<Ted> teds(RowId run) const;

  // --- catalog ------------------------------------------------------------
  RowId put_machine(const Machine& machine);  // insert or replace by name
  std::optional<Machine> machine(const std::string& name) const;
  std::vector<Machine> machines() const;

  RowId add_calibration(const Calibration& calibration);  // the machine must exist
  std::vector<Calibration> calibrations(const std::string& machine) const;

  RowId put_component(const std::string& name, const std::string& source_text);  // deduplicated by hash
  std::vector<Component> components() const;

  RowId put_task_graph(const std::string& model, const std::string& spec_hash, const nlohmann::json& summary);
  std::vector<TaskGraphRecord> task_graphs() const;

  RowId put_study(const std::string& name, const std::string& spec_hash);
  void add_run_to_study(RowId study, RowId run);
  std::vector<Study> studies() const;

  RowId add_rule(const Rule& rule);
  std::vector<Rule> rules(const std::string& problem_class) const;  // empty class: all
  // Replaces every rule of `problem_class` with `rules`, in one transaction.
  void replace_rules(const std::string& problem_class, const std::vector<Rule>& rules);

  // --- export and ad-hoc queries ----------------------------------------
  // Every table, as {"schema_version": N, "runs": [...], "machines": [...], ...}.
  nlohmann::json export_json() const;
  // One line per run with its result (RFC 4180; numbers round-trip exactly).
  std::string export_csv() const;
  // One SELECT on a separate SQLITE_OPEN_READONLY connection whose authorizer
  // admits only reads; anything else throws ReadOnlyError, bad SQL Error.
  QueryResult query_readonly(const std::string& sql) const;
  // The same with values bound to ?1, ?2, ... (NULL for std::monostate).
  QueryResult query_readonly(const std::string& sql, const std::vector<Cell>& params) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// JSON form of a run, as `poems db runs --format json` prints it.
nlohmann::json to_json(const Run& run);
nlohmann::json to_json(const Result& result);
// CSV of runs with the export_csv columns.
std::string runs_to_csv(const std::vector<Run>& runs);
std::string query_to_csv(const QueryResult& result);
nlohmann::json query_to_json(const QueryResult& result);  // array of objects

}  // namespace poems::db
