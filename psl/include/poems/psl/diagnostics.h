// Diagnostics: `file:line:col: error: message`, the source line and a caret.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "poems/psl/source.h"

namespace poems::psl {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLocation location;
  std::string message;
  // Notes attached to this diagnostic (e.g. "previous definition is here").
  std::vector<Diagnostic> notes;
};

// Bounds on what a run reports, so hostile input cannot print without end.
struct DiagnosticLimits {
  // Errors (and, separately, warnings) kept and printed; later ones are only
  // counted. 0: no limit. `poems --max-errors N` sets the default.
  std::size_t max_errors = 20;
  // Source lines longer than this many characters are shown as a window
  // around the caret; messages are cut at max_message_bytes.
  std::size_t line_window = 120;
  std::size_t max_message_bytes = 2000;
};
// The limits every DiagnosticEngine starts with (set once by the CLI).
DiagnosticLimits& default_diagnostic_limits();

// `text` safe for a terminal: control characters (C0, DEL, C1) become '?'.
std::string printable(std::string_view text);

// Collects every diagnostic of a run, up to the limit; the front end never
// stops at the first.
class DiagnosticEngine {
 public:
  explicit DiagnosticEngine(const SourceManager& sources) : sources_(&sources), limits_(default_diagnostic_limits()) {}

  Diagnostic& error(SourceLocation at, std::string message);
  Diagnostic& warning(SourceLocation at, std::string message);
  // An error that ends the work on a file ("too many syntax errors"): kept
  // and printed even past the limit.
  Diagnostic& final_error(SourceLocation at, std::string message);
  static void note(Diagnostic& d, SourceLocation at, std::string message);

  const std::vector<Diagnostic>& all() const { return diagnostics_; }
  // For attaching notes to a diagnostic reported earlier.
  Diagnostic& at(std::size_t index) { return diagnostics_.at(index); }
  // Every error and warning reported, kept or not.
  std::size_t error_count() const { return errors_; }
  std::size_t warning_count() const { return warnings_; }
  bool has_errors() const { return errors_ > 0; }
  // Reported but not kept because of the limit.
  std::size_t dropped_count() const { return dropped_; }
  // True once the error limit is reached: callers may stop looking for more.
  bool error_limit_reached() const { return limits_.max_errors != 0 && errors_ >= limits_.max_errors; }
  DiagnosticLimits& limits() { return limits_; }

  // Renders one diagnostic (and its notes) with the quoted line and caret.
  std::string render(const Diagnostic& d) const;
  // Renders all, in the order they were reported, followed by a summary line.
  void print(std::ostream& out) const;

 private:
  Diagnostic& keep(Severity severity, SourceLocation at, std::string message, std::size_t count);

  const SourceManager* sources_;
  DiagnosticLimits limits_;
  std::vector<Diagnostic> diagnostics_;
  std::size_t errors_ = 0, warnings_ = 0, dropped_ = 0;
  Diagnostic discarded_;  // what error()/warning() return past the limit
};

}  // namespace poems::psl
