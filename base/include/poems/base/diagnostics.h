// Diagnostics: `file:line:col: error: message`, the source line and a caret.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "poems/base/source.h"

namespace poems::base {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLocation location;
  std::string message;
  // Notes attached to this diagnostic (e.g. "previous definition is here").
  std::vector<Diagnostic> notes;
};

// Collects every diagnostic of a run; the front end never stops at the first.
class DiagnosticEngine {
 public:
  explicit DiagnosticEngine(const SourceManager& sources) : sources_(&sources) {}

  Diagnostic& error(SourceLocation at, std::string message);
  Diagnostic& warning(SourceLocation at, std::string message);
  static void note(Diagnostic& d, SourceLocation at, std::string message);

  const std::vector<Diagnostic>& all() const { return diagnostics_; }
  // For attaching notes to a diagnostic reported earlier.
  Diagnostic& at(std::size_t index) { return diagnostics_.at(index); }
  std::size_t error_count() const { return errors_; }
  std::size_t warning_count() const { return diagnostics_.size() - errors_; }
  bool has_errors() const { return errors_ > 0; }
  // Drops the diagnostics from index `first` on that repeat an earlier one
  // (same severity, location and message): a check run once per paradigm
  // reports a component's error once.
  void drop_repeats(std::size_t first);

  // Renders one diagnostic (and its notes) with the quoted line and caret.
  std::string render(const Diagnostic& d) const;
  // Renders all, in the order they were reported, followed by a summary line.
  void print(std::ostream& out) const;

 private:
  const SourceManager* sources_;
  std::vector<Diagnostic> diagnostics_;
  std::size_t errors_ = 0;
};

}  // namespace poems::base

// The PSL front end grew these and most code still names them psl::X.
namespace poems::psl {
using base::Diagnostic;
using base::DiagnosticEngine;
using base::Severity;
}  // namespace poems::psl
