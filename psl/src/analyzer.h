// Internal: static typing and constant folding of expressions in a scope.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "poems/base/diagnostics.h"
#include "poems/psl/ast.h"
#include "poems/psl/value.h"

namespace poems::psl {

// What is statically known of an expression: its kind and dimension (if
// known) and its value (if every name in it has a value).
struct Analysis {
  bool typed = false;
  Value::Kind kind = Value::Kind::Number;
  Dimension dimension;
  std::optional<Value> value;
  bool integral = false;  // known to be an integer even when the value is not known

  static Analysis unknown() { return {}; }
  static Analysis of_type(Value::Kind k, Dimension d = kDimensionless) { return {true, k, d, std::nullopt, false}; }
  static Analysis of_integer() { return {true, Value::Kind::Number, kDimensionless, std::nullopt, true}; }
  static Analysis of_value(Value v) {
    Analysis a{true, v.kind, v.dimension, std::nullopt, v.is_integer()};
    a.value = std::move(v);
    return a;
  }
  bool is_number() const { return typed && kind == Value::Kind::Number; }
};

struct Symbol {
  enum class Kind { Param, Let, LoopVariable, ProcessDimension, TransactionParam, ComponentParam };
  Kind kind = Kind::Param;
  SourceLocation declared;
  Analysis info;
};
const char* symbol_kind_name(Symbol::Kind k);

class Scope {
 public:
  explicit Scope(const Scope* parent = nullptr) : parent_(parent) {}
  const Symbol* find(const std::string& name) const;
  // Declares a name; returns the earlier symbol if it already exists in this or an enclosing scope.
  const Symbol* declare(const std::string& name, Symbol symbol);
  void all_names(std::vector<std::string>& out) const;

 private:
  const Scope* parent_;
  std::map<std::string, Symbol> names_;
};

// Closest spelling among candidates (edit distance at most 2), or "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);
std::string did_you_mean_suffix(const std::string& name, const std::vector<std::string>& candidates);

class Analyzer {
 public:
  struct Hooks {
    // In a selector, bare names are attributes of the target profile.
    bool selector_mode = false;
    // Resolves `Component.member` outside selectors; nullopt when not a member.
    std::function<std::optional<Analysis>(const std::string& head, const std::string& member, SourceLocation)> member;
    std::set<std::string>* profile_attributes_used = nullptr;  // selector names seen
    std::vector<std::pair<std::string, SourceLocation>>* selector_names = nullptr;
  };

  Analyzer(DiagnosticEngine& diags, const Scope& scope) : diags_(diags), scope_(scope) {}
  Analyzer(DiagnosticEngine& diags, const Scope& scope, Hooks hooks)
      : diags_(diags), scope_(scope), hooks_(std::move(hooks)) {}

  Analysis analyze(const Expr& e);

  // Checks that an analyzed expression is a plain integer ("loop bound", ...).
  void require_integer(const Analysis& a, const Expr& e, const std::string& what);
  void require_bool(const Analysis& a, const Expr& e, const std::string& what);
  // Accepts a size or a plain number (taken as bytes).
  void require_size(const Analysis& a, const Expr& e, const std::string& what);

 private:
  Analysis name(const Expr& e);
  Analysis fold(const Expr& e, EvalResult (*typing)(const Expr&, const std::vector<Analysis>&));
  Analysis report(const EvalResult& r, SourceLocation at);

  DiagnosticEngine& diags_;
  const Scope& scope_;
  Hooks hooks_;
};

}  // namespace poems::psl
