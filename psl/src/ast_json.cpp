#include "poems/psl/ast_json.h"

namespace poems::psl {

namespace {
using nlohmann::json;

struct JsonWriter {
  const SourceManager& sources;

  json loc(SourceLocation l) const {
    json j = {{"line", l.line}, {"column", l.column}};
    if (l.file != kNoFile && l.file < sources.size()) j["file"] = sources.path(l.file);
    return j;
  }
  json ident(const Identifier& i) const { return {{"name", i.name}, {"location", loc(i.location)}}; }
  json ref(const QualifiedRef& r) const {
    return {{"head", r.head}, {"path", r.path}, {"text", r.str()}, {"location", loc(r.location)}};
  }
  json expr(const ExprPtr& e) const { return e ? expr(*e) : json(nullptr); }

  json expr(const Expr& e) const {
    json j = {{"location", loc(e.location)}};
    switch (e.kind) {
      case ExprKind::Number:
        j["kind"] = "number";
        j["value"] = e.number;
        j["unit"] = dimension_name(e.dimension);
        break;
      case ExprKind::String:
        j["kind"] = "string";
        j["value"] = e.text;
        break;
      case ExprKind::Bool:
        j["kind"] = "bool";
        j["value"] = e.boolean;
        break;
      case ExprKind::Name:
        j["kind"] = "name";
        j["name"] = e.text;
        break;
      case ExprKind::Ref:
        j["kind"] = "ref";
        j["ref"] = ref(e.ref);
        break;
      case ExprKind::Unary:
        j["kind"] = "unary";
        j["op"] = op_spelling(e.op);
        break;
      case ExprKind::Binary:
        j["kind"] = "binary";
        j["op"] = op_spelling(e.op);
        break;
      case ExprKind::Not: j["kind"] = "not"; break;
      case ExprKind::Logical:
        j["kind"] = "logical";
        j["op"] = op_spelling(e.op);
        break;
      case ExprKind::Compare: {
        j["kind"] = "compare";
        json ops = json::array();
        for (Op op : e.compare_ops) ops.push_back(op_spelling(op));
        j["ops"] = ops;
        break;
      }
      case ExprKind::Ternary: j["kind"] = "conditional"; break;
      case ExprKind::Call:
        j["kind"] = "call";
        j["function"] = e.text;
        break;
      case ExprKind::Tuple: j["kind"] = "tuple"; break;
      case ExprKind::List: j["kind"] = "list"; break;
      case ExprKind::Invalid: j["kind"] = "invalid"; break;
    }
    if (!e.operands.empty()) {
      json ops = json::array();
      for (const ExprPtr& o : e.operands) ops.push_back(expr(o));
      j["operands"] = ops;
    }
    return j;
  }

  json bindings(const std::vector<Binding>& bs) const {
    json arr = json::array();
    for (const Binding& b : bs) arr.push_back({{"name", ident(b.name)}, {"value", expr(b.value)}});
    return arr;
  }

  json set(const IntegerSet& s) const {
    json dims = json::array();
    for (const Identifier& d : s.dims) dims.push_back(ident(d));
    return {{"dims", dims}, {"constraint", expr(s.constraint)}, {"location", loc(s.location)}};
  }

  json map(const IntegerMap& m) const {
    json dims = json::array(), out = json::array();
    for (const Identifier& d : m.in_dims) dims.push_back(ident(d));
    for (const ExprPtr& e : m.out) out.push_back(expr(e));
    return {{"in", dims}, {"out", out}, {"constraint", expr(m.constraint)}, {"location", loc(m.location)}};
  }

  json stmts(const StmtList& list) const {
    json arr = json::array();
    for (const StmtPtr& s : list) arr.push_back(stmt(*s));
    return arr;
  }

