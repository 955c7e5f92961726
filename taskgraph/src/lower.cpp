// Lowering a checked PSL task graph into a StaticTaskGraph: slots for every
// name, compiled expressions, a flat control program, static node records.
#include <cmath>
#include <set>
#include <stdexcept>

#include "isl_form.h"
#include "poems/psl/isl_text.h"
#include "poems/psl/value.h"
#include "poems/taskgraph/stg.h"

namespace poems::taskgraph {

namespace {

using psl::Expr;
using psl::ExprKind;
using psl::Op;

std::string where(const psl::SourceManager& sources, psl::SourceLocation loc) {
  if (!loc.valid() || loc.file >= sources.size()) return "";
  return sources.path(loc.file) + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
}

class Lowerer {
 public:
  Lowerer(const psl::Program& program, const psl::SourceManager& sources, const LowerOptions& options)
      : program_(program), sources_(sources), options_(options) {}

  StaticTaskGraph run(const psl::ModelDecl& model, const psl::TaskGraphDecl& graph) {
    g_.model = model.name.name;
    g_.name = graph.name.name;
    scopes_.emplace_back();
    // Model values that are not numbers (strings, references) are legal PSL
    // but have no place in a task graph: they get a NaN slot, and only a use
    // in the task graph is an error.
    for (const psl::Binding& p : model.params) {
      g_.param_defaults.push_back(compile_model_value(p));
      g_.params.push_back(p.name.name);
      declare(p.name.name, Binding{new_slot(p.name.name), nullptr, true});
    }
    for (const psl::Binding& l : model.lets) {
      g_.model_lets.push_back(compile_model_value(l));
      g_.model_let_text.push_back(non_numeric_.count(l.name.name) ? "" : psl::to_source(*l.value));
      g_.model_let_location.push_back(where(sources_, l.name.location));
      declare(l.name.name, Binding{new_slot(l.name.name), l.value.get(), true});
    }
    domain_ = IslDomain{};
    for (const psl::StmtPtr& s : graph.body)
      if (auto* p = std::get_if<psl::ProcessesStmt>(&s->node)) lower_processes(*p);
    if (g_.process_dims.empty()) fail(graph.location, "taskgraph '" + graph.name.name + "' has no process set");
    block(graph.body);
    emit(StgInstr{});  // End
    return std::move(g_);
  }

 private:
  struct Binding {
    std::uint32_t slot;
    const Expr* definition;  // lets: their expression (for isl forms); else null
    bool model_level;
  };

  [[noreturn]] void fail(psl::SourceLocation loc, const std::string& message) const {
    throw std::runtime_error(where(sources_, loc) + ": " + message);
  }

  std::uint32_t new_slot(const std::string& name) {
    g_.slot_names.push_back(name);
    return static_cast<std::uint32_t>(g_.slot_names.size() - 1);
  }
  void declare(const std::string& name, Binding b) { scopes_.back()[name] = b; }
  const Binding* find(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return &f->second;
    }
    return nullptr;
  }

  std::uint32_t emit(StgInstr in) {
    g_.code.push_back(std::move(in));
    return static_cast<std::uint32_t>(g_.code.size() - 1);
  }

  // ------------------------------------------------------------ expressions
  CompiledExpr compile_model_value(const psl::Binding& b) {
    try {
      return compile(*b.value);
    } catch (const std::runtime_error&) {
      non_numeric_.insert(b.name.name);
      return CompiledExpr::constant(std::nan(""));
    }
  }

  CompiledExpr compile(const Expr& e) {
    CompiledExpr out;
    compile_into(e, out);
    if (out.stack_depth() > CompiledExpr::kMaxStack) fail(e.location, "expression too deep to evaluate");
    return out;
  }

  void op(CompiledExpr& out, ExprOp o) { out.push({o, 0, 0}); }

