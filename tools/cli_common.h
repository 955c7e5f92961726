// Conventions shared by every `poems` subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace poems::cli {

// Exit codes of every command.
enum ExitCode : int {
  kExitOk = 0,
  kExitInputError = 1,  // errors in the user's input (PSL, GOAL, decks)
  kExitUsage = 2,       // bad command line
  kExitEvaluation = 3,  // an evaluation failed (deadlock, timeout, ...)
};

// Each subcommand registers itself and stores its exit code in `result`.
void register_check(CLI::App& app, int& result);
void register_db(CLI::App& app, int& result);
void register_ast(CLI::App& app, int& result);
void register_simulate(CLI::App& app, int& result);
void register_analyze(CLI::App& app, int& result);
void register_taskgraph(CLI::App& app, int& result);
void register_compile(CLI::App& app, int& result);
void register_run(CLI::App& app, int& result);
void register_direct(CLI::App& app, int& result);
// mpirun's spelling `poems direct PROGRAM -np 4`: rewrites -np to --np before
// parsing (CLI11 short options have one letter); the program's arguments
// after `--` are left alone.
void normalize_direct_arguments(int argc, char** argv);
void register_recommend(CLI::App& app, int& result);
void register_measure(CLI::App& app, int& result);
void register_calibrate(CLI::App& app, int& result);

// Parses repeated `--set name=value` options; values take units ("5.3us",
// "32KiB"). Throws CLI::ValidationError naming the bad option.
std::map<std::string, double> parse_bindings(const std::vector<std::string>& sets);

// Reads and checks a PSL specification and lowers one model's task graph.
// Prints diagnostics to stderr; returns false (exit code in `result`) on failure.
struct LoadedModel;
bool load_model(const std::string& spec, const std::string& model, LoadedModel& out, int& result);
// The same with more PSL files loaded beside the specification (`--import
// local.psl`: a machine written by `poems calibrate`).
bool load_model(const std::vector<std::string>& files, const std::string& model, LoadedModel& out, int& result);

// Prints rows as left-aligned columns two spaces apart (the first row is
// usually the header).
using TextTable = std::vector<std::vector<std::string>>;
void print_table(const TextTable& table, std::ostream& out);

}  // namespace poems::cli
