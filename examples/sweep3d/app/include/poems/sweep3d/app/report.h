// What the Sweep3D program prints (no MPI): the header, the iteration
// monitor lines, the particle balance, times, and one machine-readable line
//
//   POEMS_SWEEP3D_RESULT {"time_ns": ..., "iterations": ..., ...}
//
// that `poems measure` parses (result_fields lists its keys).
#pragma once

#include <iosfwd>
#include <string>

#include "poems/sweep3d/app/deck.h"
#include "poems/sweep3d/app/driver.h"

namespace poems::sweep3d::app {

inline constexpr const char* kResultPrefix = "POEMS_SWEEP3D_RESULT ";

// How the blocks were computed, for the header and the result line.
struct ComputationInfo {
  bool modeled = false;
  double modeled_ns_per_cell_angle = 0;
};

void print_header(std::ostream& out, const Deck& deck, int ranks, const ComputationInfo& how);
void print_monitor_line(std::ostream& out, int iteration, double change);
void print_summary(std::ostream& out, const Deck& deck, const RunResult& r, const ComputationInfo& how);

// Wall time per cell-angle and iteration of the largest process (ns): the
// quantity comparable with the processor model's Wg.
double grind_ns(const Deck& deck, const RunResult& r);
// Relative particle imbalance of the last sweep: (sV + inflow − σtφV − outflow) / (sV + inflow).
double sweep_balance(const LocalTallies& t);
// Relative physical balance: (qV − absorption − (outflow − inflow)) / qV; → 0 at convergence.
double physical_balance(const LocalTallies& t);

// The JSON object of the result line (one line, no prefix).
std::string result_json(const Deck& deck, const RunResult& r, const ComputationInfo& how);

}  // namespace poems::sweep3d::app
