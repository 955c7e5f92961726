// Rows printed as left-aligned columns two spaces apart (the first row is
// usually the header): the plain tables of the recommender, trace summaries
// and the like.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace poems::report {

using TextTable = std::vector<std::vector<std::string>>;
// Writes `table` to `out`, each line without trailing blanks.
void print_table(const TextTable& table, std::ostream& out);

// 1234567 as "1,234,567".
std::string with_commas(std::uint64_t n);

}  // namespace poems::report
