// Running a plan of bindings × paradigms (shared by `poems run` and
// `poems measure`): each paradigm composed and planned by the compiler, each
// evaluation stored (and reused) in the knowledge base under its run key,
// the results gathered into a StudyTable.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "loaded_model.h"
#include "model_evaluators.h"
#include "poems/measure/mpirun.h"
#include "poems/psl/compiler.h"
#include "result_store.h"
#include "study_output.h"

namespace poems::cli {

struct StudyPlan {
  std::string study;                   // name the runs are linked to; "" = none (a command-line binding)
  std::vector<std::string> paradigms;  // compare order
  std::vector<StudyBinding> bindings;
  taskgraph::ParameterBinding fixed;  // model parameters set once
  std::vector<std::string> targets;   // varied names, for the table
  // The composition request of one paradigm (machine, study settings, overrides).
  std::function<psl::CompileRequest(const std::string& paradigm)> request;
};

struct RunnerOptions {
  std::string method;  // analytic[LogGP] method; "" = default
  StoreOptions store;
  MeasureOptions measure;
};

// A study value that must be a constant (vary lists, set values).
psl::Value constant_value(const psl::Expr& e);
// The bindings of a study's vary clauses: the cartesian product, first clause
// outermost. Throws std::runtime_error beyond 10^6 bindings.
std::vector<StudyBinding> expand_study(const psl::StudyDecl& study);
// The model parameters a study sets once.
taskgraph::ParameterBinding study_parameters(const LoadedModel& loaded, const psl::StudyDecl& study);
std::string binding_text(const StudyBinding& binding);

// The plan of a declared study. `machine` and `processor` (if not empty)
// replace the study's `on Machine` and add a processor choice; `only`
// restricts its compare entries; `paradigms` (if not empty) replaces them.
// Throws CLI::ValidationError for an unknown paradigm in `only`.
StudyPlan plan_study(const LoadedModel& loaded, const psl::StudyDecl& study, const std::string& machine,
                     const std::string& processor, const std::vector<std::string>& only,
                     const std::vector<std::string>& paradigms = {});

// Loads SPEC (and `imports`) with the model the study names; a missing study
// is a usage error listing the studies. False (exit code in `result`) on
// errors in the files.
bool load_study_model(const std::string& spec, const std::vector<std::string>& imports, const std::string& study,
                      LoadedModel& loaded, int& result);

// Options shared by `poems run` and `poems measure`: --machine, --processor,
// --import; --repetitions, --max-ranks, --timeout.
void add_machine_options(CLI::App* cmd, std::string& machine, std::string& processor,
                         std::vector<std::string>& imports);
void add_measure_options(CLI::App* cmd, MeasureOptions& measure);
// The command's priority for --nice (restored when the guard goes); warns
// when it cannot be set.
std::unique_ptr<measure::PriorityGuard> apply_nice(int nice);

// Evaluates every binding with every paradigm of the plan, printing
// "[k/n] binding paradigm: ..." to stderr. A measurement that does not fit
// this machine is a skipped cell, not a failure. Returns false (exit code in
// `result`) when a paradigm has no evaluator or composition fails.
bool run_plan(const RunnerOptions& options, LoadedModel& loaded, const StudyPlan& plan, StudyTable& table, int& result);

}  // namespace poems::cli
