#include "poems/psl/ast.h"

#include <cstdio>

namespace poems::psl {

const char* op_spelling(Op op) {
  switch (op) {
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::Mod: return "%";
    case Op::Neg: return "-";
    case Op::Plus: return "+";
    case Op::Not: return "not";
    case Op::And: return "and";
    case Op::Or: return "or";
    case Op::Lt: return "<";
    case Op::Le: return "<=";
    case Op::Gt: return ">";
    case Op::Ge: return ">=";
    case Op::Eq: return "==";
    case Op::Ne: return "!=";
  }
  return "?";
}

Expr::~Expr() {
  if (operands.empty()) return;
  // Take the children over before they die, so each dies with no operands left.
  std::vector<ExprPtr> pending = std::move(operands);
  while (!pending.empty()) {
    ExprPtr e = std::move(pending.back());
    pending.pop_back();
    if (!e) continue;
    for (ExprPtr& child : e->operands) pending.push_back(std::move(child));
    e->operands.clear();
  }
}

const char* comm_op_spelling(CommOp op) {
  switch (op) {
    case CommOp::Send: return "send";
    case CommOp::Recv: return "recv";
    case CommOp::Isend: return "isend";
    case CommOp::Irecv: return "irecv";
  }
  return "?";
}

namespace {
template <typename T, typename Member>
const T* find_in(const std::vector<Module>& modules, Member member, std::string_view name) {
  for (const Module& m : modules)
    for (const T& d : m.*member)
      if (d.name.name == name) return &d;
  return nullptr;
}
}  // namespace

std::string Program::location_text(SourceLocation at) const {
  if (!at.valid()) return "";
  for (const Module& m : modules)
    if (m.file == at.file) return m.path + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
  return "";
}

const Binding* AttachedCommand::find(std::string_view name) const {
  for (const Binding& b : entries)
    if (b.name.name == name) return &b;
  return nullptr;
}

const ModelDecl* Program::find_model(std::string_view name) const {
  return find_in<ModelDecl>(modules, &Module::models, name);
}
const ComponentDecl* Program::find_component(std::string_view name) const {
  return find_in<ComponentDecl>(modules, &Module::components, name);
}
const StudyDecl* Program::find_study(std::string_view name) const {
  return find_in<StudyDecl>(modules, &Module::studies, name);
}
std::size_t Program::model_count() const {
  std::size_t n = 0;
  for (const Module& m : modules) n += m.models.size();
  return n;
}
std::size_t Program::component_count() const {
  std::size_t n = 0;
  for (const Module& m : modules) n += m.components.size();
  return n;
}
std::size_t Program::study_count() const {
  std::size_t n = 0;
  for (const Module& m : modules) n += m.studies.size();
  return n;
}

}  // namespace poems::psl

namespace poems::psl {

namespace {
int precedence(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Ternary: return 1;
    case ExprKind::Logical: return e.op == Op::Or ? 2 : 3;
    case ExprKind::Not: return 4;
    case ExprKind::Compare: return 5;
    case ExprKind::Binary: return e.op == Op::Add || e.op == Op::Sub ? 6 : 7;
    case ExprKind::Unary: return 8;
    default: return 9;
  }
}

std::string number_text(const Expr& e) {
  std::string unit;
  double v = e.number;
  if (e.dimension == kTime)
    unit = "ns";
  else if (e.dimension == kBytes)
    unit = "B";
  else if (e.dimension == kTimePerByte)
    unit = "ns/B";
  else if (e.dimension == kBytesPerTime)
    unit = "GB/s";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf + unit;
}
}  // namespace

std::vector<const Expr*> list_items(const Expr& e) {
  std::vector<const Expr*> out;
  if (e.kind == ExprKind::List) {
    for (const ExprPtr& item : e.operands)
      if (item) out.push_back(item.get());
  } else {
    out.push_back(&e);
  }
  return out;
}

std::string to_source(const Expr& e) {
  auto sub = [&](const Expr& o, bool right = false) {
    std::string s = to_source(o);
    int po = precedence(o), pe = precedence(e);
    return (po < pe || (right && po == pe && e.kind == ExprKind::Binary)) ? "(" + s + ")" : s;
  };
  switch (e.kind) {
    case ExprKind::Number: return number_text(e);
    case ExprKind::String: return "\"" + e.text + "\"";
    case ExprKind::Bool: return e.boolean ? "true" : "false";
    case ExprKind::Name: return e.text;
    case ExprKind::Ref: return e.ref.str();
    case ExprKind::Unary: return std::string(e.op == Op::Neg ? "-" : "+") + sub(*e.operands[0]);
    case ExprKind::Not: return "not " + sub(*e.operands[0]);
    case ExprKind::Binary: return sub(*e.operands[0]) + " " + op_spelling(e.op) + " " + sub(*e.operands[1], true);
    case ExprKind::Logical:
    case ExprKind::Compare: {
      std::string s = sub(*e.operands[0]);
      for (std::size_t i = 1; i < e.operands.size(); ++i)
        s += std::string(" ") + op_spelling(e.kind == ExprKind::Logical ? e.op : e.compare_ops[i - 1]) + " " +
             sub(*e.operands[i], true);
      return s;
    }
    case ExprKind::Ternary:
      return sub(*e.operands[0], true) + " ? " + sub(*e.operands[1], true) + " : " + sub(*e.operands[2]);
    case ExprKind::Call:
    case ExprKind::Tuple:
    case ExprKind::List: {
      std::string s = e.kind == ExprKind::Call ? e.text + "(" : e.kind == ExprKind::Tuple ? "(" : "[";
      for (std::size_t i = 0; i < e.operands.size(); ++i) s += (i ? ", " : "") + to_source(*e.operands[i]);
      return s + (e.kind == ExprKind::List ? "]" : ")");
    }
    case ExprKind::Invalid: return "?";
  }
  return "?";
}

}  // namespace poems::psl
