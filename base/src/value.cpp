#include "poems/base/value.h"

#include <cmath>

namespace poems::base {

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::Number: return "number";
    case Value::Kind::Bool: return "boolean";
    case Value::Kind::String: return "string";
    case Value::Kind::Ref: return "reference";
    case Value::Kind::Tuple: return "tuple";
    case Value::Kind::List: return "list";
  }
  return "value";
}

bool Value::is_integer() const { return kind == Kind::Number && std::isfinite(number) && std::floor(number) == number; }

std::string Value::str() const {
  switch (kind) {
    case Kind::Number: return format_quantity({number, dimension});
    case Kind::Bool: return boolean ? "true" : "false";
    case Kind::String: return "\"" + text + "\"";
    case Kind::Ref: return text;
    case Kind::Tuple:
    case Kind::List: {
      std::string out = kind == Kind::Tuple ? "(" : "[";
      for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i].str();
      return out + (kind == Kind::Tuple ? ")" : "]");
    }
  }
  return "?";
}

bool operator==(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::Number: return a.number == b.number && a.dimension == b.dimension;
    case Value::Kind::Bool: return a.boolean == b.boolean;
    case Value::Kind::String:
    case Value::Kind::Ref: return a.text == b.text;
    default: return a.items == b.items;
  }
}

}  // namespace poems::base
