// Expressions compiled once per static node into flat postfix code over a
// slot array (parameters, loop variables, process coordinates, lets), then
// specialized for a parameter binding so that everything the binding fixes is
// folded into constants. The hot path evaluates a few instructions in a
// switch loop: no allocation, no virtual calls, no isl.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace poems::taskgraph {

enum class ExprOp : std::uint8_t {
  Const,
  Slot,
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Neg,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
  Not,
  Select,  // c ? a : b (operands pushed as c, a, b)
  Floor,
  Ceil,
  Round,
  Abs,
  Sqrt,
  Log2,
  Pow,
  Min2,
  Max2,
};

struct ExprInstr {
  ExprOp op;
  std::uint32_t slot = 0;  // Slot
  double value = 0;        // Const
};

class CompiledExpr {
 public:
  CompiledExpr() = default;
  static CompiledExpr constant(double v);
  static CompiledExpr slot(std::uint32_t s);

  void push(ExprInstr i) { code_.push_back(i); }
  const std::vector<ExprInstr>& code() const { return code_; }
  bool empty() const { return code_.empty(); }
  bool is_constant() const { return code_.size() == 1 && code_[0].op == ExprOp::Const; }
  double constant_value() const { return code_[0].value; }
  // Deepest operand stack the code needs.
  std::size_t stack_depth() const;

  // Always inlined: pull() evaluates several per operation, and GCC stops
  // inlining it on its own once pull() grows (11 more instructions an operation).
  [[gnu::always_inline]] double eval(const double* slots) const {
    const ExprInstr* c = code_.data();
    switch (code_.size()) {
      case 1: return c[0].op == ExprOp::Const ? c[0].value : slots[c[0].slot];
      case 3:
        // The common shapes of index arithmetic (pi - di, 100 + iq) without the stack machine.
        if (c[2].op == ExprOp::Add || c[2].op == ExprOp::Sub || c[2].op == ExprOp::Mul) {
          double a = c[0].op == ExprOp::Slot ? slots[c[0].slot] : c[0].op == ExprOp::Const ? c[0].value : NAN;
          double b = c[1].op == ExprOp::Slot ? slots[c[1].slot] : c[1].op == ExprOp::Const ? c[1].value : NAN;
          if (a == a && b == b) return c[2].op == ExprOp::Add ? a + b : c[2].op == ExprOp::Sub ? a - b : a * b;
        }
        break;
      default: break;
    }
    return eval_general(slots);
  }

  // Folds every slot whose value is known (and everything that then becomes
  // constant) into constants.
  CompiledExpr specialize(const std::vector<std::optional<double>>& known) const;
  // Moves every slot reference by `delta` (slots below `from` must not occur).
  void shift_slots(std::int64_t delta) {
    for (ExprInstr& i : code_)
      if (i.op == ExprOp::Slot) i.slot = static_cast<std::uint32_t>(static_cast<std::int64_t>(i.slot) + delta);
  }
  // The lowest slot referenced, or UINT32_MAX when none.
  std::uint32_t min_slot() const {
    std::uint32_t m = UINT32_MAX;
    for (const ExprInstr& i : code_)
      if (i.op == ExprOp::Slot && i.slot < m) m = i.slot;
    return m;
  }
  // Readable postfix form, for tests and debugging.
  std::string str() const;

  static constexpr std::size_t kMaxStack = 64;

 private:
  double eval_general(const double* slots) const;
  std::vector<ExprInstr> code_;
};

// Applies one operator to constant operands (shared by eval and folding).
double apply_expr_op(ExprOp op, const double* args);
int expr_op_arity(ExprOp op);

}  // namespace poems::taskgraph
