// Associative-interface matching: instantiate components, evaluate selectors
// over profiles, check transaction conformance (with declared and library
// coercions) and protocols, and report every failure with its candidates.
#include "poems/psl/compiler.h"

#include <algorithm>
#include <functional>

#include "poems/psl/vocabulary.h"

namespace poems::psl {

namespace {

std::string squote(const std::string& s) { return "'" + s + "'"; }

int domain_level(const std::string& head) {
  if (head == "application") return 0;
  if (head == "runtime") return 1;
  return 2;
}

// Top-level conjuncts of a selector: each is checked and reported on its own.
void conjuncts(const Expr& e, std::vector<const Expr*>& out) {
  if (e.kind == ExprKind::Logical && e.op == Op::And) {
    for (const ExprPtr& o : e.operands) conjuncts(*o, out);
  } else {
    out.push_back(&e);
  }
}

// A sample value of a declared transaction type, to type-check coercions by
// evaluating them (the real evaluator, so checks and evaluation agree).
Value sample_of(const std::string& type) {
  if (type == "int") return Value::of_number(3);
  if (type == "real") return Value::of_number(2.718281828459045);
  if (type == "time") return Value::of_number(3, kTime);
  if (type == "bytes" || type == "size") return Value::of_number(3, kBytes);
  if (type == "bool") return Value::of_bool(true);
  if (type == "string") return Value::of_string("s");
  return Value::of_number(3);
}

// Does `v` fit an accepted parameter of `type`? Empty string if so, else why not.
std::string type_mismatch(const Value& v, const std::string& type) {
  auto describe = [](const Value& x) {
    if (x.kind != Value::Kind::Number) return std::string(kind_name(x.kind));
    if (x.dimension.dimensionless()) return std::string(x.is_integer() ? "int" : "real");
    return dimension_name(x.dimension);
  };
  bool ok = false;
  if (type == "int") ok = v.kind == Value::Kind::Number && v.dimension.dimensionless() && v.is_integer();
  if (type == "real") ok = v.kind == Value::Kind::Number && v.dimension.dimensionless();
  if (type == "time") ok = v.kind == Value::Kind::Number && v.dimension == kTime;
  if (type == "bytes" || type == "size") ok = v.kind == Value::Kind::Number && v.dimension == kBytes;
  if (type == "bool") ok = v.kind == Value::Kind::Bool;
  if (type == "string") ok = v.kind == Value::Kind::String;
  if (ok) return {};
  std::string why = "is " + describe(v) + " but the transaction takes " + type;
  if ((type == "bytes" || type == "size") && v.kind == Value::Kind::Number && v.dimension.dimensionless())
    why += " (a count of elements needs a coercion to bytes, e.g. bytes = elements * 8B)";
  return why;
}

// Domain-aware coercions applied when a request leaves an accepted parameter
// out: the accepted name, the requester's parameters it needs, the PSL text.
struct LibraryCoercion {
  const char* parameter;
  std::vector<const char*> needs;
  const char* expression;
  std::function<Value(const std::vector<Value>&)> apply;
};

const std::vector<LibraryCoercion>& library_coercions() {
  // Sizes of MPI messages only: what an application's work is made of is the
  // application's to say (`work = cells * angles` in its own request).
  static const std::vector<LibraryCoercion> table = {
      {"bytes",
       {"elements", "element_size"},
       "elements * element_size",
       [](const std::vector<Value>& a) { return Value::of_number(a[0].number * a[1].number, kBytes); }},
      {"bytes",
       {"doubles"},
       "doubles * 8B",
       [](const std::vector<Value>& a) { return Value::of_number(a[0].number * 8, kBytes); }},
  };
  return table;
}

std::string describe_request(const ComponentDecl& c, const Interface& r) {
  return "request " + (r.name ? squote(r.name->name) + " " : std::string()) + "of " + squote(c.name.name);
}

std::string accepts_label(const ComponentDecl& c, std::size_t index) {
  const Interface& a = c.accepts[index];
  if (a.name) return a.name->name;
  return index == 0 ? "accepts" : "accepts#" + std::to_string(index + 1);
}

class Composer {
 public:
  Composer(const Program& program, const CompileRequest& request, DiagnosticEngine& diags)
      : program_(program), request_(request), diags_(diags) {}

