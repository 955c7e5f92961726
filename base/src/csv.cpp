#include "poems/base/csv.h"

namespace poems::base {

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

void append_csv_row(std::string& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += csv_field(fields[i]);
  }
  out += '\n';
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string out;
  append_csv_row(out, fields);
  return out;
}

}  // namespace poems::base
