#include <charconv>
#include <chrono>
#include <ctime>
#include <string_view>

#include "internal.h"

namespace poems::db::detail {

std::string now_iso8601() {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t seconds = system_clock::to_time_t(now);
  auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(millis));
  return buf;
}

std::string format_double(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);  // shortest round-trip form
  return std::string(buf, end);
}

std::string printable(std::string_view text) {
  std::string out;
  auto hex = [&](unsigned char c) {
    static constexpr char kDigits[] = "0123456789abcdef";
    out += "\\x";
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      hex(c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      const std::size_t len = c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
      bool ok = len > 0 && i + len <= text.size();
      for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
      if (ok && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) ok = false;  // C1 controls
      if (!ok) {
        hex(c);
        ++i;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
    }
  }
  return out;
}

std::string damaged_advice(const std::string& path) {
  return "'" + path + "' is damaged there; other rows can still be read (poems db query), and `sqlite3 " + path +
         " .recover` may save the rest; or restore a backup";
}

nlohmann::json parse_column(const sql::Statement& stmt, int column, const std::string& which, const char* column_name,
                            std::int64_t row) {
  const std::string text = stmt.text(column);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    const char* file = sqlite3_db_filename(sqlite3_db_handle(stmt.handle()), "main");
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at ...": keep the part after the tag.
    if (const auto tag = what.find("] "); tag != std::string::npos) what = what.substr(tag + 2);
    throw DamagedRowError(which + ": its " + column_name + " is not valid JSON (" + printable(what.substr(0, 200)) +
                              "); " + damaged_advice(file ? file : "?"),
                          row);
  }
}

}  // namespace poems::db::detail
