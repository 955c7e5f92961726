// Running a program built with poems-mpicxx under direct execution: as a
// child process (its faults and globals stay out of `poems`), options in its
// environment, result back as JSON (poems/direct/protocol.h). Used by
// `poems direct` and by the simulation[direct] model evaluator.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "poems/direct/runtime.h"

namespace poems::core {

struct DirectRun {
  std::optional<direct::DirectResult> result;  // none if the program died without a result
  std::string failure;                         // why there is no result (signal, timeout, not a POEMS program)
  std::string output;                          // the program's stdout, with ProgramOutput::Capture
};

// Where the program's stdout goes: ours, our stderr (so `--format json`
// stays clean), or DirectRun::output.
enum class ProgramOutput { Inherit, ToStderr, Capture };

// Runs `binary` as options.ranks simulated ranks; `timeout_seconds` <= 0: no limit.
// The program runs in `working_directory` ("" = this process's).
DirectRun run_direct_program(const std::string& binary, const std::vector<std::string>& args,
                             const direct::DirectOptions& options, ProgramOutput output, double timeout_seconds,
                             const std::string& working_directory = "");

// A program of this build's bin directory (beside the poems executable).
std::string bin_path(const std::string& name);

// poems-mpicxx of this build.
std::string mpicxx_path();

// A source file's language, by its extension (.c; .cc .cpp .cxx .C .c++;
// .f .F .f77 .for .f90 .F90 .f95 .f03 .f08): it chooses both the POEMS
// wrapper and the real MPI one.
enum class SourceLanguage { Unknown, C, Cxx, Fortran };
SourceLanguage source_language(const std::string& path);
// The wrapper of this build for a source's language (by its extension):
// poems-mpicc for C, poems-mpif90 for Fortran, poems-mpicxx otherwise.
std::string wrapper_for(const std::string& source);

// Compiles `source` with its language's wrapper in `directory`; returns the
// binary's path, or nullopt with the compiler's output in `log`. `shared`
// receives the mutable global variables (and static locals) the source
// defines: every simulated rank would share them (docs/direct.md, Globals).
std::optional<std::string> compile_direct_program(const std::string& source, const std::filesystem::path& directory,
                                                  std::string& log, std::vector<std::string>& shared);

// Whether `path` names a C, C++ or Fortran source file (by its extension).
bool is_source_file(const std::string& path);

}  // namespace poems::core
