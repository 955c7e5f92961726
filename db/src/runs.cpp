// Runs and results: find-or-create, claims, completion, and the resume rule.
#include <algorithm>
#include <cstdint>

#include "internal.h"

namespace poems::db {

namespace detail {

const char* const kRunColumns =
    "runs.id, runs.run_key, runs.key_text, runs.model, runs.evaluator, runs.spec_hash, runs.tool_version, "
    "runs.binding, runs.status, runs.host, runs.pid, runs.attempts, runs.created_at, runs.started_at, "
    "runs.finished_at, runs.wall_time_ns, runs.error, results.kind, results.time_ns, results.compute_ns, "
    "results.comm_ns, results.sync_ns, results.events, results.extra, runs.pid_start "
    "FROM runs LEFT JOIN results ON results.run_id = runs.id";
constexpr int kPidStartColumn = 24;

Run read_run(const sql::Statement& s) {
  Run run;
  run.id = s.int64(0);
  run.run_key = s.text(1);
  run.key_text = s.text(2);
  run.model = s.text(3);
  run.evaluator = s.text(4);
  run.spec_hash = s.text(5);
  run.tool_version = s.text(6);
  run.binding = parse_column(s, 7, "run " + std::to_string(run.id), "binding", run.id);
  run.status = parse_run_status(s.text(8)).value_or(RunStatus::kPending);
  run.host = s.text(9);
  run.pid = s.opt_int64(10);
  run.attempts = s.int64(11);
  run.created_at = s.text(12);
  run.started_at = s.opt_text(13);
  run.finished_at = s.opt_text(14);
  run.wall_time_ns = s.opt_int64(15);
  run.error = s.opt_text(16);
  if (!s.is_null(17)) {
    Result r;
    r.kind = s.text(17) == "measured" ? ResultKind::kMeasured : ResultKind::kPredicted;
    r.time_ns = s.real(18);
    r.compute_ns = s.opt_real(19);
    r.comm_ns = s.opt_real(20);
    r.sync_ns = s.opt_real(21);
    r.events = s.opt_int64(22);
    r.extra = parse_column(s, 23, "run " + std::to_string(run.id), "result's extra", run.id);
    run.result = std::move(r);
  }
  return run;
}

}  // namespace detail

namespace {

struct Found {
  Run run;
  std::optional<std::int64_t> pid_start;
};

std::optional<Found> find_by_key(sql::Connection& conn, const std::string& digest, const std::string& text) {
  sql::Statement s = conn.prepare(std::string("SELECT ") + detail::kRunColumns + " WHERE runs.run_key = ?1");
  s.with(digest);
  if (!s.step()) return std::nullopt;
  Found found{detail::read_run(s), s.opt_int64(detail::kPidStartColumn)};
  if (found.run.key_text != text)
    throw Error("run key collision: run " + std::to_string(found.run.id) + " has key " + digest +
                " but a different key text");
  return found;
}

std::optional<Run> find_by_id(sql::Connection& conn, RowId id) {
  sql::Statement s = conn.prepare(std::string("SELECT ") + detail::kRunColumns + " WHERE runs.id = ?1");
  s.with(id);
  if (!s.step()) return std::nullopt;
  return detail::read_run(s);
}

RowId insert_run(sql::Connection& conn, const RunKey& key, const std::string& digest, const std::string& text) {
  conn.prepare(
          "INSERT INTO runs (run_key, key_text, model, evaluator, spec_hash, tool_version, binding, status, "
          "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8)")
      .with(digest, text, key.model, key.evaluator, key.spec_hash, key.tool_version, canonical_json(key.binding),
            detail::now_iso8601())
      .run();
  return sqlite3_last_insert_rowid(conn.handle());
}

// A running row is stale when its claimant cannot be running any more: it is
// this very process (an earlier attempt that never finished), it ran on
// another host (a copied file; SQLite locking does not span hosts), or it is
// gone from this host.
bool held_by_live_process(const Found& found) {
  const detail::ProcessIdentity& me = detail::this_process();
  const Run& run = found.run;
  if (run.host != me.host || !run.pid) return false;
  if (*run.pid == me.pid) return false;
  return detail::process_alive(*run.pid, found.pid_start);
}

void claim(sql::Connection& conn, RowId id) {
  const detail::ProcessIdentity& me = detail::this_process();
  conn.prepare(
          "UPDATE runs SET status = 'running', host = ?2, pid = ?3, pid_start = ?4, started_at = ?5, "
          "finished_at = NULL, wall_time_ns = NULL, error = NULL, attempts = attempts + 1 WHERE id = ?1")
      .with(id, me.host, me.pid, me.start_ticks, detail::now_iso8601())
      .run();
}

ClaimedColumns claimed_columns(const Found& found) {
  const Run& run = found.run;
  return {run.status,     run.host,        run.pid,          found.pid_start, run.attempts,
          run.started_at, run.finished_at, run.wall_time_ns, run.error};
}

// Whether the run is still this handle's claim: running, by this process, in
// the attempt the claim began (not finished since, nor claimed again).
bool still_claimed(sql::Connection& conn, const RunHandle& handle) {
  const detail::ProcessIdentity& me = detail::this_process();
  sql::Statement s = conn.prepare(
      "SELECT count(*) FROM runs WHERE id = ?1 AND status = 'running' AND host = ?2 AND pid = ?3 AND attempts = ?4");
  s.with(handle.id, me.host, me.pid, handle.before.attempts + 1);
  return s.step() && s.int64(0) == 1;
}

std::string run_status(sql::Connection& conn, RowId id) {
  sql::Statement s = conn.prepare("SELECT status FROM runs WHERE id = ?1");
  s.with(id);
  if (!s.step()) throw Error("no run " + std::to_string(id));
  return s.text(0);
}

}  // namespace

Run KnowledgeBase::find_or_create_run(const RunKey& key) {
  std::string text = key.canonical_text(), digest = sha256_hex(text);
  Run run;
  impl_->conn->write([&] {
    std::optional<Found> found = find_by_key(*impl_->conn, digest, text);
    run = found ? found->run : *find_by_id(*impl_->conn, insert_run(*impl_->conn, key, digest, text));
  });
  return run;
}

RunStart KnowledgeBase::begin_run(const RunKey& key) {
  std::string text = key.canonical_text(), digest = sha256_hex(text);
  RunStart start;
  sql::Connection& conn = *impl_->conn;
  conn.write([&] {
    start = RunStart{};
    std::optional<Found> found = find_by_key(conn, digest, text);
    if (found && found->run.status == RunStatus::kDone) {
      start.state = RunStart::State::kAlreadyDone;
      start.run = std::move(found->run);
      return;
    }
    if (found && found->run.status == RunStatus::kRunning && held_by_live_process(*found)) {
      start.state = RunStart::State::kBusy;
      start.run = std::move(found->run);
      return;
    }
    RowId id = found ? found->run.id : insert_run(conn, key, digest, text);
    claim(conn, id);
    start.state = RunStart::State::kClaimed;
    start.handle.id = id;
    start.handle.created = !found;
    if (found) start.handle.before = claimed_columns(*found);  // else a new row's defaults
    start.run = *find_by_id(conn, id);
  });
  start.handle.claimed_at = std::chrono::steady_clock::now();
  return start;
}

bool KnowledgeBase::complete_run(const RunHandle& handle, const Result& result) {
  std::optional<std::int64_t> wall;
  if (handle.claimed_at != std::chrono::steady_clock::time_point{})
    wall = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - handle.claimed_at)
               .count();
  std::string extra = result.extra.is_null() ? "{}" : result.extra.dump();
  bool stored = false;
  sql::Connection& conn = *impl_->conn;
  conn.write([&] {
    stored = false;
    if (run_status(conn, handle.id) == "done") return;
    conn.prepare(
            "INSERT INTO results (run_id, kind, time_ns, compute_ns, comm_ns, sync_ns, events, extra) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (run_id) DO UPDATE SET kind = excluded.kind, "
            "time_ns = excluded.time_ns, compute_ns = excluded.compute_ns, comm_ns = excluded.comm_ns, "
            "sync_ns = excluded.sync_ns, events = excluded.events, extra = excluded.extra")
        .with(handle.id, to_string(result.kind), result.time_ns, result.compute_ns, result.comm_ns, result.sync_ns,
              result.events, extra)
        .run();
    conn.prepare("UPDATE runs SET status = 'done', finished_at = ?2, wall_time_ns = ?3, error = NULL WHERE id = ?1")
        .with(handle.id, detail::now_iso8601(), wall)
        .run();
    stored = true;
  });
  return stored;
}

