// The `poems` command line: every subcommand registers its options (the
// grammar shared by all of them is options.h) and a function that calls the
// libraries and prints. run() is the whole tool, in process: main() and the
// tests call it.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

// Forward declared: CLI11 is a large header, and the end-to-end tests that
// include this one never touch it (the commands include it through options.h).
namespace CLI {
class App;
}

namespace poems::cli {

// Exit codes of every command (core::ErrorKind gives them for errors).
enum ExitCode : int {
  kExitOk = 0,
  kExitInputError = 1,  // errors in the user's input (PSL, GOAL, decks)
  kExitUsage = 2,       // bad command line
  kExitEvaluation = 3,  // an evaluation failed, or its result could not be stored
};

// Where a command prints, and the exit code it chose. A command may also
// throw a core::Error: run() prints it and exits with its code.
struct Context {
  std::ostream& out;
  std::ostream& err;
  int result = kExitOk;
  // "poems: warning: ..." on err.
  void warn(const std::string& message) const;
};

// Runs the tool on `args` (without the program name).
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// Each command adds its subcommand to `app`; its callback runs with `ctx`.
void register_check(CLI::App& app, Context& ctx);
void register_ast(CLI::App& app, Context& ctx);
void register_db(CLI::App& app, Context& ctx);
void register_taskgraph(CLI::App& app, Context& ctx);
void register_compile(CLI::App& app, Context& ctx);
void register_simulate(CLI::App& app, Context& ctx);
void register_analyze(CLI::App& app, Context& ctx);
void register_run(CLI::App& app, Context& ctx);
void register_measure(CLI::App& app, Context& ctx);
void register_direct(CLI::App& app, Context& ctx);
void register_recommend(CLI::App& app, Context& ctx);
void register_calibrate(CLI::App& app, Context& ctx);
void register_trace(CLI::App& app, Context& ctx);
void register_scaling(CLI::App& app, Context& ctx);
void register_comet(CLI::App& app, Context& ctx);

}  // namespace poems::cli
