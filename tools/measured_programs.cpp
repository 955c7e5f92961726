#include "measured_programs.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "poems/measure/mpirun.h"
#include "poems/sweep3d/app/report.h"

namespace poems::cli {

namespace {

constexpr const char* kSweep3DProgram = "sweep3d_mpi";

int max_ranks(const MeasureOptions& o) { return o.max_ranks > 0 ? o.max_ranks : measure::host_cores(); }

// A fresh directory for one measurement's deck, removed on scope exit.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "poems_measure_XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory for the deck");
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string last_lines(const std::string& text, int lines) {
  std::size_t at = text.size();
  while (at > 0 && (text[at - 1] == '\n')) --at;
  std::size_t start = at;
  for (int n = 0; n < lines && start > 0; ++n) {
    start = text.rfind('\n', start - 1);
    if (start == std::string::npos) {
      start = 0;
      break;
    }
  }
  return text.substr(start == 0 ? 0 : start + 1, at - (start == 0 ? 0 : start + 1));
}

// The MPI library's version line, asked once per command.
const std::string& mpi_library() {
  static const std::string version = measure::mpi_version();
  return version;
}

}  // namespace

bool is_measurement(const std::string& evaluator) { return evaluator.rfind("measurement[", 0) == 0; }

bool has_measured_program(const std::string& model) { return has_closed_form(model); }  // Sweep3D

std::string sibling_program(const std::string& name) {
  const std::string dir = measure::executable_directory();
  if (dir.empty()) return "";
  const std::filesystem::path p = std::filesystem::path(dir) / name;
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) ? p.string() : "";
}

sweep3d::app::Deck sweep3d_deck(const components::Sweep3DConfig& c) {
  sweep3d::app::Deck d;
  d.npe_i = static_cast<int>(c.npe_i);
  d.npe_j = static_cast<int>(c.npe_j);
  d.mk = static_cast<int>(c.mk);
  d.mmi = static_cast<int>(c.mmi);
  d.it_g = static_cast<int>(c.it_g);
  d.jt_g = static_cast<int>(c.jt_g);
  d.kt = static_cast<int>(c.kt);
  d.mm = static_cast<int>(c.mm);
  d.epsi = -static_cast<double>(c.iterations);  // exactly `iterations` source iterations
  return d;
}

std::string measurement_obstacle(const taskgraph::StaticTaskGraph& graph, const std::vector<double>& values,
                                 const MeasureOptions& options) {
  if (!has_measured_program(graph.model))
    return "no program measures model " + graph.model + " (measured programs: Sweep3D)";
  components::Sweep3DConfig config;
  try {
    config = sweep3d_config(graph, values);
  } catch (const std::exception& e) {
    return e.what();
  }
  const long long ranks = config.npe_i * config.npe_j;
  if (ranks > max_ranks(options))
    return std::to_string(ranks) + " processes exceed the " + std::to_string(max_ranks(options)) +
           " this machine runs (--max-ranks)";
  if (config.iterations < 1) return "iterations = " + std::to_string(config.iterations) + " (at least 1)";
  const auto parsed = sweep3d::app::parse_deck(sweep3d::app::deck_text(sweep3d_deck(config)), "deck");
  if (!parsed.ok()) return "the Sweep3D program refuses the deck: " + parsed.errors.front();
  return "";
}

nlohmann::json measurement_binding(const taskgraph::StaticTaskGraph& graph, const std::vector<double>& values,
                                   const MeasureOptions& options) {
  nlohmann::json parameters = nlohmann::json::object();
  for (std::size_t i = 0; i < graph.params.size() && i < values.size(); ++i) parameters[graph.params[i]] = values[i];
  return {{"parameters", parameters},
          {"program", kSweep3DProgram},
          {"launcher", "mpirun"},
          {"host", measure::host_name()},
          {"cores", measure::host_cores()},
          {"mpi", mpi_library()},
          {"repetitions", options.repetitions},
          {"nice", options.nice}};
}

EvaluationOutcome measure_model(const ModelEvaluation& e) {
  const std::vector<double> values = taskgraph::evaluate_model_values(*e.graph, e.binding);
  const std::string obstacle = measurement_obstacle(*e.graph, values, e.measure);
  if (!obstacle.empty()) throw std::runtime_error("not measured: " + obstacle);
  const components::Sweep3DConfig config = sweep3d_config(*e.graph, values);
  const std::string program = sibling_program(kSweep3DProgram);
  if (program.empty())
    throw std::runtime_error(std::string("the Sweep3D program ") + kSweep3DProgram + " is not beside " +
                             "the poems executable (build it: cmake --build build --target sweep3d_mpi)");
  TemporaryDirectory dir;
  const std::filesystem::path deck = dir.path() / "input";
  std::ofstream(deck) << sweep3d::app::deck_text(sweep3d_deck(config));

  measure::Launch launch;
  launch.ranks = static_cast<int>(config.npe_i * config.npe_j);
  launch.program = program;
  launch.args = {deck.string()};
  launch.timeout_seconds = e.measure.timeout_seconds;
  std::vector<nlohmann::json> runs;
  double load = -1;
  if (double l[1]; ::getloadavg(l, 1) == 1) load = l[0];
  for (int rep = 0; rep < std::max(1, e.measure.repetitions); ++rep) {
    const measure::ProcessResult r = measure::run_mpi(launch);
    const std::string line = measure::result_line(r.out, sweep3d::app::kResultPrefix);
    if (!r.ok() || line.empty())
      throw std::runtime_error(std::string(kSweep3DProgram) + " under mpirun -np " + std::to_string(launch.ranks) +
                               ": " + r.status_text() + (line.empty() ? ", no result line" : "") + ": " +
                               last_lines(r.err.empty() ? r.out : r.err, 12));
    runs.push_back(nlohmann::json::parse(line));
  }
  std::vector<double> times;
  for (const auto& run : runs) times.push_back(run.at("time_ns").get<double>());
  const std::size_t best = static_cast<std::size_t>(std::min_element(times.begin(), times.end()) - times.begin());
  const nlohmann::json& b = runs[best];
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());

  EvaluationOutcome out;
  out.method = "mpirun";
  out.time_ns = b.at("time_ns").get<double>();
  out.compute_ns = b.at("compute_ns_mean").get<double>();
  out.comm_ns =
      b.at("recv_ns_mean").get<double>() + b.at("send_ns_mean").get<double>() + b.at("allreduce_ns_mean").get<double>();
  out.sync_ns = std::max(0.0, out.time_ns - out.compute_ns - out.comm_ns);
  out.messages = b.at("messages").get<std::uint64_t>();
  out.processes = static_cast<std::uint32_t>(launch.ranks);
  out.extra = {{"times_ns", times},       {"median_ns", sorted[sorted.size() / 2]},
               {"max_ns", sorted.back()}, {"oversubscribed", launch.ranks > measure::host_cores()},
               {"load_average", load},  // 1-minute load before the runs: other work disturbs a measurement
               {"best_run", b},           {"deck", sweep3d::app::deck_text(sweep3d_deck(config))}};
  return out;
}

}  // namespace poems::cli