void KnowledgeBase::fail_run(const RunHandle& handle, const std::string& error) {
  sql::Connection& conn = *impl_->conn;
  conn.write([&] {
    if (run_status(conn, handle.id) == "done") return;
    conn.prepare("UPDATE runs SET status = 'failed', finished_at = ?2, error = ?3 WHERE id = ?1")
        .with(handle.id, detail::now_iso8601(), error)
        .run();
  });
}

void KnowledgeBase::abandon_run(const RunHandle& handle) {
  sql::Connection& conn = *impl_->conn;
  conn.write([&] {
    if (!still_claimed(conn, handle)) return;
    if (handle.created) {  // its results, TEDs and study links go with it (ON DELETE CASCADE)
      conn.prepare("DELETE FROM runs WHERE id = ?1").with(handle.id).run();
      return;
    }
    const ClaimedColumns& b = handle.before;
    conn.prepare(
            "UPDATE runs SET status = ?2, host = ?3, pid = ?4, pid_start = ?5, attempts = ?6, started_at = ?7, "
            "finished_at = ?8, wall_time_ns = ?9, error = ?10 WHERE id = ?1")
        .with(handle.id, to_string(b.status), b.host, b.pid, b.pid_start, b.attempts, b.started_at, b.finished_at,
              b.wall_time_ns, b.error)
        .run();
  });
}

