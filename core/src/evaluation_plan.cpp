#include "poems/core/evaluation_plan.h"

#include <algorithm>
#include <functional>

#include "poems/core/machine.h"

namespace poems::core {

using components::ps_to_ns_text;

namespace {

using psl::kNoInstance;

bool same_place(const psl::SourceLocation& a, const psl::SourceLocation& b) {
  return a.valid() && a.file == b.file && a.line == b.line && a.column == b.column;
}

const psl::InterfaceBinding* binding_between(const psl::SystemModel& s, std::size_t from, std::size_t to) {
  for (const psl::InterfaceBinding& b : s.bindings)
    if (b.from == from && b.to == to && b.protocol == "call_return") return &b;
  return nullptr;
}

// The accepts profile a chain step landed on.
const std::map<std::string, psl::Value>* landed_profile(const psl::SystemModel& s, std::size_t from, std::size_t to) {
  const psl::InterfaceBinding* b = binding_between(s, from, to);
  return b ? &s.instances[to].accepts[b->accepts].profile : nullptr;
}

std::string paradigm_of(const psl::SystemModel& s, const std::vector<std::size_t>& chain) {
  for (std::size_t k = 1; k < chain.size(); ++k)
    if (!s.instances[chain[k]].implementation.empty()) return s.instances[chain[k]].implementation;
  if (chain.size() < 2) return {};
  const auto* profile = landed_profile(s, chain[chain.size() - 2], chain.back());
  if (!profile) return {};
  auto it = profile->find("evaluation");
  return it != profile->end() && it->second.kind == psl::Value::Kind::Ref ? it->second.text : std::string();
}

std::string study_paradigm(const psl::SystemModel& s) {
  auto it = s.study.find("paradigm");
  return it == s.study.end() ? std::string() : it->second.text;
}

const char* kind_of(taskgraph::StaticNode::Kind k) {
  switch (k) {
    case taskgraph::StaticNode::Kind::Compute: return "compute";
    case taskgraph::StaticNode::Kind::Send: return "send";
    case taskgraph::StaticNode::Kind::Recv: return "recv";
    case taskgraph::StaticNode::Kind::Collective: return "collective";
  }
  return "";
}

// One message-protocol attribute (eager_limit, handshake, semantics) of the
// accepts profiles the communication nodes were bound through. One engine
// carries every message of a run, so each profile that names it must agree.
struct ProtocolSetting {
  explicit ProtocolSetting(const char* attribute) : name(attribute) {}
  const char* name;
  std::optional<psl::Value> value;
  psl::SourceLocation at;  // where the first value was written
  std::string place;       // "MPI_simulated (accepts)"
  std::string component;

  // `check` says what is wrong with a value ("" if nothing).
  void read(const psl::ComponentInstance& c, const psl::AcceptsInstance& accepts,
            const std::function<std::string(const psl::Value&)>& check) {
    auto it = accepts.profile.find(name);
    if (it == accepts.profile.end()) return;
    psl::SourceLocation here;
    if (accepts.decl)
      for (const psl::ProfileEntry& e : accepts.decl->profile)
        if (e.name.name == name && e.value) here = e.value->location;
    const std::string where = c.name + " (" + accepts.label + ")";
    if (std::string problem = check(it->second); !problem.empty())
      throw PlanError(where + ": " + name + " = " + it->second.str() + " " + problem, here);
    if (!value) {
      value = it->second;
      at = here;
      place = where;
      component = c.name;
    } else if (!(*value == it->second)) {
      throw PlanError(where + ": " + name + " = " + it->second.str() + " disagrees with " + name + " = " +
                          value->str() + " in " + place +
                          "; one engine carries every message of a run, so the profiles the communication "
                          "is bound through must agree on it",
                      here);
    }
  }
};

struct ProtocolSettings {
  ProtocolSetting eager_limit{"eager_limit"};
  ProtocolSetting handshake{"handshake"};
  ProtocolSetting semantics{"semantics"};  // its values are checked by compose()

  void read(const psl::SystemModel& s, std::size_t from, std::size_t to) {
    const psl::InterfaceBinding* b = binding_between(s, from, to);
    if (!b) return;
    const psl::ComponentInstance& c = s.instances[to];
    read(c, c.accepts[b->accepts]);
  }