  std::optional<SystemModel> run() {
    const std::size_t errors_before = diags_.error_count();
    const ModelDecl* model = find_model();
    if (!model) return std::nullopt;
    system_.model = model->name.name;
    system_.study = request_.study;
    choose_components();
    check_overrides();
    link_task_nodes(*model);
    // Resolve requests breadth-first; instances are created on first match.
    for (std::size_t i = 0; i < system_.instances.size(); ++i) resolve_requests(i);
    check_cycles();
    if (diags_.error_count() > errors_before) return std::nullopt;
    return std::move(system_);
  }

  // A composition rooted at one component instead of a model's task graph
  // (compile_component): its requests, and theirs, matched as a model's are.
  std::optional<SystemModel> run_from(const ComponentDecl& root) {
    const std::size_t errors_before = diags_.error_count();
    system_.study = request_.study;
    choose_components();
    check_overrides();
    instantiate(root);
    for (std::size_t i = 0; i < system_.instances.size(); ++i) resolve_requests(i);
    check_cycles();
    if (diags_.error_count() > errors_before) return std::nullopt;
    return std::move(system_);
  }

  // One instance outside a composition (instantiate_component).
  std::optional<ComponentInstance> instance_of(const ComponentDecl& c) {
    const std::size_t errors = diags_.error_count();
    const std::size_t i = instantiate(c);
    if (diags_.error_count() > errors) return std::nullopt;
    return system_.instances[i];
  }

 private:
  const ModelDecl* find_model() {
    std::vector<const ModelDecl*> all;
    for (const Module& m : program_.modules)
      for (const ModelDecl& d : m.models) all.push_back(&d);
    if (!request_.model.empty()) {
      if (const ModelDecl* m = program_.find_model(request_.model)) return m;
      std::string names;
      for (const ModelDecl* m : all) names += (names.empty() ? "" : ", ") + m->name.name;
      diags_.error({}, "no model named " + squote(request_.model) + " (models: " + names + ")");
      return nullptr;
    }
    if (all.size() == 1) return all.front();
    diags_.error({}, all.empty() ? "the specification has no model" : "the specification has several models; name one");
    return nullptr;
  }

  void choose_components() {
    for (const auto& name : request_.chosen) {
      const ComponentDecl* c = program_.find_component(name);
      if (!c) {
        diags_.error({}, "no component named " + squote(name) + " to run on");
        continue;
      }
      chosen_domains_[c->domain.str()] = name;
    }
  }

  void check_overrides() {
    for (const auto& [key, value] : request_.overrides) {
      std::size_t dot = key.find('.');
      const ComponentDecl* c = dot == std::string::npos ? nullptr : program_.find_component(key.substr(0, dot));
      bool found = false;
      if (c)
        for (const Binding& p : c->params) found = found || p.name.name == key.substr(dot + 1);
      if (!found) diags_.error({}, "cannot set " + squote(key) + ": no component parameter of that name");
      (void)value;
    }
  }

