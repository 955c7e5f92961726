#include "poems/psl/diagnostics.h"

#include <algorithm>
#include <ostream>

namespace poems::psl {

namespace {
const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

// Length of the UTF-8 sequence starting with `c` (1 for a stray byte).
std::size_t utf8_length(unsigned char c) { return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF8 ? 4 : 1; }

// One code point as shown: a control character (C0 but tab, DEL, C1) is '?',
// so no source text can drive the terminal.
void append_shown(std::string& out, std::string_view cp) {
  const auto c0 = static_cast<unsigned char>(cp[0]);
  const bool c1 = cp.size() == 2 && c0 == 0xC2 && static_cast<unsigned char>(cp[1]) < 0xA0;
  if ((c0 < 0x20 && c0 != '\t') || c0 == 0x7f || c1)
    out += '?';
  else
    out += cp;
}

// Splits a line into code points (byte offsets), at most `limit` + 1 of them.
std::vector<std::size_t> code_points(std::string_view text) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < text.size();
       i += std::min(utf8_length(static_cast<unsigned char>(text[i])), text.size() - i))
    starts.push_back(i);
  return starts;
}
}  // namespace

DiagnosticLimits& default_diagnostic_limits() {
  static DiagnosticLimits limits;
  return limits;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = std::min(utf8_length(static_cast<unsigned char>(text[i])), text.size() - i);
    const std::string_view cp = text.substr(i, n);
    if (cp == "\t")
      out += ' ';
    else
      append_shown(out, cp);
    i += n;
  }
  return out;
}

Diagnostic& DiagnosticEngine::keep(Severity severity, SourceLocation at, std::string message, std::size_t count) {
  if (limits_.max_errors != 0 && count > limits_.max_errors) {
    ++dropped_;
    discarded_ = {severity, at, {}, {}};
    return discarded_;
  }
  if (message.size() > limits_.max_message_bytes) {
    std::size_t cut = limits_.max_message_bytes;
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;  // whole code points
    message.resize(cut);
    message += " ...";
  }
  diagnostics_.push_back({severity, at, std::move(message), {}});
  return diagnostics_.back();
}

Diagnostic& DiagnosticEngine::error(SourceLocation at, std::string message) {
  return keep(Severity::Error, at, std::move(message), ++errors_);
}

Diagnostic& DiagnosticEngine::final_error(SourceLocation at, std::string message) {
  ++errors_;
  return keep(Severity::Error, at, std::move(message), 0);
}

Diagnostic& DiagnosticEngine::warning(SourceLocation at, std::string message) {
  return keep(Severity::Warning, at, std::move(message), ++warnings_);
}

void DiagnosticEngine::note(Diagnostic& d, SourceLocation at, std::string message) {
  if (d.notes.size() >= 16) return;  // enough context for anyone; keeps a hostile loop bounded
  d.notes.push_back({Severity::Note, at, std::move(message), {}});
}

std::string DiagnosticEngine::render(const Diagnostic& d) const {
  std::string out;
  if (d.location.file != kNoFile && d.location.file < sources_->size()) {
    out += printable(sources_->path(d.location.file));
    out += ':' + std::to_string(d.location.line) + ':' + std::to_string(d.location.column) + ": ";
  } else {
    out += "poems: ";
  }
  out += severity_name(d.severity);
  out += ": ";
  // Messages quote source text; keep their line breaks out of the terminal's reach too.
  std::string_view message = d.message;
  std::size_t from = 0;
  for (std::size_t nl; (nl = message.find('\n', from)) != std::string_view::npos; from = nl + 1)
    out += printable(message.substr(from, nl - from)) + "\n";
  out += printable(message.substr(from));
  out += '\n';
  if (d.location.valid() && d.location.file < sources_->size()) {
    // Columns count code points. A long line is shown as a window around the
    // caret, so a one-line file of megabytes prints a few hundred bytes.
    const std::string_view text = sources_->line(d.location.file, d.location.line);
    const std::vector<std::size_t> cps = code_points(text);
    const std::size_t n = cps.size();
    const std::size_t col = d.location.column > 0 ? d.location.column - 1 : 0;
    const std::size_t window = std::max<std::size_t>(limits_.line_window, 20);
    std::size_t begin = 0, end = n;
    if (n > window) {
      begin = col > window / 3 ? col - window / 3 : 0;
      end = std::min(n, begin + window);
      if (end == n) begin = n - window;
    }
    const bool cut_front = begin > 0, cut_back = end < n;
    auto piece = [&](std::size_t i) {
      const std::size_t b = cps[i], e = i + 1 < n ? cps[i + 1] : text.size();
      return text.substr(b, e - b);
    };
    out += "  ";
    if (cut_front) out += "...";
    for (std::size_t i = begin; i < end; ++i) append_shown(out, piece(i));
    if (cut_back) out += "...";
    out += "\n  ";
    if (cut_front) out += "   ";
    // Keep tabs so the caret lines up under the token in any tab width.
    for (std::size_t i = begin; i < col && i < end; ++i) out += piece(i) == "\t" ? '\t' : ' ';
    for (std::size_t i = std::max(end, begin); i < col && i < end + 1; ++i) out += ' ';
    std::size_t width = std::max<std::size_t>(1, d.location.length);
    width = col < end ? std::min(width, end - col) : 1;
    out += '^';
    out.append(width - 1, '~');
    out += '\n';
  }
  for (const Diagnostic& note : d.notes) out += render(note);
  return out;
}

void DiagnosticEngine::print(std::ostream& out) const {
  for (const Diagnostic& d : diagnostics_) out << render(d);
  if (dropped_ > 0)
    out << "poems: note: " << dropped_ << " more diagnostic" << (dropped_ == 1 ? "" : "s") << " not shown: at most "
        << limits_.max_errors << " errors and " << limits_.max_errors
        << " warnings are printed (raise it with --max-errors N, 0 for all)\n";
  if (errors_ > 0 || warnings_ > 0) {
    out << errors_ << (errors_ == 1 ? " error" : " errors");
    if (warnings_ > 0) out << ", " << warnings_ << (warnings_ == 1 ? " warning" : " warnings");
    out << " generated.\n";
  }
}

}  // namespace poems::psl
