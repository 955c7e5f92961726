#include "analyzer.h"

#include <algorithm>

namespace poems::psl {

const char* symbol_kind_name(Symbol::Kind k) {
  switch (k) {
    case Symbol::Kind::Param: return "parameter";
    case Symbol::Kind::Let: return "let binding";
    case Symbol::Kind::LoopVariable: return "loop variable";
    case Symbol::Kind::ProcessDimension: return "process coordinate";
    case Symbol::Kind::TransactionParam: return "transaction parameter";
    case Symbol::Kind::ComponentParam: return "component parameter";
  }
  return "name";
}

const Symbol* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent_) {
    auto it = s->names_.find(name);
    if (it != s->names_.end()) return &it->second;
  }
  return nullptr;
}

const Symbol* Scope::declare(const std::string& name, Symbol symbol) {
  if (const Symbol* earlier = find(name)) return earlier;
  names_.emplace(name, std::move(symbol));
  return nullptr;
}

void Scope::all_names(std::vector<std::string>& out) const {
  for (const Scope* s = this; s; s = s->parent_)
    for (const auto& [n, _] : s->names_) out.push_back(n);
}

namespace {
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string& c : candidates) {
    if (c == name) continue;
    std::size_t d = edit_distance(name, c);
    if (d < best_distance || (d == best_distance && !best.empty() && c < best)) {
      if (d < best_distance) best_distance = d;
      best = c;
    }
  }
  if (best_distance > std::max<std::size_t>(1, name.size() / 2)) return "";
  return best;
}

std::string did_you_mean_suffix(const std::string& name, const std::vector<std::string>& candidates) {
  std::string s = did_you_mean(name, candidates);
  return s.empty() ? "" : "; did you mean '" + s + "'?";
}

namespace {
// Placeholder value of a known type, used to type-check an operation with the
// same code that evaluates it.
Value sample(const Analysis& a) {
  if (a.value) return *a.value;
  Value v;
  v.kind = a.kind;
  v.number = 1;
  v.dimension = a.dimension;
  return v;
}
// The type of an analysis without its value (the value came from placeholders).
Analysis type_only(const Analysis& a, bool integral) {
  if (!a.typed) return Analysis::unknown();
  Analysis t = Analysis::of_type(a.kind, a.dimension);
  t.integral = integral && a.kind == Value::Kind::Number;
  return t;
}
}  // namespace

Analysis Analyzer::report(const EvalResult& r, SourceLocation at) {
  if (r.value) return Analysis::of_value(*r.value);
  diags_.error(r.where.valid() ? r.where : at, r.error);
  return Analysis::unknown();
}

Analysis Analyzer::name(const Expr& e) {
  const std::string& n = e.text;
  std::size_t dot = n.find('.');
  if (dot != std::string::npos) {
    std::string head = n.substr(0, dot), member = n.substr(dot + 1);
    if (head == "study") {
      // A study setting, bound per study, is what selectors choose by.
      if (!hooks_.selector_mode)
        diags_.error(e.location, "'" + n + "' is a study setting; only selectors can read study settings");
      return Analysis::unknown();
    }
    if (hooks_.selector_mode) {
      if (hooks_.selector_names) hooks_.selector_names->push_back({n, e.location});
      return Analysis::unknown();
    }
    if (hooks_.member) {
      if (auto a = hooks_.member(head, member, e.location)) return *a;
      return Analysis::unknown();  // the hook reported the problem
    }
    diags_.error(e.location, "use of undefined name '" + n + "'");
    return Analysis::unknown();
  }
  if (hooks_.selector_mode) {
    if (hooks_.selector_names) hooks_.selector_names->push_back({n, e.location});
    return Analysis::unknown();
  }
  if (const Symbol* s = scope_.find(n)) return s->info;
  std::vector<std::string> names;
  scope_.all_names(names);
  diags_.error(e.location, "use of undefined name '" + n + "'" + did_you_mean_suffix(n, names));
  return Analysis::unknown();
}