  // ------------------------------------------------------------ instances
  std::size_t instantiate(const ComponentDecl& c) {
    std::size_t existing = system_.find(c.name.name);
    if (existing != kNoInstance) return existing;
    ComponentInstance inst;
    inst.decl = &c;
    inst.name = c.name.name;
    inst.domain = c.domain.str();
    inst.domain_head = c.domain.head;
    if (c.implementation) inst.implementation = c.implementation->str();
    auto lookup = [&](std::string_view n) -> const Value* {
      auto it = inst.params.find(std::string(n));
      return it == inst.params.end() ? nullptr : &it->second;
    };
    for (const Binding& p : c.params) {
      auto over = request_.overrides.find(c.name.name + "." + p.name.name);
      EvalResult r = p.value ? evaluate(*p.value, lookup) : EvalResult{};
      if (!r.value) {
        if (p.value) diags_.error(r.where.valid() ? r.where : p.name.location, r.error);
        continue;
      }
      if (over != request_.overrides.end()) {
        const Value& v = over->second;
        if (v.kind != r.value->kind || v.dimension != r.value->dimension) {
          diags_.error(p.name.location, "cannot set " + c.name.name + "." + p.name.name + " to " + v.str() +
                                            ": it is declared as " + r.value->str());
        } else {
          r.value = v;
        }
      }
      inst.params[p.name.name] = *r.value;
    }
    for (std::size_t a = 0; a < c.accepts.size(); ++a) {
      AcceptsInstance acc;
      acc.decl = &c.accepts[a];
      acc.label = accepts_label(c, a);
      for (const ProfileEntry& e : c.accepts[a].profile) {
        if (!e.value) continue;
        EvalResult r = evaluate(*e.value, lookup);
        if (r.value)
          acc.profile[e.name.name] = *r.value;
        else
          diags_.error(r.where.valid() ? r.where : e.name.location, r.error);
      }
      inst.accepts.push_back(std::move(acc));
    }
    system_.instances.push_back(std::move(inst));
    return system_.instances.size() - 1;
  }

  // ---------------------------------------------------------- task nodes
  void link_task_nodes(const ModelDecl& model) {
    if (model.taskgraphs.empty()) {
      diags_.error(model.name.location, "model " + squote(model.name.name) + " has no taskgraph to compose");
      return;
    }
    const TaskGraphDecl& tg = model.taskgraphs.front();
    system_.taskgraph = tg.name.name;
    walk(tg.body, model);
  }

  void walk(const StmtList& body, const ModelDecl& model) {
    for (const StmtPtr& s : body) {
      if (const auto* f = std::get_if<ForStmt>(&s->node)) {
        walk(f->body, model);
      } else if (const auto* b = std::get_if<IfStmt>(&s->node)) {
        walk(b->then_body, model);
        walk(b->else_body, model);
      } else if (const auto* t = std::get_if<TaskStmt>(&s->node)) {
        TaskNodeLink link{"task", t->name.name, s->location, kNoInstance};
        if (const ComponentDecl* c = program_.find_component(t->component.name)) link.component = instantiate(*c);
        system_.task_nodes.push_back(link);
      } else if (const auto* c = std::get_if<CommStmt>(&s->node)) {
        std::string kind = comm_op_spelling(c->op);
        std::vector<std::string> types{kind};
        if (kind == "isend" || kind == "irecv") types.push_back(kind.substr(1));
        system_.task_nodes.push_back({kind, kind, s->location, application_component(model, types, s->location)});
      } else if (const auto* k = std::get_if<CollectiveStmt>(&s->node)) {
        const std::string& op = k->operation.name;
        system_.task_nodes.push_back(
            {op, op, s->location, application_component(model, {op, "collective"}, s->location)});
      }
    }
  }

  // The application component of this model whose profile accepts the node
  // type (the implicit request of a communication node); the first type with
  // any candidate decides.
  std::size_t application_component(const ModelDecl& model, const std::vector<std::string>& node_types,
                                    SourceLocation at) {
    for (const std::string& type : node_types) {
      std::vector<const ComponentDecl*> found;
      for (const Module& m : program_.modules)
        for (const ComponentDecl& c : m.components) {
          if (c.domain.head != "application" || c.domain.path != model.name.name) continue;
          for (const Interface& a : c.accepts)
            for (const ProfileEntry& e : a.profile)
              if (e.name.name == "node_type" && e.value && e.value->kind == ExprKind::String && e.value->text == type &&
                  std::find(found.begin(), found.end(), &c) == found.end())
                found.push_back(&c);
        }
      if (found.size() == 1) return instantiate(*found.front());
      if (found.size() > 1) {
        auto& d = diags_.error(at, "ambiguous " + type + " node: " + std::to_string(found.size()) +
                                       " components of application[" + model.name.name + "] accept node_type = \"" +
                                       type + "\"");
        for (const ComponentDecl* c : found)
          DiagnosticEngine::note(d, c->name.location, "candidate " + squote(c->name.name));
        return kNoInstance;
      }
    }
    return kNoInstance;
  }

