// Values: numbers with a dimension (time, bytes), booleans, strings,
// references such as processor[wg], tuples and lists. What a PSL expression
// evaluates to, what a study binds and what a component's parameter holds.
#pragma once

#include <string>
#include <vector>

#include "poems/base/units.h"

namespace poems::base {

struct Value {
  enum class Kind { Number, Bool, String, Ref, Tuple, List };
  Kind kind = Kind::Number;
  double number = 0;
  Dimension dimension;
  bool boolean = false;
  std::string text;  // String, or Ref spelled "head[path]"
  std::vector<Value> items;

  static Value of_number(double v, Dimension d = kDimensionless) {
    Value x;
    x.number = v;
    x.dimension = d;
    return x;
  }
  static Value of_bool(bool b) {
    Value x;
    x.kind = Kind::Bool;
    x.boolean = b;
    return x;
  }
  static Value of_string(std::string s, Kind k = Kind::String) {
    Value x;
    x.kind = k;
    x.text = std::move(s);
    return x;
  }
  bool is_integer() const;
  std::string str() const;
  friend bool operator==(const Value& a, const Value& b);
};

const char* kind_name(Value::Kind k);

}  // namespace poems::base

// The PSL front end grew these and most code still names them psl::X.
namespace poems::psl {
using base::kind_name;
using base::Value;
}  // namespace poems::psl
