// simulation[direct]: a model evaluated by running its registered program
// under direct execution (a program built with poems-mpicxx) on the
// study's machine, each computation charged through the processor model.
#include <filesystem>

#include <unistd.h>

#include "builtin_evaluators.h"
#include "poems/base/suggest.h"
#include "poems/base/temporary_directory.h"
#include "poems/core/direct_program.h"
#include "poems/core/error.h"
#include "poems/core/programs.h"
#include "poems/core/progress.h"

namespace poems::core {

namespace {

double ns(taskgraph::Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

Outcome direct_execution(const Evaluation& e) {
  const ModelProgram* p = e.program ? e.program.get() : find_program(e.graph->model);
  if (!p || (p->direct.empty() && !p->executable)) {
    const std::vector<std::string> models = models_with_programs(false);
    throw EvaluationError("simulation[direct] runs a model's real program; model " + e.graph->model +
                          " has none (programs: " + (models.empty() ? std::string("none") : base::name_list(models)) +
                          ")");
  }
  if (p->refuses)
    if (std::string why = p->refuses(e); !why.empty()) throw InputError("simulation[direct]: " + why);
  const base::TemporaryDirectory input_directory("poems_direct_input_");
  if (!input_directory.created())
    throw EvaluationError("cannot create a directory for the program's input: " + input_directory.error());
  const ProgramInput input = p->input(e, input_directory.path());
  direct::DirectOptions options;
  options.ranks = input.ranks;
  options.sim = simulation_options(e.machine);
  // The processor model times each computation the program charges (work),
  // as for the other paradigms; the program's code runs for real, untimed.
  // A program that declares no work (PSL: compute = "measured") is timed
  // between MPI calls on this host instead.
  options.compute = p->measured_compute ? direct::ComputeMode::Measured : direct::ComputeMode::Model;
  options.processor = processor::ProcessorSpec{"study", "processor[wg]", {{"Wg", e.ns_per_work}}, {}};
  if (p->ranks_as_threads) options.isolation = direct::Isolation::Threads;
  // The program's process draws the engine's progress itself, as `poems
  // direct` does, when this thread shows progress (a terminal, no --quiet;
  // not a forked or threaded study worker: they have no scope).
  options.progress = static_cast<bool>(current_progress());
  const std::string binary = p->executable ? p->executable(true) : bin_path(p->direct);
  DirectRun run = run_direct_program(binary, input.args, options, ProgramOutput::Capture,
                                     p->timeout_seconds > 0 ? p->timeout_seconds : 3600, input.working_directory);
  if (!run.result) throw EvaluationError("simulation[direct]: " + run.failure);
  const direct::DirectResult& r = *run.result;
  if (!r.completed()) throw EvaluationError("simulation[direct]: " + r.error);

  // The program's own report: its timed part in virtual time (MPI_Wtime),
  // what the models predict.
  ProgramResult report;
  if (p->read_output) {
    try {
      report = p->read_output(run.output);
    } catch (const EvaluationError& x) {  // named as measurement[mpirun] names it
      throw EvaluationError("simulation[direct]: " + (p->measured.empty() ? binary : p->measured) + " on " +
                            std::to_string(input.ranks) + " simulated ranks: " + x.what());
    }
  } else {
    const auto at = run.output.rfind(p->result_prefix);
    if (at == std::string::npos)
      throw EvaluationError("simulation[direct]: " + p->direct + " printed no result line:\n" + run.output);
    const auto end = run.output.find('\n', at);
    report = p->read(
        nlohmann::json::parse(run.output.substr(at + p->result_prefix.size(), end - at - p->result_prefix.size())));
  }
  Outcome out;
  out.method = "direct-execution";
  const double procs = r.sim.ranks ? static_cast<double>(r.sim.ranks) : 1.0;
  out.breakdown = Breakdown::of_ns(report.time_ns, ns(r.sim.total_compute) / procs, ns(r.sim.total_overhead) / procs);
  out.events = r.sim.events;
  out.messages = report.messages;
  out.processes = r.sim.ranks;
  out.extra = report.extra;
  out.extra["program_finish_ns"] = ns(r.sim.max_finish);
  out.extra["host_seconds"] = r.host_seconds;
  out.extra["mpi_calls"] = r.mpi_calls;
  return out;
}

}  // namespace

void register_direct_evaluator() {
  EvaluatorEntry e;
  e.name = "simulation[direct]";
  e.method = [](const Evaluation&, const std::string&) { return std::string("direct-execution"); };
  e.evaluate = direct_execution;
  // The program a PSL model attaches: its sources' identity (a hash of their
  // contents) keys the run, so edited code runs again.
  e.extend_key = [](const Evaluation& evaluation, nlohmann::json& binding) {
    if (evaluation.program) binding["program"] = evaluation.program->direct;
  };
  register_evaluator(std::move(e));
}

}  // namespace poems::core
