// The last lines of a program's output, for error messages that quote what
// a failed child printed last.
#pragma once

#include <cstddef>
#include <string>

namespace poems::base {

// The last `lines` lines of `text`, without the newlines that end it.
inline std::string last_lines(const std::string& text, std::size_t lines) {
  std::size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') --end;
  std::size_t start = end;
  for (std::size_t n = 0; n < lines && start > 0; ++n) {
    const std::size_t nl = text.rfind('\n', start - 1);
    if (nl == std::string::npos) {
      start = 0;
      break;
    }
    start = nl;
  }
  if (start > 0 || (start == 0 && end > 0 && text[0] == '\n')) ++start;
  return start >= end ? std::string() : text.substr(start, end - start);
}

}  // namespace poems::base
