// Run keys: what identifies one evaluation, independent of key order and of
// how a number was spelled.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace poems::db {

// Canonical JSON text: no whitespace, object keys sorted bytewise, integral
// numbers up to 2^53 as integers (so 3 and 3.0 agree), other numbers in the
// shortest form that reads back to the same double (so 0.1+0.2 and 0.3
// differ). Throws Error on NaN or infinity, which JSON cannot hold.
std::string canonical_json(const nlohmann::json& value);

// Lowercase hex SHA-256 (OpenSSL).
std::string sha256_hex(std::string_view data);

// Everything that decides an evaluation's outcome. Two keys are the same run
// when their canonical texts are equal.
struct RunKey {
  std::string model;                                  // e.g. "Ring"
  std::string evaluator;                              // paradigm, e.g. "analytic[LogGP]"
  std::string spec_hash;                              // hash of the specification (with its imports)
  std::string tool_version;                           // poems version that evaluated it
  nlohmann::json binding = nlohmann::json::object();  // full parameter binding

  // {"binding":...,"evaluator":...,"model":...,"spec_hash":...,"tool_version":...}
  std::string canonical_text() const;
  // sha256_hex(canonical_text()): the runs.run_key column.
  std::string digest() const { return sha256_hex(canonical_text()); }
};

}  // namespace poems::db
