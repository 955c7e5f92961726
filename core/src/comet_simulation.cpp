// The simulation column of `poems comet`: examples/comet/comet.psl simulated.
#include "poems/core/comet_simulation.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "poems/core/comet.h"
#include "poems/core/error.h"
#include "poems/core/evaluators.h"
#include "poems/core/system.h"

namespace poems::core {

namespace {

bool needs_two_ranks(const std::string& kernel) {
  return kernel == "echo" || kernel == "pairwise" || kernel == "contention" || kernel == "overlap";
}

// comet.c prints nanoseconds with one decimal: the simulation's figures are
// rounded the same way, so that equal times print and compare equal.
double as_printed(double ns) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f", ns);
  return std::strtod(text, nullptr);
}

}  // namespace

std::string comet_model_file() { return (std::filesystem::path(comet_source()).parent_path() / "comet.psl").string(); }

std::string comet_model_name(const std::string& kernel) {
  std::string name = kernel;
  if (!name.empty()) name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  return "Comet" + name;
}

CometLayout comet_layout(std::uint32_t procs) {
  CometLayout l;
  l.rows = 1;
  for (std::uint32_t r = 1; static_cast<std::uint64_t>(r) * r <= procs; ++r)
    if (procs % r == 0) l.rows = r;
  l.cols = procs / l.rows;
  l.matrix = (256 + procs - 1) / procs * procs;
  return l;
}

CometSimulator::CometSimulator(const Machine& machine, std::uint32_t procs, std::uint32_t reps)
    : machine_(machine), procs_(procs), reps_(reps), layout_(comet_layout(procs)) {
  const std::string file = comet_model_file();
  if (!std::filesystem::is_regular_file(file))
    throw InputError("the CoMet PSL model examples/comet/comet.psl is not where this build expects it ('" + file +
                     "')");
  hash_ = comet_file_hash(file);
}

CometSimulator::~CometSimulator() = default;

const System& CometSimulator::system(const std::string& kernel) {
  auto it = systems_.find(kernel);
  if (it == systems_.end()) {
    SystemRequest request;
    request.files = {comet_model_file()};
    request.model = comet_model_name(kernel);
    it = systems_.emplace(kernel, load_system(request)).first;
  }
  return *it->second;
}

taskgraph::ParameterBinding CometSimulator::parameters(const std::string& kernel, std::uint64_t bytes,
                                                       std::optional<std::uint64_t> previous) const {
  taskgraph::ParameterBinding b = {{"P", procs_}, {"bytes", static_cast<double>(bytes)}};
  // comet.c's reduce_times: an MPI_Allreduce of `reps` doubles after every
  // kernel and size, which leaves its skew to the next size's repetitions
  // (and overlap's reported mode runs after two others); where a barrier
  // does not remove skew, the previous size's repetitions leave theirs too.
  if (kernel == "barrier" || kernel == "transpose") previous.reset();  // one line each
  b["allreduce_before"] = kernel == "overlap" || previous ? 8.0 * reps_ : 0.0;
  if (previous && kernel != "overlap") {
    b["bytes_before"] = static_cast<double>(*previous);
    b["repetitions_before"] = layout_.warmup + reps_;
  }
  if (kernel == "guard" || kernel == "rowbcast" || kernel == "colbcast") {
    b["rows"] = layout_.rows;
    b["cols"] = layout_.cols;
  }
  if (kernel == "transpose") b["matrix"] = static_cast<double>(layout_.matrix);
  if (kernel == "contention") b["load"] = layout_.load;
  return b;
}

std::vector<std::uint64_t> CometSimulator::finish_times(const std::string& kernel, std::uint64_t bytes,
                                                        std::optional<std::uint64_t> previous,
                                                        std::uint32_t repetitions, bool barrier_only_last) {
  Evaluation e;
  e.graph = system(kernel).graph();
  e.binding = parameters(kernel, bytes, previous);
  e.binding["repetitions"] = repetitions;
  e.binding["barrier_only_last"] = barrier_only_last ? 1 : 0;
  e.values = taskgraph::evaluate_model_values(*e.graph, e.binding);
  e.machine = machine_;
  e.per_rank = true;
  const EvaluatorEntry* simulator = find_evaluator("simulation[MPI-Sim]");
  if (!simulator) throw EvaluationError("simulation[MPI-Sim] is not registered");
  const Outcome out = simulator->evaluate(e);
  std::vector<std::uint64_t> finish;
  for (const sim::RankResult& r : out.simulation->per_rank) finish.push_back(r.finish);
  if (finish.size() != procs_)
    throw EvaluationError("the simulation of " + comet_model_name(kernel) + " ran " + std::to_string(finish.size()) +
                          " ranks, not " + std::to_string(procs_));
  return finish;
}

std::optional<CometFigure> CometSimulator::figure(const std::string& kernel, std::uint64_t bytes,
                                                  std::optional<std::uint64_t> previous) {
  if (procs_ < 2 && needs_two_ranks(kernel)) return std::nullopt;
  // comet.c's repetition times: rank by rank, the end of its part of the
  // kernel less the end of its barrier; the slowest rank's (echo: rank 0's
  // round trip halved; contention: ranks 0 and 1 only).
  std::vector<double> times;
  try {
    for (std::uint32_t j = 1; j <= reps_; ++j) {
      const std::uint32_t repetitions = layout_.warmup + j;
      const std::vector<std::uint64_t> start = finish_times(kernel, bytes, previous, repetitions, true);
      const std::vector<std::uint64_t> end = finish_times(kernel, bytes, previous, repetitions, false);
      double slowest = 0;
      for (std::uint32_t r = 0; r < procs_; ++r) {
        if ((kernel == "echo" && r != 0) || (kernel == "contention" && r > 1)) continue;
        double ns = static_cast<double>(end[r] - start[r]) / 1000.0;
        if (kernel == "echo") ns /= 2;
        slowest = std::max(slowest, ns);
      }
      times.push_back(slowest);
    }
  } catch (const Error& e) {
    throw EvaluationError("CoMet " + kernel + " simulated (" + comet_model_name(kernel) + " of " + comet_model_file() +
                          ", " + std::to_string(bytes) + " B): " + e.what());
  }
  std::sort(times.begin(), times.end());
  const std::size_t n = times.size();
  CometFigure f;
  f.min_ns = as_printed(times.front());
  f.max_ns = as_printed(times.back());
  f.median_ns = as_printed(n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]));
  return f;
}

}  // namespace poems::core
