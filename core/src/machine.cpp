#include "poems/core/machine.h"

#include <cmath>

#include "poems/base/suggest.h"
#include "poems/base/units.h"
#include "poems/core/error.h"
#include "poems/core/progress.h"
#include "poems/core/system.h"
#include "poems/psl/value.h"
#include "poems/taskgraph/limits.h"

namespace poems::core {

namespace {

double number(const std::map<std::string, base::Value>& values, const std::string& component, const char* name,
              base::Dimension want, const char* example) {
  auto it = values.find(name);
  if (it == values.end())
    throw InputError("network '" + component + "' has no parameter '" + name + "' (e.g. param " + name + " = " +
                     example + ";)");
  const base::Value& v = it->second;
  if (v.kind != base::Value::Kind::Number ||
      (v.dimension != want && !(want == base::kBytes && v.dimension.dimensionless())))
    throw InputError("network parameter " + component + "." + name + " must be a " + base::dimension_name(want) +
                     ", e.g. " + example + " (it is " + v.str() + ")");
  if (v.number < 0) throw InputError("network parameter " + component + "." + name + " is negative");
  return v.number;
}

sim::Picoseconds time_option(const std::string& option, const std::string& text) {
  const std::string range = "a time in 0..1e12 ns (e.g. 2500, 5.3us)";
  const double ns = quantity(option, text, base::kTime, range);
  auto ps = components::ns_to_ps(ns);
  if (!ps || ns > 1e12) throw UsageError(option, "'" + text + "' is out of range; expected " + range);
  return *ps;
}

components::FemtosecondsPerByte per_byte_option(const std::string& option, const std::string& text) {
  const std::string range = "a time per byte in 0..1e6 ns/B (e.g. 6, 0.04ns/B)";
  const double ns = quantity(option, text, base::kTimePerByte, range);
  auto fs = components::ns_per_byte_to_fs(ns);
  if (!fs || ns > 1e6) throw UsageError(option, "'" + text + "' is out of range; expected " + range);
  return *fs;
}

// A whole number of bytes from 0 to `max`; `range` says so in the error.
std::uint64_t bytes_option(const std::string& option, const std::string& text, double max, const std::string& range) {
  const double b = quantity(option, text, base::kBytes, range);
  if (!(b >= 0 && b <= max) || b != std::floor(b))
    throw UsageError(option, "'" + text + "' is out of range; expected " + range);
  return static_cast<std::uint64_t>(b);
}

}  // namespace

components::LogGOPS loggops_of(const std::map<std::string, base::Value>& v, const std::string& component,
                               const std::function<std::string(const std::string&)>& where) {
  components::LogGOPS p;
  // Out of the simulator's range: which parameter, its value, the range and where it is declared.
  auto out_of_range = [&](const char* n, const char* range) {
    const std::string at = where ? where(n) : std::string();
    return InputError((at.empty() ? "" : at + ": ") + "machine parameter " + component + "." + n + " = " +
                      v.at(n).str() + " is out of range; it must be from 0 to " + range);
  };
  auto ps = [&](const char* n) {
    auto x = components::ns_to_ps(number(v, component, n, base::kTime, "5.3us"));
    if (!x) throw out_of_range(n, "9e+15ns");
    return *x;
  };
  auto fs = [&](const char* n) {
    auto x = components::ns_per_byte_to_fs(number(v, component, n, base::kTimePerByte, "2.5ns/B"));
    if (!x) throw out_of_range(n, "9e+12ns/B");
    return *x;
  };
  p.L = ps("L");
  p.o = ps("o");
  p.g = ps("g");
  p.G = fs("G");
  p.O = fs("O");
  // A double past 2^64 converts to garbage (0 on x86): the documented range first.
  const double S = number(v, component, "S", base::kBytes, "32768B");
  if (!(S <= taskgraph::kMaxMessageBytes)) throw out_of_range("S", "9007199254740991B (2^53 - 1)");
  p.S = static_cast<std::uint64_t>(S);
  return p;
}

nlohmann::json machine_key(const Machine& m) {
  nlohmann::json key = components::machine_key_json(m.params, m.rendezvous_handshake);
  key["cpus"] = m.cpus;
  key["nics"] = m.nics;
  if (m.semantics != sim::Semantics::Matched) key["semantics"] = sim::semantics_name(m.semantics);
  if (!m.flat()) key["network"] = components::network_key_json(m.network_model->spec());
  if (m.noisy()) key["noise"] = components::noise_key_json(m.noise->spec());
  return key;
}

sim::SimulationOptions simulation_options(const Machine& m) {
  if (m.semantics == sim::Semantics::Loggopsim && !m.flat())
    throw InputError(
        "the loggopsim semantics reproduces LogGOPSim, whose machine has one rank per node on a complete "
        "network; a machine of " +
        m.network_model->describe() + " runs under the matched semantics (--semantics matched)");
  sim::SimulationOptions o;
  o.params = m.params;
  o.rendezvous_handshake = m.rendezvous_handshake;
  o.cpus = m.cpus;
  o.nics = m.nics;
  o.semantics = m.semantics;
  if (!m.flat()) o.network = m.network_model;
  if (m.noisy()) o.noise = m.noise;
  o.memory_limit = taskgraph::default_instantiation_limits().memory_limit_bytes;
  o.progress = current_progress();  // the thread's progress display, if a command opened one
  return o;
}

std::string loggops_text(const components::LogGOPS& p) {
  return "L=" + components::format_ps(p.L) + " o=" + components::format_ps(p.o) + " g=" + components::format_ps(p.g) +
         " G=" + components::format_fs_per_byte(p.G) + " O=" + components::format_fs_per_byte(p.O) +
         " S=" + std::to_string(p.S) + "B";
}

bool MachineOverrides::empty() const {
  return !L && !o && !g && !G && !O && !S && !rendezvous_handshake && !cpus && !nics && !semantics && !ranks_per_node &&
         !cores_per_node && !map_file && !contention && !wire_overhead && !time_sharing && !noise;
}

double quantity(const std::string& option, const std::string& text, base::Dimension expected,
                const std::string& range) {
  std::string error;
  auto q = base::parse_quantity(text, &error);
  if (!q) throw UsageError(option, error + "; expected " + range);
  if (!q->dimension.dimensionless() && !(q->dimension == expected))
    throw UsageError(option, "'" + text + "' is a " + base::dimension_name(q->dimension) + "; expected " + range);
  return q->value;
}

void apply_overrides(const MachineOverrides& o, Machine& m) {
  if (o.L) m.params.L = time_option("-L", *o.L);
  if (o.o) m.params.o = time_option("-o", *o.o);
  if (o.g) m.params.g = time_option("-g", *o.g);
  if (o.G) m.params.G = per_byte_option("-G", *o.G);
  if (o.O) m.params.O = per_byte_option("-O", *o.O);
  if (o.S)
    m.params.S = bytes_option("-S", *o.S, static_cast<double>(taskgraph::kMaxMessageBytes),
                              "a whole number of bytes in 0..9007199254740991 (2^53 - 1; e.g. 65535, 32KiB)");
  if (o.rendezvous_handshake) m.rendezvous_handshake = *o.rendezvous_handshake;
  if (o.cpus) m.cpus = *o.cpus;
  if (o.nics) m.nics = *o.nics;
  if (o.semantics) {
    const auto s = sim::parse_semantics(*o.semantics);
    if (!s)
      throw UsageError("--semantics", "'" + *o.semantics + "' is not a semantics; expected matched or loggopsim" +
                                          base::did_you_mean(*o.semantics, {"matched", "loggopsim"}));
    m.semantics = *s;
  }
  if (o.ranks_per_node || o.cores_per_node || o.map_file || o.contention || o.wire_overhead || o.time_sharing) {
    components::NetworkSpec spec = m.network_model ? m.network_model->spec() : components::NetworkSpec{};
    std::string option = "--ranks-per-node";
    if (o.ranks_per_node) {
      if (*o.ranks_per_node == 0 || *o.ranks_per_node > (1u << 20))
        throw UsageError("--ranks-per-node",
                         std::to_string(*o.ranks_per_node) + " is out of range; expected 1..1048576");
      spec.mapping.ranks_per_node = *o.ranks_per_node;
    }
    if (o.cores_per_node) {
      option = "--cores-per-node";
      if (*o.cores_per_node == 0 || *o.cores_per_node > (1u << 20))
        throw UsageError("--cores-per-node",
                         std::to_string(*o.cores_per_node) + " is out of range; expected 1..1048576");
      spec.cores_per_node = *o.cores_per_node;
    }
    if (o.map_file) {
      option = "--map";
      spec.mapping.kind = components::MappingKind::File;
      spec.mapping.file = network_file_path(*o.map_file);
      spec.mapping.wrap.clear();
    }
    if (o.contention) {
      option = "--contention";
      const auto kind = components::parse_contention(*o.contention);
      if (!kind)
        throw UsageError("--contention", "'" + *o.contention + "' is not a contention model; expected none or max-min" +
                                             base::did_you_mean(*o.contention, {"none", "max-min"}));
      spec.contention = *kind;
    }
    if (o.wire_overhead) {
      option = "--wire-overhead";
      spec.wire_overhead_bytes =
          bytes_option(option, *o.wire_overhead, 1048576, "a whole number of bytes in 0..1048576 (e.g. 16B)");
    }
    if (o.time_sharing) {
      option = "--time-sharing";
      const auto rule = components::parse_time_sharing(*o.time_sharing);
      if (!rule)
        throw UsageError("--time-sharing", "'" + *o.time_sharing +
                                               "' is not a time-sharing rule; expected fcfs or processor-sharing" +
                                               base::did_you_mean(*o.time_sharing, {"fcfs", "processor-sharing"}));
      spec.time_sharing = *rule;
    }
    try {
      m.network_model = std::make_shared<const components::Network>(std::move(spec));
    } catch (const components::NetworkError& e) {
      throw UsageError(option, e.what());
    }
  }
  if (o.noise) {
    try {
      m.noise = std::make_shared<const components::Noise>(components::parse_noise(*o.noise));
    } catch (const components::NoiseError& e) {
      throw UsageError("--noise", e.what());
    }
  }
  if (m.semantics == sim::Semantics::Loggopsim && m.rendezvous_handshake)
    throw UsageError("--rendezvous-handshake",
                     "is a rule of the matched semantics; LogGOPSim's rendezvous has no handshake");
}

Machine command_line_machine(const MachineOverrides& overrides) {
  Machine m;
  m.params = components::LogGOPS{};
  apply_overrides(overrides, m);
  return m;
}

std::optional<sim::Semantics> semantics_value(const base::Value& v) {
  if (v.kind != base::Value::Kind::String) return std::nullopt;
  return sim::parse_semantics(v.text);
}

namespace {

// The location of the value of `target` in `st` equal to `value`: a `set`,
// or an item (or a tuple's member) of a `vary` list.
psl::SourceLocation study_value_location(const psl::StudyDecl& st, const std::string& target,
                                         const base::Value& value) {
  auto same = [&](const psl::Expr& e) {
    psl::EvalResult r = psl::evaluate(e, [](std::string_view) -> const base::Value* { return nullptr; });
    return r.value && *r.value == value;
  };
  for (const psl::Binding& b : st.settings)
    if (b.name.name == target && b.value && same(*b.value)) return b.value->location;
  for (const psl::VaryClause& v : st.varies)
    for (std::size_t k = 0; k < v.targets.size(); ++k) {
      if (v.targets[k].name != target) continue;
      if (v.is_range || !v.values) return v.location;
      for (const psl::ExprPtr& item : v.values->operands) {
        const psl::Expr* e = v.targets.size() == 1       ? item.get()
                             : k < item->operands.size() ? item->operands[k].get()
                                                         : nullptr;
        if (e && same(*e)) return e->location;
      }
      return v.location;
    }
  return {};
}

}  // namespace

psl::SourceLocation semantics_location(const psl::Program& program, const std::vector<const psl::StudyDecl*>& studies,
                                       const std::string& runtime, const base::Value& value) {
  for (const psl::StudyDecl* st : studies)
    if (st)
      if (psl::SourceLocation at = study_value_location(*st, runtime + ".semantics", value); at.valid()) return at;
  const psl::ComponentDecl* c = program.find_component(runtime);
  if (!c) return {};
  for (const psl::Binding& p : c->params)
    if (p.name.name == "semantics" && p.value) return p.value->location;
  for (const psl::Interface& a : c->accepts)
    for (const psl::ProfileEntry& e : a.profile)
      if (e.name.name == "semantics" && e.value) return e.value->location;
  return {};
}

std::string semantics_override_warnings(System& system, const MachineOverrides& overrides) {
  const psl::StudyDecl* study = system.study();
  if (!study || !overrides.semantics || !sim::parse_semantics(*overrides.semantics)) return {};
  const std::string& chosen = *overrides.semantics;
  const auto names_semantics = [](const std::string& n) { return n == "semantics" || n.ends_with(".semantics"); };
  psl::DiagnosticEngine& diags = system.diagnostics();
  const std::size_t first = diags.all().size();
  for (const psl::Binding& b : study->settings)
    if (names_semantics(b.name.name))
      diags.warning(b.name.location,
                    "--semantics " + chosen + " replaces this `set " + b.name.name + "`: every cell runs " + chosen);
  for (const psl::VaryClause& v : study->varies)
    for (const psl::Identifier& t : v.targets)
      if (names_semantics(t.name))
        diags.warning(t.location,
                      "--semantics " + chosen + " replaces this `vary " + t.name + "`: every cell runs " + chosen);
  return diags.all().size() == first ? std::string() : system.render_diagnostics(first);
}

std::string semantics_error(const std::string& subject, const base::Value& value) {
  return subject + " = " + value.str() +
         " is not a message-progress semantics; allowed: \"matched\", \"loggopsim\" (docs/simulator.md)" +
         (value.kind == base::Value::Kind::String ? base::did_you_mean(value.text, {"matched", "loggopsim"})
                                                  : std::string());
}

std::string runtime_semantics_problem(const std::string& runtime, const base::Value& value, bool handshake) {
  const std::optional<sim::Semantics> semantics = semantics_value(value);
  if (!semantics) return semantics_error(runtime + ".semantics", value);
  if (*semantics == sim::Semantics::Loggopsim && handshake)
    return runtime +
           ".semantics = \"loggopsim\" with the rendezvous handshake: the handshake is a rule of the matched "
           "semantics (LogGOPSim's rendezvous has none)";
  return {};
}

std::vector<std::string> components_in(const psl::Program& program, const std::string& domain) {
  std::vector<std::string> names;
  for (const psl::Module& m : program.modules)
    for (const psl::ComponentDecl& c : m.components)
      if (c.domain.str() == domain) names.push_back(c.name.name);
  return names;
}

const psl::ComponentDecl& hardware_component(const psl::Program& program, const std::string& name, const char* option) {
  const psl::ComponentDecl* c = program.find_component(name);
  if (!c) {
    std::vector<std::string> hardware;
    for (const psl::Module& m : program.modules)
      for (const psl::ComponentDecl& d : m.components)
        if (d.domain.head == "hardware") hardware.push_back(d.name.name);
    throw UsageError(option, "no component named '" + name + "' (hardware components: " +
                                 (hardware.empty() ? std::string("none") : base::name_list(hardware)) + ")" +
                                 base::did_you_mean(name, hardware));
  }
  if (c->domain.head != "hardware")
    throw UsageError(option, "'" + name + "' is not a hardware component (it is in " + c->domain.str() + ")");
  return *c;
}

}  // namespace poems::core
