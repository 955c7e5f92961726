#include "poems/base/escaped.h"

namespace poems::base {

namespace {
// Length of the valid UTF-8 sequence at `i`, or 0 (a stray byte, a
// truncated or overlong sequence, or a C1 control).
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const std::size_t len = c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
  if (len == 0 || i + len > text.size()) return 0;
  for (std::size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 0;
  if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) return 0;  // C1 control
  return len;
}
}  // namespace

std::string escaped(std::string_view text, Whitespace whitespace) {
  std::string out;
  auto hex = [&](unsigned char c) {
    static constexpr char kDigits[] = "0123456789abcdef";
    out += "\\x";
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (whitespace == Whitespace::Named && (c == '\n' || c == '\t')) {
      out += c == '\n' ? "\\n" : "\\t";
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      hex(c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t len = utf8_sequence(text, i); len > 0) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      hex(c);
      ++i;
    }
  }
  return out;
}

}  // namespace poems::base
