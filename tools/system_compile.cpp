#include "system_compile.h"

#include <iostream>
#include <regex>

#include "cli_common.h"
#include "model_source.h"

namespace poems::cli {

psl::Value command_line_value(const std::string& option, const std::string& text) {
  static const std::regex ref(R"(^([A-Za-z_][A-Za-z_0-9]*)\[([^\]]*)\]$)");
  if (std::regex_match(text, ref)) return psl::Value::of_string(text, psl::Value::Kind::Ref);
  if (text == "true" || text == "false") return psl::Value::of_bool(text == "true");
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
    return psl::Value::of_string(text.substr(1, text.size() - 2));
  std::string error;
  auto q = psl::parse_quantity(text, &error);
  if (!q) usage_error(option, "'" + text + "' is not a value (" + error + ")");
  return psl::Value::of_number(q->value, q->dimension);
}

void add_command_line_settings(const psl::Program& program, const std::string& model,
                               const std::vector<std::string>& sets, psl::CompileRequest& request) {
  const psl::ModelDecl* m = program.find_model(model);
  if (!m && program.model_count() == 1)
    for (const psl::Module& mod : program.modules)
      if (!mod.models.empty()) m = &mod.models.front();
  for (const std::string& s : sets) {
    std::size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) usage_error("--set", "'" + s + "' is not name=value");
    std::string name = s.substr(0, eq), text = s.substr(eq + 1);
    bool is_param = false;
    if (m)
      for (const psl::Binding& p : m->params) is_param = is_param || p.name.name == name;
    if (is_param) continue;  // model parameters bind the task graph, not the composition
    psl::Value v = command_line_value("--set " + name, text);
    if (name.find('.') != std::string::npos)
      request.overrides[name] = v;
    else
      request.study[name] = v;
  }
}

void apply_default_study(psl::CompileRequest& request) {
  if (!request.study.count("paradigm"))
    request.study["paradigm"] = psl::Value::of_string("analytic[LogGP]", psl::Value::Kind::Ref);
  if (!request.study.count("compute"))
    request.study["compute"] = psl::Value::of_string("processor[wg]", psl::Value::Kind::Ref);
}

std::optional<ComposedSystem> compose(LoadedModel& loaded, const psl::CompileRequest& request, int& result) {
  psl::DiagnosticEngine& diags = loaded.frontend->mutable_diagnostics();
  const std::size_t before = diags.all().size();
  std::optional<psl::SystemModel> system = psl::compile_system(loaded.frontend->program(), request, diags);
  for (std::size_t i = before; i < diags.all().size(); ++i) std::cerr << diags.render(diags.all()[i]);
  if (!system) {
    std::size_t errors = 0;
    for (std::size_t i = before; i < diags.all().size(); ++i) errors += diags.all()[i].severity == psl::Severity::Error;
    std::cerr << errors << (errors == 1 ? " error" : " errors") << " generated.\n";
    result = kExitInputError;
    return std::nullopt;
  }
  try {
    components::EvaluationPlan plan = components::plan_evaluation(*system, *loaded.graph);
    return ComposedSystem{std::move(*system), std::move(plan)};
  } catch (const components::PlanError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return std::nullopt;
  }
}

}  // namespace poems::cli
