#include "poems/base/diagnostics.h"

#include <algorithm>
#include <ostream>

namespace poems::base {

namespace {
const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}
}  // namespace

Diagnostic& DiagnosticEngine::error(SourceLocation at, std::string message) {
  ++errors_;
  diagnostics_.push_back({Severity::Error, at, std::move(message), {}});
  return diagnostics_.back();
}

void DiagnosticEngine::drop_repeats(std::size_t first) {
  auto same = [](const Diagnostic& a, const Diagnostic& b) {
    return a.severity == b.severity && a.message == b.message && a.location.file == b.location.file &&
           a.location.line == b.location.line && a.location.column == b.location.column;
  };
  std::vector<Diagnostic> kept(diagnostics_.begin(), diagnostics_.begin() + static_cast<std::ptrdiff_t>(first));
  for (std::size_t i = first; i < diagnostics_.size(); ++i) {
    bool repeat = false;
    for (const Diagnostic& k : kept) repeat = repeat || same(k, diagnostics_[i]);
    if (repeat) {
      if (diagnostics_[i].severity == Severity::Error) --errors_;
    } else {
      kept.push_back(std::move(diagnostics_[i]));
    }
  }
  diagnostics_ = std::move(kept);
}

Diagnostic& DiagnosticEngine::warning(SourceLocation at, std::string message) {
  diagnostics_.push_back({Severity::Warning, at, std::move(message), {}});
  return diagnostics_.back();
}

void DiagnosticEngine::note(Diagnostic& d, SourceLocation at, std::string message) {
  d.notes.push_back({Severity::Note, at, std::move(message), {}});
}

std::string DiagnosticEngine::render(const Diagnostic& d) const {
  std::string out;
  if (d.location.file != kNoFile && d.location.file < sources_->size()) {
    out += sources_->path(d.location.file);
    out += ':' + std::to_string(d.location.line) + ':' + std::to_string(d.location.column) + ": ";
  } else {
    out += "poems: ";
  }
  out += severity_name(d.severity);
  out += ": ";
  out += d.message;
  out += '\n';
  if (d.location.valid() && d.location.file < sources_->size()) {
    std::string_view text = sources_->line(d.location.file, d.location.line);
    out += "  ";
    out += text;
    out += "\n  ";
    // Keep tabs so the caret lines up under the token in any tab width.
    std::size_t col = d.location.column > 0 ? d.location.column - 1 : 0;
    for (std::size_t i = 0; i < col && i < text.size(); ++i) out += text[i] == '\t' ? '\t' : ' ';
    for (std::size_t i = text.size(); i < col; ++i) out += ' ';
    std::size_t width = std::max<std::size_t>(1, d.location.length);
    if (col < text.size())
      width = std::min(width, text.size() - col);
    else
      width = 1;
    out += '^';
    out.append(width - 1, '~');
    out += '\n';
  }
  for (const Diagnostic& n : d.notes) out += render(n);
  return out;
}

void DiagnosticEngine::print(std::ostream& out) const {
  for (const Diagnostic& d : diagnostics_) out << render(d);
  if (errors_ > 0 || warning_count() > 0) {
    out << errors_ << (errors_ == 1 ? " error" : " errors");
    if (warning_count() > 0) out << ", " << warning_count() << (warning_count() == 1 ? " warning" : " warnings");
    out << " generated.\n";
  }
}

}  // namespace poems::base
