#include "poems/psl/ast.h"

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
