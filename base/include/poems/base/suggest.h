// "Did you mean ...?" for names typed by a user: the closest spelling among
// the known ones, by edit distance (at most 2, and at most half the name).
#pragma once

#include <string>
#include <vector>

namespace poems::base {

// The closest candidate to `name`, or "" when none is close.
std::string closest_spelling(const std::string& name, const std::vector<std::string>& candidates);
// "; did you mean 'X'?" for the closest candidate, or "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);
// "a, b, c": the candidates for a message.
std::string name_list(const std::vector<std::string>& names);

}  // namespace poems::base
