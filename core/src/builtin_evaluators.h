// Internal: the built-in evaluators, registered once by the registry.
#pragma once

namespace poems::core {

void register_direct_evaluator();       // direct_evaluator.cpp
void register_measurement_evaluator();  // measurement.cpp

}  // namespace poems::core
