// Composition for the CLI: the CompileRequest of a command line or a study
// entry, the SystemModel and the EvaluationPlan of a loaded model, with new
// diagnostics printed (shared by `poems compile` and `poems run`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loaded_model.h"
#include "poems/components/evaluation_plan.h"
#include "poems/psl/compiler.h"

namespace poems::cli {

struct ComposedSystem {
  psl::SystemModel system;
  components::EvaluationPlan plan;
};

// Study attributes and overrides from `--set` values that are not model
// parameters: `compute=processor[wg]` (a reference), `Odin.L=26.5us`.
void add_command_line_settings(const psl::Program& program, const std::string& model,
                               const std::vector<std::string>& sets, psl::CompileRequest& request);

// The defaults of a composition outside a study: study.paradigm is
// analytic[LogGP] and study.compute processor[wg] unless given.
void apply_default_study(psl::CompileRequest& request);

// Composes and plans; prints the diagnostics it adds to stderr. Returns
// nullopt on failure (exit code 1 in `result`).
std::optional<ComposedSystem> compose(LoadedModel& loaded, const psl::CompileRequest& request, int& result);

// A PSL value from command-line text: `processor[wg]` is a reference, a
// quoted text a string, `true`/`false` booleans, anything else a quantity.
psl::Value command_line_value(const std::string& option, const std::string& text);

}  // namespace poems::cli