  // ------------------------------------------------------------ matching
  struct Candidate {
    const ComponentDecl* component = nullptr;
    std::size_t accepts = 0;
    int clauses_true = 0;
    std::string failure;  // empty: matches
    SourceLocation failure_at;
    std::vector<ArgumentBinding> arguments;
  };

  void resolve_requests(std::size_t from) {
    const ComponentDecl& c = *system_.instances[from].decl;
    for (const Interface& r : c.requests) {
      if (!r.selector || !r.transaction || !r.protocol) continue;  // reported by the checker
      if (!study_settings_available(c, r)) continue;
      std::vector<Candidate> candidates;
      std::vector<std::string> out_of_scope;
      for (const Module& m : program_.modules)
        for (const ComponentDecl& other : m.components) {
          if (&other == &c) continue;
          auto chosen = chosen_domains_.find(other.domain.str());
          bool excluded = chosen != chosen_domains_.end() && chosen->second != other.name.name;
          for (std::size_t a = 0; a < other.accepts.size(); ++a) {
            Candidate cand = check_candidate(from, r, other, a);
            if (excluded && cand.failure.empty()) {
              out_of_scope.push_back(other.name.name);
              continue;
            }
            if (!excluded) candidates.push_back(std::move(cand));
          }
        }
      std::vector<const Candidate*> matches;
      for (const Candidate& cand : candidates)
        if (cand.failure.empty()) matches.push_back(&cand);
      if (matches.size() > 1) {  // one of them beside the chosen machine wins
        std::vector<const Candidate*> preferred;
        for (const Candidate* m : matches)
          if (std::find(request_.preferred.begin(), request_.preferred.end(), m->component->name.name) !=
              request_.preferred.end())
            preferred.push_back(m);
        if (preferred.size() == 1) matches = preferred;
      }
      if (matches.size() == 1) {
        bind(from, r, *matches.front());
      } else if (matches.empty()) {
        report_no_match(c, r, candidates, out_of_scope);
      } else {
        report_ambiguous(c, r, matches);
      }
    }
  }

  bool study_settings_available(const ComponentDecl& c, const Interface& r) {
    std::vector<std::pair<std::string, SourceLocation>> refs;
    std::function<void(const Expr&)> collect = [&](const Expr& e) {
      if (e.kind == ExprKind::Name && e.text.rfind("study.", 0) == 0) refs.emplace_back(e.text.substr(6), e.location);
      for (const ExprPtr& o : e.operands) collect(*o);
    };
    collect(*r.selector);
    bool ok = true;
    for (const auto& [name, at] : refs)
      if (!request_.study.count(name)) {
        diags_.error(at, "the selector of " + describe_request(c, r) + " reads study." + name +
                             ", which is not set (set it in the study, e.g. `set " + name +
                             " = ...;`, or on the command line with --set " + name + "=...)");
        ok = false;
      }
    return ok;
  }

