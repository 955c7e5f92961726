// Errors raised by the knowledge base.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace poems::db {

// Any failure: an unreadable file, a constraint violation, bad SQL, ...
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The file was written by a newer poems; migrations only go forward.
class SchemaTooNewError : public Error {
 public:
  SchemaTooNewError(const std::string& path, int file_version, int supported_version);
  int file_version() const { return file_version_; }
  int supported_version() const { return supported_version_; }

 private:
  int file_version_, supported_version_;
};

// `query_readonly` was given a statement that would change something.
class ReadOnlyError : public Error {
 public:
  using Error::Error;
};

// The file is not a usable knowledge base: not SQLite, truncated or damaged.
// The message names the file and what to do; the file is left as it is.
class CorruptError : public Error {
 public:
  using Error::Error;
};

// One stored row cannot be read (a column that is not valid JSON, ...): the
// message names the table, the row (the run id for runs) and the column.
class DamagedRowError : public CorruptError {
 public:
  DamagedRowError(const std::string& message, std::int64_t row) : CorruptError(message), row_(row) {}
  std::int64_t row() const { return row_; }

 private:
  std::int64_t row_;
};

// A write could not be done (a read-only file or file system, a full disk,
// the lock held by another process for too long, a damaged file): whoever
// evaluates must treat the result as not stored (tools: exit 3 unless
// --no-store). Every write of KnowledgeBase throws this, never a bare Error.
class StoreError : public Error {
 public:
  using Error::Error;
};

// A read-only query went over its budget (time, steps or result size).
class QueryBudgetError : public Error {
 public:
  using Error::Error;
};

}  // namespace poems::db