Analysis Analyzer::analyze(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Number: return Analysis::of_value(Value::of_number(e.number, e.dimension));
    case ExprKind::String: return Analysis::of_value(Value::of_string(e.text));
    case ExprKind::Bool: return Analysis::of_value(Value::of_bool(e.boolean));
    case ExprKind::Ref: return Analysis::of_value(Value::of_string(e.ref.str(), Value::Kind::Ref));
    case ExprKind::Name: return name(e);
    case ExprKind::Invalid: return Analysis::unknown();
    case ExprKind::Unary:
    case ExprKind::Not: {
      Analysis a = analyze(*e.operands[0]);
      if (!a.typed) return e.kind == ExprKind::Not ? Analysis::of_type(Value::Kind::Bool) : Analysis::unknown();
      Analysis r = report(apply_unary(e.kind == ExprKind::Not ? Op::Not : e.op, sample(a)), e.location);
      return a.value ? r : type_only(r, a.integral);
    }
    case ExprKind::Binary: {
      Analysis a = analyze(*e.operands[0]);
      Analysis b = analyze(*e.operands[1]);
      if (!a.typed || !b.typed) return Analysis::unknown();
      if (a.value && b.value) return report(apply_binary(e.op, *a.value, *b.value), e.location);
      bool integral = a.integral && b.integral && e.op != Op::Div;
      return type_only(report(apply_binary(e.op, sample(a), sample(b)), e.location), integral);
    }
    case ExprKind::Logical: {
      bool all_known = true;
      std::vector<Analysis> parts;
      for (const auto& o : e.operands) {
        parts.push_back(analyze(*o));
        const Analysis& p = parts.back();
        if (p.typed && p.kind != Value::Kind::Bool)
          diags_.error(o->location,
                       std::string("'") + op_spelling(e.op) + "' needs booleans, not a " + kind_name(p.kind));
        all_known = all_known && p.value && p.kind == Value::Kind::Bool;
      }
      if (!all_known) return Analysis::of_type(Value::Kind::Bool);
      bool result = e.op == Op::And;
      for (const Analysis& p : parts)
        result = e.op == Op::And ? (result && p.value->boolean) : (result || p.value->boolean);
      return Analysis::of_value(Value::of_bool(result));
    }
    case ExprKind::Compare: {
      std::vector<Analysis> parts;
      for (const auto& o : e.operands) parts.push_back(analyze(*o));
      bool all_known = true, result = true;
      for (std::size_t i = 1; i < parts.size(); ++i) {
        const Analysis &a = parts[i - 1], &b = parts[i];
        if (!a.typed || !b.typed) {
          all_known = false;
          continue;
        }
        EvalResult r = apply_compare(e.compare_ops[i - 1], sample(a), sample(b));
        if (!r.value) {
          diags_.error(e.location, r.error);
          return Analysis::of_type(Value::Kind::Bool);
        }
        if (a.value && b.value)
          result = result && r.value->boolean;
        else
          all_known = false;
      }
      return all_known ? Analysis::of_value(Value::of_bool(result)) : Analysis::of_type(Value::Kind::Bool);
    }
    case ExprKind::Ternary: {
      Analysis c = analyze(*e.operands[0]);
      require_bool(c, *e.operands[0], "condition of '?:'");
      Analysis t = analyze(*e.operands[1]);
      Analysis f = analyze(*e.operands[2]);
      if (t.typed && f.typed && (t.kind != f.kind || t.dimension != f.dimension)) {
        diags_.error(e.location,
                     "branches of '?:' differ: " +
                         std::string(t.kind == Value::Kind::Number ? dimension_name(t.dimension) : kind_name(t.kind)) +
                         " and " + (f.kind == Value::Kind::Number ? dimension_name(f.dimension) : kind_name(f.kind)));
        return Analysis::unknown();
      }
      if (c.value && c.value->kind == Value::Kind::Bool) return c.value->boolean ? t : f;
      return type_only(t.typed ? t : f, t.integral && f.integral);
    }
    case ExprKind::Call: {
      auto arity = builtin_arity(e.text);
      std::vector<Analysis> args;
      for (const auto& o : e.operands) args.push_back(analyze(*o));
      if (!arity) {
        diags_.error(e.location, "unknown function '" + e.text + "' (built-ins: " + builtin_functions() + ")");
        return Analysis::unknown();
      }
      bool all_typed = true, all_known = true;
      std::vector<Value> samples;
      for (const Analysis& a : args) {
        all_typed = all_typed && a.typed;
        all_known = all_known && a.value.has_value();
        samples.push_back(sample(a));
      }
      int n = static_cast<int>(args.size());
      if (!all_typed && n >= arity->first && n <= arity->second) return Analysis::unknown();
      Analysis r = report(apply_call(e.text, samples), e.location);
      if (all_known) return r;
      bool integral = e.text == "floor" || e.text == "ceil" || e.text == "round";
      if (e.text == "min" || e.text == "max" || e.text == "abs")
        integral = std::all_of(args.begin(), args.end(), [](const Analysis& x) { return x.integral; });
      return type_only(r, integral);
    }
    case ExprKind::Tuple:
    case ExprKind::List: {
      Value v;
      v.kind = e.kind == ExprKind::Tuple ? Value::Kind::Tuple : Value::Kind::List;
      bool all_known = true;
      for (const auto& o : e.operands) {
        Analysis a = analyze(*o);
        if (a.value)
          v.items.push_back(*a.value);
        else
          all_known = false;
      }
      if (all_known) return Analysis::of_value(std::move(v));
      return Analysis::of_type(v.kind);
    }
  }
  return Analysis::unknown();
}