  void compile_into(const Expr& e, CompiledExpr& out) {
    switch (e.kind) {
      case ExprKind::Number: out.push({ExprOp::Const, 0, e.number}); return;
      case ExprKind::Bool: out.push({ExprOp::Const, 0, e.boolean ? 1.0 : 0.0}); return;
      case ExprKind::Name: {
        if (const Binding* b = find(e.text)) {
          if (b->model_level && non_numeric_.count(e.text))
            fail(e.location, "'" + e.text + "' is not a number and cannot be used in a task graph");
          out.push({ExprOp::Slot, b->slot, 0});
          return;
        }
        out.push({ExprOp::Const, 0, component_member(e)});
        return;
      }
      case ExprKind::Unary:
        compile_into(*e.operands[0], out);
        if (e.op == Op::Neg) op(out, ExprOp::Neg);
        return;
      case ExprKind::Not:
        compile_into(*e.operands[0], out);
        op(out, ExprOp::Not);
        return;
      case ExprKind::Binary: {
        compile_into(*e.operands[0], out);
        compile_into(*e.operands[1], out);
        static const ExprOp map[] = {ExprOp::Add, ExprOp::Sub, ExprOp::Mul, ExprOp::Div, ExprOp::Mod};
        op(out, map[static_cast<int>(e.op)]);
        return;
      }
      case ExprKind::Logical:
        compile_into(*e.operands[0], out);
        for (std::size_t i = 1; i < e.operands.size(); ++i) {
          compile_into(*e.operands[i], out);
          op(out, e.op == Op::And ? ExprOp::And : ExprOp::Or);
        }
        return;
      case ExprKind::Compare:
        // a < b < c  ==  (a < b) and (b < c)
        for (std::size_t i = 0; i + 1 < e.operands.size(); ++i) {
          compile_into(*e.operands[i], out);
          compile_into(*e.operands[i + 1], out);
          static const ExprOp cmp[] = {ExprOp::Lt, ExprOp::Le, ExprOp::Gt, ExprOp::Ge, ExprOp::Eq, ExprOp::Ne};
          op(out, cmp[static_cast<int>(e.compare_ops[i]) - static_cast<int>(Op::Lt)]);
          if (i > 0) op(out, ExprOp::And);
        }
        return;
      case ExprKind::Ternary:
        for (const auto& o : e.operands) compile_into(*o, out);
        op(out, ExprOp::Select);
        return;
      case ExprKind::Call: {
        const std::string& f = e.text;
        if (f == "min" || f == "max") {
          compile_into(*e.operands[0], out);
          for (std::size_t i = 1; i < e.operands.size(); ++i) {
            compile_into(*e.operands[i], out);
            op(out, f == "min" ? ExprOp::Min2 : ExprOp::Max2);
          }
          return;
        }
        for (const auto& o : e.operands) compile_into(*o, out);
        if (f == "floor")
          op(out, ExprOp::Floor);
        else if (f == "ceil")
          op(out, ExprOp::Ceil);
        else if (f == "round")
          op(out, ExprOp::Round);
        else if (f == "abs")
          op(out, ExprOp::Abs);
        else if (f == "sqrt")
          op(out, ExprOp::Sqrt);
        else if (f == "log2")
          op(out, ExprOp::Log2);
        else if (f == "pow")
          op(out, ExprOp::Pow);
        else
          fail(e.location, "unknown function '" + f + "'");
        return;
      }
      default: fail(e.location, "this expression cannot be evaluated in a task graph");
    }
  }

  // `Component.param` in a task graph: the component's parameter default.
  double component_member(const Expr& e) {
    std::size_t dot = e.text.find('.');
    if (dot != std::string::npos) {
      const psl::ComponentDecl* c = program_.find_component(e.text.substr(0, dot));
      std::string member = e.text.substr(dot + 1);
      if (c) {
        std::map<std::string, psl::Value> values;
        for (const psl::Binding& p : c->params) {
          psl::EvalResult r = psl::evaluate(*p.value, [&](std::string_view n) -> const psl::Value* {
            auto it = values.find(std::string(n));
            return it == values.end() ? nullptr : &it->second;
          });
          if (r.value) values[p.name.name] = *r.value;
        }
        auto it = values.find(member);
        if (it != values.end() && it->second.kind == psl::Value::Kind::Number) return it->second.number;
      }
    }
    fail(e.location, "'" + e.text + "' has no numeric value in a task graph");
  }

