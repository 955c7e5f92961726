// Composition for evaluation: the system's model composed by the PSL
// compiler for one paradigm (in its study, with the command line's choices),
// its EvaluationPlan, and the machine its communication reaches.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "poems/base/value.h"
#include "poems/core/evaluation_plan.h"
#include "poems/core/machine.h"
#include "poems/core/system.h"
#include "poems/psl/compiler.h"

namespace poems::core {

// What the command line chooses: components by name (--machine, --processor)
// and --set values that are study attributes or Component.param overrides.
struct Choices {
  std::string machine, processor;
  std::map<std::string, base::Value> study;      // e.g. compute = processor[measured]
  std::map<std::string, base::Value> overrides;  // e.g. Odin.L = 26.5us
};

struct Composition {
  std::string paradigm;
  psl::SystemModel system;
  EvaluationPlan plan;
  // The network the model's communication reaches; nullopt when it reaches
  // none, with the reason (a measurement needs none).
  std::optional<Machine> machine;
  std::string no_machine;
};

// UsageError unless --machine names a hardware[network] component and
// --processor a hardware[processor] one (with the closest spelling).
void check_choices(const System& system, const Choices& choices);

// The compiler's request: the study's (its `on Machine`, its `set` values)
// or the model's alone, the command line's choices over it, `overrides`
// (a binding's `vary Component.param` values) over those. Outside a study
// and unless set, study.compute is processor[wg].
psl::CompileRequest compile_request(const System& system, const std::string& paradigm, const Choices& choices,
                                    const std::map<std::string, base::Value>& overrides = {});

// The paradigm `poems compile` composes for: `requested` (--paradigm), else
// the study's first compare entry, else analytic[LogGP]; by its registered
// name (UsageError("--paradigm") for one not registered).
std::string compile_paradigm(const System& system, const std::string& requested);

// Composes and plans. Throws InputError with the compiler's located diagnostics.
Composition compose(System& system, const std::string& paradigm, const Choices& choices,
                    const std::map<std::string, base::Value>& overrides = {});

}  // namespace poems::core
