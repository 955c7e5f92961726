// `poems measure SPEC --study NAME` / `poems measure SPEC --set ...`: runs the
// real program of the model under mpirun (measurement[mpirun],
// measured_programs.h) for the bindings that fit this machine, stores the
// measured times in the knowledge base beside the predictions, and prints
// them next to the predictions of the compared paradigms.
#include <stdlib.h>

#include <iostream>

#include "cli_common.h"
#include "measured_programs.h"
#include "model_source.h"
#include "poems/measure/mpirun.h"
#include "study_runner.h"
#include "system_compile.h"

namespace poems::cli {

namespace {

struct MeasureCommand {
  std::string spec, study, format = "table", plot, machine, processor, model;
  std::vector<std::string> compare, imports, sets;
  StoreOptions store;
  MeasureOptions measure;
};

// "analytic" and "simulation" name the built-in paradigms.
std::string paradigm_name(const std::string& p) {
  if (p == "analytic") return "analytic[LogGP]";
  if (p == "simulation") return "simulation[MPI-Sim]";
  return p;
}

// Other work on the machine slows a measurement down: say so.
void warn_if_busy() {
  double load[1];
  if (::getloadavg(load, 1) == 1 && load[0] > 0.5)
    std::cerr << "poems: warning: the 1-minute load average is " << load[0] << " on " << measure::host_cores()
              << " cores: other processes compete with the measured program\n";
}

// Drops the bindings that do not fit this machine, saying which and why.
void keep_measurable(const LoadedModel& loaded, const MeasureOptions& options, StudyPlan& plan) {
  std::vector<StudyBinding> kept;
  std::size_t dropped = 0;
  std::string example;
  for (const StudyBinding& b : plan.bindings) {
    taskgraph::ParameterBinding params = plan.fixed;
    for (const auto& [k, v] : b)
      if (k.find('.') == std::string::npos) params[k] = v.number;
    std::string why;
    try {
      why = measurement_obstacle(*loaded.graph, taskgraph::evaluate_model_values(*loaded.graph, params), options);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (why.empty()) {
      kept.push_back(b);
    } else {
      ++dropped;
      if (example.empty()) example = binding_text(b) + ": " + why;
    }
  }
  if (dropped)
    std::cerr << "measuring " << kept.size() << " of " << plan.bindings.size() << " bindings; " << dropped
              << " do not fit this machine (e.g. " << example << ")\n";
  plan.bindings = std::move(kept);
}

void measure_study(const MeasureCommand& o, int& result) {
  const auto priority = apply_nice(o.measure.nice);
  LoadedModel loaded;
  if (!load_study_model(o.spec, o.imports, o.study, loaded, result)) return;
  const psl::StudyDecl& st = *loaded.frontend->program().find_study(o.study);
  std::vector<std::string> paradigms{kMeasurementEvaluator};
  if (o.compare.empty()) {
    for (const psl::QualifiedRef& p : st.compare)
      if (!is_measurement(p.str())) paradigms.push_back(p.str());
  } else {
    for (const std::string& p : o.compare)
      if (p != "none") paradigms.push_back(paradigm_name(p));
  }
  StudyTable table;
  try {
    StudyPlan plan = plan_study(loaded, st, o.machine, o.processor, {}, paradigms);
    keep_measurable(loaded, o.measure, plan);
    if (plan.bindings.empty()) {
      std::cerr << "poems: error: no binding of study " << o.study << " fits this machine (at most "
                << (o.measure.max_ranks ? o.measure.max_ranks : measure::host_cores())
                << " processes; see --max-ranks)\n";
      result = kExitInputError;
      return;
    }
    warn_if_busy();
    if (!run_plan(RunnerOptions{"", o.store, o.measure}, loaded, plan, table, result)) return;
  } catch (const std::runtime_error& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return;
  }
  result = print_study_table(table, st, o.format, o.plot);
}

void measure_binding(const MeasureCommand& o, int& result) {
  const auto priority = apply_nice(o.measure.nice);
  std::vector<std::string> files{o.spec};
  files.insert(files.end(), o.imports.begin(), o.imports.end());
  LoadedModel loaded;
  if (!load_model(files, o.model, loaded, result)) return;
  const psl::Program& program = loaded.frontend->program();
  StudyPlan plan;
  plan.paradigms = {kMeasurementEvaluator};
  for (const std::string& p : o.compare)
    if (p != "none") plan.paradigms.push_back(paradigm_name(p));
  StudyBinding binding;
  for (const auto& [name, value] : parse_bindings(o.sets)) {
    if (std::find(loaded.graph->params.begin(), loaded.graph->params.end(), name) == loaded.graph->params.end())
      continue;  // study settings and Component.param overrides go to the composition
    binding.emplace_back(name, psl::Value::of_number(value));
    plan.targets.push_back(name);
  }
  plan.bindings = {binding};
  const std::string model = loaded.graph->model;
  plan.request = [&program, &o, model](const std::string& paradigm) {
    psl::CompileRequest r;
    r.model = model;
    if (!o.machine.empty()) r.chosen.push_back(o.machine);
    if (!o.processor.empty()) r.chosen.push_back(o.processor);
    add_command_line_settings(program, model, o.sets, r);
    r.study["paradigm"] = psl::Value::of_string(paradigm, psl::Value::Kind::Ref);
    apply_default_study(r);
    return r;
  };
  StudyTable table;
  warn_if_busy();
  try {
    if (!run_plan(RunnerOptions{"", o.store, o.measure}, loaded, plan, table, result)) return;
  } catch (const std::runtime_error& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return;
  }
  psl::StudyDecl none;
  if (o.format != "json") {
    result = print_study_table(table, none, o.format, o.plot);
    return;
  }
  finish_table(table, none);
  const StudyRow& row = table.rows.front();
  const StudyCell& measured = row.cells.at(kMeasurementEvaluator);
  nlohmann::json out = {{"model", model}, {"processes", row.processes}};
  nlohmann::json b = nlohmann::json::object();
  for (const auto& [k, v] : binding) b[k] = v.number;
  out["binding"] = b;
  if (!measured.ok()) {
    out["measured_ns"] = nullptr;
    out[measured.skipped ? "skipped" : "error"] = measured.error;
  } else {
    out["measured_ns"] = measured.time_ns;
    out["measurement"] = {{"compute_ns", measured.compute_ns},
                          {"comm_ns", measured.comm_ns},
                          {"sync_ns", measured.sync_ns},
                          {"stored", measured.reused},
                          {"extra", measured.extra}};
  }
  nlohmann::json predictions = nlohmann::json::object();
  for (std::size_t k = 1; k < plan.paradigms.size(); ++k) {
    const StudyCell& c = row.cells.at(plan.paradigms[k]);
    predictions[plan.paradigms[k]] = c.ok() ? nlohmann::json(c.time_ns) : nlohmann::json(c.error);
    if (k == 1) {
      out["paradigm"] = plan.paradigms[k];
      out["predicted_ns"] = c.ok() ? nlohmann::json(c.time_ns) : nlohmann::json();
      if (c.ok() && measured.ok() && measured.time_ns > 0)
        out["difference_pct"] = (c.time_ns - measured.time_ns) / measured.time_ns * 100;
    }
  }
  if (plan.paradigms.size() > 1) out["predictions"] = predictions;
  std::cout << out.dump(2) << '\n';
  result = measured.skipped ? kExitInputError : table.failures ? kExitEvaluation : kExitOk;
}

}  // namespace

void register_measure(CLI::App& app, int& result) {
  auto o = std::make_shared<MeasureCommand>();
  CLI::App* cmd = app.add_subcommand(
      "measure", "Run the real program of a model under mpirun (measurement[mpirun]) beside the predictions");
  cmd->add_option("spec", o->spec, "PSL specification")->required()->check(CLI::ExistingFile);
  cmd->add_option("--study", o->study, "Measure the bindings of this study that fit this machine");
  cmd->add_option("--set", o->sets, "Without --study: bind a parameter, name=value (one binding)");
  cmd->add_option("--model", o->model, "Without --study: the model (default: the only one)");
  cmd->add_option("--compare", o->compare,
                  "Paradigms to predict beside the measurement: analytic, simulation, or full names "
                  "(default with --study: the study's compare entries; none: measure only)");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--plot", o->plot, "Draw time and speedup against processes (OUT.png or OUT.svg)");
  add_machine_options(cmd, o->machine, o->processor, o->imports);
  add_measure_options(cmd, o->measure);
  add_store_options(cmd, o->store);
  cmd->callback([o, &result] {
    if (!o->plot.empty() && !(o->plot.ends_with(".png") || o->plot.ends_with(".svg")))
      usage_error("--plot", "'" + o->plot + "' must end in .png or .svg");
    if (!o->study.empty() && !o->sets.empty())
      usage_error("--set", "give either --study (its bindings) or --set (one binding), not both");
    if (o->study.empty())
      measure_binding(*o, result);
    else
      measure_study(*o, result);
  });
}

}  // namespace poems::cli
