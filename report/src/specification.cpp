#include "poems/report/specification.h"

#include <ostream>

namespace poems::report {

namespace {

nlohmann::json location_json(const psl::Frontend& fe, const psl::SourceLocation& at, nlohmann::json j) {
  if (at.file != psl::kNoFile) {
    j["file"] = fe.sources().path(at.file);
    j["line"] = at.line;
    j["column"] = at.column;
  }
  return j;
}

}  // namespace

nlohmann::json diagnostics_json(const psl::Frontend& fe) {
  nlohmann::json out = nlohmann::json::array();
  for (const psl::Diagnostic& d : fe.diagnostics().all()) {
    const char* severity = d.severity == psl::Severity::Error     ? "error"
                           : d.severity == psl::Severity::Warning ? "warning"
                                                                  : "note";
    nlohmann::json j = location_json(fe, d.location, {{"severity", severity}, {"message", d.message}});
    nlohmann::json notes = nlohmann::json::array();
    for (const psl::Diagnostic& n : d.notes) notes.push_back(location_json(fe, n.location, {{"message", n.message}}));
    if (!notes.empty()) j["notes"] = notes;
    out.push_back(j);
  }
  return out;
}

void CheckReport::add(const core::CheckResult& r, std::ostream& err) {
  ok_ = ok_ && r.ok;
  models_ += r.models;
  components_ += r.components;
  studies_ += r.studies;
  if (format_ == "json")
    for (auto& d : diagnostics_json(*r.frontend)) diagnostics_.push_back(d);
  else
    r.frontend->diagnostics().print(err);
}

void CheckReport::finish(std::ostream& out) const {
  if (format_ == "json")
    out << nlohmann::json{{"ok", ok_},
                          {"models", models_},
                          {"components", components_},
                          {"studies", studies_},
                          {"diagnostics", diagnostics_}}
               .dump(2)
        << '\n';
  else if (ok_)
    out << "OK: " << models_ << " models, " << components_ << " components, " << studies_ << " studies\n";
}

void write_graph_statistics(const std::string& model, const taskgraph::GraphStatistics& st, double seconds,
                            const std::string& format, std::ostream& out) {
  if (format == "json") {
    out << nlohmann::json{{"model", model},
                          {"processes", st.processes},
                          {"tasks", st.tasks},
                          {"p2p_messages", st.p2p_messages},
                          {"p2p_bytes", st.p2p_bytes},
                          {"collectives", st.collectives},
                          {"collective_messages", st.collective_messages},
                          {"collective_bytes", st.collective_bytes},
                          {"operations", st.operations},
                          {"traversal_seconds", seconds}}
               .dump(2)
        << '\n';
    return;
  }
  out << "model                " << model << "\n"
      << "processes            " << st.processes << "\n"
      << "tasks                " << st.tasks << "\n"
      << "p2p_messages         " << st.p2p_messages << "\n"
      << "p2p_bytes            " << st.p2p_bytes << "\n"
      << "collectives          " << st.collectives << "\n"
      << "collective_messages  " << st.collective_messages << "\n"
      << "operations           " << st.operations << "\n";
}

}  // namespace poems::report
