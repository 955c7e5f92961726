// SystemModel queries, the study context of a composition, and the
// SystemModel as JSON and as a Graphviz drawing.
#include <sstream>

#include "poems/psl/compiler.h"

namespace poems::psl {

std::size_t SystemModel::find(std::string_view component) const {
  for (std::size_t i = 0; i < instances.size(); ++i)
    if (instances[i].name == component) return i;
  return kNoInstance;
}

const InterfaceBinding* SystemModel::request_of(std::size_t instance, std::string_view request) const {
  const InterfaceBinding* found = nullptr;
  for (const InterfaceBinding& b : bindings) {
    if (b.from != instance) continue;
    if (!request.empty() && b.request == request) return &b;
    if (request.empty() && b.protocol == "call_return") {
      if (found) return nullptr;  // several: the caller must name one
      found = &b;
    }
  }
  return found;
}

std::vector<std::size_t> SystemModel::call_chain(std::size_t instance, std::string_view domain_head) const {
  std::vector<std::size_t> chain;
  std::size_t at = instance;
  while (at != kNoInstance && chain.size() <= instances.size()) {
    chain.push_back(at);
    if (instances[at].domain_head == domain_head) return chain;
    const InterfaceBinding* next = nullptr;
    for (const InterfaceBinding& b : bindings)
      if (b.from == at && b.protocol == "call_return" &&
          (!next || instances[b.to].domain_head == domain_head))  // prefer a direct step into the domain
        next = &b;
    at = next ? next->to : kNoInstance;
  }
  return {};
}

CompileRequest study_request(const Program& program, const StudyDecl& study, const std::string& paradigm) {
  CompileRequest r;
  if (study.model) r.model = study.model->name;
  if (study.machine) r.chosen.push_back(study.machine->name);
  const ModelDecl* model = study.model ? program.find_model(study.model->name) : nullptr;
  for (const Binding& b : study.settings) {
    if (!b.value) continue;
    bool is_param = false;
    if (model)
      for (const Binding& p : model->params) is_param = is_param || p.name.name == b.name.name;
    if (is_param) continue;
    EvalResult v = evaluate(*b.value, [](std::string_view) -> const Value* { return nullptr; });
    if (!v.value) continue;  // reported by the checker
    if (b.name.name.find('.') != std::string::npos)
      r.overrides[b.name.name] = *v.value;
    else
      r.study[b.name.name] = *v.value;
  }
  r.study["paradigm"] = Value::of_string(paradigm, Value::Kind::Ref);
  return r;
}

namespace {

std::string where(const SourceManager& sources, SourceLocation at) {
  if (!at.valid() || at.file >= sources.size()) return "";
  return sources.path(at.file) + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

nlohmann::json value_json(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Bool: return v.boolean;
    case Value::Kind::Number:
      if (v.dimension.dimensionless()) return v.number;
      return v.str();
    default: return v.kind == Value::Kind::String ? v.text : v.str();
  }
}

nlohmann::json values_json(const std::map<std::string, Value>& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : values) out[k] = value_json(v);
  return out;
}

std::string transaction_text(const Transaction& t) {
  std::string out = t.name.name + "(";
  for (std::size_t i = 0; i < t.params.size(); ++i) {
    const TxParam& p = t.params[i];
    out += (i ? ", " : "") + p.name.name;
    if (p.kind == TxParamKind::Typed) out += ": " + p.type.name;
    if (p.kind == TxParamKind::Coerced && p.value) out += " = " + to_source(*p.value);
  }
  out += ")";
  if (t.result_type) out += " -> " + t.result_type->name;
  return out;
}

const char* source_name(ArgumentBinding::Source s) {
  switch (s) {
    case ArgumentBinding::Source::Forwarded: return "forwarded";
    case ArgumentBinding::Source::Coerced: return "coercion";
    case ArgumentBinding::Source::Library: return "library coercion";
  }
  return "";
}

std::string dot_id(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\\\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

nlohmann::json to_json(const SystemModel& system, const SourceManager& sources) {
  nlohmann::json out;
  out["model"] = system.model;
  out["taskgraph"] = system.taskgraph;
  out["study"] = values_json(system.study);
  nlohmann::json domains = {{"application", nlohmann::json::array()},
                            {"runtime", nlohmann::json::array()},
                            {"hardware", nlohmann::json::array()}};
  nlohmann::json components = nlohmann::json::array();
  for (const ComponentInstance& c : system.instances) {
    domains[c.domain_head].push_back(c.name);
    nlohmann::json acc = nlohmann::json::array();
    for (const AcceptsInstance& a : c.accepts)
      acc.push_back({{"name", a.label},
                     {"profile", values_json(a.profile)},
                     {"transaction", a.decl->transaction ? transaction_text(*a.decl->transaction) : ""},
                     {"protocol", a.decl->protocol ? a.decl->protocol->name : ""}});
    nlohmann::json entry = {{"name", c.name},
                            {"domain", c.domain},
                            {"location", where(sources, c.decl->name.location)},
                            {"params", values_json(c.params)},
                            {"accepts", acc}};
    if (!c.implementation.empty()) entry["implementation"] = c.implementation;
    components.push_back(entry);
  }
  nlohmann::json bindings = nlohmann::json::array();
  for (const InterfaceBinding& b : system.bindings) {
    nlohmann::json args = nlohmann::json::array();
    for (const ArgumentBinding& a : b.arguments)
      args.push_back({{"parameter", a.parameter},
                      {"type", a.type},
                      {"expression", a.expression},
                      {"source", source_name(a.source)}});
    bindings.push_back({{"from", system.instances[b.from].name},
                        {"request", b.request},
                        {"to", system.instances[b.to].name},
                        {"accepts", system.instances[b.to].accepts[b.accepts].label},
                        {"protocol", b.protocol},
                        {"transaction", b.transaction},
                        {"arguments", args},
                        {"location", where(sources, b.location)}});
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const TaskNodeLink& n : system.task_nodes) {
    nlohmann::json node = {{"kind", n.kind}, {"label", n.label}, {"location", where(sources, n.location)}};
    node["component"] =
        n.component == kNoInstance ? nlohmann::json() : nlohmann::json(system.instances[n.component].name);
    nodes.push_back(node);
  }
  out["domains"] = domains;
  out["components"] = components;
  out["bindings"] = bindings;
  out["task_nodes"] = nodes;
  return out;
}

std::string to_dot(const SystemModel& system) {
  std::ostringstream out;
  out << "digraph " << dot_id(system.model) << " {\n  compound=true;\n  rankdir=TB;\n"
      << "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
  for (const char* domain : {"application", "runtime", "hardware"}) {
    out << "  subgraph " << dot_id(std::string("cluster_") + domain) << " {\n    label=" << dot_id(domain)
        << ";\n    style=filled; fillcolor=\"#f4f4f4\";\n";
    if (std::string(domain) == "application") {
      out << "    subgraph \"cluster_taskgraph\" {\n      label=" << dot_id("taskgraph " + system.taskgraph)
          << "; style=dashed;\n";
      for (std::size_t i = 0; i < system.task_nodes.size(); ++i)
        out << "      t" << i << " [shape=ellipse, label=" << dot_id(system.task_nodes[i].label) << "];\n";
      for (std::size_t i = 1; i < system.task_nodes.size(); ++i) out << "      t" << i - 1 << " -> t" << i << ";\n";
      out << "    }\n";
    }
    for (std::size_t i = 0; i < system.instances.size(); ++i) {
      const ComponentInstance& c = system.instances[i];
      if (c.domain_head != domain) continue;
      std::string label = c.name + "\\n" + c.domain;
      if (!c.implementation.empty()) label += "\\n" + c.implementation;
      out << "    c" << i << " [label=" << dot_id(label) << "];\n";
    }
    out << "  }\n";
  }
  for (std::size_t i = 0; i < system.task_nodes.size(); ++i)
    if (system.task_nodes[i].component != kNoInstance)
      out << "  t" << i << " -> c" << system.task_nodes[i].component << " [style=dotted, arrowhead=none];\n";
  for (const InterfaceBinding& b : system.bindings)
    out << "  c" << b.from << " -> c" << b.to << " [label=" << dot_id(b.transaction + " (" + b.protocol + ")")
        << (b.protocol == "dataflow" ? ", style=bold" : "") << "];\n";
  out << "}\n";
  return out.str();
}

}  // namespace poems::psl