  json stmt(const Stmt& s) const {
    json j = {{"location", loc(s.location)}};
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, ProcessesStmt>) {
            j["kind"] = "processes";
            j["set"] = set(n.set);
          } else if constexpr (std::is_same_v<T, LetStmt>) {
            j["kind"] = "let";
            j["bindings"] = bindings(n.bindings);
          } else if constexpr (std::is_same_v<T, ForStmt>) {
            j["kind"] = "for";
            j["variable"] = ident(n.variable);
            j["first"] = expr(n.first);
            j["last"] = expr(n.last);
            j["step"] = expr(n.step);
            j["body"] = stmts(n.body);
          } else if constexpr (std::is_same_v<T, IfStmt>) {
            j["kind"] = "if";
            j["condition"] = expr(n.condition);
            j["then"] = stmts(n.then_body);
            j["else"] = stmts(n.else_body);
          } else if constexpr (std::is_same_v<T, CommStmt>) {
            j["kind"] = comm_op_spelling(n.op);
            json peer = {{"location", loc(n.peer.location)}};
            if (n.peer.kind == Peer::Kind::Any) {
              peer["kind"] = "any";
            } else if (n.peer.kind == Peer::Kind::Map && n.peer.map) {
              peer["kind"] = "map";
              peer["map"] = map(*n.peer.map);
            } else {
              peer["kind"] = "index";
              json idx = json::array();
              for (const ExprPtr& e : n.peer.index) idx.push_back(expr(e));
              peer["index"] = idx;
            }
            j["peer"] = peer;
            j["size"] = expr(n.size);
            j["tag"] = n.tag_any ? json("any") : expr(n.tag);
            if (n.communicator) j["comm"] = ident(*n.communicator);
          } else if constexpr (std::is_same_v<T, TaskStmt>) {
            j["kind"] = "task";
            j["name"] = ident(n.name);
            j["component"] = ident(n.component);
            j["arguments"] = bindings(n.arguments);
          } else if constexpr (std::is_same_v<T, WaitAllStmt>) {
            j["kind"] = "waitall";
          } else if constexpr (std::is_same_v<T, CollectiveStmt>) {
            j["kind"] = "collective";
            j["operation"] = ident(n.operation);
            j["size"] = expr(n.size);
            j["root"] = expr(n.root);
            if (n.algorithm) j["algorithm"] = ident(*n.algorithm);
            if (n.communicator) j["comm"] = ident(*n.communicator);
          }
        },
        s.node);
    return j;
  }

  json transaction(const Transaction& t) const {
    json params = json::array();
    for (const TxParam& p : t.params) {
      json jp = {{"name", ident(p.name)}};
      if (p.kind == TxParamKind::Typed) jp["type"] = p.type.name;
      if (p.kind == TxParamKind::Coerced) jp["value"] = expr(p.value);
      if (p.kind == TxParamKind::Forwarded) jp["forwarded"] = true;
      params.push_back(jp);
    }
    json j = {{"name", ident(t.name)}, {"params", params}, {"location", loc(t.location)}};
    if (t.result_type) j["result"] = t.result_type->name;
    return j;
  }

  json interface(const Interface& i) const {
    json j = {{"location", loc(i.location)}};
    if (i.name) j["name"] = ident(*i.name);
    if (i.kind == InterfaceKind::Accepts) {
      json profile = json::array();
      for (const ProfileEntry& e : i.profile) profile.push_back({{"name", ident(e.name)}, {"value", expr(e.value)}});
      j["profile"] = profile;
    } else {
      j["selector"] = expr(i.selector);
    }
    if (i.transaction) j["transaction"] = transaction(*i.transaction);
    if (i.protocol) j["protocol"] = i.protocol->name;
    return j;
  }

  json attached(const AttachedCommand& a) const {
    return {{"location", loc(a.location)}, {"entries", bindings(a.entries)}};
  }

  json module(const Module& m) const {
    json imports = json::array(), models = json::array(), components = json::array(), studies = json::array();
    for (const ImportDecl& i : m.imports) imports.push_back({{"path", i.path}, {"location", loc(i.location)}});
    for (const ModelDecl& d : m.models) {
      json graphs = json::array();
      for (const TaskGraphDecl& tg : d.taskgraphs)
        graphs.push_back({{"name", ident(tg.name)}, {"location", loc(tg.location)}, {"body", stmts(tg.body)}});
      models.push_back({{"name", ident(d.name)},
                        {"location", loc(d.location)},
                        {"params", bindings(d.params)},
                        {"lets", bindings(d.lets)},
                        {"taskgraphs", graphs}});
      if (d.trace)
        models.back()["trace"] = {
            {"from", ident(d.trace->kind)}, {"path", d.trace->path}, {"location", loc(d.trace->location)}};
      if (d.program) models.back()["program"] = attached(*d.program);
    }
    for (const ComponentDecl& c : m.components) {
      json accepts = json::array(), requests = json::array();
      for (const Interface& i : c.accepts) accepts.push_back(interface(i));
      for (const Interface& i : c.requests) requests.push_back(interface(i));
      json jc = {{"name", ident(c.name)},        {"location", loc(c.location)}, {"domain", ref(c.domain)},
                 {"params", bindings(c.params)}, {"accepts", accepts},          {"requests", requests}};
      if (c.implementation) jc["implementation"] = ref(*c.implementation);
      if (c.kernel) jc["kernel"] = attached(*c.kernel);
      components.push_back(jc);
    }
    for (const StudyDecl& s : m.studies) {
      json varies = json::array(), compare = json::array(), report = json::array();
      for (const VaryClause& v : s.varies) {
        json targets = json::array();
        for (const Identifier& t : v.targets) targets.push_back(ident(t));
        json jv = {{"targets", targets}, {"location", loc(v.location)}};
        if (v.is_range) {
          jv["range"] = {{"first", expr(v.first)}, {"last", expr(v.last)}, {"step", expr(v.step)}};
        } else {
          jv["values"] = expr(v.values);
        }
        varies.push_back(jv);
      }
      for (const QualifiedRef& p : s.compare) compare.push_back(ref(p));
      for (const Identifier& r : s.report) report.push_back(ident(r));
      json js = {{"name", ident(s.name)}, {"location", loc(s.location)}, {"settings", bindings(s.settings)},
                 {"vary", varies},        {"compare", compare},          {"report", report}};
      if (s.model) js["model"] = ident(*s.model);
      if (s.machine) js["machine"] = ident(*s.machine);
      studies.push_back(js);
    }
    return {
        {"file", m.path}, {"imports", imports}, {"models", models}, {"components", components}, {"studies", studies}};
  }
};
}  // namespace

nlohmann::json to_json(const Program& program, const SourceManager& sources) {
  JsonWriter w{sources};
  json modules = json::array();
  for (const Module& m : program.modules) modules.push_back(w.module(m));
  return {{"modules", modules}};
}

nlohmann::json to_json(const Expr& e, const SourceManager& sources) { return JsonWriter{sources}.expr(e); }

}  // namespace poems::psl
