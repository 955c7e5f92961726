// Errors raised by the knowledge base.
#pragma once

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

}  // namespace poems::db
