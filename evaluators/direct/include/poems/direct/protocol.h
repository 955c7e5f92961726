// How `poems direct` talks to a program built with poems-mpicxx: the options
// travel as JSON in the environment variable POEMS_DIRECT_OPTIONS, the result
// comes back as JSON in the file POEMS_DIRECT_RESULT names. Both directions
// are lossless (times in integer picoseconds).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "poems/direct/runtime.h"

namespace poems::direct {

inline constexpr const char* kOptionsVariable = "POEMS_DIRECT_OPTIONS";
inline constexpr const char* kResultVariable = "POEMS_DIRECT_RESULT";

// Handover's names on the command line and in the JSON: "one-cpu", "spin", "sleep".
const char* handover_name(Handover handover);
std::optional<Handover> parse_handover(const std::string& name);

nlohmann::json options_to_json(const DirectOptions& options);
// Throws std::invalid_argument naming the field that is missing or out of range.
DirectOptions options_from_json(const nlohmann::json& json);

nlohmann::json result_to_json(const DirectResult& result);
// Throws std::invalid_argument on a malformed result.
DirectResult result_from_json(const nlohmann::json& json);

}  // namespace poems::direct