void Analyzer::require_integer(const Analysis& a, const Expr& e, const std::string& what) {
  if (!a.typed) return;
  if (a.kind != Value::Kind::Number) {
    diags_.error(e.location, what + " must be an integer, not a " + kind_name(a.kind));
  } else if (!a.dimension.dimensionless()) {
    diags_.error(e.location, what + " must be a plain integer, not a " + dimension_name(a.dimension));
  } else if (a.value && !a.value->is_integer()) {
    diags_.error(e.location, what + " is " + a.value->str() + ", not an integer");
  } else if (!a.value && !a.integral) {
    diags_.error(e.location, what + " may not be an integer; round it with floor() or ceil()");
  }
}

void Analyzer::require_bool(const Analysis& a, const Expr& e, const std::string& what) {
  if (a.typed && a.kind != Value::Kind::Bool)
    diags_.error(e.location,
                 what + " must be a boolean, not a " +
                     (a.kind == Value::Kind::Number ? dimension_name(a.dimension) : std::string(kind_name(a.kind))));
}

void Analyzer::require_size(const Analysis& a, const Expr& e, const std::string& what) {
  if (!a.typed) return;
  if (a.kind != Value::Kind::Number || (a.dimension != kBytes && !a.dimension.dimensionless())) {
    diags_.error(e.location,
                 what + " must be a size (bytes), not a " +
                     (a.kind == Value::Kind::Number ? dimension_name(a.dimension) : std::string(kind_name(a.kind))));
    return;
  }
  if (a.value && a.value->number < 0)
    diags_.error(e.location, what + " is negative (" + a.value->str() + ")");
  else if (a.value && !(a.value->number <= 9007199254740991.0))  // every evaluator's bound (docs/limits.md)
    diags_.error(e.location, what + " is " + a.value->str() + "; sizes must be below 2^53 bytes");
  else if (!a.value && !a.integral)
    diags_.error(e.location, what + " may not be a whole number of bytes; round it with floor() or ceil()");
  else if (a.value && !a.value->is_integer())
    diags_.error(e.location, what + " is " + a.value->str() + ", not a whole number of bytes");
}

}  // namespace poems::psl
