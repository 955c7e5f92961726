#include "poems/psl/value.h"

#include <cmath>
#include <sstream>

namespace poems::psl {

namespace {
EvalResult ok(Value v) { return {std::move(v), {}, {}}; }
EvalResult fail(std::string message) { return {std::nullopt, std::move(message), {}}; }

const char* op_verb(Op op) {
  switch (op) {
    case Op::Add: return "add";
    case Op::Sub: return "subtract";
    case Op::Mod: return "take the remainder of";
    default: return "combine";
  }
}
}  // namespace

EvalResult apply_unary(Op op, const Value& v) {
  if (op == Op::Neg || op == Op::Plus) {
    if (v.kind != Value::Kind::Number) return fail(std::string("cannot negate a ") + kind_name(v.kind));
    return ok(Value::of_number(op == Op::Neg ? -v.number : v.number, v.dimension));
  }
  if (v.kind != Value::Kind::Bool) return fail(std::string("'not' needs a boolean, not a ") + kind_name(v.kind));
  return ok(Value::of_bool(!v.boolean));
}

EvalResult apply_binary(Op op, const Value& a, const Value& b) {
  if (op == Op::And || op == Op::Or) {
    if (a.kind != Value::Kind::Bool || b.kind != Value::Kind::Bool)
      return fail(std::string("'") + op_spelling(op) + "' needs booleans, not " + kind_name(a.kind) + " and " +
                  kind_name(b.kind));
    return ok(Value::of_bool(op == Op::And ? (a.boolean && b.boolean) : (a.boolean || b.boolean)));
  }
  if (a.kind != Value::Kind::Number || b.kind != Value::Kind::Number)
    return fail(std::string("operator '") + op_spelling(op) + "' needs numbers, not " + kind_name(a.kind) + " and " +
                kind_name(b.kind));
  switch (op) {
    case Op::Add:
    case Op::Sub:
    case Op::Mod:
      if (a.dimension != b.dimension)
        return fail(std::string("cannot ") + op_verb(op) + " " + dimension_name(a.dimension) + " and " +
                    dimension_name(b.dimension));
      if (op == Op::Add) return ok(Value::of_number(a.number + b.number, a.dimension));
      if (op == Op::Sub) return ok(Value::of_number(a.number - b.number, a.dimension));
      if (b.number == 0) return fail("remainder by zero");
      return ok(Value::of_number(a.number - b.number * std::floor(a.number / b.number), a.dimension));
    case Op::Mul: return ok(Value::of_number(a.number * b.number, a.dimension * b.dimension));
    case Op::Div:
      if (b.number == 0) return fail("division by zero");
      return ok(Value::of_number(a.number / b.number, a.dimension / b.dimension));
    default: return fail("not a binary operator");
  }
}

EvalResult apply_compare(Op op, const Value& a, const Value& b) {
  if (a.kind != b.kind)
    return fail(std::string("cannot compare a ") + kind_name(a.kind) + " with a " + kind_name(b.kind));
  if (a.kind == Value::Kind::Number) {
    if (a.dimension != b.dimension)
      return fail("cannot compare " + dimension_name(a.dimension) + " with " + dimension_name(b.dimension));
    switch (op) {
      case Op::Lt: return ok(Value::of_bool(a.number < b.number));
      case Op::Le: return ok(Value::of_bool(a.number <= b.number));
      case Op::Gt: return ok(Value::of_bool(a.number > b.number));
      case Op::Ge: return ok(Value::of_bool(a.number >= b.number));
      case Op::Eq: return ok(Value::of_bool(a.number == b.number));
      default: return ok(Value::of_bool(a.number != b.number));
    }
  }
  if (op != Op::Eq && op != Op::Ne)
    return fail(std::string("operator '") + op_spelling(op) + "' orders numbers only, not " + kind_name(a.kind) + "s");
  return ok(Value::of_bool((a == b) == (op == Op::Eq)));
}

std::optional<std::pair<int, int>> builtin_arity(std::string_view f) {
  if (f == "ceil" || f == "floor" || f == "round" || f == "abs" || f == "sqrt" || f == "log2") return {{1, 1}};
  if (f == "min" || f == "max") return {{2, 64}};
  if (f == "pow") return {{2, 2}};
  return std::nullopt;
}

const char* builtin_functions() { return "ceil, floor, round, abs, sqrt, log2, min, max, pow"; }

EvalResult apply_call(std::string_view f, const std::vector<Value>& args) {
  auto arity = builtin_arity(f);
  if (!arity) return fail("unknown function '" + std::string(f) + "' (built-ins: " + builtin_functions() + ")");
  int n = static_cast<int>(args.size());
  if (n < arity->first || n > arity->second) {
    std::string want =
        arity->first == arity->second ? std::to_string(arity->first) : "at least " + std::to_string(arity->first);
    return fail("function '" + std::string(f) + "' takes " + want + " argument" + (arity->first == 1 ? "" : "s") +
                ", not " + std::to_string(n));
  }
  for (const Value& a : args)
    if (a.kind != Value::Kind::Number)
      return fail("function '" + std::string(f) + "' needs numbers, not a " + kind_name(a.kind));
  const Value& x = args[0];
  auto needs_number = [&]() -> bool { return x.dimension.dimensionless(); };
  if (f == "ceil" || f == "floor" || f == "round" || f == "log2") {
    if (!needs_number())
      return fail("function '" + std::string(f) + "' needs a plain number, not a " + dimension_name(x.dimension));
    if (f == "log2") {
      if (x.number <= 0) return fail("log2 of a non-positive number");
      return ok(Value::of_number(std::log2(x.number)));
    }
    double r = f == "ceil" ? std::ceil(x.number) : f == "floor" ? std::floor(x.number) : std::round(x.number);
    return ok(Value::of_number(r));
  }
  if (f == "abs") return ok(Value::of_number(std::fabs(x.number), x.dimension));
  if (f == "sqrt") {
    if (x.dimension.time % 2 != 0 || x.dimension.bytes % 2 != 0)
      return fail("square root of " + dimension_name(x.dimension) + " has no unit");
    if (x.number < 0) return fail("square root of a negative number");
    return ok(Value::of_number(std::sqrt(x.number), {x.dimension.time / 2, x.dimension.bytes / 2}));
  }
  if (f == "pow") {
    const Value& y = args[1];
    if (!y.dimension.dimensionless() || !x.dimension.dimensionless()) return fail("function 'pow' needs plain numbers");
    return ok(Value::of_number(std::pow(x.number, y.number)));
  }
  // min / max
  Value best = x;
  for (const Value& a : args) {
    if (a.dimension != x.dimension)
      return fail("function '" + std::string(f) + "' cannot mix " + dimension_name(x.dimension) + " and " +
                  dimension_name(a.dimension));
    if ((f == "min" && a.number < best.number) || (f == "max" && a.number > best.number)) best = a;
  }
  return ok(best);
}

EvalResult evaluate(const Expr& e, const NameLookup& lookup) {
  auto located = [&](EvalResult r) {
    if (!r.value && !r.where.valid()) r.where = e.location;
    return r;
  };
  switch (e.kind) {
    case ExprKind::Number: return ok(Value::of_number(e.number, e.dimension));
    case ExprKind::String: return ok(Value::of_string(e.text));
    case ExprKind::Bool: return ok(Value::of_bool(e.boolean));
    case ExprKind::Ref: return ok(Value::of_string(e.ref.str(), Value::Kind::Ref));
    case ExprKind::Name: {
      const Value* v = lookup ? lookup(e.text) : nullptr;
      if (!v) return located(fail("'" + e.text + "' has no value here"));
      return ok(*v);
    }
    case ExprKind::Unary:
    case ExprKind::Not: {
      EvalResult r = evaluate(*e.operands[0], lookup);
      if (!r.value) return r;
      return located(apply_unary(e.kind == ExprKind::Not ? Op::Not : e.op, *r.value));
    }
    case ExprKind::Binary: {
      EvalResult a = evaluate(*e.operands[0], lookup);
      if (!a.value) return a;
      EvalResult b = evaluate(*e.operands[1], lookup);
      if (!b.value) return b;
      return located(apply_binary(e.op, *a.value, *b.value));
    }
    case ExprKind::Logical: {
      // Short-circuit, as users expect from `a and b`.
      for (const auto& operand : e.operands) {
        EvalResult r = evaluate(*operand, lookup);
        if (!r.value) return r;
        if (r.value->kind != Value::Kind::Bool)
          return located(
              fail(std::string("'") + op_spelling(e.op) + "' needs booleans, not a " + kind_name(r.value->kind)));
        if (r.value->boolean == (e.op == Op::Or)) return ok(Value::of_bool(r.value->boolean));
      }
      return ok(Value::of_bool(e.op == Op::And));
    }
    case ExprKind::Compare: {
      EvalResult prev = evaluate(*e.operands[0], lookup);
      if (!prev.value) return prev;
      bool all = true;
      for (std::size_t i = 1; i < e.operands.size(); ++i) {
        EvalResult next = evaluate(*e.operands[i], lookup);
        if (!next.value) return next;
        EvalResult c = apply_compare(e.compare_ops[i - 1], *prev.value, *next.value);
        if (!c.value) return located(c);
        all = all && c.value->boolean;
        prev = next;
      }
      return ok(Value::of_bool(all));
    }
    case ExprKind::Ternary: {
      EvalResult c = evaluate(*e.operands[0], lookup);
      if (!c.value) return c;
      if (c.value->kind != Value::Kind::Bool)
        return located(fail(std::string("condition of '?:' must be a boolean, not a ") + kind_name(c.value->kind)));
      return evaluate(*e.operands[c.value->boolean ? 1 : 2], lookup);
    }
    case ExprKind::Call: {
      std::vector<Value> args;
      for (const auto& a : e.operands) {
        EvalResult r = evaluate(*a, lookup);
        if (!r.value) return r;
        args.push_back(std::move(*r.value));
      }
      return located(apply_call(e.text, args));
    }
    case ExprKind::Tuple:
    case ExprKind::List: {
      Value v;
      v.kind = e.kind == ExprKind::Tuple ? Value::Kind::Tuple : Value::Kind::List;
      for (const auto& a : e.operands) {
        EvalResult r = evaluate(*a, lookup);
        if (!r.value) return r;
        v.items.push_back(std::move(*r.value));
      }
      return ok(std::move(v));
    }
    case ExprKind::Invalid: return located(fail("invalid expression"));
  }
  return located(fail("invalid expression"));
}

}  // namespace poems::psl
