// A thin RAII layer over the SQLite C API: cached prepared statements and
// IMMEDIATE write transactions retried on SQLITE_BUSY. Private to poems_db.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "poems/db/error.h"

namespace poems::db::sql {

// SQLITE_BUSY or SQLITE_LOCKED: another connection holds the lock.
class BusyError : public Error {
 public:
  using Error::Error;
};

// SQLITE_READONLY and its extended codes: this connection may not write, or a
// read-only connection met a file that needs recovery (a hot journal).
class ReadOnlyDatabaseError : public Error {
 public:
  using Error::Error;
};

// Throws BusyError, ReadOnlyDatabaseError, CorruptError or Error with SQLite's message.
[[noreturn]] void fail(sqlite3* db, int rc, std::string_view context);

// A prepared statement; cached ones are reset (releasing their read lock) when
// the Statement goes away.
class Statement {
 public:
  Statement(sqlite3_stmt* stmt, bool* in_use, bool owned);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, std::nullopt_t);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind(index, std::nullopt);
  }
  // Binds ?1, ?2, ... in order.
  template <class... Args>
  Statement& with(const Args&... args) {
    int index = 0;
    (bind(++index, args), ...);
    return *this;
  }

  bool step();  // true: a row is ready
  void run();   // steps to the end, ignoring rows

  int columns() const;
  std::string column_name(int column) const;
  int type(int column) const;  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB, SQLITE_NULL
  bool is_null(int column) const { return type(column) == SQLITE_NULL; }
  std::int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;  // NULL reads as ""
  std::optional<std::int64_t> opt_int64(int column) const;
  std::optional<double> opt_real(int column) const;
  std::optional<std::string> opt_text(int column) const;
  sqlite3_stmt* handle() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_;
  bool* in_use_;
  bool owned_;
};

class Connection {
 public:
  Connection(const std::filesystem::path& path, int open_flags, int busy_timeout_ms, int busy_retries);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* handle() const { return db_; }
  // Cached prepared statement (one statement; trailing text is an error).
  Statement prepare(std::string_view sql);
  // Prepares and runs each statement of `sql` in turn (schema scripts).
  void run_script(std::string_view sql);
  // Calls `attempt` until it does not throw BusyError, with jittered sleeps.
  void retry_busy(const std::function<void()>& attempt);
  // Runs `body` in a BEGIN IMMEDIATE transaction, retried as a whole on
  // SQLITE_BUSY; inside an open transaction it simply joins it.
  void write(const std::function<void()>& body);
  // One transaction for a caller's batch: only BEGIN is retried, because the
  // body may have effects outside the database.
  void write_once(const std::function<void()>& body);
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

 private:
  // A failed write as the StoreError callers expect, naming the file.
  [[noreturn]] void store_failed(const Error& e) const;
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  void rollback_quietly();
  sqlite3* db_ = nullptr;
  int busy_retries_;
  std::unordered_map<std::string, std::unique_ptr<Cached>> cache_;
};

}  // namespace poems::db::sql
