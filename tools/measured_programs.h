// measurement[mpirun] (DESIGN.md 5.5): a model binding measured by running
// the real program under mpirun on this machine. Programs are bound to
// models by name, as the closed forms are: Sweep3D is measured with
// build/bin/sweep3d_mpi (examples/sweep3d/app), its deck written from the
// binding (it_g jt_g kt npe_i npe_j mk mmi mm; epsi = -iterations).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model_evaluators.h"
#include "poems/sweep3d/app/deck.h"

namespace poems::cli {

inline constexpr const char* kMeasurementEvaluator = "measurement[mpirun]";
bool is_measurement(const std::string& evaluator);  // "measurement[...]"

bool has_measured_program(const std::string& model);

// Why this binding is not measured here, or "": no program for the model,
// more processes than MeasureOptions::max_ranks, or a deck the program refuses.
std::string measurement_obstacle(const taskgraph::StaticTaskGraph& graph, const std::vector<double>& values,
                                 const MeasureOptions& options);

// What a measured run's key holds besides the model: the parameters, the
// program, this host and its cores, the MPI library, the repetitions.
nlohmann::json measurement_binding(const taskgraph::StaticTaskGraph& graph, const std::vector<double>& values,
                                   const MeasureOptions& options);

// The evaluator: runs the program `options.repetitions` times and reports the
// fastest run (time = its slowest process's iteration loop; compute = mean
// time in the kernel; comm = mean time inside MPI calls, waiting included;
// sync = the rest). Throws std::runtime_error with the program's message.
EvaluationOutcome measure_model(const ModelEvaluation& e);

// The Sweep3D deck of a binding (vacuum boundaries, no fixups, unit cells).
sweep3d::app::Deck sweep3d_deck(const components::Sweep3DConfig& config);

// A program built beside the poems executable (build/bin), or "" if absent.
std::string sibling_program(const std::string& name);

}  // namespace poems::cli