  Candidate check_candidate(std::size_t from, const Interface& r, const ComponentDecl& other, std::size_t a) {
    Candidate cand;
    cand.component = &other;
    cand.accepts = a;
    const Interface& acc = other.accepts[a];
    // Profile values need the instance's parameters: evaluate them on a
    // scratch instance without registering it.
    const std::map<std::string, Value> profile = profile_of(other, a);
    const Value domain = Value::of_string(other.domain.str(), Value::Kind::Ref);
    const Value name = Value::of_string(other.name.name);
    auto lookup = [&](std::string_view n) -> const Value* {
      if (n == "domain") return &domain;
      if (n == "name" || n == "component") return &name;
      if (n.substr(0, 6) == "study.") {
        auto it = request_.study.find(std::string(n.substr(6)));
        return it == request_.study.end() ? nullptr : &it->second;
      }
      auto it = profile.find(std::string(n));
      return it == profile.end() ? nullptr : &it->second;
    };
    std::vector<const Expr*> clauses;
    conjuncts(*r.selector, clauses);
    for (const Expr* clause : clauses) {
      EvalResult v = evaluate(*clause, lookup);
      if (v.value && v.value->kind == Value::Kind::Bool && v.value->boolean) {
        ++cand.clauses_true;
        continue;
      }
      if (!cand.failure.empty()) continue;
      cand.failure_at = clause->location;
      if (!v.value) {
        std::string missing = first_missing_name(*clause, lookup);
        cand.failure = "selector clause `" + to_source(*clause) + "` " +
                       (missing.empty() ? "cannot be evaluated: " + v.error
                                        : "reads " + squote(missing) + ", which its profile does not define");
      } else {
        cand.failure = "selector clause `" + to_source(*clause) + "` is false" + clause_values(*clause, lookup);
      }
    }
    if (!cand.failure.empty()) return cand;
    if (!acc.transaction || !acc.protocol) {
      cand.failure = "accepts interface has no transaction or protocol";
      return cand;
    }
    if (std::string why = conform(from, r, other, acc, cand.arguments); !why.empty()) {
      cand.failure = why;
      cand.failure_at = r.transaction->location;
      return cand;
    }
    if (std::string why = protocol_violation(*system_.instances[from].decl, r, other, acc); !why.empty()) {
      cand.failure = why;
      cand.failure_at = r.protocol->location;
    }
    return cand;
  }

  std::map<std::string, Value> profile_of(const ComponentDecl& c, std::size_t a) {
    auto key = std::make_pair(&c, a);
    auto it = profile_cache_.find(key);
    if (it != profile_cache_.end()) return it->second;
    std::map<std::string, Value> params, profile;
    auto lookup = [&](std::string_view n) -> const Value* {
      auto p = params.find(std::string(n));
      return p == params.end() ? nullptr : &p->second;
    };
    for (const Binding& p : c.params) {
      if (!p.value) continue;
      EvalResult r = evaluate(*p.value, lookup);
      auto over = request_.overrides.find(c.name.name + "." + p.name.name);
      if (r.value && over != request_.overrides.end() && over->second.kind == r.value->kind &&
          over->second.dimension == r.value->dimension)
        r.value = over->second;
      if (r.value) params[p.name.name] = *r.value;
    }
    for (const ProfileEntry& e : c.accepts[a].profile) {
      if (!e.value) continue;
      EvalResult r = evaluate(*e.value, lookup);
      if (r.value) profile[e.name.name] = *r.value;
    }
    return profile_cache_[key] = profile;
  }

  template <typename Lookup>
  static std::string first_missing_name(const Expr& e, const Lookup& lookup) {
    if (e.kind == ExprKind::Name && !lookup(e.text)) return e.text;
    for (const ExprPtr& o : e.operands)
      if (std::string n = first_missing_name(*o, lookup); !n.empty()) return n;
    return {};
  }

  // " (evaluation = analytic[LogGP], study.paradigm = simulation[MPI-Sim])"
  template <typename Lookup>
  static std::string clause_values(const Expr& e, const Lookup& lookup) {
    std::vector<std::string> parts;
    std::function<void(const Expr&)> names = [&](const Expr& x) {
      if (x.kind == ExprKind::Name)
        if (const Value* v = lookup(x.text)) {
          std::string part = x.text + " = " + v->str();
          if (std::find(parts.begin(), parts.end(), part) == parts.end()) parts.push_back(part);
        }
      for (const ExprPtr& o : x.operands) names(*o);
    };
    names(e);
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? " (" : ", ") + p;
    return out.empty() ? out : out + ")";
  }

