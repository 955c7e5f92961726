// CSV as RFC 4180 writes it: the one writer of every comma-separated table
// POEMS prints or exports (the knowledge base's runs and queries, `poems db
// study`, study tables).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace poems::base {

// `text` as one field: unchanged, or in double quotes with each quote doubled
// when it holds a comma, a double quote, a carriage return or a line feed.
std::string csv_field(std::string_view text);

// `fields` as one record appended to `out`: each a csv_field, commas between,
// a line feed at the end (RFC 4180 ends records with CRLF; POEMS' files, like
// most Unix tools', end them with LF).
void append_csv_row(std::string& out, const std::vector<std::string>& fields);
std::string csv_row(const std::vector<std::string>& fields);

}  // namespace poems::base
