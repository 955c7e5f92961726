// Semantic checks: names, units, arity, integer bounds, interfaces, studies.
#include "check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "analyzer.h"
#include "attached_check.h"
#include "isl_check.h"
#include "poems/psl/frontend.h"
#include "poems/psl/vocabulary.h"

namespace poems::psl {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

std::string with_article(const std::string& word) {
  bool vowel = !word.empty() && std::string("aeiou").find(word[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + word;
}

template <std::size_t N>
std::vector<std::string> to_vector(const std::array<std::string_view, N>& a) {
  return {a.begin(), a.end()};
}

class ProgramChecker {
 public:
  ProgramChecker(const Program& program, DiagnosticEngine& diags) : program_(program), diags_(diags), isl_(diags) {}

  void run() {
    collect_declarations();
    collect_profile_attributes();
    for (const Module& m : program_.modules) {
      for (const ComponentDecl& c : m.components) check_component(c);
    }
    for (const Module& m : program_.modules) {
      for (const ModelDecl& model : m.models) check_model(model);
    }
    for (const Module& m : program_.modules) {
      for (const StudyDecl& s : m.studies) check_study(s);
    }
    check_selector_names();
  }

 private:
  // ----------------------------------------------------------- top level
  template <typename Decl>
  void declare_unique(std::map<std::string, const Decl*>& table, const Decl& d, const char* what) {
    if (d.name.name.empty()) return;
    auto [it, inserted] = table.emplace(d.name.name, &d);
    if (!inserted) {
      auto& diag = diags_.error(d.name.location, std::string("redefinition of ") + what + " '" + d.name.name + "'");
      DiagnosticEngine::note(diag, it->second->name.location, "previous definition is here");
    }
  }

  void collect_declarations() {
    for (const Module& m : program_.modules) {
      for (const ModelDecl& d : m.models) declare_unique(models_, d, "model");
      for (const ComponentDecl& d : m.components) declare_unique(components_, d, "component");
      for (const StudyDecl& d : m.studies) declare_unique(studies_, d, "study");
    }
  }

  void collect_profile_attributes() {
    for (const char* implicit : {"domain", "name", "component"}) profile_attributes_.insert(implicit);
    for (const auto& [name, c] : components_)
      for (const Interface& a : c->accepts)
        for (const ProfileEntry& e : a.profile) profile_attributes_.insert(e.name.name);
  }

  // `Component.member` in an expression: a component parameter or profile entry.
  std::optional<Analysis> member(const std::string& head, const std::string& member, SourceLocation at) {
    auto it = components_.find(head);
    if (it == components_.end()) {
      diags_.error(at, "use of undefined name '" + head + "." + member + "' ('" + head + "' is not a component)");
      return std::nullopt;
    }
    std::vector<std::string> names;
    auto params = component_params_.find(head);
    if (params != component_params_.end()) {
      if (const Symbol* s = params->second.find(member)) return s->info;
      params->second.all_names(names);
    }
    for (const Interface& a : it->second->accepts)
      for (const ProfileEntry& e : a.profile) {
        if (e.name.name == member) return Analysis::unknown();
        names.push_back(e.name.name);
      }
    diags_.error(at, "component '" + head + "' has no parameter or profile entry '" + member + "'" +
                         did_you_mean_suffix(member, names));
    return std::nullopt;
  }

  Analyzer::Hooks value_hooks() {
    Analyzer::Hooks h;
    h.member = [this](const std::string& head, const std::string& m, SourceLocation at) { return member(head, m, at); };
    return h;
  }

  // Declares bindings in order, each seeing the ones before it.
  void declare_bindings(const std::vector<Binding>& bindings, Scope& scope, Symbol::Kind kind) {
    for (const Binding& b : bindings) {
      Analyzer analyzer(diags_, scope, value_hooks());
      Analysis a = b.value ? analyzer.analyze(*b.value) : Analysis::unknown();
      redeclare_check(scope.declare(b.name.name, {kind, b.name.location, a}), b.name, kind);
    }
  }

  void redeclare_check(const Symbol* earlier, const Identifier& name, Symbol::Kind kind) {
    if (!earlier || name.name.empty()) return;
    auto& d =
        diags_.error(name.location, std::string("redefinition of '") + name.name + "' as a " + symbol_kind_name(kind));
    DiagnosticEngine::note(d, earlier->declared,
                           std::string("previous definition as a ") + symbol_kind_name(earlier->kind) + " is here");
  }

  // ---------------------------------------------------------- components
  void check_component(const ComponentDecl& c) {
    const auto domains = to_vector(kDomains);
    if (!c.domain.head.empty() && std::find(domains.begin(), domains.end(), c.domain.head) == domains.end())
      diags_.error(c.domain.location, "unknown domain '" + c.domain.head + "' (domains: " + join(domains) + ")" +
                                          did_you_mean_suffix(c.domain.head, domains));
    Scope& scope = component_params_.emplace(c.name.name, Scope{}).first->second;
    if (components_.at(c.name.name) != &c) return;  // a redefinition, already reported
    declare_bindings(c.params, scope, Symbol::Kind::ComponentParam);
    if (c.domain.head == "hardware" && c.domain.path == "network") check_loggops_ranges(c, scope);

    // Accepted transaction parameters, visible to request coercions.
    Scope accepted(&scope);
    for (const Interface& a : c.accepts) check_accepts(c, a, accepted);
    std::map<std::string, SourceLocation> request_names;
    for (const Interface& r : c.requests) {
      if (r.name) {
        auto [it, inserted] = request_names.emplace(r.name->name, r.name->location);
        if (!inserted) {
          auto& d = diags_.error(r.name->location, "duplicate requests interface '" + r.name->name + "'");
          DiagnosticEngine::note(d, it->second, "previous definition is here");
        }
      }
      check_requests(c, r, accepted);
    }
    if (c.implementation) check_paradigm(*c.implementation);
    if (c.kernel) check_kernel(c, accepted);
  }

  // A kernel times the tasks of an application component by running its
  // model's program alone; its arguments read the accepted transaction's parameters.
  void check_kernel(const ComponentDecl& c, const Scope& accepted) {
    check_attached(*c.kernel, AttachedKind::Kernel, accepted, value_hooks(), diags_);
    if (c.domain.head != "application") {
      diags_.error(c.kernel->location, "only an application component has a kernel (component '" + c.name.name +
                                           "' is in " + c.domain.str() + ")");
      return;
    }
    auto model = models_.find(c.domain.path);
    if (model == models_.end()) return;  // an application of no model here: the kernel runs nothing yet
    const std::optional<AttachedCommand>& program = model->second->program;
    if (!program || (!program->find("sources") && !program->find("executable")))
      diags_.error(c.kernel->location, "the kernel runs model " + c.domain.path +
                                           "'s program, which has no 'sources' or 'executable' (give the model a "
                                           "program { sources = \"...\"; ... })");
  }

  // A machine's LogGOPS parameters at their defaults must fit the simulator's
  // clock: times in whole picoseconds and per-byte costs in femtoseconds, each
  // below 9 x 10^18 (components/loggops.h).
  void check_loggops_ranges(const ComponentDecl& c, const Scope& scope) {
    struct Range {
      const char* name;
      Dimension dimension;
      double max;
      const char* unit;
    };
    static const Range ranges[] = {{"L", kTime, 9.0e15, "ns"},          {"o", kTime, 9.0e15, "ns"},
                                   {"g", kTime, 9.0e15, "ns"},          {"G", kTimePerByte, 9.0e12, "ns/B"},
                                   {"O", kTimePerByte, 9.0e12, "ns/B"}, {"S", kBytes, 9007199254740991.0, "B"}};
    for (const Binding& b : c.params) {
      if (!b.value) continue;
      for (const Range& r : ranges) {
        if (b.name.name != r.name) continue;
        const Symbol* sym = scope.find(b.name.name);
        if (!sym || !sym->info.value || sym->info.value->kind != Value::Kind::Number) continue;
        const Value& v = *sym->info.value;
        if (v.dimension != r.dimension && !(r.dimension == kBytes && v.dimension.dimensionless())) continue;
        if (v.number >= 0 && v.number <= r.max) continue;
        char limit[32];
        std::snprintf(limit, sizeof limit, "%g", r.max);
        diags_.error(b.value->location, "network parameter '" + b.name.name + "' of '" + c.name.name + "' is " +
                                            v.str() + "; it must be from 0 to " + limit + r.unit);
      }
    }
  }

  void check_protocol(const Interface& itf, const ComponentDecl& c) {
    const auto protocols = to_vector(kProtocols);
    std::string where = std::string(itf.kind == InterfaceKind::Accepts ? "accepts" : "requests") +
                        (itf.name ? " '" + itf.name->name + "'" : "") + " of '" + c.name.name + "'";
    if (!itf.protocol) {
      diags_.error(itf.location, where + " has no protocol (one of: " + join(protocols) + ")");
    } else if (std::find(protocols.begin(), protocols.end(), itf.protocol->name) == protocols.end()) {
      diags_.error(itf.protocol->location, "unknown protocol '" + itf.protocol->name + "' (one of: " + join(protocols) +
                                               ")" + did_you_mean_suffix(itf.protocol->name, protocols));
    }
    if (!itf.transaction) diags_.error(itf.location, where + " has no transaction");
  }

  void check_type(const Identifier& type) {
    if (type.name.empty()) return;
    const auto types = to_vector(kTransactionTypes);
    if (std::find(types.begin(), types.end(), type.name) == types.end())
      diags_.error(type.location, "unknown type '" + type.name + "' (types: " + join(types) + ")" +
                                      did_you_mean_suffix(type.name, types));
  }

  void check_accepts(const ComponentDecl& c, const Interface& a, Scope& accepted) {
    check_protocol(a, c);
    std::map<std::string, SourceLocation> seen;
    for (const ProfileEntry& e : a.profile) {
      auto [it, inserted] = seen.emplace(e.name.name, e.name.location);
      if (!inserted) {
        auto& d = diags_.error(e.name.location, "duplicate profile entry '" + e.name.name + "'");
        DiagnosticEngine::note(d, it->second, "previous entry is here");
      }
      if (e.name.name == "domain")
        diags_.error(e.name.location,
                     "the profile entry 'domain' is implicit: it is the component's domain (" + c.domain.str() + ")");
      if (e.value) {
        Analyzer analyzer(diags_, component_params_.at(c.name.name), value_hooks());
        analyzer.analyze(*e.value);
      }
    }
    if (!a.transaction) return;
    std::set<std::string> names;
    for (const TxParam& p : a.transaction->params) {
      if (!names.insert(p.name.name).second)
        diags_.error(p.name.location, "duplicate transaction parameter '" + p.name.name + "'");
      if (p.kind != TxParamKind::Typed) {
        diags_.error(p.name.location, "accepted transaction parameters are declared with a type ('" + p.name.name +
                                          ": int'), not given values");
        continue;
      }
      check_type(p.type);
      Analysis info = type_analysis(p.type.name);
      // The same name in two accepted transactions is one symbol; the first wins.
      accepted.declare(p.name.name, {Symbol::Kind::TransactionParam, p.name.location, info});
    }
    if (a.transaction->result_type) check_type(*a.transaction->result_type);
  }

  static Analysis type_analysis(const std::string& type) {
    if (type == "int") return Analysis::of_integer();
    if (type == "real") return Analysis::of_type(Value::Kind::Number);
    if (type == "time") return Analysis::of_type(Value::Kind::Number, kTime);
    if (type == "bytes" || type == "size") return Analysis::of_type(Value::Kind::Number, kBytes);
    if (type == "bool") return Analysis::of_type(Value::Kind::Bool);
    if (type == "string") return Analysis::of_type(Value::Kind::String);
    return Analysis::unknown();
  }

  void check_requests(const ComponentDecl& c, const Interface& r, const Scope& accepted) {
    check_protocol(r, c);
    std::string where = "requests" + (r.name ? " '" + r.name->name + "'" : std::string()) + " of '" + c.name.name + "'";
    if (!r.selector) {
      diags_.error(r.location, where + " has no selector");
    } else {
      Analyzer::Hooks hooks;
      hooks.selector_mode = true;
      hooks.selector_names = &selector_names_;
      Analyzer analyzer(diags_, accepted, hooks);
      Analysis a = analyzer.analyze(*r.selector);
      analyzer.require_bool(a, *r.selector, "a selector");
    }
    if (!r.transaction) return;
    std::set<std::string> names;
    for (const TxParam& p : r.transaction->params) {
      if (!names.insert(p.name.name).second)
        diags_.error(p.name.location, "duplicate transaction parameter '" + p.name.name + "'");
      if (p.kind == TxParamKind::Typed) {
        diags_.error(p.name.location, "requested transaction parameters are values ('" + p.name.name +
                                          " = expression') or forwarded names, not typed declarations");
      } else if (p.kind == TxParamKind::Coerced && p.value) {
        Analyzer analyzer(diags_, accepted, value_hooks());
        analyzer.analyze(*p.value);
      } else if (p.kind == TxParamKind::Forwarded && !accepted.find(p.name.name)) {
        std::vector<std::string> all;
        accepted.all_names(all);
        diags_.error(p.name.location, "'" + p.name.name + "' is forwarded but '" + c.name.name +
                                          "' has no such parameter" + did_you_mean_suffix(p.name.name, all));
      }
    }
  }

  void check_paradigm(const QualifiedRef& ref) {
    const auto heads = to_vector(kParadigms);
    if (std::find(heads.begin(), heads.end(), ref.head) == heads.end())
      diags_.error(ref.location, "unknown evaluation paradigm '" + ref.head + "' (paradigms: " + join(heads) + ")" +
                                     did_you_mean_suffix(ref.head, heads));
  }

  void check_selector_names() {
    std::vector<std::string> known(profile_attributes_.begin(), profile_attributes_.end());
    for (const auto& [name, loc] : selector_names_) {
      std::string head = name.substr(0, name.find('.'));
      if (profile_attributes_.count(head)) continue;
      diags_.warning(loc, "selector references attribute '" + name + "', which no profile in scope defines" +
                              did_you_mean_suffix(head, known));
    }
  }

  // --------------------------------------------------------------- models
  void check_model(const ModelDecl& m) {
    if (models_.at(m.name.name) != &m) return;
    if (m.trace) {
      if (m.trace->kind.name != "trace")
        diags_.error(m.trace->kind.location,
                     "a model comes 'from trace \"ARCHIVE\"' (an OTF2 archive), not from '" + m.trace->kind.name + "'");
      if (m.trace->path.empty()) diags_.error(m.trace->location, "the trace archive's path is empty");
    }
    Scope& scope = model_scopes_.emplace(m.name.name, Scope{}).first->second;
    declare_bindings(m.params, scope, Symbol::Kind::Param);
    declare_bindings(m.lets, scope, Symbol::Kind::Let);
    if (m.program) {
      if (m.trace) diags_.error(m.program->location, "a model from a trace has no program (the trace is its run)");
      check_attached(*m.program, AttachedKind::Program, scope, value_hooks(), diags_);
    }
    // Integer defaults that isl can take exactly fix the parameters of the sets.
    auto record_default = [&](const Binding& b) {
      const Symbol* s = scope.find(b.name.name);
      if (s && s->info.value && s->info.value->is_integer() && std::fabs(s->info.value->number) < 9.0e15)
        defaults_[m.name.name][b.name.name] = static_cast<long>(s->info.value->number);
    };
    for (const Binding& p : m.params) record_default(p);
    for (const Binding& l : m.lets) record_default(l);

    std::map<std::string, SourceLocation> graphs;
    for (const TaskGraphDecl& tg : m.taskgraphs) {
      auto [it, inserted] = graphs.emplace(tg.name.name, tg.name.location);
      if (!inserted) {
        auto& d = diags_.error(tg.name.location, "redefinition of taskgraph '" + tg.name.name + "'");
        DiagnosticEngine::note(d, it->second, "previous definition is here");
      }
      check_taskgraph(m, tg, scope);
    }
  }

  struct GraphContext {
    const ModelDecl* model;
    std::size_t arity = 0;  // coordinates of the process set
    bool has_processes = false;
  };

  void check_taskgraph(const ModelDecl& m, const TaskGraphDecl& tg, const Scope& model_scope) {
    GraphContext g{&m, 0, false};
    Scope scope(&model_scope);
    const ProcessesStmt* processes = nullptr;
    for (const StmtPtr& s : tg.body) {
      if (auto* p = std::get_if<ProcessesStmt>(&s->node)) {
        if (processes) {
          auto& d = diags_.error(s->location, "taskgraph '" + tg.name.name + "' declares its processes twice");
          DiagnosticEngine::note(d, processes->set.location, "first declaration is here");
          continue;
        }
        processes = p;
      }
    }
    if (!processes) {
      diags_.error(tg.name.location,
                   "taskgraph '" + tg.name.name + "' has no 'processes' set (e.g. processes { [r] : 0 <= r < P };)");
    } else {
      g.has_processes = true;
      g.arity = processes->set.dims.size();
      if (g.arity == 0) diags_.error(processes->set.location, "the process set needs at least one coordinate");
      if (g.arity > kMaxProcessCoordinates)
        diags_.error(processes->set.location, "the process set has " + std::to_string(g.arity) +
                                                  " coordinates; at most " + std::to_string(kMaxProcessCoordinates) +
                                                  " are supported");
      for (const Identifier& d : processes->set.dims)
        redeclare_check(scope.declare(d.name, {Symbol::Kind::ProcessDimension, d.location, Analysis::of_integer()}), d,
                        Symbol::Kind::ProcessDimension);
      if (processes->set.constraint) {
        Analyzer analyzer(diags_, scope, value_hooks());
        Analysis a = analyzer.analyze(*processes->set.constraint);
        analyzer.require_bool(a, *processes->set.constraint, "the process set constraint");
      }
      if (g.arity <= kMaxProcessCoordinates) isl_.check_set(processes->set, defaults_[m.name.name], "process set");
    }
    check_body(tg.body, scope, g, true);
  }

  void check_body(const StmtList& body, Scope& scope, GraphContext& g, bool top_level) {
    // Two tasks of one block need two names (alternative branches may share one).
    std::map<std::string, SourceLocation> tasks;
    for (const StmtPtr& s : body)
      if (auto* t = std::get_if<TaskStmt>(&s->node)) {
        auto [it, inserted] = tasks.emplace(t->name.name, t->name.location);
        if (!inserted) {
          auto& d = diags_.error(t->name.location, "duplicate task name '" + t->name.name + "'");
          DiagnosticEngine::note(d, it->second, "previous task with this name is here");
        }
      }
    for (const StmtPtr& s : body) check_stmt(*s, scope, g, top_level);
  }

  void check_stmt(const Stmt& s, Scope& scope, GraphContext& g, bool top_level) {
    Analyzer analyzer(diags_, scope, value_hooks());
    std::visit(
        [&](const auto& node) {
          using T = std::decay_t<decltype(node)>;
          if constexpr (std::is_same_v<T, ProcessesStmt>) {
            if (!top_level)
              diags_.error(s.location, "'processes' belongs at the top of a taskgraph, not inside a loop or branch");
          } else if constexpr (std::is_same_v<T, LetStmt>) {
            declare_bindings(node.bindings, scope, Symbol::Kind::Let);
          } else if constexpr (std::is_same_v<T, ForStmt>) {
            Analysis first = analyzer.analyze(*node.first);
            analyzer.require_integer(first, *node.first, "loop bound");
            Analysis last = analyzer.analyze(*node.last);
            analyzer.require_integer(last, *node.last, "loop bound");
            if (node.step) {
              Analysis step = analyzer.analyze(*node.step);
              analyzer.require_integer(step, *node.step, "loop step");
              if (step.value && step.value->is_integer() && step.value->number <= 0)
                diags_.error(node.step->location, "loop step must be positive, not " + step.value->str());
            }
            Scope inner(&scope);
            redeclare_check(inner.declare(node.variable.name,
                                          {Symbol::Kind::LoopVariable, node.variable.location, Analysis::of_integer()}),
                            node.variable, Symbol::Kind::LoopVariable);
            check_body(node.body, inner, g, false);
          } else if constexpr (std::is_same_v<T, IfStmt>) {
            Analysis c = analyzer.analyze(*node.condition);
            analyzer.require_bool(c, *node.condition, "an 'if' condition");
            Scope then_scope(&scope), else_scope(&scope);
            check_body(node.then_body, then_scope, g, false);
            check_body(node.else_body, else_scope, g, false);
          } else if constexpr (std::is_same_v<T, CommStmt>) {
            check_comm(node, s, analyzer, scope, g);
          } else if constexpr (std::is_same_v<T, TaskStmt>) {
            check_task(node, analyzer);
          } else if constexpr (std::is_same_v<T, CollectiveStmt>) {
            check_collective(node, s, analyzer);
          }
        },
        s.node);
  }

  void check_comm(const CommStmt& c, const Stmt& s, Analyzer& analyzer, const Scope& scope, const GraphContext& g) {
    const char* op = comm_op_spelling(c.op);
    bool is_send = c.op == CommOp::Send || c.op == CommOp::Isend;
    if (c.peer.kind == Peer::Kind::Index) {
      if (g.has_processes && c.peer.index.size() != g.arity)
        diags_.error(c.peer.location, std::string(op) + " names a peer with " + std::to_string(c.peer.index.size()) +
                                          " coordinates, but the process set has " + std::to_string(g.arity));
      for (const ExprPtr& e : c.peer.index) analyzer.require_integer(analyzer.analyze(*e), *e, "peer coordinate");
    } else if (c.peer.kind == Peer::Kind::Map && c.peer.map) {
      // The map's own coordinates are bound inside it; other names come from scope.
      Scope inner(&scope);
      for (const Identifier& d : c.peer.map->in_dims)
        inner.declare(d.name, {Symbol::Kind::ProcessDimension, d.location, Analysis::of_integer()});
      Analyzer map_analyzer(diags_, inner, value_hooks());
      for (const ExprPtr& e : c.peer.map->out)
        map_analyzer.require_integer(map_analyzer.analyze(*e), *e, "peer coordinate");
      if (c.peer.map->constraint) {
        Analysis a = map_analyzer.analyze(*c.peer.map->constraint);
        map_analyzer.require_bool(a, *c.peer.map->constraint, "the peer map constraint");
      }
      if (g.has_processes) isl_.check_map(*c.peer.map, g.arity);
    } else if (c.peer.kind == Peer::Kind::Any && is_send) {
      diags_.error(c.peer.location, std::string(op) + " needs a destination; 'any' is for receives");
    }
    if (!c.size) {
      diags_.error(s.location, std::string(op) + " has no size (add 'size <bytes>')");
    } else {
      analyzer.require_size(analyzer.analyze(*c.size), *c.size, std::string(op) + " size");
    }
    if (c.tag) {
      Analysis t = analyzer.analyze(*c.tag);
      analyzer.require_integer(t, *c.tag, "tag");
      if (t.value && t.value->is_integer() && t.value->number < 0)
        diags_.error(c.tag->location, "tag must be non-negative, not " + t.value->str());
    }
    if (c.tag_any && is_send) diags_.error(s.location, std::string(op) + " needs a tag; 'tag any' is for receives");
  }

  void check_task(const TaskStmt& t, Analyzer& analyzer) {
    for (const Binding& a : t.arguments)
      if (a.value) analyzer.analyze(*a.value);
    auto it = components_.find(t.component.name);
    if (it == components_.end()) {
      std::vector<std::string> names;
      for (const auto& [n, _] : components_) names.push_back(n);
      diags_.error(t.component.location, "task '" + t.name.name + "' uses undefined component '" + t.component.name +
                                             "'" + did_you_mean_suffix(t.component.name, names));
      return;
    }
    const ComponentDecl& c = *it->second;
    if (c.domain.head != "application") {
      auto& d = diags_.error(t.component.location, "task '" + t.name.name + "' is bound to '" + c.name.name + "', " +
                                                       with_article(c.domain.head) +
                                                       " component; tasks bind to application components");
      DiagnosticEngine::note(d, c.name.location, "'" + c.name.name + "' is declared here");
      return;
    }
    std::set<std::string> given;
    std::map<std::string, SourceLocation> seen;
    for (const Binding& a : t.arguments) {
      auto [pos, inserted] = seen.emplace(a.name.name, a.name.location);
      if (!inserted) diags_.error(a.name.location, "argument '" + a.name.name + "' is given twice");
      given.insert(a.name.name);
    }
    std::vector<const Transaction*> candidates;
    for (const Interface& a : c.accepts)
      if (a.transaction) candidates.push_back(&*a.transaction);
    for (const Transaction* tx : candidates) {
      std::set<std::string> want;
      for (const TxParam& p : tx->params) want.insert(p.name.name);
      if (want != given) continue;
      for (const Binding& a : t.arguments)
        for (const TxParam& p : tx->params)
          if (p.name.name == a.name.name && p.kind == TxParamKind::Typed && a.value)
            check_argument_type(a, p.type.name, analyzer);
      return;
    }
    std::vector<std::string> given_list(given.begin(), given.end());
    auto& d = diags_.error(t.name.location, "task '" + t.name.name + "' passes (" + join(given_list) +
                                                "), which matches no transaction accepted by '" + c.name.name + "'");
    for (const Transaction* tx : candidates) {
      std::vector<std::string> params;
      for (const TxParam& p : tx->params) params.push_back(p.name.name);
      DiagnosticEngine::note(d, tx->location,
                             "'" + c.name.name + "' accepts " + tx->name.name + "(" + join(params) + ")");
    }
  }

  void check_argument_type(const Binding& a, const std::string& type, Analyzer& analyzer) {
    Analysis v = analyzer.analyze(*a.value);
    if (!v.typed) return;
    std::string what = "argument '" + a.name.name + "'";
    if (type == "int")
      analyzer.require_integer(v, *a.value, what);
    else if (type == "bytes" || type == "size")
      analyzer.require_size(v, *a.value, what);
    else if (type == "bool")
      analyzer.require_bool(v, *a.value, what);
    else {
      Analysis want = type_analysis(type);
      if (want.typed && (v.kind != want.kind || v.dimension != want.dimension))
        diags_.error(a.value->location, what + " must be a " + type + ", not a " +
                                            (v.kind == Value::Kind::Number ? dimension_name(v.dimension)
                                                                           : std::string(kind_name(v.kind))));
    }
  }

  void check_collective(const CollectiveStmt& c, const Stmt& s, Analyzer& analyzer) {
    const auto ops = to_vector(kCollectives);
    const std::string& op = c.operation.name;
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) {
      diags_.error(c.operation.location, "unknown statement or collective '" + op + "' (collectives: " + join(ops) +
                                             ")" + did_you_mean_suffix(op, ops));
      return;
    }
    if (op != "barrier" && !c.size) diags_.error(s.location, op + " has no size (add 'size <bytes>')");
    if (op == "barrier" && c.size) diags_.error(c.size->location, "barrier carries no data; remove 'size'");
    if (c.size) analyzer.require_size(analyzer.analyze(*c.size), *c.size, op + " size");
    bool rooted = collective_is_rooted(op);
    if (c.root) {
      if (!rooted)
        diags_.error(c.root->location, op + " has no root; remove 'root'");
      else
        analyzer.require_integer(analyzer.analyze(*c.root), *c.root, "root");
    }
    if (c.algorithm) {
      auto algorithms = collective_algorithms(op);
      if (std::find(algorithms.begin(), algorithms.end(), c.algorithm->name) == algorithms.end())
        diags_.error(c.algorithm->location, "no algorithm '" + c.algorithm->name + "' for " + op +
                                                " (choose one of: " + join(algorithms) + ")" +
                                                did_you_mean_suffix(c.algorithm->name, algorithms));
    }
  }

  // --------------------------------------------------------------- studies
  void check_study(const StudyDecl& st) {
    if (studies_.at(st.name.name) != &st) return;
    const ModelDecl* model = nullptr;
    if (!st.model) {
      diags_.error(st.name.location, "study '" + st.name.name + "' names no model (add 'model <Name> on <Machine>;')");
    } else {
      auto it = models_.find(st.model->name);
      if (it == models_.end()) {
        std::vector<std::string> names;
        for (const auto& [n, _] : models_) names.push_back(n);
        diags_.error(st.model->location, "study '" + st.name.name + "' uses undefined model '" + st.model->name + "'" +
                                             did_you_mean_suffix(st.model->name, names));
      } else {
        model = it->second;
      }
    }
    if (st.machine) {
      auto it = components_.find(st.machine->name);
      if (it == components_.end()) {
        std::vector<std::string> names;
        for (const auto& [n, c] : components_)
          if (c->domain.head == "hardware") names.push_back(n);
        diags_.error(st.machine->location, "study '" + st.name.name + "' runs on undefined machine '" +
                                               st.machine->name + "'" + did_you_mean_suffix(st.machine->name, names));
      } else if (it->second->domain.head != "hardware") {
        auto& d = diags_.error(st.machine->location, "'" + st.machine->name + "' is " +
                                                         with_article(it->second->domain.head) +
                                                         " component, not a machine (hardware)");
        DiagnosticEngine::note(d, it->second->name.location, "'" + st.machine->name + "' is declared here");
      }
    }
    const Scope empty;
    const Scope& scope = model ? model_scopes_.at(model->name.name) : empty;
    std::set<std::string> bound;
    for (const Binding& b : st.settings) {
      if (b.name.name == "paradigm") {
        diags_.error(b.name.location, "'paradigm' is bound by each entry of 'compare'; it cannot be set");
        continue;
      }
      Analysis want = check_study_target(st, b.name, model, /*setting_allowed=*/true);
      if (!bound.insert(b.name.name).second) diags_.error(b.name.location, "'" + b.name.name + "' is set twice");
      if (b.value) check_fits(b.name, want, Analyzer(diags_, scope, value_hooks()).analyze(*b.value), *b.value);
    }
    for (const VaryClause& v : st.varies) check_vary(st, v, model, scope, bound);
    if (!st.constraints.empty()) check_constraints(st, scope);
    // Every study setting a selector reads must be bound (paradigm comes from compare).
    if (model)
      for (const std::string& setting : study_settings_used())
        if (setting != "paradigm" && !bound.count(setting))
          diags_.warning(st.name.location, "study '" + st.name.name + "' does not set '" + setting +
                                               "', which selectors read as 'study." + setting + "'");
    for (const QualifiedRef& p : st.compare) check_paradigm(p);
    const auto metrics = to_vector(kReportMetrics);
    for (const Identifier& r : st.report)
      if (std::find(metrics.begin(), metrics.end(), r.name) == metrics.end())
        diags_.error(r.location, "unknown report metric '" + r.name + "' (metrics: " + join(metrics) + ")" +
                                     did_you_mean_suffix(r.name, metrics));
  }

  // Checks that a study may bind `target`; returns what is known of its type.
  Analysis check_study_target(const StudyDecl& st, const Identifier& target, const ModelDecl* model,
                              bool setting_allowed) {
    const std::string& n = target.name;
    std::size_t dot = n.find('.');
    if (dot != std::string::npos)
      return member(n.substr(0, dot), n.substr(dot + 1), target.location).value_or(Analysis::unknown());
    if (!model) return Analysis::unknown();
    std::vector<std::string> params;
    for (const Binding& p : model->params) {
      if (p.name.name == n) {
        const Symbol* s = model_scopes_.at(model->name.name).find(n);
        return s ? s->info : Analysis::unknown();
      }
      params.push_back(p.name.name);
    }
    for (const Binding& l : model->lets)
      if (l.name.name == n) {
        diags_.error(target.location, "'" + n + "' is derived by 'let' in model '" + model->name.name +
                                          "'; a study sets parameters only");
        return Analysis::unknown();
      }
    if (setting_allowed && study_settings_used().count(n)) return Analysis::unknown();
    // A model from a trace is its replay, whose options are text settings
    // (docs/trace.md: window, collective_algorithm, computation).
    if (setting_allowed && model->trace &&
        std::find(kTraceReplaySettings.begin(), kTraceReplaySettings.end(), n) != kTraceReplaySettings.end())
      return Analysis::of_type(Value::Kind::String);
    std::vector<std::string> candidates = params;
    for (const std::string& s : study_settings_used()) candidates.push_back(s);
    if (setting_allowed && model->trace)
      candidates.insert(candidates.end(), kTraceReplaySettings.begin(), kTraceReplaySettings.end());
    diags_.error(target.location,
                 "'" + n + "' is not a parameter of model '" + model->name.name + "'" +
                     (setting_allowed && model->trace
                          ? " nor a setting of its replay (" + join(to_vector(kTraceReplaySettings)) + ")"
                      : setting_allowed ? " nor a study setting that a selector reads as 'study." + n + "'"
                                        : std::string()) +
                     did_you_mean_suffix(n, candidates));
    (void)st;
    return Analysis::unknown();
  }

  static std::string type_name(const Analysis& a) {
    return a.kind == Value::Kind::Number ? dimension_name(a.dimension) : kind_name(a.kind);
  }

  // A value bound by a study must have the kind and unit of what it replaces.
  void check_fits(const Identifier& target, const Analysis& want, const Analysis& got, const Expr& value) {
    if (!want.typed || !got.typed) return;
    if (want.kind != got.kind || (want.kind == Value::Kind::Number && want.dimension != got.dimension)) {
      std::string was = want.value ? " (default " + want.value->str() + ")" : "";
      diags_.error(value.location,
                   "'" + target.name + "' is a " + type_name(want) + was + "; this value is a " + type_name(got));
    }
  }

  const std::set<std::string>& study_settings_used() {
    if (!settings_collected_) {
      settings_collected_ = true;
      for (const auto& [name, c] : components_)
        for (const Interface& r : c->requests)
          if (r.selector) collect_study_refs(*r.selector);
    }
    return study_settings_;
  }

  void collect_study_refs(const Expr& e) {
    if (e.kind == ExprKind::Name && e.text.rfind("study.", 0) == 0) study_settings_.insert(e.text.substr(6));
    for (const ExprPtr& o : e.operands) collect_study_refs(*o);
  }

  // `where EXPR;` reads the study's varied and set names and the model's
  // parameters; it must be a boolean. A bound name's value differs per
  // binding, so only its type is known here.
  void check_constraints(const StudyDecl& st, const Scope& model_scope) {
    Scope scope;
    auto declare = [&](const std::string& name, SourceLocation at) {
      if (name.find('.') != std::string::npos) return;  // Component.param is read as a member
      Symbol sym;
      sym.kind = Symbol::Kind::Param;
      sym.declared = at;
      if (const Symbol* known = model_scope.find(name)) {
        sym.info = known->info;
        sym.info.value.reset();  // --set or a binding may change a default
      }
      scope.declare(name, sym);
    };
    for (const Binding& b : st.settings) declare(b.name.name, b.name.location);
    for (const VaryClause& v : st.varies)
      for (const Identifier& t : v.targets) declare(t.name, t.location);
    std::vector<std::string> model_names;
    model_scope.all_names(model_names);
    for (const std::string& n : model_names) declare(n, st.location);
    for (const ExprPtr& c : st.constraints) {
      if (!c) continue;
      Analyzer analyzer(diags_, scope, value_hooks());
      analyzer.require_bool(analyzer.analyze(*c), *c, "a study's 'where' constraint");
    }
  }

  void check_vary(const StudyDecl& st, const VaryClause& v, const ModelDecl* model, const Scope& scope,
                  std::set<std::string>& bound) {
    std::vector<Analysis> wants;
    for (const Identifier& t : v.targets) {
      if (t.name == "paradigm")
        diags_.error(t.location, "'paradigm' is bound by each entry of 'compare'; it cannot be varied");
      wants.push_back(check_study_target(st, t, model, /*setting_allowed=*/true));
      if (!bound.insert(t.name).second) diags_.error(t.location, "'" + t.name + "' is set or varied twice");
    }
    Analyzer analyzer(diags_, scope, value_hooks());
    if (v.is_range) {
      if (v.targets.size() != 1) {
        diags_.error(v.location, "a range varies one name; use a list of tuples for several");
        return;
      }
      Analysis first = analyzer.analyze(*v.first), last = analyzer.analyze(*v.last);
      if (first.typed && last.typed && (first.kind != Value::Kind::Number || first.dimension != last.dimension)) {
        diags_.error(v.first->location, "range bounds must be numbers of the same unit");
        return;
      }
      check_fits(v.targets[0], wants[0], first, *v.first);
      if (v.step) {
        Analysis step = analyzer.analyze(*v.step);
        if (step.value && step.value->kind == Value::Kind::Number && step.value->number <= 0)
          diags_.error(v.step->location, "range step must be positive, not " + step.value->str());
      }
      if (first.value && last.value && first.value->kind == Value::Kind::Number &&
          last.value->kind == Value::Kind::Number && first.value->number > last.value->number)
        diags_.error(v.first->location, "empty range: " + first.value->str() + " .. " + last.value->str());
      return;
    }
    if (!v.values) return;
    if (v.values->kind != ExprKind::List) {
      diags_.error(v.values->location, "vary takes a list '[a, b, ...]' or a range 'a .. b'");
      return;
    }
    if (v.values->operands.empty()) diags_.error(v.values->location, "vary over an empty list");
    for (const ExprPtr& item : v.values->operands) {
      std::size_t arity = item->kind == ExprKind::Tuple ? item->operands.size() : 1;
      if (arity != v.targets.size()) {
        analyzer.analyze(*item);
        diags_.error(item->location, "value has " + std::to_string(arity) + " component" + (arity == 1 ? "" : "s") +
                                         " but " + std::to_string(v.targets.size()) + " name" +
                                         (v.targets.size() == 1 ? " is" : "s are") + " varied");
        continue;
      }
      for (std::size_t k = 0; k < arity; ++k) {
        const Expr& component = arity == 1 && item->kind != ExprKind::Tuple ? *item : *item->operands[k];
        check_fits(v.targets[k], wants[k], analyzer.analyze(component), component);
      }
    }
  }

  const Program& program_;
  DiagnosticEngine& diags_;
  IslChecker isl_;
  std::map<std::string, const ModelDecl*> models_;
  std::map<std::string, const ComponentDecl*> components_;
  std::map<std::string, const StudyDecl*> studies_;
  std::map<std::string, Scope> component_params_;
  std::map<std::string, Scope> model_scopes_;
  std::map<std::string, std::map<std::string, long>> defaults_;
  std::set<std::string> profile_attributes_;
  std::vector<std::pair<std::string, SourceLocation>> selector_names_;
  std::set<std::string> study_settings_;
  bool settings_collected_ = false;
};

}  // namespace

void check_program(const Program& program, DiagnosticEngine& diags) { ProgramChecker(program, diags).run(); }

}  // namespace poems::psl
