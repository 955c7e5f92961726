// The PSL front end: read files and their imports, parse, check.
#pragma once

#include <string>
#include <vector>

#include "poems/base/diagnostics.h"
#include "poems/base/source.h"
#include "poems/psl/ast.h"

namespace poems::psl {

// Limits that keep hostile input from exhausting the stack or memory.
struct FrontendLimits {
  std::size_t max_file_bytes = 16u << 20;
  std::size_t max_nesting = 200;  // brackets, prefix operators, ternaries, else-if chains
};

class Frontend {
 public:
  Frontend();
  Frontend(const Frontend&) = delete;
  Frontend& operator=(const Frontend&) = delete;

  // Reads each file and, transitively, what it imports, then runs the semantic
  // checks over everything. Returns false when any error was reported.
  bool load_files(const std::vector<std::string>& paths);
  // Same, for text held in memory (its imports are read from disk relative to
  // the directory of `path`).
  bool load_text(const std::string& path, std::string text);

  const Program& program() const { return program_; }
  const SourceManager& sources() const { return sources_; }
  const DiagnosticEngine& diagnostics() const { return diagnostics_; }
  // For later stages that report located problems in the same run.
  DiagnosticEngine& mutable_diagnostics() { return diagnostics_; }
  FrontendLimits& limits() { return limits_; }

 private:
  void load_one(const std::string& path, std::string text, std::vector<std::string>& stack);
  void read_and_load(const std::string& path, SourceLocation imported_at, std::vector<std::string>& stack);

  SourceManager sources_;
  DiagnosticEngine diagnostics_;
  Program program_;
  FrontendLimits limits_;
  std::vector<std::string> loaded_;  // canonical paths already parsed
};

}  // namespace poems::psl