  // -------------------------------------------------------------- statements
  void lower_processes(const psl::ProcessesStmt& p) {
    for (const psl::Identifier& d : p.set.dims) {
      std::uint32_t slot = new_slot(d.name);
      g_.process_dims.push_back(slot);
      declare(d.name, Binding{slot, nullptr, false});
      domain_.dims.push_back(d.name);
    }
    std::string error;
    std::vector<std::string> params;
    auto text = psl::integer_set_isl(p.set, params, &error);
    if (!text) fail(p.set.location, "the process set cannot be represented: " + error);
    g_.process_set = *text;
    std::string dims;
    for (const psl::Identifier& d : p.set.dims) dims += (dims.empty() ? "" : ", ") + d.name;
    g_.process_set_source =
        "{ [" + dims + "]" + (p.set.constraint ? " : " + psl::to_source(*p.set.constraint) : "") + " }";
    g_.process_set_params = params;
    g_.process_set_location = where(sources_, p.set.location);
    process_constraint_ = p.set.constraint.get();
  }

  void block(const psl::StmtList& body) {
    scopes_.emplace_back();
    for (std::size_t i = 0; i < body.size(); ++i) {
      // Condensation: a run of compute tasks becomes one task.
      if (options_.condense && std::holds_alternative<psl::TaskStmt>(body[i]->node)) {
        std::size_t j = i;
        while (j + 1 < body.size() && std::holds_alternative<psl::TaskStmt>(body[j + 1]->node)) ++j;
        if (j > i) {
          lower_tasks(body, i, j);
          i = j;
          continue;
        }
      }
      stmt(*body[i]);
    }
    scopes_.pop_back();
  }

