#include "poems/report/composition.h"

#include <ostream>

#include "poems/components/network.h"
#include "poems/psl/compiler.h"

namespace poems::report {

namespace {

std::string where(const psl::SourceManager& sources, psl::SourceLocation at) {
  if (!at.valid()) return "";
  return sources.path(at.file) + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

void print_text(const core::Composition& c, const psl::SourceManager& sources, std::ostream& out) {
  const psl::SystemModel& s = c.system;
  out << "system " << s.model << " (taskgraph " << s.taskgraph << ")";
  for (const auto& [k, v] : s.study) out << ", study." << k << " = " << v.str();
  out << "\n";
  for (const char* domain : {"application", "runtime", "hardware"}) {
    out << "  " << domain << ":";
    for (const psl::ComponentInstance& i : s.instances)
      if (i.domain_head == domain) out << " " << i.name << " (" << i.domain << ")";
    out << "\n";
  }
  out << "bindings:\n";
  for (const psl::InterfaceBinding& b : s.bindings) {
    out << "  " << s.instances[b.from].name << (b.request.empty() ? "" : "." + b.request) << " -> "
        << s.instances[b.to].name << "." << s.instances[b.to].accepts[b.accepts].label << "  " << b.transaction << " ("
        << b.protocol << ")";
    for (const psl::ArgumentBinding& a : b.arguments)
      if (a.source != psl::ArgumentBinding::Source::Forwarded || a.expression != a.parameter)
        out << ", " << a.parameter << " = " << a.expression
            << (a.source == psl::ArgumentBinding::Source::Library ? " (library coercion)" : "");
    out << "  [" << where(sources, b.location) << "]\n";
  }
  out << "evaluation plan (communication: " << (c.plan.communication.empty() ? "-" : c.plan.communication)
      << (c.machine && !c.machine->network.empty() ? ", network " + c.machine->network : std::string()) << "):\n";
  if (c.machine && !c.machine->flat()) out << "  machine: " << c.machine->network_model->describe() << "\n";
  for (const core::Ted& t : c.plan.teds) {
    out << "  node " << t.node << " " << t.node_text << "\n    -> " << (t.evaluator.empty() ? "-" : t.evaluator);
    if (t.implicit) out << " (no component accepts this node: defaults)";
    if (!t.chain.empty()) {
      out << " via";
      for (std::size_t k = 0; k < t.chain.size(); ++k) out << (k ? " -> " : " ") << t.chain[k];
    }
    out << "\n";
    if (!t.parameters.empty()) {
      out << "      ";
      bool first = true;
      for (const auto& [k, v] : t.parameters) {
        out << (first ? "" : ", ") << k << " = " << v.str();
        first = false;
      }
      out << "\n";
    }
  }
}

}  // namespace

nlohmann::json trace_model_json(const core::System& system, const core::TraceGraph& g, const core::Composition& c) {
  const trace::Trace& t = g.trace;
  std::size_t collectives = 0;
  for (const trace::Rank& r : t.ranks)
    for (const trace::Step& step : r.steps)
      if (step.kind == trace::StepKind::Collective) ++collectives;
  nlohmann::json j = {{"model", system.model().name.name},
                      {"stored_as", g.model},
                      {"archive", t.path},
                      {"archive_hash", g.hash},
                      {"creator", t.creator},
                      {"ranks", t.ranks.size()},
                      {"events", t.events},
                      {"calls", t.calls()},
                      {"messages", t.messages.size()},
                      {"collective_calls", collectives},
                      {"communicators", t.comms.size()},
                      {"traced_ns", static_cast<double>(t.measured()) / 1000.0},
                      {"traced_compute_ns", static_cast<double>(t.compute()) / 1000.0},
                      {"cpu_time_recorded", t.cpu_time},
                      {"parameters", {{"compute_scale", 1.0}}},
                      {"paradigm", c.paradigm},
                      {"warnings", t.warnings}};
  if (c.machine) j["network"] = c.machine->network.empty() ? "(command line: -L -o -g -G -O -S)" : c.machine->network;
  if (!c.no_machine.empty()) j["no_machine"] = c.no_machine;
  return j;
}

namespace {

void print_trace_model(const nlohmann::json& j, std::ostream& out) {
  const std::string creator = j["creator"].get<std::string>();
  out << "model " << j["model"].get<std::string>() << " from trace " << j["archive"].get<std::string>() << "\n";
  out << "  archive: written by " << (creator.empty() ? "?" : creator) << ", SHA-256 "
      << j["archive_hash"].get<std::string>() << " (stored as " << j["stored_as"].get<std::string>() << ")\n";
  out << "  ranks " << j["ranks"] << ", events " << j["events"] << ", MPI calls recorded " << j["calls"]
      << ", point-to-point messages " << j["messages"] << ", collective calls " << j["collective_calls"]
      << ", communicators " << j["communicators"] << "\n";
  out << "  traced run " << j["traced_ns"].get<double>() / 1e9 << " s, computation "
      << j["traced_compute_ns"].get<double>() / 1e9 << " s over all ranks"
      << (j["cpu_time_recorded"].get<bool>() ? " (CPU time recorded too)" : "") << "\n";
  out << "  parameter: compute_scale = 1 (default)\n";
  for (const auto& w : j["warnings"]) out << "  warning: " << w.get<std::string>() << "\n";
  out << "evaluation plan: the replay's task graph on " << j["paradigm"].get<std::string>() << ", network "
      << (j.contains("network") ? j["network"].get<std::string>() : std::string("-")) << "\n";
  if (j.contains("no_machine")) out << "  " << j["no_machine"].get<std::string>() << "\n";
}

}  // namespace

void write_composition(const core::System& system, const core::Composition& c, const std::string& format,
                       std::ostream& out) {
  if (format != "json") return print_text(c, system.sources(), out);
  nlohmann::json j = psl::to_json(c.system, system.sources());
  j["plan"] = c.plan.to_json();
  if (c.machine && !c.machine->flat()) {
    j["machine"] = components::network_key_json(c.machine->network_model->spec());
    j["machine"]["description"] = c.machine->network_model->describe();
  }
  out << j.dump(2) << '\n';
}

void write_trace_model(const core::System& system, const core::TraceGraph& graph, const core::Composition& c,
                       const std::string& format, std::ostream& out) {
  const nlohmann::json j = trace_model_json(system, graph, c);
  if (format == "json")
    out << j.dump(2) << '\n';
  else
    print_trace_model(j, out);
}

}  // namespace poems::report
