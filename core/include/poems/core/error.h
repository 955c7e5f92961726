// The errors of the evaluation core. Each says what kind of failure it is,
// and so which exit code a command returns: the core never prints and never
// exits; tools/ turns an error into a message and an exit code.
#pragma once

#include <stdexcept>
#include <string>

#include "poems/db/error.h"

namespace poems::core {

enum class ErrorKind {
  Input = 1,       // the user's files: PSL, GOAL, decks, values in them
  Usage = 2,       // the command line: an option's value, an unknown or ambiguous name
  Evaluation = 3,  // an evaluation failed (deadlock, program failure), or its result could not be stored
};

class Error : public std::runtime_error {
 public:
  // `diagnostics`: rendered PSL or GOAL diagnostics behind the error
  // ("file:line:col: error: ..." with the line and a caret), printed as they
  // are; the message may then be empty (the diagnostics say it all).
  Error(ErrorKind kind, const std::string& message, std::string diagnostics = {})
      : std::runtime_error(message), kind_(kind), diagnostics_(std::move(diagnostics)) {}
  ErrorKind kind() const { return kind_; }
  int exit_code() const { return static_cast<int>(kind_); }
  const std::string& diagnostics() const { return diagnostics_; }

 private:
  ErrorKind kind_;
  std::string diagnostics_;
};

class InputError : public Error {
 public:
  explicit InputError(const std::string& message, std::string diagnostics = {})
      : Error(ErrorKind::Input, message, std::move(diagnostics)) {}
};

// A bad command-line value or name; `option` is what it was given to
// ("--set mk", "--machine"), and the message says what is allowed.
class UsageError : public Error {
 public:
  UsageError(std::string option, const std::string& message)
      : Error(ErrorKind::Usage, option.empty() ? message : option + ": " + message), option_(std::move(option)) {}
  const std::string& option() const { return option_; }

 private:
  std::string option_;
};

class EvaluationError : public Error {
 public:
  explicit EvaluationError(const std::string& message, std::string diagnostics = {})
      : Error(ErrorKind::Evaluation, message, std::move(diagnostics)) {}
};

// The knowledge base could not record a result: the knowledge base's own
// error (poems/db/error.h), thrown by its writes and by core's Store and
// RunRecord alike. It is not an Error: every place that classifies errors
// takes an exception that is not an Error as an evaluation failure (exit 3;
// the result would be lost; --no-store evaluates without storing).
using StoreError = db::StoreError;

}  // namespace poems::core