  // Transaction conformance; fills `args` with how each accepted parameter is supplied.
  std::string conform(std::size_t from, const Interface& r, const ComponentDecl& other, const Interface& acc,
                      std::vector<ArgumentBinding>& args) {
    const Transaction& want = *acc.transaction;
    const Transaction& have = *r.transaction;
    if (want.name.name != have.name.name)
      return "it accepts transaction " + squote(want.name.name) + ", not " + squote(have.name.name);
    // The requester's own data: its accepted transaction parameters (sampled
    // by type) and its bound parameters.
    const ComponentInstance& inst = system_.instances[from];
    std::map<std::string, Value> scope = inst.params;
    std::map<std::string, std::string> declared_type;
    for (const Interface& own : inst.decl->accepts)
      if (own.transaction)
        for (const TxParam& p : own.transaction->params)
          if (p.kind == TxParamKind::Typed && !declared_type.count(p.name.name)) {
            declared_type[p.name.name] = p.type.name;
            scope[p.name.name] = sample_of(p.type.name);
          }
    auto lookup = [&](std::string_view n) -> const Value* {
      auto it = scope.find(std::string(n));
      return it == scope.end() ? nullptr : &it->second;
    };
    std::map<std::string, const TxParam*> given;
    for (const TxParam& p : have.params) given[p.name.name] = &p;
    for (const TxParam& p : want.params) {
      if (p.kind != TxParamKind::Typed) continue;
      ArgumentBinding arg{p.name.name, p.type.name, {}, ArgumentBinding::Source::Forwarded};
      std::optional<Value> value;
      auto g = given.find(p.name.name);
      if (g != given.end()) {
        const TxParam& q = *g->second;
        if (q.kind == TxParamKind::Coerced && q.value) {
          EvalResult v = evaluate(*q.value, lookup);
          if (!v.value) return "its parameter " + squote(p.name.name) + " cannot be computed: " + v.error;
          value = v.value;
          arg.expression = to_source(*q.value);
          arg.source = ArgumentBinding::Source::Coerced;
        } else {
          const Value* v = lookup(q.name.name);
          if (!v) return "forwarded parameter " + squote(q.name.name) + " is not a parameter of " + inst.name;
          value = *v;
          arg.expression = q.name.name;
          // A forwarded parameter keeps its declared type (int stays int).
          auto t = declared_type.find(q.name.name);
          if (t != declared_type.end() && t->second == p.type.name) value.reset();
        }
        given.erase(g);
      } else {
        for (const LibraryCoercion& lc : library_coercions()) {
          if (p.name.name != lc.parameter) continue;
          std::vector<Value> inputs;
          for (const char* n : lc.needs)
            if (const Value* v = lookup(n)) inputs.push_back(*v);
          if (inputs.size() != lc.needs.size()) continue;
          value = lc.apply(inputs);
          arg.expression = lc.expression;
          arg.source = ArgumentBinding::Source::Library;
          break;
        }
        if (arg.expression.empty())
          return "its parameter " + squote(p.name.name + ": " + p.type.name) + " is not supplied by the request";
      }
      if (value)
        if (std::string why = type_mismatch(*value, p.type.name); !why.empty())
          return "parameter " + squote(p.name.name) + " (" + arg.expression + ") " + why;
      args.push_back(std::move(arg));
    }
    if (!given.empty())
      return "the request passes " + squote(given.begin()->first) + ", which transaction " + squote(want.name.name) +
             " of " + squote(other.name.name) + " does not take";
    return {};
  }

