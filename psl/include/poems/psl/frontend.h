// The PSL front end: read files and their imports, parse, check.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "poems/base/diagnostics.h"
#include "poems/base/limits.h"
#include "poems/base/source.h"
#include "poems/psl/ast.h"

namespace poems::psl {

// Limits that keep hostile input from exhausting the stack, memory or time
// (docs/limits.md). All are checked before or while the tree is built, so
// every later stage sees bounded input.
struct FrontendLimits {
  std::size_t max_file_bytes = 16u << 20;
  std::size_t max_nesting = 200;  // brackets, prefix operators, ternaries, else-if chains
  // Tokens per file: the parse tree costs about 1 KB a token, so this bounds
  // a file's memory to about 1 GB (a real specification has a few thousand).
  std::size_t max_tokens = 1'000'000;
  // Elements of one list, tuple or argument list (a `vary` list is the big one).
  std::size_t max_list_elements = 100'000;
  // Operators on the longest path of one expression (`1 + 1 + ... + 1` of N
  // terms is N - 1 deep); every stage after parsing recurses at most this deep.
  std::size_t max_expression_depth = 1'000;
  // isl's step budget is shared with the task graph: base::isl_operation_budget().
};

using base::kMaxProcessCoordinates;

// The highest values the depth limits may be raised to: what every later
// stage's recursion holds on the main thread's stack (docs/limits.md).
inline constexpr std::size_t kMaxExpressionDepthLimit = 10'000;
inline constexpr std::size_t kMaxNestingLimit = 2'000;
// Why `value` cannot be given to the limit `name` ("expression-depth=...
// must be from 1 to ..."), or empty when it can.
std::string frontend_limit_problem(std::string_view name, unsigned long value);

// Sets a limit by its name in docs/limits.md ("tokens", "list-elements",
// "expression-depth", "nesting", "file-bytes", "isl-operations", "errors");
// false for a name this library does not own.
bool set_frontend_limit(std::string_view name, unsigned long value);
// The limits every new Frontend starts with (the CLI may change them once).
FrontendLimits& default_frontend_limits();

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
