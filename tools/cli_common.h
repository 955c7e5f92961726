// Conventions shared by every `poems` subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace poems::cli {

// Exit codes of every command.
enum ExitCode : int {
  kExitOk = 0,
  kExitInputError = 1,   // errors in the user's input (PSL, GOAL, decks)
  kExitUsage = 2,        // bad command line
  kExitEvaluation = 3,   // an evaluation failed (deadlock, timeout, ...)
};

// Each subcommand registers itself and stores its exit code in `result`.
void register_check(CLI::App& app, int& result);
void register_ast(CLI::App& app, int& result);

}  // namespace poems::cli