  void read(const psl::ComponentInstance& c, const psl::AcceptsInstance& a) {
    eager_limit.read(c, a, [](const psl::Value& v) -> std::string {
      const bool bytes =
          v.kind == psl::Value::Kind::Number && (v.dimension == base::kBytes || v.dimension.dimensionless());
      if (!bytes || v.number < 0 || !v.is_integer() || v.number > 9e15)
        return "is not an eager limit; it must be a whole number of bytes from 0 to 9e15, e.g. 4096B";
      return {};
    });
    handshake.read(c, a, [](const psl::Value& v) -> std::string {
      return v.kind == psl::Value::Kind::Bool ? "" : "is not a rendezvous handshake setting; it must be true or false";
    });
    semantics.read(c, a, [](const psl::Value&) { return std::string(); });
  }
};

bool accepts_paradigm(const psl::ComponentInstance& c, const psl::AcceptsInstance& a, const std::string& paradigm) {
  auto it = a.profile.find("evaluation");
  if (it == a.profile.end()) return c.implementation == paradigm;
  return it->second.kind == psl::Value::Kind::Ref && it->second.text == paradigm;
}

}  // namespace

bool runtime_accepts(const psl::ComponentInstance& runtime, const std::string& paradigm) {
  for (const psl::AcceptsInstance& a : runtime.accepts)
    if (accepts_paradigm(runtime, a, paradigm)) return true;
  return false;
}

RuntimeProtocol runtime_protocol(const psl::ComponentInstance& runtime, const std::string& paradigm) {
  ProtocolSettings protocol;
  for (const psl::AcceptsInstance& a : runtime.accepts)
    if (accepts_paradigm(runtime, a, paradigm)) protocol.read(runtime, a);
  RuntimeProtocol out;
  if (protocol.eager_limit.value) out.eager_limit = static_cast<std::uint64_t>(protocol.eager_limit.value->number);
  if (protocol.handshake.value) out.handshake = protocol.handshake.value->boolean;
  out.semantics = protocol.semantics.value;
  return out;
}

const Ted* EvaluationPlan::ted(std::uint32_t node) const {
  for (const Ted& t : teds)
    if (t.node == node) return &t;
  return nullptr;
}

nlohmann::json EvaluationPlan::to_json() const {
  nlohmann::json out;
  out["communication"] = communication;
  if (network) {
    out["network"] = {{"component", network_component},
                      {"L_ns", ps_to_ns_text(network->L)},
                      {"o_ns", ps_to_ns_text(network->o)},
                      {"g_ns", ps_to_ns_text(network->g)},
                      {"G_ns_per_byte", static_cast<double>(network->G) / 1e6},
                      {"O_ns_per_byte", static_cast<double>(network->O) / 1e6},
                      {"S_bytes", network->S},
                      {"rendezvous_handshake", rendezvous_handshake}};
  }
  nlohmann::json list = nlohmann::json::array();
  for (const Ted& t : teds) {
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [k, v] : t.parameters)
      params[k] = v.kind == psl::Value::Kind::Number && v.dimension.dimensionless() ? nlohmann::json(v.number)
                  : v.kind == psl::Value::Kind::Bool                                ? nlohmann::json(v.boolean)
                  : v.kind == psl::Value::Kind::String                              ? nlohmann::json(v.text)
                                                                                    : nlohmann::json(v.str());
    nlohmann::json entry = {{"node", t.node},           {"kind", t.kind},   {"text", t.node_text},
                            {"evaluator", t.evaluator}, {"chain", t.chain}, {"parameters", params},
                            {"implicit", t.implicit}};
    if (!t.arguments.empty()) entry["arguments"] = t.arguments;
    list.push_back(entry);
  }
  out["teds"] = list;
  return out;
}

