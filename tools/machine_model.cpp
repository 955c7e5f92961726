#include "machine_model.h"

#include <stdexcept>

#include "poems/psl/value.h"

namespace poems::cli {

namespace {

// Every parameter of a component, evaluated in order, with overrides applied.
std::map<std::string, psl::Value> component_values(const psl::ComponentDecl& c,
                                                   const std::map<std::string, double>& overrides) {
  std::map<std::string, psl::Value> values;
  for (const psl::Binding& p : c.params) {
    auto over = overrides.find(c.name.name + "." + p.name.name);
    psl::EvalResult r = psl::evaluate(*p.value, [&](std::string_view n) -> const psl::Value* {
      auto it = values.find(std::string(n));
      return it == values.end() ? nullptr : &it->second;
    });
    if (!r.value) throw std::runtime_error(c.name.name + "." + p.name.name + ": " + r.error);
    if (over != overrides.end()) r.value->number = over->second;
    values[p.name.name] = *r.value;
  }
  return values;
}

const psl::ComponentDecl* pick(const psl::Program& program, const std::string& name, const char* path,
                               const char* what) {
  if (!name.empty()) {
    const psl::ComponentDecl* c = program.find_component(name);
    if (!c) throw std::runtime_error(std::string("no component named '") + name + "'");
    if (c->domain.head != "hardware")
      throw std::runtime_error("'" + name + "' is not a hardware component (it is in " + c->domain.str() + ")");
    return c;
  }
  std::vector<const psl::ComponentDecl*> found;
  for (const psl::Module& m : program.modules)
    for (const psl::ComponentDecl& c : m.components)
      if (c.domain.head == "hardware" && c.domain.path == path) found.push_back(&c);
  if (found.empty()) throw std::runtime_error(std::string("the specification has no hardware[") + path + "] " + what);
  return found.front();
}

double number(const std::map<std::string, psl::Value>& v, const psl::ComponentDecl& c, const std::string& name,
              psl::Dimension want, const char* unit_example) {
  auto it = v.find(name);
  if (it == v.end())
    throw std::runtime_error("machine '" + c.name.name + "' has no parameter '" + name + "' (e.g. param " + name +
                             " = " + unit_example + ";)");
  if (it->second.kind != psl::Value::Kind::Number ||
      (it->second.dimension != want && !(want == psl::kBytes && it->second.dimension.dimensionless())))
    throw std::runtime_error("machine parameter " + c.name.name + "." + name + " must be a " +
                             psl::dimension_name(want) + ", e.g. " + unit_example);
  if (it->second.number < 0) throw std::runtime_error("machine parameter " + c.name.name + "." + name + " is negative");
  return it->second.number;
}

}  // namespace

MachineModel resolve_machine(const psl::Program& program, const std::string& network, const std::string& processor,
                             const std::map<std::string, double>& overrides) {
  MachineModel m;
  const psl::ComponentDecl* net = pick(program, network, "network", "machine; name one with --machine");
  auto v = component_values(*net, overrides);
  m.network = net->name.name;
  // Out of the simulator's range: say which parameter, its value, the range and where it is declared.
  auto out_of_range = [&](const char* n, const char* range) -> std::runtime_error {
    std::string at;
    for (const psl::Binding& p : net->params)
      if (p.name.name == n) at = program.location_text(p.name.location);
    return std::runtime_error((at.empty() ? "" : at + ": ") + "machine parameter " + m.network + "." + n + " = " +
                              v.at(n).str() + " is out of range; it must be from 0 to " + range);
  };
  auto ps = [&](const char* n) {
    auto x = sim::ns_to_ps(number(v, *net, n, psl::kTime, "5.3us"));
    if (!x) throw out_of_range(n, "9e+15ns");
    return x;
  };
  auto fs = [&](const char* n) {
    auto x = sim::ns_per_byte_to_fs(number(v, *net, n, psl::kTimePerByte, "2.5ns/B"));
    if (!x) throw out_of_range(n, "9e+12ns/B");
    return x;
  };
  auto L = ps("L"), o = ps("o"), g = ps("g");
  auto G = fs("G"), O = fs("O");
  m.params.L = *L;
  m.params.o = *o;
  m.params.g = *g;
  m.params.G = *G;
  m.params.O = *O;
  m.params.S = static_cast<std::uint64_t>(number(v, *net, "S", psl::kBytes, "32768B"));

  const psl::ComponentDecl* cpu = nullptr;
  if (!processor.empty()) {
    cpu = pick(program, processor, "processor", "");
  } else {
    for (const psl::Module& mod : program.modules)
      for (const psl::ComponentDecl& c : mod.components)
        if (!cpu && c.domain.head == "hardware" && c.domain.path == "processor")
          for (const psl::Binding& p : c.params)
            if (p.name.name == "Wg") cpu = &c;
  }
  if (!cpu) throw std::runtime_error("no hardware[processor] component with a parameter Wg; give --wg");
  auto pv = component_values(*cpu, overrides);
  m.processor = cpu->name.name;
  m.wg_ns = number(pv, *cpu, "Wg", psl::kTime, "60ns");
  return m;
}

}  // namespace poems::cli
