// A calibrated machine as a PSL component file (see machine_file.h).
#include "poems/measure/machine_file.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace poems::measure {

namespace {

std::string number(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.6g", std::fabs(v) < 1e-12 ? 0.0 : v);
  std::string s = buffer;
  if (s.find('e') != std::string::npos) {  // PSL literals have no exponent
    std::snprintf(buffer, sizeof buffer, "%.12f", v);
    s = buffer;
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

bool identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' || c == '\\' ? std::string(1, '\'') : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string psl_time(double ns) { return number(ns) + "ns"; }
std::string psl_time_per_byte(double ns_per_byte) { return number(ns_per_byte) + "ns/B"; }

std::string machine_psl(const MachineProfile& m) {
  if (!identifier(m.name)) throw std::invalid_argument("machine name '" + m.name + "' is not a PSL identifier");
  std::string out;
  for (const std::string& line : m.comment_lines) out += "// " + line + "\n";
  out += "\ncomponent " + m.name + " in hardware[network] {\n";
  out += "  param L = " + psl_time(m.L) + ", o = " + psl_time(m.o) + ", g = " + psl_time(m.g) +
         ", G = " + psl_time_per_byte(m.G) + ", O = " + psl_time_per_byte(m.O) + ", S = " + number(std::floor(m.S)) +
         "B;\n";
  auto regimes = [&](const std::string& prefix) {
    std::string text;
    for (std::size_t k = 0; k < m.regimes.size(); ++k) {
      const MachineProfile::Regime& r = m.regimes[k];
      const std::string n = "_" + std::to_string(k + 1);
      text += "  param " + prefix + "from" + n + " = " + number(r.from_bytes) + "B, " + prefix + "L" + n + " = " +
              psl_time(r.L) + ", " + prefix + "o" + n + " = " + psl_time(r.o) + ", " + prefix + "g" + n + " = " +
              psl_time(r.g) + ", " + prefix + "G" + n + " = " + psl_time_per_byte(r.G) + ", " + prefix + "O" + n +
              " = " + psl_time_per_byte(r.O) + ";\n";
    }
    return text;
  };
  if (!m.regimes.empty()) out += "  // Messages of at least from_K bytes: regime K's parameters (docs/network.md).\n";
  out += regimes("");
  if (m.node_cores > 0) {
    // Measured between ranks of one host: a node's shared memory. Between
    // nodes of a cluster of such hosts the same numbers stand in for a
    // network this host cannot measure.
    const std::string cores = std::to_string(m.node_cores);
    out += "  // One node of this host: its ranks talk through shared memory, as measured.\n";
    out += "  param ranks_per_node = " + cores + ", cores_per_node = " + cores + ";\n";
    out += "  param shm_L = " + psl_time(m.L) + ", shm_o = " + psl_time(m.o) + ", shm_g = " + psl_time(m.g) +
           ", shm_G = " + psl_time_per_byte(m.G) + ", shm_O = " + psl_time_per_byte(m.O) +
           ", shm_S = " + number(std::floor(m.S)) + "B;\n";
    out += regimes("shm_");
  }
  if (m.copy_G > 0) {
    out += "  // A rank's copy of its own block in a collective: memcpy of 64 MiB on this host.\n";
    out += "  param copy_G = " + psl_time_per_byte(m.copy_G) + ";\n";
  }
  out += "  accepts {\n";
  out += "    profile { evaluation = analytic[LogGP]; network = " + quoted(m.network_description) +
         "; L = L; o = o; g = g; G = G; O = O; S = S; }\n";
  out += "    transaction message(bytes: bytes) -> time;\n";
  out += "    protocol call_return;\n";
  out += "  }\n}\n";
  if (m.Wg > 0) {
    out += "\n// Wg: " + m.wg_description + ".\n";
    out += "component " + m.name + "_cpu in hardware[processor] {\n";
    out += "  param Wg = " + psl_time(m.Wg) + ";\n";
    out += "  accepts {\n";
    out += "    profile { node_type = \"cpu\"; evaluation = processor[wg]; Wg = Wg; }\n";
    out += "    transaction execute_code_block(work: real) -> time;\n";
    out += "    protocol call_return;\n";
    out += "  }\n}\n";
  }
  if (!m.hierarchy.empty()) {
    out += "\n";
    for (const std::string& line : m.hierarchy_comment_lines) out += "// " + line + "\n";
    out += "component " + m.name + "_hierarchy in hardware[processor] {\n";
    // One line per point (a ws_K starts it) in the params and in the profile.
    std::string params, profile;
    for (const auto& [name, value] : m.hierarchy) {
      const bool bytes = name.rfind("ws_", 0) == 0, time = name.rfind("Wg", 0) == 0;
      const bool starts_line = bytes || !time;
      params += (params.empty() ? "  param "
                 : starts_line  ? ";\n  param "
                                : ", ") +
                name + " = " +
                (bytes  ? number(std::round(value)) + "B"
                 : time ? psl_time(value)
                        : number(value));
      profile += (starts_line ? "\n      " : " ") + name + " = " + name + ";";
    }
    out += params + ";\n";
    out += "  accepts {\n";
    out += "    profile {\n      node_type = \"cpu\"; evaluation = processor[hierarchy];" + profile + "\n    }\n";
    out += "    transaction execute_code_block(work: real) -> time;\n";
    out += "    protocol call_return;\n";
    out += "  }\n}\n";
  }
  return out;
}

}  // namespace poems::measure
