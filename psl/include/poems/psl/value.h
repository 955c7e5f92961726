// Values of PSL expressions and their evaluation for a parameter binding.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "poems/base/value.h"
#include "poems/psl/ast.h"

namespace poems::psl {

// The result of one operation: a value or an error message.
struct EvalResult {
  std::optional<Value> value;
  std::string error;
  SourceLocation where;  // the sub-expression that failed
};

// Looks a (possibly dotted) name up; returns nullptr when unknown.
using NameLookup = std::function<const Value*(std::string_view)>;

// Evaluates an expression completely; fails on an unknown name, a unit
// mismatch, a division by zero or a wrong argument.
EvalResult evaluate(const Expr& e, const NameLookup& lookup);

// Building blocks shared with the semantic checker, so both agree exactly.
EvalResult apply_unary(Op op, const Value& v);
EvalResult apply_binary(Op op, const Value& a, const Value& b);
EvalResult apply_compare(Op op, const Value& a, const Value& b);
EvalResult apply_call(std::string_view function, const std::vector<Value>& args);

// Arity of a built-in function: {min, max} arguments; nullopt when unknown.
std::optional<std::pair<int, int>> builtin_arity(std::string_view function);
// Comma-separated names of the built-in functions, for messages.
const char* builtin_functions();

}  // namespace poems::psl
