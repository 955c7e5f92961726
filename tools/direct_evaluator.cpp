#include "direct_evaluator.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "direct_program.h"
#include "measured_programs.h"  // sweep3d_deck
#include "poems/sweep3d/app/deck.h"
#include "poems/sweep3d/app/report.h"

namespace poems::cli {

namespace {

double ns(taskgraph::Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

}  // namespace

EvaluationOutcome direct_execution(const ModelEvaluation& e) {
  if (!has_closed_form(e.graph->model))  // the models with a program: Sweep3D
    throw std::runtime_error("simulation[direct] runs a model's real program; model " + e.graph->model +
                             " has none (programs: Sweep3D -> sweep3d_direct)");
  const std::vector<double> values = taskgraph::evaluate_model_values(*e.graph, e.binding);
  const components::Sweep3DConfig config = sweep3d_config(*e.graph, values);
  const sweep3d::app::Deck deck = sweep3d_deck(config);

  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path deck_file =
      fs::temp_directory_path() / ("poems_direct_deck_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  {
    std::ofstream out(deck_file);
    out << sweep3d::app::deck_text(deck);
  }
  direct::DirectOptions options;
  options.ranks = static_cast<std::uint32_t>(config.npe_i * config.npe_j);
  options.sim = e.options;
  // The study's processor model times each block (work = cells x angles), as
  // for the other paradigms; the kernel runs for real (real data), untimed.
  options.compute = direct::ComputeMode::Model;
  options.processor = processor::ProcessorSpec{"study", "processor[wg]", {{"Wg", e.wg_ns}}, {}};
  // The project's own Sweep3D keeps no per-rank state in globals: its ranks
  // may be threads, which switch in nanoseconds instead of microseconds.
  options.isolation = direct::Isolation::Threads;
  DirectRun run =
      run_direct_program(bin_path("sweep3d_direct"), {deck_file.string()}, options, ProgramOutput::Capture, 3600);
  std::error_code ec;
  fs::remove(deck_file, ec);
  if (!run.result) throw std::runtime_error("simulation[direct]: " + run.failure);
  const direct::DirectResult& r = *run.result;
  if (!r.completed()) throw sim::SimulationError("simulation[direct]: " + r.error);

  // The program's own report: its iteration loop's virtual time (MPI_Wtime),
  // what the models predict (the deck broadcast and the final reductions
  // around the loop are not part of it).
  const std::string prefix = sweep3d::app::kResultPrefix;
  const auto at = run.output.rfind(prefix);
  if (at == std::string::npos)
    throw std::runtime_error("simulation[direct]: sweep3d_direct printed no result line:\n" + run.output);
  const auto end = run.output.find('\n', at);
  const nlohmann::json report = nlohmann::json::parse(run.output.substr(at + prefix.size(), end - at - prefix.size()));

  EvaluationOutcome out;
  out.method = "direct-execution";
  const double p = r.sim.ranks ? static_cast<double>(r.sim.ranks) : 1.0;
  out.time_ns = report.at("time_ns").get<double>();
  out.compute_ns = ns(r.sim.total_compute) / p;
  out.comm_ns = ns(r.sim.total_overhead) / p;
  out.sync_ns = std::max(0.0, out.time_ns - out.compute_ns - out.comm_ns);
  out.events = r.sim.events;
  out.messages = report.at("messages").get<std::uint64_t>();
  out.processes = r.sim.ranks;
  out.extra["program_finish_ns"] = ns(r.sim.max_finish);
  out.extra["host_seconds"] = r.host_seconds;
  out.extra["mpi_calls"] = r.mpi_calls;
  out.extra["flux_sum"] = report.value("flux_sum", 0.0);
  return out;
}

}  // namespace poems::cli