EvaluationPlan plan_evaluation(const psl::SystemModel& s, const taskgraph::StaticTaskGraph& graph) {
  EvaluationPlan plan;
  std::vector<std::string> comm_paradigms;
  ProtocolSettings protocol;
  for (std::uint32_t n = 1; n < graph.nodes.size(); ++n) {
    const taskgraph::StaticNode& node = graph.nodes[n];
    Ted ted;
    ted.node = n;
    ted.node_text = node.text;
    ted.kind = kind_of(node.kind);
    std::size_t app = kNoInstance;
    for (const psl::TaskNodeLink& link : s.task_nodes)
      if (same_place(link.location, node.source)) app = link.component;
    const bool compute = node.kind == taskgraph::StaticNode::Kind::Compute;
    std::vector<std::size_t> chain;
    if (app != kNoInstance) chain = s.call_chain(app, compute ? "hardware" : "runtime");
    if (chain.empty()) {
      ted.implicit = true;
      ted.evaluator = compute ? "processor[wg]" : study_paradigm(s);
      if (app != kNoInstance) ted.chain.push_back(s.instances[app].name);
      plan.teds.push_back(std::move(ted));
      continue;
    }
    if (!compute) {  // continue from the runtime down to the network
      std::vector<std::size_t> rest = s.call_chain(chain.back(), "hardware");
      if (rest.size() > 1) chain.insert(chain.end(), rest.begin() + 1, rest.end());
    }
    for (std::size_t k : chain) ted.chain.push_back(s.instances[k].name);
    ted.evaluator = paradigm_of(s, compute ? chain : std::vector<std::size_t>(chain.begin(), chain.begin() + 2));
    if (const psl::InterfaceBinding* first = binding_between(s, chain[0], chain[1]))
      for (const psl::ArgumentBinding& a : first->arguments) ted.arguments[a.parameter] = a.expression;
    // Parameters of every implementing component, then the profiles they were
    // reached through (a profile entry names the attribute as matched).
    for (std::size_t k = 1; k < chain.size(); ++k) {
      for (const auto& [name, v] : s.instances[chain[k]].params) ted.parameters[name] = v;
      if (const auto* profile = landed_profile(s, chain[k - 1], chain[k]))
        for (const auto& [name, v] : *profile)
          if (name != "evaluation" && name != "node_type") ted.parameters[name] = v;
    }
    if (!compute) {
      comm_paradigms.push_back(ted.evaluator);
      for (std::size_t k = 1; k < chain.size(); ++k) protocol.read(s, chain[k - 1], chain[k]);
      const psl::ComponentInstance& last = s.instances[chain.back()];
      if (last.domain_head == "hardware" && !plan.network) {
        plan.network = loggops_of(last.params, last.name);
        plan.network_component = last.name;
      }
    }
    plan.teds.push_back(std::move(ted));
  }
  std::sort(comm_paradigms.begin(), comm_paradigms.end());
  comm_paradigms.erase(std::unique(comm_paradigms.begin(), comm_paradigms.end()), comm_paradigms.end());
  if (comm_paradigms.size() > 1) {
    std::string list;
    for (const std::string& p : comm_paradigms) list += (list.empty() ? "" : ", ") + p;
    throw PlanError("communication nodes are bound to different paradigms (" + list +
                    "); one engine carries all messages of a run, so they must agree");
  }
  // The runtime's protocol settings rule over the network's S and the
  // default (no handshake), wherever the communication reached a network.
  if (protocol.eager_limit.value) {
    if (!plan.network)
      throw PlanError(protocol.eager_limit.place + ": eager_limit = " + protocol.eager_limit.value->str() +
                          " has no network to apply to: the communication reaches no hardware[network] "
                          "component (a measured MPI library uses its own limit)",
                      protocol.eager_limit.at);
    plan.network->S = static_cast<std::uint64_t>(protocol.eager_limit.value->number);
  }
  if (protocol.handshake.value) plan.rendezvous_handshake = protocol.handshake.value->boolean;
  if (protocol.semantics.value) {
    plan.semantics = protocol.semantics.value;
    plan.runtime_component = protocol.semantics.component;
  }
  plan.communication = comm_paradigms.empty() ? study_paradigm(s) : comm_paradigms.front();
  for (Ted& t : plan.teds)
    if (t.implicit && t.kind != "compute") t.evaluator = plan.communication;
  return plan;
}

}  // namespace poems::core
