// Internal: the built-in evaluators, registered once by the registry.
#pragma once

#include <string>

#include "poems/core/evaluators.h"
#include "poems/taskgraph/schedule.h"

namespace poems::core {

void register_direct_evaluator();       // direct_evaluator.cpp
void register_measurement_evaluator();  // measurement.cpp

// Simulates `schedule` on the evaluation's machine into an Outcome (a model's
// simulation, a trace's replay); `what_ran` names it when it does not complete.
Outcome simulate_schedule(taskgraph::ScheduleSource& schedule, const Evaluation& e, const std::string& what_ran);
// analytic[LogGP]'s critical path of `schedule` on the evaluation's machine
// into an Outcome (a model's task graph, a trace's replay); `finish`, if
// given, receives the path's length in whole picoseconds.
Outcome critical_path_of_schedule(taskgraph::ScheduleSource& schedule, const Evaluation& e,
                                  taskgraph::Picoseconds* finish = nullptr);

}  // namespace poems::core