std::optional<Result> KnowledgeBase::evaluate_once(const RunKey& key, const std::function<Result()>& evaluate) {
  RunStart start = begin_run(key);
  if (start.state == RunStart::State::kAlreadyDone) return start.run.result;
  if (start.state == RunStart::State::kBusy) return std::nullopt;
  Result result;
  try {
    result = evaluate();
  } catch (const std::exception& e) {
    fail_run(start.handle, e.what());
    throw;
  } catch (...) {
    fail_run(start.handle, "unknown exception");
    throw;
  }
  if (complete_run(start.handle, result)) return result;
  return run(start.handle.id)->result;  // someone else finished first: theirs is the stored one
}

std::vector<RecordedRun> KnowledgeBase::record_runs(const std::vector<CompletedRun>& runs) {
  std::vector<RecordedRun> out;
  sql::Connection& conn = *impl_->conn;
  const detail::ProcessIdentity& me = detail::this_process();
  conn.write([&] {
    out.clear();
    out.reserve(runs.size());
    const std::string now = detail::now_iso8601();
    for (const CompletedRun& c : runs) {
      if (!c.key.binding.is_object()) throw Error("a run's binding must be a JSON object");
      const std::string binding = canonical_json(c.key.binding);
      const std::string text = detail::canonical_key_text(c.key, binding), digest = sha256_hex(text);
      // The common case, a run never seen before, is one insert of a done run.
      sql::Statement insert = conn.prepare(
          "INSERT INTO runs (run_key, key_text, model, evaluator, spec_hash, tool_version, binding, status, host, "
          "pid, pid_start, attempts, created_at, started_at, finished_at, wall_time_ns) VALUES (?1, ?2, ?3, ?4, ?5, "
          "?6, ?7, 'done', ?8, ?9, ?10, 1, ?11, ?11, ?11, ?12) ON CONFLICT (run_key) DO NOTHING RETURNING id");
      insert.with(digest, text, c.key.model, c.key.evaluator, c.key.spec_hash, c.key.tool_version, binding, me.host,
                  me.pid, me.start_ticks, now, c.wall_time_ns);
      RecordedRun r;
      if (insert.step()) {
        r.id = insert.int64(0);
        insert.run();  // finish the statement before the next one
      } else {
        std::optional<Found> found = find_by_key(conn, digest, text);
        if (!found) throw Error("run " + digest + " neither inserted nor found");
        r.id = found->run.id;
        if (found->run.status == RunStatus::kDone) {
          r.state = RecordedRun::State::kAlreadyDone;
        } else if (found->run.status == RunStatus::kRunning && held_by_live_process(*found)) {
          r.state = RecordedRun::State::kBusy;
        } else {
          claim(conn, r.id);
          conn.prepare("UPDATE runs SET status = 'done', finished_at = ?2, wall_time_ns = ?3 WHERE id = ?1")
              .with(r.id, now, c.wall_time_ns)
              .run();
        }
      }
      if (r.state == RecordedRun::State::kStored) {
        const Result& res = c.result;
        conn.prepare(
                "INSERT INTO results (run_id, kind, time_ns, compute_ns, comm_ns, sync_ns, events, extra) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (run_id) DO UPDATE SET kind = excluded.kind, "
                "time_ns = excluded.time_ns, compute_ns = excluded.compute_ns, comm_ns = excluded.comm_ns, "
                "sync_ns = excluded.sync_ns, events = excluded.events, extra = excluded.extra")
            .with(r.id, to_string(res.kind), res.time_ns, res.compute_ns, res.comm_ns, res.sync_ns, res.events,
                  res.extra.is_null() ? std::string("{}") : res.extra.dump())
            .run();
      }
      out.push_back(r);
    }
  });
  return out;
}

