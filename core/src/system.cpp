#include "poems/core/system.h"

#include "system_internal.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "poems/base/suggest.h"
#include "poems/core/attached_program.h"
#include "poems/core/error.h"
#include "poems/core/trace_model.h"
#include "poems/db/run_key.h"
#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/psl/value.h"
#include "poems/taskgraph/comm_check.h"
#include "poems/trace/trace.h"

namespace poems::core {

namespace {

// The --set values become the settings of this study, in a file of their
// own, and the front end checks them as it checks any study's `set`.
constexpr const char* kCommandLineFile = "(command line)";
constexpr const char* kCommandLineStudy = "__command_line";
constexpr std::uint32_t kFirstSettingLine = 3;  // line of the first `set` in that file

std::string count_line(std::size_t errors, std::size_t warnings) {
  if (errors == 0 && warnings == 0) return "";
  std::string out = std::to_string(errors) + (errors == 1 ? " error" : " errors");
  if (warnings > 0) out += ", " + std::to_string(warnings) + (warnings == 1 ? " warning" : " warnings");
  return out + " generated.\n";
}

std::vector<std::string> names_of(const psl::Program& program, bool models) {
  std::vector<std::string> names;
  for (const psl::Module& m : program.modules) {
    if (models)
      for (const psl::ModelDecl& d : m.models) names.push_back(d.name.name);
    else
      for (const psl::StudyDecl& s : m.studies)
        if (s.name.name != kCommandLineStudy) names.push_back(s.name.name);
  }
  return names;
}

}  // namespace

taskgraph::ParameterBinding Settings::binding() const {
  taskgraph::ParameterBinding out;
  for (const auto& [name, v] : parameters)
    if (v.kind == base::Value::Kind::Number) out[name] = v.number;
  return out;
}

struct System::State {
  std::shared_ptr<psl::Frontend> frontend;
  const psl::ModelDecl* model = nullptr;
  std::shared_ptr<const taskgraph::StaticTaskGraph> graph;
  const psl::StudyDecl* study = nullptr;
  Settings settings;
  taskgraph::ParameterBinding binding;
  std::string spec_hash, warnings;
  psl::FileId command_line = psl::kNoFile;
  bool messages_checked = false;
  std::shared_ptr<const ModelProgram> attached;
};

System::System() : state_(std::make_unique<State>()) {}
System::~System() = default;

const psl::Program& System::program() const { return state_->frontend->program(); }
const psl::SourceManager& System::sources() const { return state_->frontend->sources(); }
psl::DiagnosticEngine& System::diagnostics() { return state_->frontend->mutable_diagnostics(); }
const psl::ModelDecl& System::model() const { return *state_->model; }
const std::shared_ptr<const taskgraph::StaticTaskGraph>& System::graph() const { return state_->graph; }
const std::shared_ptr<const ModelProgram>& System::attached_program() const { return state_->attached; }
const psl::StudyDecl* System::study() const { return state_->study; }
const Settings& System::settings() const { return state_->settings; }
const taskgraph::ParameterBinding& System::binding() const { return state_->binding; }
const std::string& System::spec_hash() const { return state_->spec_hash; }
const std::string& System::warnings() const { return state_->warnings; }
std::vector<std::string> System::study_names() const { return names_of(program(), false); }

void System::check_messages() {
  if (state_->messages_checked) return;
  state_->messages_checked = true;
  psl::DiagnosticEngine& diags = diagnostics();
  const std::size_t before = diags.all().size();
  if (taskgraph::check_communication(*state_->graph, diags) > 0)
    throw InputError("the messages of model " + state_->model->name.name + " do not match", render_diagnostics(before));
}

std::string System::render_diagnostics(std::size_t first) const {
  const psl::DiagnosticEngine& diags = state_->frontend->diagnostics();
  std::string out;
  std::size_t errors = 0, warnings = 0;
  for (std::size_t i = first; i < diags.all().size(); ++i) {
    const psl::Diagnostic& d = diags.all()[i];
    out += diags.render(d);
    errors += d.severity == psl::Severity::Error;
    warnings += d.severity == psl::Severity::Warning;
  }
  return out + count_line(errors, warnings);
}

namespace {

// A --set argument is bounded before anything reads it: a name of thousands
// of characters is a mistake, and the front end sees only bounded text.
constexpr std::size_t kMaxSettingNameBytes = 256;
constexpr std::size_t kMaxSettingValueBytes = 4096;

std::string abbreviated(const std::string& text, std::size_t keep) {
  return text.size() <= keep ? text : text.substr(0, keep) + "...";
}

bool is_identifier_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

// Name or Component.name ...: identifiers joined by dots (a loop, not
// std::regex, which recurses once per character).
bool is_setting_name(const std::string& n) {
  bool start = true;
  for (char c : n) {
    if (start) {
      if (!is_identifier_start(c)) return false;
      start = false;
    } else if (c == '.') {
      start = true;
    } else if (!is_identifier_start(c) && !(c >= '0' && c <= '9')) {
      return false;
    }
  }
  return !start;
}

}  // namespace

std::pair<std::string, std::string> split_setting(const std::string& argument) {
  const std::size_t eq = argument.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError("--set",
                     "'" + abbreviated(argument, 80) + "' is not NAME=VALUE (e.g. --set npe_i=4, --set Odin.L=5.3us)");
  std::string n = argument.substr(0, eq), value = argument.substr(eq + 1);
  if (n.size() > kMaxSettingNameBytes)
    throw UsageError("--set", "the name '" + abbreviated(n, 40) + "' is " + std::to_string(n.size()) +
                                  " characters long; a name has at most " + std::to_string(kMaxSettingNameBytes));
  if (value.size() > kMaxSettingValueBytes)
    throw UsageError("--set " + n, "the value is " + std::to_string(value.size()) +
                                       " bytes long; a value has at most " + std::to_string(kMaxSettingValueBytes));
  if (!is_setting_name(n))
    throw UsageError("--set", "'" + n + "' is not a parameter name (letters, digits and _, Component.param)");
  // One PSL value, nothing that could end the setting or the study around it.
  if (value.empty() || value.find_first_of(";{}\n\r") != std::string::npos)
    throw UsageError("--set " + n, "'" + value + "' is not a value (e.g. 4, 5.3us, 32KiB, processor[wg], \"text\")");
  return {n, value};
}

base::Value constant_value(const psl::Expr& e) {
  psl::EvalResult r = psl::evaluate(e, [](std::string_view) -> const base::Value* { return nullptr; });
  if (!r.value) throw InputError("a study value is not a constant: " + r.error);
  return *r.value;
}

namespace {

void choose_model(System::State& s, const SystemRequest& request, const std::string& spec) {
  const psl::Program& program = s.frontend->program();
  std::string model = request.model;
  if (!request.study.empty()) {
    s.study = program.find_study(request.study);
    if (!s.study || request.study == kCommandLineStudy) {
      const std::vector<std::string> studies = names_of(program, false);
      throw UsageError("--study", "no study named '" + request.study + "' in " + spec +
                                      " (studies: " + (studies.empty() ? "none" : base::name_list(studies)) + ")" +
                                      base::did_you_mean(request.study, studies));
    }
    if (s.study->model) {
      if (!model.empty() && model != s.study->model->name)
        throw UsageError("--model",
                         "study " + request.study + " evaluates model " + s.study->model->name + ", not " + model);
      model = s.study->model->name;
    }
  }
  const std::vector<std::string> models = names_of(program, true);
  if (model.empty()) {
    if (models.empty()) throw InputError(spec + " has no model to evaluate");
    if (models.size() > 1)
      throw UsageError("--model", spec + " has " + std::to_string(models.size()) + " models (" +
                                      base::name_list(models) + "); choose one");
    model = models.front();
  }
  s.model = program.find_model(model);
  if (!s.model)
    throw UsageError("--model", "no model named '" + model + "' (models: " + base::name_list(models) + ")" +
                                    base::did_you_mean(model, models));
  if (s.model->taskgraphs.empty() && !s.model->trace)
    throw InputError("model '" + model + "' has no taskgraph to evaluate");
}

// The paradigms that evaluate a model from a trace: the replay simulated, its critical path.
bool replays_traces(const std::string& paradigm) {
  return paradigm == "simulation[MPI-Sim]" || paradigm == "analytic[LogGP]";
}

// A model from a trace: its archive read (the path relative to the file that
// names it), its compare entries checked; errors located in the PSL.
void load_trace_model(System& system, System::State& s) {
  const psl::TraceSource& source = *s.model->trace;
  psl::DiagnosticEngine& diags = s.frontend->mutable_diagnostics();
  const std::size_t before = diags.all().size();
  namespace fs = std::filesystem;
  fs::path archive(source.path);
  if (archive.is_relative() && source.location.file != psl::kNoFile)
    archive = fs::path(s.frontend->sources().path(source.location.file)).parent_path() / archive;
  std::error_code ec;
  if (!fs::exists(archive, ec)) {
    diags.error(source.location, "no trace archive '" + source.path + "' (" + archive.string() +
                                     " does not exist; record one with `poems trace -o DIR -- PROGRAM`)");
  } else {
    try {
      s.graph = make_trace_graph(archive.string());
    } catch (const trace::TraceError& e) {
      diags.error(source.location, "'" + source.path + "' cannot be replayed: " + e.what());
    }
  }
  if (s.study)
    for (const psl::QualifiedRef& p : s.study->compare)
      if (!replays_traces(p.str()))
        diags.error(p.location, "model " + s.model->name.name + " comes from a trace; " + p.str() +
                                    " does not evaluate traces (compare simulation[MPI-Sim], the replay "
                                    "simulated, or analytic[LogGP], its critical path)");
  if (diags.all().size() > before)
    throw InputError("model " + s.model->name.name + " (from a trace) cannot be evaluated",
                     system.render_diagnostics(before));
}

// A model's program and its components' kernels (docs/psl.md, "Programs and
// kernels"): paths relative to the file naming them, missing files located.
void load_attached_program(System& system, System::State& s) {
  if (!s.model->program) return;
  std::vector<AttachedProblem> problems;
  const psl::Frontend& frontend = *s.frontend;
  s.attached = attached_program(
      *s.model,
      [&frontend](const psl::SourceLocation& at) {
        if (at.file == psl::kNoFile) return std::string(".");
        return std::filesystem::path(frontend.sources().path(at.file)).parent_path().string();
      },
      s.frontend, problems);
  if (!problems.empty()) {
    psl::DiagnosticEngine& diags = s.frontend->mutable_diagnostics();
    const std::size_t before = diags.all().size();
    for (const AttachedProblem& p : problems) diags.error(p.where, p.message);
    throw InputError("model " + s.model->name.name + "'s program names files that do not exist",
                     system.render_diagnostics(before));
  }
  register_attached_kernels(s.frontend->program(), *s.model, s.attached, s.frontend);
}

// Checks the --set values with the front end, as the settings of a study of
// the model, and sorts them by what they bind.
void check_settings(System::State& s, const SystemRequest& request) {
  std::vector<std::pair<std::string, std::string>> sets;
  std::string text = std::string("study ") + kCommandLineStudy + " {\n  model " + s.model->name.name + ";\n";
  for (const std::string& a : request.sets) {
    sets.push_back(split_setting(a));
    text += "  set " + sets.back().first + " = " + sets.back().second + ";\n";
  }
  for (const std::string& w : request.where) {
    if (w.find_first_of(";{}\n") != std::string::npos)
      throw UsageError("--where", "'" + w + "' is not one expression (no ';', braces or line breaks)");
    text += "  where " + w + ";\n";
  }
  text += "}\n";
  psl::DiagnosticEngine& diags = s.frontend->mutable_diagnostics();
  const std::size_t before = diags.all().size();
  s.frontend->load_text(kCommandLineFile, text);
  for (psl::FileId f = 0; f < s.frontend->sources().size(); ++f)
    if (s.frontend->sources().path(f) == kCommandLineFile) s.command_line = f;
  // The whole program is checked again: what is new outside this file repeats the first pass.
  std::string problems;
  for (std::size_t i = before; i < diags.all().size(); ++i) {
    const psl::Diagnostic& d = diags.all()[i];
    if (d.severity != psl::Severity::Error || d.location.file != s.command_line) continue;
    const std::size_t k = d.location.line >= kFirstSettingLine ? d.location.line - kFirstSettingLine : 0;
    const std::string what = k < sets.size()                          ? "--set " + sets[k].first + "=" + sets[k].second
                             : k - sets.size() < request.where.size() ? "--where " + request.where[k - sets.size()]
                                                                      : text;
    problems += (problems.empty() ? "" : "\n") + what + ": " + d.message;
  }
  if (!problems.empty()) throw UsageError("", problems);
  const psl::StudyDecl* st = nullptr;
  for (const psl::Module& m : s.frontend->program().modules)
    if (m.file == s.command_line && !m.studies.empty()) st = &m.studies.front();
  if (!st) throw UsageError("--set", "the values could not be read");
  for (const psl::ExprPtr& c : st->constraints)
    if (c) s.settings.constraints.push_back(c.get());
  for (const psl::Binding& b : st->settings) {
    const std::string& name = b.name.name;
    if (s.study && request.study_bindings)
      for (const psl::VaryClause& v : s.study->varies)
        for (const psl::Identifier& t : v.targets)
          if (t.name == name)
            throw UsageError("--set " + name, "study " + s.study->name.name + " varies " + name +
                                                  "; its bindings set it (run another study, or none, to fix it)");
    const base::Value value = constant_value(*b.value);
    bool parameter = false;
    for (const psl::Binding& p : s.model->params) parameter = parameter || p.name.name == name;
    if (name.find('.') != std::string::npos)
      s.settings.overrides[name] = value;
    else if (parameter)
      s.settings.parameters[name] = value;
    else
      s.settings.study[name] = value;
  }
}

}  // namespace

std::unique_ptr<System> load_system(const SystemRequest& request) {
  if (request.files.empty()) throw UsageError("", "no specification given");
  auto frontend = std::make_shared<psl::Frontend>();
  if (!frontend->load_files(request.files)) {
    std::ostringstream text;
    frontend->diagnostics().print(text);
    throw InputError("", text.str());  // the diagnostics say it all
  }
  return make_system(std::move(frontend), request);
}

std::unique_ptr<System> make_system(std::shared_ptr<psl::Frontend> frontend, const SystemRequest& request) {
  auto system = std::make_unique<System>();
  System::State& s = *system->state_;
  s.frontend = std::move(frontend);
  const std::string& spec = request.files.empty() ? std::string("the specification") : request.files.front();
  if (!s.frontend->diagnostics().all().empty()) s.warnings = system->render_diagnostics(0);
  choose_model(s, request, spec);
  if (!request.sets.empty() || !request.where.empty()) check_settings(s, request);
  if (s.study)
    for (const psl::Binding& b : s.study->settings)
      for (const psl::Binding& p : s.model->params)
        if (p.name.name == b.name.name && b.value) {
          const base::Value v = constant_value(*b.value);
          if (v.kind == base::Value::Kind::Number) s.binding[b.name.name] = v.number;
        }
  for (const auto& [k, v] : s.settings.binding()) s.binding[k] = v;

  if (s.model->trace) {
    load_trace_model(*system, s);
    // Keyed by the archive's contents, as `poems simulate --trace` keys it.
    s.spec_hash = trace_graph(*s.graph)->hash;
    return system;
  }
  try {
    s.graph = std::make_shared<taskgraph::StaticTaskGraph>(
        psl::lower_model(s.frontend->program(), s.frontend->sources(), s.model->name.name));
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  std::string all;
  for (psl::FileId f = 0; f < s.frontend->sources().size(); ++f) {
    if (f == s.command_line) continue;
    all += s.frontend->sources().text(f);
    all += '\0';
  }
  s.spec_hash = db::sha256_hex(all);
  load_attached_program(*system, s);
  return system;
}

}  // namespace poems::core
