// `poems run SPEC --study NAME`: every binding of the study's `vary` clauses,
// evaluated by every paradigm of its `compare`, each composed and planned by
// the compiler; results stored (and reused) in the knowledge base, printed as
// a table, CSV or JSON, and drawn with gnuplot (study_runner.h does the work).
#include <iostream>

#include "cli_common.h"
#include "model_source.h"
#include "poems/measure/mpirun.h"
#include "study_runner.h"

namespace poems::cli {

namespace {

struct RunOptions {
  std::string spec, study, format = "table", plot, method, machine, processor;
  std::vector<std::string> only, imports;
  StoreOptions store;
  MeasureOptions measure;
};

void run(const RunOptions& o, int& result) {
  const auto priority = apply_nice(o.measure.nice);
  LoadedModel loaded;
  if (!load_study_model(o.spec, o.imports, o.study, loaded, result)) return;
  const psl::StudyDecl& st = *loaded.frontend->program().find_study(o.study);
  StudyTable table;
  RunnerOptions options{o.method, o.store, o.measure};
  try {
    const StudyPlan plan = plan_study(loaded, st, o.machine, o.processor, o.only);
    if (!run_plan(options, loaded, plan, table, result)) return;
  } catch (const std::runtime_error& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return;
  }
  result = print_study_table(table, st, o.format, o.plot);
}

}  // namespace

bool load_study_model(const std::string& spec, const std::vector<std::string>& imports, const std::string& study,
                      LoadedModel& loaded, int& result) {
  std::vector<std::string> files{spec};
  files.insert(files.end(), imports.begin(), imports.end());
  // The study names its model: load that one.
  psl::Frontend probe;
  if (probe.load_files(files)) {
    const psl::StudyDecl* st = probe.program().find_study(study);
    if (!st) {
      std::string names;
      for (const psl::Module& m : probe.program().modules)
        for (const psl::StudyDecl& s : m.studies) names += (names.empty() ? "" : ", ") + s.name.name;
      usage_error("--study", "no study named '" + study + "' in " + spec + " (studies: " + names + ")");
    }
    return load_model(files, st->model ? st->model->name : "", loaded, result);
  }
  return load_model(files, "", loaded, result);
}

void add_machine_options(CLI::App* cmd, std::string& machine, std::string& processor,
                         std::vector<std::string>& imports) {
  cmd->add_option("--machine", machine,
                  "hardware[network] component to run on instead of the study's machine (e.g. local)");
  cmd->add_option("--processor", processor, "hardware[processor] component to choose (e.g. local_cpu)");
  cmd->add_option("--import", imports, "More PSL files to load with SPEC, e.g. the local.psl of poems calibrate")
      ->check(CLI::ExistingFile);
}

void add_measure_options(CLI::App* cmd, MeasureOptions& m) {
  cmd->add_option("--repetitions", m.repetitions, "measurement[mpirun]: runs per binding; the fastest counts")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--max-ranks", m.max_ranks,
                  "measurement[mpirun]: largest process count to run (default: this machine's cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--timeout", m.timeout_seconds, "measurement[mpirun]: seconds per run before it is killed")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--nice", m.nice,
                  "Run this command (kernel timings, measured runs) at this nice value, and its session's "
                  "scheduling group (Linux autogroups; restored after); negative values (root) keep other work "
                  "on a shared machine from disturbing the measurements")
      ->check(CLI::Range(-20, 19));
}

std::unique_ptr<measure::PriorityGuard> apply_nice(int nice) {
  auto guard = std::make_unique<measure::PriorityGuard>(nice);
  if (!guard->warning.empty()) std::cerr << "poems: warning: " << guard->warning << '\n';
  return guard;
}

void register_run(CLI::App& app, int& result) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run a study: every binding of its vary clauses with every compared paradigm");
  cmd->add_option("spec", o->spec, "PSL specification")->required()->check(CLI::ExistingFile);
  cmd->add_option("--study", o->study, "The study to run")->required();
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--plot", o->plot, "Draw time and speedup against processes with gnuplot (OUT.png or OUT.svg)");
  cmd->add_option("--only", o->only, "Evaluate only these compare entries, e.g. analytic[LogGP]");
  cmd->add_option("--method", o->method, "analytic[LogGP] method: closed-form or critical-path")
      ->check(CLI::IsMember({"closed-form", "critical-path"}));
  add_machine_options(cmd, o->machine, o->processor, o->imports);
  add_measure_options(cmd, o->measure);
  add_store_options(cmd, o->store);
  cmd->callback([o, &result] {
    if (!o->plot.empty() && !(o->plot.ends_with(".png") || o->plot.ends_with(".svg")))
      usage_error("--plot", "'" + o->plot + "' must end in .png or .svg");
    run(*o, result);
  });
}

}  // namespace poems::cli
