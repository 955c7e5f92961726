#include "poems/db/run_key.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>

#include "internal.h"
#include "poems/db/error.h"

namespace poems::db {

namespace {

constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53

// A JSON string literal: plain printable ASCII is copied as is (what dump()
// would print), anything else goes through nlohmann's escaping.
void append_string(const std::string& text, std::string& out) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
  if (!plain) {
    out += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    return;
  }
  out += '"';
  out += text;
  out += '"';
}

void append_canonical(const nlohmann::json& value, std::string& out) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::object: {
      // nlohmann::json keeps object keys in a std::map: already sorted bytewise.
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += ',';
        first = false;
        append_string(key, out);
        out += ':';
        append_canonical(item, out);
      }
      out += '}';
      return;
    }
    case Type::array: {
      out += '[';
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (i) out += ',';
        append_canonical(value[i], out);
      }
      out += ']';
      return;
    }
    case Type::number_float: {
      double d = value.get<double>();
      if (!std::isfinite(d)) throw Error("a run key cannot hold NaN or infinity");
      if (d == std::trunc(d) && std::fabs(d) < kExactIntegerLimit) {
        out += std::to_string(static_cast<std::int64_t>(d));  // -0.0 and 3.0 print as 0 and 3
      } else {
        out += detail::format_double(d);
      }
      return;
    }
    case Type::string: append_string(value.get_ref<const std::string&>(), out); return;
    case Type::number_integer: out += std::to_string(value.get<std::int64_t>()); return;
    case Type::number_unsigned: out += std::to_string(value.get<std::uint64_t>()); return;
    default:  // booleans, null, binary
      out += value.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  }
}

}  // namespace

std::string canonical_json(const nlohmann::json& value) {
  std::string out;
  try {
    append_canonical(value, out);
  } catch (const nlohmann::json::exception& e) {  // invalid UTF-8 in a string
    throw Error(std::string("a run key must be valid JSON text: ") + e.what());
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) throw Error("SHA-256 failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string detail::canonical_key_text(const RunKey& key, const std::string& binding_text) {
  // canonical_json of {"binding", "evaluator", "model", "spec_hash",
  // "tool_version"} (keys in that order), around the binding's own text.
  std::string out = "{\"binding\":" + binding_text;
  try {
    for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"evaluator", &key.evaluator},
                                      {"model", &key.model},
                                      {"spec_hash", &key.spec_hash},
                                      {"tool_version", &key.tool_version}}) {
      out += ",\"";
      out += name;
      out += "\":";
      append_string(*value, out);
    }
  } catch (const nlohmann::json::exception& e) {  // invalid UTF-8 in a string
    throw Error(std::string("a run key must be valid JSON text: ") + e.what());
  }
  out += '}';
  return out;
}

std::string RunKey::canonical_text() const {
  if (!binding.is_object()) throw Error("a run's binding must be a JSON object");
  return detail::canonical_key_text(*this, canonical_json(binding));
}

}  // namespace poems::db
