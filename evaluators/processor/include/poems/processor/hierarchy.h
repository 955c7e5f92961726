// processor[hierarchy]: the time of a task from its work and its working
// set. The processor is a curve of Wg (ns per unit of work) against the
// bytes a task touches, measured with working sets that fall in each level
// of the memory hierarchy (poems calibrate writes it); a task's Wg is read
// off the curve at its working set, between points linearly in log2(bytes).
// A second curve, measured with every core of the node running the kernel,
// covers levels the cores share (a last-level cache, DRAM bandwidth).
#pragma once

#include <string>
#include <vector>

#include "poems/processor/processor_model.h"

namespace poems::processor {

struct WorkingSetCurve {
  std::vector<double> bytes;       // working sets of the points, strictly increasing, > 0
  std::vector<double> wg_ns;       // Wg alone at each point
  std::vector<double> busy_wg_ns;  // Wg with `cores` copies at once (empty: no such curve)
  int cores = 1;                   // the cores of a node that share its levels

  // Wg of a task of `working_set` bytes while `procs` processes of the node
  // compute (min(procs, cores) at once): between the alone and busy curves
  // linearly in the number of busy cores, clamped outside the points.
  double wg_at(double working_set, double procs) const;
};

// The curve of a processor[hierarchy] component: numbers ws_1, Wg_1,
// [Wg_busy_1,] ws_2, ... (consecutive from 1) and `cores`. Throws
// ProcessorError naming the attribute and its allowed range.
WorkingSetCurve working_set_curve(const ProcessorSpec& spec);

// The curve as PSL profile attributes, the inverse of working_set_curve.
std::vector<std::pair<std::string, double>> curve_attributes(const WorkingSetCurve& curve);

}  // namespace poems::processor