std::optional<Run> KnowledgeBase::find_done_run(const RunKey& key) const {
  const std::string text = key.canonical_text();
  std::optional<Found> found = find_by_key(*impl_->conn, sha256_hex(text), text);
  if (!found || found->run.status != RunStatus::kDone) return std::nullopt;
  return std::move(found->run);
}

std::optional<Run> KnowledgeBase::run(RowId id) const { return find_by_id(*impl_->conn, id); }

namespace {

// The WHERE clause of a filter: fixed fragments for the filters given (so
// each can use its index; "?N IS NULL OR ..." would scan every row), every
// value bound. At most 2^7 distinct texts, each prepared once and cached.
std::string run_conditions(const RunFilter& f) {
  std::string where;
  auto add = [&](const char* condition) { where += (where.empty() ? " WHERE " : " AND ") + std::string(condition); };
  if (f.status) add("runs.status = ?1");
  if (f.model) add("runs.model = ?2");
  if (f.evaluator) add("runs.evaluator = ?3");
  if (f.spec_hash) add("runs.spec_hash = ?4");
  if (f.study) add("runs.id IN (SELECT run_id FROM study_runs WHERE study_id = ?5)");
  if (f.study_name)
    add("runs.id IN (SELECT study_runs.run_id FROM study_runs JOIN studies ON studies.id = study_runs.study_id "
        "WHERE studies.name = ?6)");
  if (f.since) add("runs.created_at >= ?7");
  return where;
}

void bind_conditions(sql::Statement& s, const RunFilter& f) {
  if (f.status) s.bind(1, to_string(*f.status));
  if (f.model) s.bind(2, *f.model);
  if (f.evaluator) s.bind(3, *f.evaluator);
  if (f.spec_hash) s.bind(4, *f.spec_hash);
  if (f.study) s.bind(5, *f.study);
  if (f.study_name) s.bind(6, *f.study_name);
  if (f.since) s.bind(7, *f.since);
}

}  // namespace

std::vector<Run> KnowledgeBase::runs(const RunFilter& filter) const {
  std::string text = std::string("SELECT ") + detail::kRunColumns + run_conditions(filter) + " ORDER BY runs.id" +
                     (filter.newest_first ? " DESC" : "") + (filter.limit ? " LIMIT ?8" : "");
  sql::Statement s = impl_->conn->prepare(text);
  bind_conditions(s, filter);
  if (filter.limit) s.bind(8, static_cast<std::int64_t>(std::min<std::size_t>(*filter.limit, std::size_t{INT64_MAX})));
  std::vector<Run> out;
  while (s.step()) out.push_back(detail::read_run(s));
  return out;
}

std::int64_t KnowledgeBase::count_runs(const RunFilter& filter) const {
  sql::Statement s = impl_->conn->prepare("SELECT count(*) FROM runs" + run_conditions(filter));
  bind_conditions(s, filter);
  return s.step() ? s.int64(0) : 0;
}

KnowledgeBase::Size KnowledgeBase::size() const {
  Size out;
  auto scalar = [&](const char* sql) {
    sql::Statement s = impl_->conn->prepare(sql);
    return s.step() ? s.int64(0) : 0;
  };
  out.file_bytes = scalar("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()");
  out.runs = scalar("SELECT count(*) FROM runs");
  out.results = scalar("SELECT count(*) FROM results");
  out.teds = scalar("SELECT count(*) FROM teds");
  out.studies = scalar("SELECT count(*) FROM studies");
  out.study_runs = scalar("SELECT count(*) FROM study_runs");
  return out;
}

void KnowledgeBase::store_teds(RowId run, const std::vector<Ted>& teds) {
  sql::Connection& conn = *impl_->conn;
  conn.write([&] {
    run_status(conn, run);  // throws for an unknown run
    conn.prepare("DELETE FROM teds WHERE run_id = ?1").with(run).run();
    for (const Ted& ted : teds)
      conn.prepare("INSERT INTO teds (run_id, node, evaluator, parameters) VALUES (?1, ?2, ?3, ?4)")
          .with(run, ted.node, ted.evaluator, ted.parameters.is_null() ? "{}" : ted.parameters.dump())
          .run();
  });
}

std::vector<Ted> KnowledgeBase::teds(RowId run) const {
  sql::Statement s = impl_->conn->prepare("SELECT node, evaluator, parameters FROM teds WHERE run_id = ?1 ORDER BY id");
  s.with(run);
  std::vector<Ted> out;
  while (s.step())
    out.push_back({s.text(0), s.text(1),
                   detail::parse_column(s, 2, "run " + std::to_string(run) + " TED " + s.text(0), "parameters", run)});
  return out;
}

}  // namespace poems::db