  std::string protocol_violation(const ComponentDecl& from, const Interface& r, const ComponentDecl& to,
                                 const Interface& acc) {
    const std::string& want = acc.protocol->name;
    const std::string& have = r.protocol->name;
    if (want != have) return "it accepts protocol " + want + ", the request uses " + have;
    if (have == "dataflow" && from.domain.str() != to.domain.str())
      return "dataflow continues in the same domain (" + from.domain.str() + "), but " + squote(to.name.name) +
             " is in " + to.domain.str();
    if (have == "call_return" &&
        (from.domain.str() == to.domain.str() || domain_level(to.domain.head) < domain_level(from.domain.head)))
      return "call_return goes into an implementing domain below " + from.domain.str() + ", but " +
             squote(to.name.name) + " is in " + to.domain.str();
    return {};
  }

  void bind(std::size_t from, const Interface& r, const Candidate& cand) {
    std::size_t to = instantiate(*cand.component);
    InterfaceBinding b;
    b.from = from;
    b.request = r.name ? r.name->name : "";
    b.location = r.location;
    b.to = to;
    b.accepts = cand.accepts;
    b.protocol = r.protocol->name;
    b.transaction = r.transaction->name.name;
    b.arguments = cand.arguments;
    system_.bindings.push_back(std::move(b));
  }

  void report_no_match(const ComponentDecl& c, const Interface& r, std::vector<Candidate>& candidates,
                       const std::vector<std::string>& out_of_scope) {
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.clauses_true > b.clauses_true; });
    std::string msg =
        "no component accepts " + describe_request(c, r) + " (transaction " + squote(r.transaction->name.name) + ")";
    if (!out_of_scope.empty()) {  // named with the component chosen in its place (a study's machine, --machine)
      msg += "; ";
      std::vector<std::string> chosen;  // "'Odin' is chosen for hardware[network]", once per domain
      for (std::size_t i = 0; i < out_of_scope.size(); ++i) {
        msg += (i ? ", " : "") + squote(out_of_scope[i]);
        const ComponentDecl* other = program_.find_component(out_of_scope[i]);
        const auto it = other ? chosen_domains_.find(other->domain.str()) : chosen_domains_.end();
        if (it == chosen_domains_.end()) continue;
        std::string text = squote(it->second) + " is chosen for " + it->first;
        if (std::find(chosen.begin(), chosen.end(), text) == chosen.end()) chosen.push_back(std::move(text));
      }
      msg += " would match but ";
      for (std::size_t i = 0; i < chosen.size(); ++i) msg += (i ? ", and " : "") + chosen[i];
    }
    auto& d = diags_.error(r.selector->location, msg);
    std::size_t shown = 0;
    for (const Candidate& cand : candidates) {
      if (shown == 3) break;
      ++shown;
      const Interface& acc = cand.component->accepts[cand.accepts];
      std::string which = candidates.size() > 1 && cand.component->accepts.size() > 1
                              ? " (" + accepts_label(*cand.component, cand.accepts) + ")"
                              : "";
      DiagnosticEngine::note(d, acc.location,
                             "candidate " + squote(cand.component->name.name) + which + ": " + cand.failure);
    }
    if (candidates.empty()) DiagnosticEngine::note(d, c.name.location, "no other component has an accepts interface");
  }

  void report_ambiguous(const ComponentDecl& c, const Interface& r, const std::vector<const Candidate*>& matches) {
    std::string names;
    for (std::size_t i = 0; i < matches.size(); ++i)
      names += (i ? ", " : "") + squote(matches[i]->component->name.name);
    auto& d = diags_.error(r.selector->location, describe_request(c, r) + " matches " + std::to_string(matches.size()) +
                                                     " components: " + names +
                                                     " (choose one: the study's `on Machine`, --machine or "
                                                     "--processor, or a more specific selector)");
    for (const Candidate* m : matches)
      DiagnosticEngine::note(d, m->component->accepts[m->accepts].location,
                             "candidate " + squote(m->component->name.name));
  }

  // ------------------------------------------------------------- cycles
  void check_cycles() {
    const std::size_t n = system_.instances.size();
    std::vector<int> state(n, 0);  // 0 new, 1 on stack, 2 done
    std::vector<const InterfaceBinding*> path;
    std::function<void(std::size_t)> visit = [&](std::size_t v) {
      state[v] = 1;
      for (const InterfaceBinding& b : system_.bindings) {
        if (b.from != v || b.protocol != "call_return") continue;
        path.push_back(&b);
        if (state[b.to] == 1) {
          std::string cycle;
          auto start =
              std::find_if(path.begin(), path.end(), [&](const InterfaceBinding* x) { return x->from == b.to; });
          for (auto it = start; it != path.end(); ++it) cycle += system_.instances[(*it)->from].name + " -> ";
          diags_.error(b.location, "call_return cycle: " + cycle + system_.instances[b.to].name);
        } else if (state[b.to] == 0) {
          visit(b.to);
        }
        path.pop_back();
      }
      state[v] = 2;
    };
    for (std::size_t v = 0; v < n; ++v)
      if (state[v] == 0) visit(v);
  }

  const Program& program_;
  const CompileRequest& request_;
  DiagnosticEngine& diags_;
  SystemModel system_;
  std::map<std::string, std::string> chosen_domains_;  // domain -> chosen component
  std::map<std::pair<const ComponentDecl*, std::size_t>, std::map<std::string, Value>> profile_cache_;
};

}  // namespace

