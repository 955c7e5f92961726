// A model's real program (docs/direct.md, docs/sweep3d.md): what simulation[direct] runs
// on simulated ranks and measurement[mpirun] runs under mpirun. Generic code
// names no program: the code that owns a model registers its program (the
// examples register their programs with their input decks).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/core/evaluators.h"

namespace poems::core {

// What the program is given for one binding.
struct ProgramInput {
  std::vector<std::string> args;                     // its arguments (files written into the run's directory)
  std::uint32_t ranks = 1;                           // processes
  nlohmann::json record = nlohmann::json::object();  // stored with the result (e.g. the deck)
  std::string working_directory;                     // where it runs ("" = where poems runs)
};

// What the program's result line says.
struct ProgramResult {
  double time_ns = 0;                  // the part of the run the models predict
  double compute_ns = 0, comm_ns = 0;  // per-process means (measured runs)
  std::uint64_t messages = 0;
  nlohmann::json extra = nlohmann::json::object();
};

struct ModelProgram {
  std::string model;
  std::string measured;       // executable beside poems for measurement[mpirun] ("" = none)
  std::string direct;         // executable built with poems-mpicxx for simulation[direct] ("" = none)
  std::string result_prefix;  // the program prints "PREFIX{json}" on one line
  // Writes the program's input for `e` into `dir`; throws InputError.
  std::function<ProgramInput(const Evaluation& e, const std::filesystem::path& dir)> input;
  // Why the program refuses this binding ("" = it takes it); asked before running it.
  std::function<std::string(const Evaluation& e)> refuses;
  std::function<ProgramResult(const nlohmann::json& result)> read;
  // simulation[direct]: the program keeps no per-rank state in globals, so
  // its ranks may be threads (which switch in nanoseconds, processes in
  // microseconds; docs/direct.md, "Ranks").
  bool ranks_as_threads = false;

  // A program attached in PSL (core/attached_program.h) builds its
  // executables on demand: this returns the path of the one for direct
  // execution or for mpirun (throws EvaluationError). Unset: `direct` and
  // `measured` are executables beside poems.
  std::function<std::string(bool direct)> executable;
  // Reads the time from what the program printed (a PSL pattern), instead of
  // a `result_prefix` JSON line.
  std::function<ProgramResult(const std::string& output)> read_output;
  // simulation[direct] times the computation on the host between MPI calls
  // instead of charging only what the program declares with POEMS_Compute.
  bool measured_compute = false;
  double timeout_seconds = 0;  // per run; 0 = the evaluator's default
};

void register_program(ModelProgram program);
const ModelProgram* find_program(const std::string& model);
// Models with a program of that kind, for messages.
std::vector<std::string> models_with_programs(bool measured);

// A program built beside the running executable (build/bin), or "" if absent.
std::string sibling_program(const std::string& name);

}  // namespace poems::core
