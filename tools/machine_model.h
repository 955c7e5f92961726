// The machine a PSL model runs on, read from its hardware components: LogGOPS
// parameters of a hardware[network] component and Wg of a hardware[processor]
// component. (The full TED-based composition is the compiler's; this is the
// direct reading the evaluator commands use.)
#pragma once

#include <map>
#include <string>

#include "poems/psl/ast.h"
#include "poems/sim/loggops.h"

namespace poems::cli {

struct MachineModel {
  std::string network;  // component the LogGOPS parameters came from
  sim::LogGOPS params;
  std::string processor;  // component Wg came from ("" if given directly)
  double wg_ns = 0;       // time per unit of work, ns
};

// `network`: a hardware[network] component, or "" for the only one in the
// program. `processor`: a hardware[processor] component with a parameter Wg,
// or "" for the first one. `overrides` hold `Component.param` values in base
// units (ns, bytes, ns/B). Throws std::runtime_error naming what is missing.
MachineModel resolve_machine(const psl::Program& program, const std::string& network, const std::string& processor,
                             const std::map<std::string, double>& overrides);

}  // namespace poems::cli
