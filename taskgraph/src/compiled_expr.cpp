#include "poems/taskgraph/compiled_expr.h"

#include <cmath>
#include <sstream>

namespace poems::taskgraph {

CompiledExpr CompiledExpr::constant(double v) {
  CompiledExpr e;
  e.code_.push_back({ExprOp::Const, 0, v});
  return e;
}

CompiledExpr CompiledExpr::slot(std::uint32_t s) {
  CompiledExpr e;
  e.code_.push_back({ExprOp::Slot, s, 0});
  return e;
}

int expr_op_arity(ExprOp op) {
  switch (op) {
    case ExprOp::Const:
    case ExprOp::Slot: return 0;
    case ExprOp::Neg:
    case ExprOp::Not:
    case ExprOp::Floor:
    case ExprOp::Ceil:
    case ExprOp::Round:
    case ExprOp::Abs:
    case ExprOp::Sqrt:
    case ExprOp::Log2: return 1;
    case ExprOp::Select: return 3;
    default: return 2;
  }
}

double apply_expr_op(ExprOp op, const double* a) {
  switch (op) {
    case ExprOp::Add: return a[0] + a[1];
    case ExprOp::Sub: return a[0] - a[1];
    case ExprOp::Mul: return a[0] * a[1];
    case ExprOp::Div: return a[0] / a[1];
    case ExprOp::Mod: return a[1] == 0 ? NAN : a[0] - a[1] * std::floor(a[0] / a[1]);
    case ExprOp::Neg: return -a[0];
    case ExprOp::Lt: return a[0] < a[1];
    case ExprOp::Le: return a[0] <= a[1];
    case ExprOp::Gt: return a[0] > a[1];
    case ExprOp::Ge: return a[0] >= a[1];
    case ExprOp::Eq: return a[0] == a[1];
    case ExprOp::Ne: return a[0] != a[1];
    case ExprOp::And: return (a[0] != 0) && (a[1] != 0);
    case ExprOp::Or: return (a[0] != 0) || (a[1] != 0);
    case ExprOp::Not: return a[0] == 0;
    case ExprOp::Select: return a[0] != 0 ? a[1] : a[2];
    case ExprOp::Floor: return std::floor(a[0]);
    case ExprOp::Ceil: return std::ceil(a[0]);
    case ExprOp::Round: return std::round(a[0]);
    case ExprOp::Abs: return std::fabs(a[0]);
    case ExprOp::Sqrt: return std::sqrt(a[0]);
    case ExprOp::Log2: return std::log2(a[0]);
    case ExprOp::Pow: return std::pow(a[0], a[1]);
    case ExprOp::Min2: return a[0] < a[1] ? a[0] : a[1];
    case ExprOp::Max2: return a[0] > a[1] ? a[0] : a[1];
    case ExprOp::Const:
    case ExprOp::Slot: break;
  }
  return NAN;
}

std::size_t CompiledExpr::stack_depth() const {
  std::size_t depth = 0, max_depth = 0;
  for (const ExprInstr& i : code_) {
    depth = depth + 1 - static_cast<std::size_t>(expr_op_arity(i.op));
    max_depth = std::max(max_depth, depth);
  }
  return max_depth;
}

double CompiledExpr::eval_general(const double* slots) const {
  double stack[kMaxStack];
  std::size_t top = 0;
  for (const ExprInstr& i : code_) {
    switch (i.op) {
      case ExprOp::Const: stack[top++] = i.value; break;
      case ExprOp::Slot: stack[top++] = slots[i.slot]; break;
      case ExprOp::Add:
        --top;
        stack[top - 1] += stack[top];
        break;
      case ExprOp::Sub:
        --top;
        stack[top - 1] -= stack[top];
        break;
      case ExprOp::Mul:
        --top;
        stack[top - 1] *= stack[top];
        break;
      default: {
        int n = expr_op_arity(i.op);
        top -= static_cast<std::size_t>(n);
        stack[top] = apply_expr_op(i.op, &stack[top]);
        ++top;
      }
    }
  }
  return stack[0];
}

CompiledExpr CompiledExpr::specialize(const std::vector<std::optional<double>>& known) const {
  // Each stack entry is a code fragment; constant fragments fold on the fly.
  std::vector<std::vector<ExprInstr>> stack;
  auto is_const = [](const std::vector<ExprInstr>& f) { return f.size() == 1 && f[0].op == ExprOp::Const; };
  for (const ExprInstr& i : code_) {
    if (i.op == ExprOp::Slot && i.slot < known.size() && known[i.slot]) {
      stack.push_back({{ExprOp::Const, 0, *known[i.slot]}});
      continue;
    }
    int n = expr_op_arity(i.op);
    if (n == 0) {
      stack.push_back({i});
      continue;
    }
    std::vector<std::vector<ExprInstr>> args(stack.end() - n, stack.end());
    stack.resize(stack.size() - static_cast<std::size_t>(n));
    bool all_const = true;
    for (const auto& a : args) all_const = all_const && is_const(a);
    if (all_const) {
      double v[3];
      for (int k = 0; k < n; ++k) v[k] = args[static_cast<std::size_t>(k)][0].value;
      stack.push_back({{ExprOp::Const, 0, apply_expr_op(i.op, v)}});
    } else if (i.op == ExprOp::Select && is_const(args[0])) {
      stack.push_back(args[0][0].value != 0 ? args[1] : args[2]);  // a decided branch
    } else {
      std::vector<ExprInstr> merged;
      for (const auto& a : args) merged.insert(merged.end(), a.begin(), a.end());
      merged.push_back(i);
      stack.push_back(std::move(merged));
    }
  }
  CompiledExpr out;
  if (!stack.empty()) out.code_ = std::move(stack.back());
  return out;
}

std::string CompiledExpr::str() const {
  std::ostringstream out;
  static const char* names[] = {"const", "slot", "+",     "-",   "*",    "/",    "%",   "neg", "<",
                                "<=",    ">",    ">=",    "==",  "!=",   "and",  "or",  "not", "select",
                                "floor", "ceil", "round", "abs", "sqrt", "log2", "pow", "min", "max"};
  for (std::size_t k = 0; k < code_.size(); ++k) {
    const ExprInstr& i = code_[k];
    if (k) out << ' ';
    if (i.op == ExprOp::Const)
      out << i.value;
    else if (i.op == ExprOp::Slot)
      out << '$' << i.slot;
    else
      out << names[static_cast<int>(i.op)];
  }
  return out.str();
}

}  // namespace poems::taskgraph
