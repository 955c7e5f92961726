// A calibrated machine as a PSL component file: a hardware[network]
// component with the LogGOPS parameters and a hardware[processor] component
// with Wg, in the form of the examples' machines.psl, so `poems check`
// accepts it and studies run on it (`--machine local --import local.psl`).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace poems::measure {

struct MachineProfile {
  std::string name = "local";       // the network component; the processor is name + "_cpu"
  std::string network_description;  // profile attribute `network`
  double L = 0, o = 0, g = 0;       // ns
  double G = 0, O = 0;              // ns per byte
  double S = 0;                     // bytes
  double Wg = 0;                    // ns per unit of work (0: no processor component)
  // Message-size regimes above those parameters (from_K ..., docs/network.md):
  // messages of at least from_bytes take the regime's L, o, g (ns), G, O (ns/B).
  struct Regime {
    double from_bytes = 0, L = 0, o = 0, g = 0, G = 0, O = 0;
  };
  std::vector<Regime> regimes;
  // > 0: the parameters were measured between ranks of this one host, a node
  // of that many cores: they are written as the node's shared-memory
  // parameters too (shm_L ...), with ranks_per_node = cores_per_node = it
  // (docs/network.md).
  std::uint32_t node_cores = 0;
  // > 0: copy_G, a rank's copy within its own memory (ns per byte).
  double copy_G = 0;
  std::string wg_description = "time per unit of work on this host";  // its comment in the file
  std::vector<std::string> comment_lines;                             // provenance, written at the top
  // Not empty: a processor[hierarchy] component name + "_hierarchy" with these
  // numbers (its curve: ws_K in bytes, Wg_K and Wg_busy_K in ns, cores).
  std::vector<std::pair<std::string, double>> hierarchy;
  std::vector<std::string> hierarchy_comment_lines;  // written above it
};

// The PSL text. Names must be PSL identifiers (checked: std::invalid_argument).
std::string machine_psl(const MachineProfile& machine);

// A PSL quantity literal: 312.5ns, 0.0821ns/B, 4096B (6 significant digits).
std::string psl_time(double ns);
std::string psl_time_per_byte(double ns_per_byte);

}  // namespace poems::measure
