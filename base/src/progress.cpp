#include "poems/base/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>

namespace poems::base {

namespace {

std::string format(const char* pattern, double value, const char* unit) {
  char text[48];
  std::snprintf(text, sizeof text, pattern, value, unit);
  return text;
}

// 3 significant figures or so, in s, ms or µs.
std::string time_text(double seconds) {
  if (seconds >= 1 || seconds == 0) return format("%.3f %s", seconds, "s");
  if (seconds >= 1e-3) return format("%.3f %s", seconds * 1e3, "ms");
  return format("%.3f %s", seconds * 1e6, "\u00b5s");
}

// 12345678 -> "12.3 M"; below 10^4 the count itself.
std::string count_text(double n) {
  if (n < 1e4) return format("%.0f%s", n, "");
  if (n < 1e6) return format("%.1f %s", n / 1e3, "k");
  if (n < 1e9) return format("%.1f %s", n / 1e6, "M");
  return format("%.2f %s", n / 1e9, "G");
}

// "0:07", "12:34", "1:02:03".
std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(std::llround(seconds));
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%lld:%02lld", s / 60, s % 60);
  return text;
}

// Display columns of UTF-8 text (each character one column).
std::size_t columns_of(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The longest prefix of `s` that fits `width` columns, not splitting a character.
std::string fit(const std::string& s, std::size_t width) {
  std::size_t n = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (n == width) break;
    ++n;
  }
  return s.substr(0, i);
}

}  // namespace

std::string progress_text(const ProgressFigures& f, double rate, double eta_seconds) {
  std::string line;
  if (f.unit) {
    line = std::to_string(f.done) + (f.total > 0 ? "/" + std::to_string(f.total) : std::string()) + " " + f.unit;
  } else {
    line =
        "simulated " + time_text(f.simulated_seconds) + " | " + count_text(static_cast<double>(f.events)) + " events";
    if (rate >= 0) line += " | " + count_text(rate) + " events/s";
  }
  if (f.total > 0) {
    const double pct = 100.0 * static_cast<double>(std::min(f.done, f.total)) / static_cast<double>(f.total);
    line += format(" | %.0f %s", std::floor(pct), "%");
  }
  line += eta_seconds >= 0 ? " | ETA " + duration_text(eta_seconds) : std::string(" | no ETA");
  return line;
}

bool stderr_is_terminal() {
  if (!::isatty(STDERR_FILENO)) return false;
  const char* term = std::getenv("TERM");
  return term && *term && std::strcmp(term, "dumb") != 0;
}

double progress_delay_seconds() {
  const char* text = std::getenv("POEMS_PROGRESS_DELAY");
  if (!text || !*text) return ProgressLine::kDelaySeconds;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  return *end == '\0' && seconds >= 0 ? seconds : ProgressLine::kDelaySeconds;
}

ProgressLine::ProgressLine(std::ostream& out, double delay_seconds, unsigned columns)
    : out_(out), delay_(delay_seconds), columns_(columns) {
  if (columns_ == 0) {
    winsize size{};
    columns_ = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
  }
}

ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::clear() {
  if (!shown_) return;
  out_ << "\r\033[K" << std::flush;
  shown_ = false;
}

void ProgressLine::update(const ProgressFigures& f, Clock::time_point now) {
  if (!enabled_) return;
  if (f.finished) {
    clear();
    last_elapsed_ = first_elapsed_ = -1;
    return;
  }
  if (f.elapsed_seconds < last_elapsed_) last_elapsed_ = first_elapsed_ = -1;  // a new run
  const double fraction =
      f.total > 0 ? static_cast<double>(std::min(f.done, f.total)) / static_cast<double>(f.total) : 0.0;
  if (first_elapsed_ < 0) {
    first_elapsed_ = f.elapsed_seconds;
    first_fraction_ = fraction;
  }
  if (last_elapsed_ < 0) {
    last_elapsed_ = f.elapsed_seconds;
    last_events_ = f.events;
  }
  if (f.elapsed_seconds < delay_) return;
  if (shown_ && std::chrono::duration<double>(now - drawn_at_).count() < kRefreshSeconds) return;
  const double span = f.elapsed_seconds - last_elapsed_;
  // Between drawings; at the first, over the whole run so far.
  double rate = span > 0 && f.events >= last_events_ ? static_cast<double>(f.events - last_events_) / span : -1;
  if (rate < 0 && f.elapsed_seconds > 0) rate = static_cast<double>(f.events) / f.elapsed_seconds;
  // The work's own pace since the first report (reading a schedule before the
  // first event is no guide to the rest).
  double eta = -1;
  if (f.total > 0 && fraction > first_fraction_ && f.elapsed_seconds > first_elapsed_)
    eta = (f.elapsed_seconds - first_elapsed_) * (1 - fraction) / (fraction - first_fraction_);
  std::string line = progress_text(f, rate, eta);
  if (columns_ > 1 && columns_of(line) > columns_ - 1) line = fit(line, columns_ - 1);
  out_ << "\r\033[K" << line << std::flush;
  shown_ = true;
  drawn_at_ = now;
  last_elapsed_ = f.elapsed_seconds;
  last_events_ = f.events;
}

}  // namespace poems::base
