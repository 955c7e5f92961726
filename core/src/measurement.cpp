// measurement[mpirun] (docs/sweep3d.md): a model binding measured by running
// the model's registered program under mpirun on this machine.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "builtin_evaluators.h"
#include "poems/base/last_lines.h"
#include "poems/base/suggest.h"
#include "poems/base/temporary_directory.h"
#include "poems/core/error.h"
#include "poems/core/programs.h"
#include "poems/measure/mpirun.h"

namespace poems::core {

namespace {

int max_ranks(const MeasureOptions& o) { return o.max_ranks > 0 ? o.max_ranks : measure::host_cores(); }

// A fresh directory for one run's input, removed on scope exit.
base::TemporaryDirectory input_directory() {
  base::TemporaryDirectory dir("poems_measure_");
  if (!dir.created())
    throw EvaluationError("cannot create a temporary directory for the program's input: " + dir.error());
  return dir;
}

// The MPI library's version line, asked once per process.
const std::string& mpi_library() {
  static const std::string version = measure::mpi_version();
  return version;
}

const ModelProgram* measured_program(const Evaluation& e) {
  const ModelProgram* p = e.program ? e.program.get() : find_program(e.graph->model);
  return p && !p->measured.empty() ? p : nullptr;
}

// What stops a measurement before its input is written: no program, or the program refuses.
std::string program_obstacle(const Evaluation& e) {
  const ModelProgram* p = measured_program(e);
  if (!p) {
    const std::vector<std::string> models = models_with_programs(true);
    return "no program measures model " + e.graph->model +
           " (measured programs: " + (models.empty() ? std::string("none") : base::name_list(models)) + ")";
  }
  if (p->refuses)
    if (std::string why = p->refuses(e); !why.empty()) return why;
  return "";
}

std::string ranks_obstacle(const Evaluation& e, std::uint32_t ranks) {
  if (static_cast<long long>(ranks) > max_ranks(e.measure))
    return std::to_string(ranks) + " processes exceed the " + std::to_string(max_ranks(e.measure)) +
           " this machine runs (--max-ranks)";
  return "";
}

// A study asks before it runs the cell; the rank count is the input's.
std::string obstacle(const Evaluation& e) {
  if (std::string why = program_obstacle(e); !why.empty()) return why;
  const base::TemporaryDirectory dir = input_directory();
  return ranks_obstacle(e, measured_program(e)->input(e, dir.path()).ranks);
}

nlohmann::json key(const Evaluation& e) {
  const ModelProgram* p = measured_program(e);
  return {{"parameters", e.parameters_key()},     {"program", p ? p->measured : ""}, {"launcher", "mpirun"},
          {"host", measure::host_name()},         {"cores", measure::host_cores()},  {"mpi", mpi_library()},
          {"repetitions", e.measure.repetitions}, {"nice", e.measure.nice}};
}

// Runs the program `repetitions` times and reports the fastest run.
Outcome measure_model(const Evaluation& e) {
  if (std::string why = program_obstacle(e); !why.empty()) throw EvaluationError("not measured: " + why);
  const ModelProgram& p = *measured_program(e);
  const base::TemporaryDirectory dir = input_directory();
  const ProgramInput input = p.input(e, dir.path());
  if (std::string why = ranks_obstacle(e, input.ranks); !why.empty()) throw EvaluationError("not measured: " + why);
  // Built (an attached program's sources, with mpicc) only for a run that will happen.
  const std::string program = p.executable ? p.executable(false) : sibling_program(p.measured);
  if (program.empty())
    throw EvaluationError("the program " + p.measured + " of model " + e.graph->model +
                          " is not beside the poems executable (build it: cmake --build build --target " + p.measured +
                          ")");
  measure::Launch launch;
  launch.ranks = static_cast<int>(input.ranks);
  launch.program = program;
  launch.args = input.args;
  launch.timeout_seconds = p.timeout_seconds > 0 ? p.timeout_seconds : e.measure.timeout_seconds;
  launch.working_directory = input.working_directory;
  double load = -1;
  if (double l[1]; ::getloadavg(l, 1) == 1) load = l[0];
  std::vector<nlohmann::json> runs;
  std::vector<ProgramResult> results;
  for (int rep = 0; rep < std::max(1, e.measure.repetitions); ++rep) {
    const measure::ProcessResult r = measure::run_mpi(launch);
    if (p.read_output) {
      if (!r.ok())
        throw EvaluationError(p.measured + " under mpirun -np " + std::to_string(launch.ranks) + ": " +
                              r.status_text() + ": " + base::last_lines(r.err.empty() ? r.out : r.err, 12));
      try {
        results.push_back(p.read_output(r.out));
      } catch (const EvaluationError& x) {
        throw EvaluationError(p.measured + " under mpirun -np " + std::to_string(launch.ranks) + ": " + x.what());
      }
      runs.push_back({{"time_ns", results.back().time_ns}});
      continue;
    }
    const std::string line = measure::result_line(r.out, p.result_prefix);
    if (!r.ok() || line.empty())
      throw EvaluationError(p.measured + " under mpirun -np " + std::to_string(launch.ranks) + ": " + r.status_text() +
                            (line.empty() ? ", no result line" : "") + ": " +
                            base::last_lines(r.err.empty() ? r.out : r.err, 12));
    runs.push_back(nlohmann::json::parse(line));
    results.push_back(p.read(runs.back()));
  }
  std::vector<double> times;
  for (const ProgramResult& r : results) times.push_back(r.time_ns);
  const std::size_t best = static_cast<std::size_t>(std::min_element(times.begin(), times.end()) - times.begin());
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const ProgramResult& b = results[best];
  Outcome out;
  out.method = "mpirun";
  out.breakdown = Breakdown::of_ns(b.time_ns, b.compute_ns, b.comm_ns);
  out.messages = b.messages;
  out.processes = input.ranks;
  out.extra = {{"times_ns", times},       {"median_ns", sorted[sorted.size() / 2]},
               {"max_ns", sorted.back()}, {"oversubscribed", launch.ranks > measure::host_cores()},
               {"load_average", load},  // 1-minute load before the runs: other work disturbs a measurement
               {"best_run", runs[best]}};
  for (const auto& [k, v] : input.record.items()) out.extra[k] = v;
  return out;
}

}  // namespace

void register_measurement_evaluator() {
  EvaluatorEntry e;
  e.name = "measurement[mpirun]";
  e.method = [](const Evaluation&, const std::string&) { return std::string("mpirun"); };
  e.evaluate = measure_model;
  e.modelled = false;
  e.obstacle = obstacle;
  e.key = key;
  register_evaluator(std::move(e));
}

}  // namespace poems::core
