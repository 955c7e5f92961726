// The PSL compiler stage (POEMS paper 3.1-3.3): composes a model's components
// by matching every *requests* interface (selector, transaction, protocol)
// against the *accepts* interfaces in scope, into a SystemModel, the
// hierarchical dependence graph of the application, runtime and hardware
// domains with the model's task-graph nodes linked to their components.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/base/diagnostics.h"
#include "poems/psl/ast.h"
#include "poems/psl/value.h"

namespace poems::psl {

// What a composition is for.
struct CompileRequest {
  std::string model;  // "" = the only model
  // Components chosen by name (the study's `on Machine`, --machine,
  // --processor): each excludes the other components of its exact domain.
  std::vector<std::string> chosen;
  // Components that win when a request matches several, one of them among
  // these (the processors declared beside a chosen machine: `--machine local`
  // brings `local_cpu`, which poems calibrate writes in the same file).
  std::vector<std::string> preferred;
  // `study.X` attributes that selectors read (compute, paradigm, ...).
  std::map<std::string, Value> study;
  // `Component.param` values that replace the declared ones (a study's
  // `vary Odin.L in [...]`); same unit as the declaration.
  std::map<std::string, Value> overrides;
};

inline constexpr std::size_t kNoInstance = static_cast<std::size_t>(-1);

// One accepts interface of an instance, its profile evaluated.
struct AcceptsInstance {
  const Interface* decl = nullptr;
  std::string label;  // its name, or "accepts" / "accepts#2"
  std::map<std::string, Value> profile;
};

// A component model: a component with its attribute values bound.
struct ComponentInstance {
  const ComponentDecl* decl = nullptr;
  std::string name;
  std::string domain;                    // "hardware[network]"
  std::string domain_head;               // "hardware"
  std::map<std::string, Value> params;   // bound parameters (overrides applied)
  std::vector<AcceptsInstance> accepts;  // in declaration order
  std::string implementation;            // "simulation[MPI-Sim]" or ""
};

// How one parameter of the accepted transaction is supplied.
struct ArgumentBinding {
  std::string parameter;   // accepted name
  std::string type;        // accepted type
  std::string expression;  // PSL text over the requester's parameters
  enum class Source { Forwarded, Coerced, Library } source = Source::Forwarded;
};

// A request bound to the accepts interface that matched it.
struct InterfaceBinding {
  std::size_t from = kNoInstance;  // requesting instance
  std::string request;             // its name ("" for an unnamed one)
  SourceLocation location;         // the requests block
  std::size_t to = kNoInstance;    // accepting instance
  std::size_t accepts = 0;         // index into its accepts
  std::string protocol;            // dataflow | call_return
  std::string transaction;         // name
  std::vector<ArgumentBinding> arguments;
};

// A node of the model's task graph and the application component it is bound
// to (kNoInstance: no component accepts it; evaluators use their defaults).
struct TaskNodeLink {
  std::string kind;   // task, send, recv, isend, irecv, or a collective name
  std::string label;  // task name or operation
  SourceLocation location;
  std::size_t component = kNoInstance;
};

struct SystemModel {
  std::string model;
  std::string taskgraph;
  std::map<std::string, Value> study;
  std::vector<ComponentInstance> instances;
  std::vector<InterfaceBinding> bindings;
  std::vector<TaskNodeLink> task_nodes;

  std::size_t find(std::string_view component) const;  // kNoInstance if absent
  // The binding of `instance`'s request `request` (by name; "" = the only
  // call_return request), or nullptr.
  const InterfaceBinding* request_of(std::size_t instance, std::string_view request = "") const;
  // Follows call_return bindings from `instance` down to the first instance in
  // `domain_head` (e.g. "hardware"); the chain of instances walked, or empty.
  std::vector<std::size_t> call_chain(std::size_t instance, std::string_view domain_head) const;
};

// Composes `request.model`. Every problem is reported, located, in `diags`;
// returns nullopt when any error was found.
std::optional<SystemModel> compile_system(const Program& program, const CompileRequest& request,
                                          DiagnosticEngine& diags);

// Composes from one component instead of a model (request.model is not
// read): `root` is instance 0, and its requests, and theirs, are matched as
// compile_system matches a model's; a runtime's requests checked against a
// chosen machine (`poems direct --machine M --runtime R`). No task nodes.
std::optional<SystemModel> compile_component(const Program& program, const ComponentDecl& root,
                                             const CompileRequest& request, DiagnosticEngine& diags);

// The study attributes and chosen components of `study` for one entry of its
// `compare` (paradigm), plus the study's `set` values that are not model
// parameters (e.g. compute = processor[wg]). Model parameters are not included.
CompileRequest study_request(const Program& program, const StudyDecl& study, const std::string& paradigm);

// The accepted transaction's arguments of `binding` for concrete values of the
// requester's parameters (e.g. a task's cells and angles give work = cells *
// angles). Throws std::runtime_error naming an argument that cannot be computed.
std::map<std::string, Value> bind_arguments(const SystemModel& system, const InterfaceBinding& binding,
                                            const std::map<std::string, Value>& requester_values);

// One component with its parameters and profiles evaluated, `Component.param`
// overrides applied (as a composition instantiates it); nullopt with the
// problems reported in `diags` when a value cannot be evaluated or an
// override has the wrong unit.
std::optional<ComponentInstance> instantiate_component(const Program& program, const ComponentDecl& component,
                                                       const std::map<std::string, Value>& overrides,
                                                       DiagnosticEngine& diags);

nlohmann::json to_json(const SystemModel& system, const SourceManager& sources);
// Graphviz drawing in the spirit of the POEMS paper's Fig. 3: one cluster per
// domain, the task graph inside the application, bindings as edges.
std::string to_dot(const SystemModel& system);

}  // namespace poems::psl
