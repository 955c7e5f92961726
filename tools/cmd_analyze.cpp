// `poems analyze`: the analytic evaluator (analytic[LogGP]) on a PSL model or
// a single collective: a closed-form component model where one applies, or
// the critical path of the task graph under LogGOPS costs.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "model_evaluators.h"
#include "model_source.h"
#include "poems/components/collective_models.h"
#include "poems/components/sweep3d_model.h"
#include "poems/loggp/critical_path.h"
#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/explicit_schedule.h"
#include "poems/taskgraph/limits.h"
#include "result_store.h"
#include "trace_options.h"

namespace poems::cli {

namespace {

struct AnalyzeOptions : ModelRequest, CollectiveRequest {
  StoreOptions store;
  std::string method;  // "" = closed form if one applies, else critical path
  std::string format = "table";
  std::string semantics = "matched";
  std::string memory_limit;
  TraceReplayRequest trace;  // --trace ARCHIVE (cmd_trace.cpp)
};

// Why a closed form does not hold under the semantics (empty: it does). The
// Sweep3D form is derived for the matched semantics (under loggopsim,
// arrivals that take the CPU delay the wavefront, by up to 37 % measured);
// the collective forms hold under loggopsim without the rendezvous
// synchronization, except that LogGOPSim charges a 0-byte message o - G.
std::string closed_form_refusal(sim::Semantics semantics, bool sweep3d, const taskgraph::CollectiveCall* call) {
  if (semantics != sim::Semantics::Loggopsim) return {};
  if (sweep3d)
    return "the Sweep3D closed form holds for the matched semantics only (docs/models/sweep3d.md); use "
           "critical-path, or simulate";
  if (call && (call->op == taskgraph::CollectiveOp::Barrier || call->bytes == 0))
    return "under the loggopsim semantics a 0-byte message costs o - G (LogGOPSim's (s-1)G wraps), which the "
           "closed forms do not model; use critical-path";
  return {};
}

double ns(taskgraph::Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

void run(const AnalyzeOptions& o, int& result) {
  if (!o.spec.empty() + !o.collective.empty() + !o.trace.trace.empty() != 1)
    throw CLI::ValidationError("analyze", "give exactly one of SPEC, --collective NAME or --trace ARCHIVE");
  if (!o.trace.trace.empty() && o.semantics != "matched")
    throw CLI::ValidationError("--semantics", "a trace replay takes the matched semantics only, for now");
  if (!o.trace.trace.empty()) {
    if (o.method == "closed-form")
      throw CLI::ValidationError("--method", "a trace has no closed form; use critical-path");
    return analyze_trace(o, o.trace, o.format, o.store, result);
  }
  reject_replay_options_without_trace(o.trace);
  sim::SimulationOptions options = command_line_machine(o);
  options.semantics = *sim::parse_semantics(o.semantics);
  if (!o.memory_limit.empty()) {
    const double bytes =
        quantity("--memory-limit", o.memory_limit, psl::kBytes, "a size in 1..1.8e19 bytes, e.g. 32GiB");
    if (!(bytes >= 1 && bytes < 1.8e19))
      usage_error("--memory-limit", "'" + o.memory_limit + "' is out of range; expected a size in 1..1.8e19 bytes");
    options.memory_limit = static_cast<std::uint64_t>(bytes);
  }
  // One limit for the whole command: this option or the global `poems --memory-limit`
  // (which the PSL instantiation reads, docs/limits.md).
  auto& instantiation_limit = taskgraph::default_instantiation_limits().memory_limit_bytes;
  if (options.memory_limit != 0)
    instantiation_limit = options.memory_limit;
  else
    options.memory_limit = instantiation_limit;
  if (options.semantics == sim::Semantics::Loggopsim && o.handshake)
    throw CLI::ValidationError("--rendezvous-handshake",
                               "is a rule of the matched semantics; LogGOPSim's rendezvous has no handshake");
  // The rendezvous synchronization the closed forms charge: none under loggopsim.
  const taskgraph::Picoseconds sync = options.semantics == sim::Semantics::Loggopsim ? 0
                                      : o.handshake ? 2 * (options.params.L + options.params.o)
                                                    : options.params.L;

  nlohmann::json out;
  EvaluationKey key;
  key.evaluator = "analytic[LogGP]";
  std::unique_ptr<PslSource> model;
  std::unique_ptr<taskgraph::ScheduleSource> collective_schedule;
  std::optional<taskgraph::Picoseconds> collective_form;
  std::string method = o.method;
  if (!o.spec.empty()) {
    model = psl_source(o, options, result);
    if (!model) return;
    const bool form = has_closed_form(model->loaded.graph->model);
    const std::string refusal = closed_form_refusal(options.semantics, form, nullptr);
    if (method.empty()) method = form && refusal.empty() ? "closed-form" : "critical-path";
    if (method == "closed-form" && !form)
      throw CLI::ValidationError("--method", "model " + model->loaded.graph->model +
                                                 " has no closed form (closed forms: Sweep3D); use critical-path");
    if (method == "closed-form" && !refusal.empty()) throw CLI::ValidationError("--method", refusal);
    nlohmann::json params = nlohmann::json::object();
    for (std::size_t i = 0; i < model->loaded.graph->params.size(); ++i)
      params[model->loaded.graph->params[i]] = model->schedule->model_values()[i];
    key.model = model->loaded.graph->model;
    key.spec_hash = specification_hash(model->loaded.frontend->sources());
    key.binding = {{"parameters", params}, {"wg_ns", model->wg_ns}};
  } else {
    const taskgraph::CollectiveCall call = collective_call(o);
    const std::string refusal = closed_form_refusal(options.semantics, false, &call);
    if (refusal.empty()) collective_form = components::collective_time(call, options.params, sync);
    if (method.empty()) method = collective_form ? "closed-form" : "critical-path";
    if (method == "closed-form" && !refusal.empty()) throw CLI::ValidationError("--method", refusal);
    if (method == "closed-form" && !collective_form)
      throw CLI::ValidationError("--method", std::string("no closed form of ") + o.collective + "/" +
                                                 taskgraph::collective_algorithm_name(call.algorithm) +
                                                 " holds for these parameters (see docs/models/collectives.md); use "
                                                 "critical-path");
    collective_schedule = std::make_unique<taskgraph::CollectiveSchedule>(call);
    key.model = "collective:" + o.collective;
    key.binding = {{"collective",
                    {{"operation", o.collective},
                     {"algorithm", taskgraph::collective_algorithm_name(call.algorithm)},
                     {"procs", call.procs},
                     {"bytes", call.bytes}}}};
  }
  const sim::LogGOPS& p = options.params;
  key.binding["machine"] = {{"L_ps", p.L},
                            {"o_ps", p.o},
                            {"g_ps", p.g},
                            {"G_fs_per_byte", p.G},
                            {"O_fs_per_byte", p.O},
                            {"S_bytes", p.S},
                            {"rendezvous_handshake", o.handshake}};
  key.binding["method"] = method;
  // Only when not the matched semantics, so earlier runs' keys still match.
  if (options.semantics != sim::Semantics::Matched) key.binding["semantics"] = sim::semantics_name(options.semantics);

  StoredEvaluation stored(o.store, key);
  loggp::AnalyticResult r;
  const auto start = std::chrono::steady_clock::now();
  try {
    if (method == "closed-form" && model) {
      components::Sweep3DMachine m{p, o.handshake, model->wg_ns};
      components::Sweep3DPrediction s =
          components::predict_sweep3d(sweep3d_config(*model->loaded.graph, model->schedule->model_values()), m);
      r = loggp::breakdown(s.time, s.compute, s.comm);
      out["iteration_ns"] = ns(s.iteration);
      out["allreduce_ns"] = ns(s.allreduce);
      out["messages"] = s.messages;
      out["message_i_bytes"] = s.message_i_bytes;
      out["message_j_bytes"] = s.message_j_bytes;
    } else if (method == "closed-form") {
      r = loggp::breakdown(*collective_form, 0, 0);
    } else {
      taskgraph::ScheduleSource& source =
          model ? static_cast<taskgraph::ScheduleSource&>(*model->schedule) : *collective_schedule;
      r = loggp::critical_path(source, options);
      out["operations"] = r.operations;
      out["messages"] = r.messages;
      out["last_rank"] = r.last_rank;
    }
  } catch (const sim::SimulationLimitError& e) {  // beyond the clock or the memory limit
    std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitInputError;
    return;
  } catch (const components::Sweep3DParameterError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitInputError;
    return;
  } catch (const taskgraph::InstantiationError& e) {  // a bad size, work or loop bound: the input's fault
    std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitInputError;
    return;
  } catch (const std::exception& e) {  // sim::SimulationError, a missing model parameter
    std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitEvaluation;
    return;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out["evaluator"] = "analytic[LogGP]";
  out["method"] = method;
  out["semantics"] = sim::semantics_name(options.semantics);
  out["model"] = key.model;
  out["time_ns"] = ns(r.time);
  out["compute_ns"] = ns(r.compute);
  out["comm_ns"] = ns(r.comm);
  out["sync_ns"] = ns(r.sync);
  out["wall_seconds"] = wall;
  if (o.format == "json") {
    std::cout << out.dump(2) << '\n';
  } else {
    if (model) std::cout << model->description << '\n';
    std::printf("analytic[LogGP] %s (%s semantics): time %.3f ns\n", method.c_str(),
                sim::semantics_name(options.semantics), ns(r.time));
    std::printf("  compute %.3f ns, comm %.3f ns, sync %.3f ns (per-process means; sync is the rest)\n", ns(r.compute),
                ns(r.comm), ns(r.sync));
    std::printf("  evaluated in %.6f s\n", wall);
  }
  db::Result stored_result;
  stored_result.time_ns = ns(r.time);
  stored_result.compute_ns = ns(r.compute);
  stored_result.comm_ns = ns(r.comm);
  stored_result.sync_ns = ns(r.sync);
  stored_result.extra = out;
  result = stored.finish(stored_result) ? kExitOk : kExitEvaluation;
}

}  // namespace

void register_analyze(CLI::App& app, int& result) {
  auto o = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Analytic evaluation (LogGP): a closed-form model, or the critical path of the task graph");
  add_model_options(cmd, *o, "analyze");
  cmd->add_option("--method", o->method, "closed-form or critical-path (default: closed-form where one applies)")
      ->check(CLI::IsMember({"closed-form", "critical-path"}));
  add_collective_options(cmd, *o, "Analyze");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--semantics", o->semantics,
                  "Message progress the critical path follows: matched or loggopsim (docs/simulator.md)")
      ->check(CLI::IsMember({"matched", "loggopsim"}))
      ->capture_default_str();
  cmd->add_option("--memory-limit", o->memory_limit,
                  "Memory the critical path may take (bytes, e.g. 32GiB; default: what the machine has available)");
  add_store_options(cmd, o->store);
  add_trace_replay_options(cmd, o->trace, true);
  cmd->callback([o, cmd, &result] {
    note_explicit_params(cmd, *o);
    run(*o, result);
  });
}

}  // namespace poems::cli
