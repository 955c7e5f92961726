// PSL text the end-to-end tests of models with computation share: the
// application component `Work` of a model (one unit of work per `work`),
// a processor `Cpu` of Wg 1 ns, and a network `Net` of the given LogGOPS
// line and extra parameters.
#pragma once

#include <string>

inline std::string work_components(const std::string& model) {
  return "component Work in application[" + model + R"(] {
  accepts { profile { node_type = "work"; } transaction compute(work: int); protocol dataflow; }
  requests cpu {
    selector domain == hardware[processor] and evaluation == study.compute;
    transaction execute_code_block(work = work);
    protocol call_return;
  }
}
component Cpu in hardware[processor] {
  param Wg = 1ns;
  accepts { profile { node_type = "cpu"; evaluation = processor[wg]; Wg = Wg; }
            transaction execute_code_block(work: real) -> time; protocol call_return; }
}
)";
}

// `loggops`: "L = 5us, o = 1us, ..." (all six); `extra`: more param lines.
inline std::string net_component(const std::string& loggops, const std::string& extra = "") {
  return "component Net in hardware[network] {\n  param " + loggops + ";\n  " + extra + R"(
  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
            transaction message(bytes: bytes) -> time; protocol call_return; }
}
)";
}