std::map<std::string, Value> bind_arguments(const SystemModel& system, const InterfaceBinding& binding,
                                            const std::map<std::string, Value>& requester_values) {
  const ComponentInstance& from = system.instances.at(binding.from);
  std::map<std::string, Value> scope = from.params;
  for (const auto& [k, v] : requester_values) scope[k] = v;
  auto lookup = [&](std::string_view n) -> const Value* {
    auto it = scope.find(std::string(n));
    return it == scope.end() ? nullptr : &it->second;
  };
  const Interface* request = nullptr;
  for (const Interface& r : from.decl->requests)
    if ((r.name ? r.name->name : std::string()) == binding.request) request = &r;
  std::map<std::string, Value> out;
  for (const ArgumentBinding& a : binding.arguments) {
    std::optional<Value> v;
    if (a.source == ArgumentBinding::Source::Forwarded) {
      if (const Value* x = lookup(a.expression)) v = *x;
    } else if (a.source == ArgumentBinding::Source::Coerced && request && request->transaction) {
      for (const TxParam& p : request->transaction->params)
        if (p.name.name == a.parameter && p.value) {
          EvalResult r = evaluate(*p.value, lookup);
          if (!r.value)
            throw std::runtime_error(from.name + ": " + a.parameter + " = " + a.expression + ": " + r.error);
          v = r.value;
        }
    } else {
      for (const LibraryCoercion& lc : library_coercions()) {
        if (a.parameter != lc.parameter || a.expression != lc.expression) continue;
        std::vector<Value> inputs;
        for (const char* n : lc.needs)
          if (const Value* x = lookup(n)) inputs.push_back(*x);
        if (inputs.size() == lc.needs.size()) v = lc.apply(inputs);
      }
    }
    if (!v)
      throw std::runtime_error(from.name + ": argument '" + a.parameter + "' (" + a.expression +
                               ") needs a value the task does not give");
    out[a.parameter] = *v;
  }
  return out;
}

std::optional<SystemModel> compile_system(const Program& program, const CompileRequest& request,
                                          DiagnosticEngine& diags) {
  return Composer(program, request, diags).run();
}

std::optional<SystemModel> compile_component(const Program& program, const ComponentDecl& root,
                                             const CompileRequest& request, DiagnosticEngine& diags) {
  return Composer(program, request, diags).run_from(root);
}

std::optional<ComponentInstance> instantiate_component(const Program& program, const ComponentDecl& component,
                                                       const std::map<std::string, Value>& overrides,
                                                       DiagnosticEngine& diags) {
  CompileRequest request;
  request.overrides = overrides;
  return Composer(program, request, diags).instance_of(component);
}

}  // namespace poems::psl