  void stmt(const psl::Stmt& s) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, psl::ProcessesStmt>) {
            // handled up front
          } else if constexpr (std::is_same_v<T, psl::LetStmt>) {
            for (const psl::Binding& b : n.bindings) {
              StgInstr in;
              in.op = StgOp::Let;
              in.value = compile(*b.value);
              in.slot = new_slot(b.name.name);
              declare(b.name.name, Binding{in.slot, b.value.get(), false});
              emit(std::move(in));
            }
          } else if constexpr (std::is_same_v<T, psl::ForStmt>) {
            lower_for(n, s.location);
          } else if constexpr (std::is_same_v<T, psl::IfStmt>) {
            lower_if(n);
          } else if constexpr (std::is_same_v<T, psl::CommStmt>) {
            lower_comm(n, s.location);
          } else if constexpr (std::is_same_v<T, psl::TaskStmt>) {
            lower_task(n, s.location);
          } else if constexpr (std::is_same_v<T, psl::WaitAllStmt>) {
            StgInstr in;
            in.op = StgOp::WaitAll;
            emit(std::move(in));
          } else if constexpr (std::is_same_v<T, psl::CollectiveStmt>) {
            lower_collective(n, s.location);
          }
        },
        s.node);
  }

  void lower_for(const psl::ForStmt& f, psl::SourceLocation loc) {
    StgInstr begin;
    begin.op = StgOp::LoopBegin;
    begin.location = where(sources_, loc);
    begin.text = "for " + f.variable.name + " in " + psl::to_source(*f.first) + " .. " + psl::to_source(*f.last) +
                 (f.step ? " step " + psl::to_source(*f.step) : "");
    begin.value = compile(*f.first);
    begin.last = compile(*f.last);
    begin.step = f.step ? compile(*f.step) : CompiledExpr::constant(1);
    scopes_.emplace_back();
    begin.slot = new_slot(f.variable.name);
    begin.limit_slot = new_slot(f.variable.name + ".last");
    begin.step_slot = new_slot(f.variable.name + ".step");
    declare(f.variable.name, Binding{begin.slot, nullptr, false});
    StgInstr end;
    end.op = StgOp::LoopEnd;
    end.slot = begin.slot;
    end.limit_slot = begin.limit_slot;
    end.step_slot = begin.step_slot;
    std::uint32_t at = emit(std::move(begin));
    domain_.loops.push_back({f.variable.name, f.first.get(), f.last.get(), f.step.get()});
    block(f.body);
    domain_.loops.pop_back();
    end.target = at + 1;
    std::uint32_t end_at = emit(std::move(end));
    g_.code[at].target = end_at + 1;
    scopes_.pop_back();
  }

  void lower_if(const psl::IfStmt& s) {
    StgInstr branch;
    branch.op = StgOp::Branch;
    branch.text = "if " + psl::to_source(*s.condition);
    branch.value = compile(*s.condition);
    std::uint32_t at = emit(std::move(branch));
    domain_.conditions.push_back({s.condition.get(), true});
    block(s.then_body);
    domain_.conditions.back().holds = false;
    if (!s.else_body.empty()) {
      StgInstr jump;
      jump.op = StgOp::Jump;
      std::uint32_t jump_at = emit(std::move(jump));
      g_.code[at].target = jump_at + 1;
      block(s.else_body);
      g_.code[jump_at].target = static_cast<std::uint32_t>(g_.code.size());
    } else {
      g_.code[at].target = static_cast<std::uint32_t>(g_.code.size());
    }
    domain_.conditions.pop_back();
  }

  std::uint32_t add_node(StaticNode n, psl::SourceLocation loc = {}) {
    n.instances = instances_text();
    n.source = loc;
    for (const auto& l : domain_.loops) n.loop_nest += (n.loop_nest.empty() ? "" : ",") + l.variable;
    g_.nodes.push_back(std::move(n));
    return static_cast<std::uint32_t>(g_.nodes.size() - 1);
  }

  IslResolver resolver() {
    return [this](const std::string& name) -> IslName {
      const Binding* b = find(name);
      if (!b) return {IslName::Kind::Parameter, nullptr};
      if (b->definition && !b->model_level) return {IslName::Kind::Let, b->definition};
      if (b->model_level) return {IslName::Kind::Parameter, nullptr};
      return {IslName::Kind::Variable, nullptr};
    };
  }

  std::string instances_text() { return domain_text(domain_, process_constraint_, resolver()); }

  void lower_comm(const psl::CommStmt& c, psl::SourceLocation loc) {
    StaticNode node;
    bool is_send = c.op == psl::CommOp::Send || c.op == psl::CommOp::Isend;
    node.kind = is_send ? StaticNode::Kind::Send : StaticNode::Kind::Recv;
    node.nonblocking = c.op == psl::CommOp::Isend || c.op == psl::CommOp::Irecv;
    node.label = psl::comm_op_spelling(c.op);
    node.location = where(sources_, loc);
    {
      std::string peer = "any";
      if (c.peer.kind == psl::Peer::Kind::Index) {
        peer = "[";
        for (std::size_t k = 0; k < c.peer.index.size(); ++k)
          peer += (k ? ", " : "") + psl::to_source(*c.peer.index[k]);
        peer += "]";
      } else if (c.peer.kind == psl::Peer::Kind::Map) {
        peer = "{ map }";
      }
      node.text = node.label + (is_send ? " to " : " from ") + peer +
                  (c.size ? " size " + psl::to_source(*c.size) : "") +
                  (c.tag_any ? " tag any"
                   : c.tag   ? " tag " + psl::to_source(*c.tag)
                             : "");
    }
    if (c.size) node.size = psl::to_source(*c.size);
    if (c.tag) node.tag = psl::to_source(*c.tag);
    StgInstr in;
    in.op = StgOp::Comm;
    in.size = c.size ? compile(*c.size) : CompiledExpr::constant(0);
    in.tag = c.tag ? compile(*c.tag) : CompiledExpr::constant(0);
    in.tag_any = c.tag_any;
    in.is_send = is_send;
    in.nonblocking = node.nonblocking;
    if (c.peer.kind == psl::Peer::Kind::Index) {
      for (const psl::ExprPtr& e : c.peer.index) in.peer.push_back(compile(*e));
      if (!c.tag_any)
        node.messages = message_relation(domain_, process_constraint_, c.peer.index, c.tag.get(), is_send, resolver());
    } else if (c.peer.kind == psl::Peer::Kind::Any) {
      node.wildcard = true;
    } else if (c.peer.kind == psl::Peer::Kind::Map && c.peer.map) {
      // The map's input coordinates are this process's coordinates.
      const psl::IntegerMap& m = *c.peer.map;
      scopes_.emplace_back();
      for (std::size_t k = 0; k < m.in_dims.size() && k < g_.process_dims.size(); ++k)
        declare(m.in_dims[k].name, Binding{g_.process_dims[k], nullptr, false});
      for (const psl::ExprPtr& e : m.out) in.peer.push_back(compile(*e));
      if (m.constraint) in.peer_guard = compile(*m.constraint);
      scopes_.pop_back();
    }
    if (c.tag_any) node.wildcard = true;
    in.node = add_node(std::move(node), loc);
    emit(std::move(in));
  }

  void lower_task(const psl::TaskStmt& t, psl::SourceLocation loc) {
    StaticNode node;
    node.kind = StaticNode::Kind::Compute;
    node.label = t.name.name;
    node.location = where(sources_, loc);
    node.component = t.component.name;
    StgInstr in;
    in.op = StgOp::Compute;
    in.value = work_expression(t, node.work);
    node.text = "task " + t.name.name + " : " + t.component.name + " (work " + node.work + ")";
    in.node = add_node(std::move(node), loc);
    emit(std::move(in));
  }

  // A run of tasks [first, last] of a block, condensed into one node.
  void lower_tasks(const psl::StmtList& body, std::size_t first, std::size_t last) {
    StaticNode node;
    node.kind = StaticNode::Kind::Compute;
    node.location = where(sources_, body[first]->location);
    StgInstr in;
    in.op = StgOp::Compute;
    for (std::size_t i = first; i <= last; ++i) {
      const auto& t = std::get<psl::TaskStmt>(body[i]->node);
      std::string work;
      CompiledExpr w = work_expression(t, work);
      node.label += (i > first ? "+" : "") + t.name.name;
      node.component += (i > first ? "+" : "") + t.component.name;
      node.work += (i > first ? " + " : "") + std::string("(") + work + ")";
      for (const ExprInstr& x : w.code()) in.value.push(x);
      if (i > first) in.value.push({ExprOp::Add, 0, 0});
    }
    node.text = "task " + node.label + " : " + node.component + " (work " + node.work + ")";
    in.node = add_node(std::move(node), body[first]->location);
    emit(std::move(in));
  }

  // The task's work: the `work` coercion of the component's request if it has
  // one (e.g. work = cells * angles), else the product of its numeric arguments.
  CompiledExpr work_expression(const psl::TaskStmt& t, std::string& text) {
    const psl::ComponentDecl* c = program_.find_component(t.component.name);
    const psl::Expr* work = nullptr;
    if (c)
      for (const psl::Interface& r : c->requests)
        if (r.transaction)
          for (const psl::TxParam& p : r.transaction->params)
            if (p.kind == psl::TxParamKind::Coerced && p.name.name == "work" && p.value) work = p.value.get();
    // Arguments are bound under the names the component accepts.
    scopes_.emplace_back();
    std::vector<std::uint32_t> arg_slots;
    CompiledExpr out;
    for (const psl::Binding& a : t.arguments) {
      // Each argument is evaluated into a hidden slot through a Let.
      StgInstr let;
      let.op = StgOp::Let;
      let.value = compile(*a.value);
      let.slot = new_slot(t.name.name + "." + a.name.name);
      arg_slots.push_back(let.slot);
      emit(std::move(let));
    }
    for (std::size_t i = 0; i < t.arguments.size(); ++i)
      declare(t.arguments[i].name.name, Binding{arg_slots[i], nullptr, false});
    if (work) {
      out = compile(*work);
      text = render(*work);
    } else {
      out = CompiledExpr::constant(1);
      text = "1";
      for (std::size_t i = 0; i < arg_slots.size(); ++i) {
        out.push({ExprOp::Slot, arg_slots[i], 0});
        out.push({ExprOp::Mul, 0, 0});
        text += " * " + t.arguments[i].name.name;
      }
    }
    scopes_.pop_back();
    return out;
  }

  std::string render(const psl::Expr& e) const {
    std::vector<std::string> params;
    if (auto t = isl_expression(e, params)) return *t;
    return "(expression)";
  }

  void lower_collective(const psl::CollectiveStmt& c, psl::SourceLocation loc) {
    StaticNode node;
    node.kind = StaticNode::Kind::Collective;
    node.label = c.operation.name;
    node.location = where(sources_, loc);
    node.text = c.operation.name + (c.size ? " size " + psl::to_source(*c.size) : "") +
                (c.root ? " root " + psl::to_source(*c.root) : "");
    auto op = parse_collective_op(c.operation.name);
    if (!op) fail(c.operation.location, "unknown collective '" + c.operation.name + "'");
    node.collective = *op;
    node.algorithm = algorithms_for(*op).front();
    if (c.algorithm) {
      auto a = parse_collective_algorithm(c.algorithm->name);
      if (!a) fail(c.algorithm->location, "unknown algorithm '" + c.algorithm->name + "'");
      node.algorithm = *a;
    }
    if (c.size) node.size = psl::to_source(*c.size);
    if (c.root) node.root = psl::to_source(*c.root);
    StgInstr in;
    in.op = StgOp::Collective;
    in.size = c.size ? compile(*c.size) : CompiledExpr::constant(0);
    in.value = c.root ? compile(*c.root) : CompiledExpr::constant(0);
    in.node = add_node(std::move(node), loc);
    emit(std::move(in));
  }

  const psl::Program& program_;
  const psl::SourceManager& sources_;
  LowerOptions options_;
  StaticTaskGraph g_;
  std::vector<std::map<std::string, Binding>> scopes_;
  IslDomain domain_;
  const Expr* process_constraint_ = nullptr;
  std::set<std::string> non_numeric_;
};

}  // namespace

StaticTaskGraph lower(const psl::Program& program, const psl::SourceManager& sources, const psl::ModelDecl& model,
                      const psl::TaskGraphDecl& graph, const LowerOptions& options) {
  return Lowerer(program, sources, options).run(model, graph);
}

StaticTaskGraph lower_model(const psl::Program& program, const psl::SourceManager& sources,
                            const std::string& model_name, const LowerOptions& options) {
  const psl::ModelDecl* model = nullptr;
  if (model_name.empty()) {
    if (program.model_count() != 1)
      throw std::runtime_error("the specification has " + std::to_string(program.model_count()) +
                               " models; choose one with --model");
    for (const psl::Module& m : program.modules)
      if (!m.models.empty()) model = &m.models.front();
  } else {
    model = program.find_model(model_name);
    if (!model) throw std::runtime_error("no model named '" + model_name + "'");
  }
  if (model->taskgraphs.empty()) throw std::runtime_error("model '" + model->name.name + "' has no taskgraph");
  return lower(program, sources, *model, model->taskgraphs.front(), options);
}

}  // namespace poems::taskgraph
