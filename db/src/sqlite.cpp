#include "sqlite.h"

#include <unistd.h>
#include <chrono>
#include <random>
#include <thread>

namespace poems::db::sql {

void fail(sqlite3* db, int rc, std::string_view context) {
  std::string message = std::string(context) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  int primary = rc & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) throw BusyError(message);
  if (primary == SQLITE_READONLY) throw ReadOnlyDatabaseError(message);
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
    const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
    const std::string path = file && *file ? file : "?";
    throw CorruptError("knowledge base '" + path + "' is damaged (" + message + "); " + "`sqlite3 " + path +
                       " .recover` may save its rows; or restore a backup, or move it aside " +
                       "and let poems start a new one");
  }
  throw Error(message);
}

Statement::Statement(sqlite3_stmt* stmt, bool* in_use, bool owned) : stmt_(stmt), in_use_(in_use), owned_(owned) {}

Statement::Statement(Statement&& other) noexcept : stmt_(other.stmt_), in_use_(other.in_use_), owned_(other.owned_) {
  other.stmt_ = nullptr;
  other.in_use_ = nullptr;
}

Statement::~Statement() {
  if (!stmt_) return;
  if (owned_) {
    sqlite3_finalize(stmt_);
    return;
  }
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  if (in_use_) *in_use_ = false;
}

namespace {
void check_bind(sqlite3_stmt* stmt, int rc) {
  if (rc != SQLITE_OK) fail(sqlite3_db_handle(stmt), rc, "binding a parameter");
}
}  // namespace

Statement& Statement::bind(int index, std::int64_t value) {
  check_bind(stmt_, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}
Statement& Statement::bind(int index, double value) {
  check_bind(stmt_, sqlite3_bind_double(stmt_, index, value));
  return *this;
}
Statement& Statement::bind(int index, std::string_view value) {
  check_bind(stmt_, sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}
Statement& Statement::bind(int index, std::nullopt_t) {
  check_bind(stmt_, sqlite3_bind_null(stmt_, index));
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(sqlite3_db_handle(stmt_), rc, "executing SQL");
}

void Statement::run() {
  while (step()) {
  }
}

int Statement::columns() const { return sqlite3_column_count(stmt_); }
std::string Statement::column_name(int column) const {
  const char* name = sqlite3_column_name(stmt_, column);
  return name ? name : "";
}
int Statement::type(int column) const { return sqlite3_column_type(stmt_, column); }
std::int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::string Statement::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (!p) return "";
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}
std::optional<std::int64_t> Statement::opt_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}
std::optional<double> Statement::opt_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}
std::optional<std::string> Statement::opt_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

Connection::Connection(const std::filesystem::path& path, int open_flags, int busy_timeout_ms, int busy_retries)
    : busy_retries_(busy_retries) {
  int rc = sqlite3_open_v2(path.c_str(), &db_, open_flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw Error("cannot open knowledge base '" + path.string() + "': " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
}

Connection::~Connection() {
  for (auto& [sql, cached] : cache_) sqlite3_finalize(cached->stmt);
  sqlite3_close_v2(db_);
}

Statement Connection::prepare(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it == cache_.end()) {
    auto cached = std::make_unique<Cached>();
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &cached->stmt,
                                &tail);
    if (rc != SQLITE_OK) fail(db_, rc, "preparing SQL");
    it = cache_.emplace(std::string(sql), std::move(cached)).first;
  }
  Cached& cached = *it->second;
  if (cached.in_use) {  // re-entrant use: a private copy
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) fail(db_, rc, "preparing SQL");
    return Statement(stmt, nullptr, true);
  }
  cached.in_use = true;
  return Statement(cached.stmt, &cached.in_use, false);
}

void Connection::run_script(std::string_view sql) {
  const char* p = sql.data();
  const char* end = sql.data() + sql.size();
  while (p < end) {
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v2(db_, p, static_cast<int>(end - p), &stmt, &tail);
    if (rc != SQLITE_OK) fail(db_, rc, "preparing SQL");
    if (!stmt) break;  // only whitespace or comments left
    Statement(stmt, nullptr, true).run();
    p = tail;
  }
}

void Connection::retry_busy(const std::function<void()>& attempt) {
  // Jitter keeps two waiting writers from retrying in lockstep.
  thread_local std::minstd_rand jitter(static_cast<unsigned>(::getpid()));
  for (int n = 0;; ++n) {
    try {
      attempt();
      return;
    } catch (const BusyError&) {
      if (n >= busy_retries_) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(1 + jitter() % (10 * (n + 1))));
    }
  }
}

void Connection::rollback_quietly() {
  if (in_transaction()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

[[noreturn]] void Connection::store_failed(const Error& e) const {
  const char* file = sqlite3_db_filename(db_, "main");
  const std::string where = file && *file ? std::string(file) : "the knowledge base";
  if (dynamic_cast<const BusyError*>(&e))
    throw StoreError("cannot write '" + where + "': another process held it locked too long (" + e.what() + ")");
  throw StoreError("cannot write '" + where + "': " + e.what());
}

void Connection::write(const std::function<void()>& body) {
  if (in_transaction()) {
    body();
    return;
  }
  try {
    retry_busy([&] {
      try {
        prepare("BEGIN IMMEDIATE").run();
        body();
        prepare("COMMIT").run();
      } catch (...) {
        rollback_quietly();
        throw;
      }
    });
  } catch (const StoreError&) {
    throw;
  } catch (const Error& e) {
    store_failed(e);
  }
}

void Connection::write_once(const std::function<void()>& body) {
  if (in_transaction()) {
    body();
    return;
  }
  try {
    retry_busy([&] { prepare("BEGIN IMMEDIATE").run(); });
  } catch (const Error& e) {
    store_failed(e);
  }
  try {
    body();
    retry_busy([&] { prepare("COMMIT").run(); });
  } catch (const StoreError&) {
    rollback_quietly();
    throw;
  } catch (const Error& e) {
    rollback_quietly();
    store_failed(e);
  } catch (...) {
    rollback_quietly();
    throw;
  }
}

}  // namespace poems::db::sql
