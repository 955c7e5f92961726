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
