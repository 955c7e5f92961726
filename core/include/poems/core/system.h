// A system to evaluate: a PSL specification and the files given beside it
// (--import) loaded and checked, one model chosen, its task graph lowered and
// its communication checked statically, and the command line's --set values
// checked exactly as PSL checks a study's `set` (same rules, same messages:
// they are checked by the front end itself, as the settings of a study).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "poems/base/diagnostics.h"
#include "poems/base/value.h"
#include "poems/psl/ast.h"
#include "poems/taskgraph/dtg.h"

namespace poems::psl {
class Frontend;
}

namespace poems::core {

struct ModelProgram;

struct SystemRequest {
  std::vector<std::string> files;  // the specification, then more files (--import)
  std::string model;               // "" = the study's model, else the only one
  std::string study;               // "" = none: the system outside a study
  std::vector<std::string> sets;   // --set NAME=VALUE, as typed
  std::vector<std::string> where;  // --where EXPR: constraints on the candidates of --vary (recommend)
  // The study's bindings are evaluated (run, measure, recommend): --set may
  // not bind what the study varies. Otherwise (simulate, analyze, ...) --set
  // picks one binding of the study.
  bool study_bindings = false;
};

// The --set values by what they bind.
struct Settings {
  std::map<std::string, base::Value> parameters;  // model parameters
  std::map<std::string, base::Value> overrides;   // Component.param
  std::map<std::string, base::Value> study;       // study attributes selectors read (compute, ...)
  // --where constraints, checked as a study's `where` (boolean, names of
  // the model's parameters and lets); owned by the system's program.
  std::vector<const psl::Expr*> constraints;
  // The numeric model parameters, for instantiation.
  taskgraph::ParameterBinding binding() const;
};

class System {
 public:
  System();
  ~System();
  System(const System&) = delete;
  System& operator=(const System&) = delete;

  const psl::Program& program() const;
  const psl::SourceManager& sources() const;
  // Later stages (composition) report located problems here.
  psl::DiagnosticEngine& diagnostics();
  // The diagnostics reported from `first` on, rendered with their source
  // lines, followed by the count line ("2 errors generated.").
  std::string render_diagnostics(std::size_t first) const;

  const psl::ModelDecl& model() const;
  const std::shared_ptr<const taskgraph::StaticTaskGraph>& graph() const;
  // The model's program when its PSL attaches one (`program { }`), else null.
  const std::shared_ptr<const ModelProgram>& attached_program() const;
  // The study of the request, or nullptr.
  const psl::StudyDecl* study() const;
  const Settings& settings() const;
  // The model parameters bound before any binding of a study: the study's
  // `set` values, then --set.
  const taskgraph::ParameterBinding& binding() const;
  // SHA-256 over the texts of every file read, in load order (not their
  // paths: the same files reached by another path find the same stored runs).
  const std::string& spec_hash() const;
  // The front end's warnings, rendered ("" when there are none).
  const std::string& warnings() const;
  // The studies of the specification, for messages.
  std::vector<std::string> study_names() const;
  // The static communication check of the model (docs/taskgraph.md), run
  // once: an evaluation of the task graph that cannot complete asks it, so
  // a send without its receive is reported where it is written (InputError)
  // rather than as a deadlock. It costs tens of milliseconds (isl), so a
  // successful evaluation does not pay it.
  void check_messages();

  struct State;  // load_system fills it

 private:
  friend std::unique_ptr<System> make_system(std::shared_ptr<psl::Frontend>, const SystemRequest&);
  std::unique_ptr<State> state_;
};

// Throws InputError (with the rendered diagnostics) for errors in the files,
// UsageError for an unknown or missing study or model and for a bad --set.
std::unique_ptr<System> load_system(const SystemRequest& request);

// NAME and VALUE of a --set argument; UsageError unless it is NAME=VALUE
// with a (dotted) PSL name and one PSL value.
std::pair<std::string, std::string> split_setting(const std::string& argument);

// The study's value of `name` where it must be a constant (vary lists, set
// values). Throws InputError naming what is not constant.
base::Value constant_value(const psl::Expr& e);

}  // namespace poems::core
