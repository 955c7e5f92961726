// A network component's OS noise (docs/simulator.md, "OS noise"), read from
// its PSL parameters beside its nodes and LogGOPS (machine_network.cpp).
#include <cmath>

#include "poems/core/error.h"
#include "poems/core/machine.h"

namespace poems::core {

namespace {

using Parameters = std::map<std::string, base::Value>;

const char* const kNoiseParameters[] = {"noise_period", "noise_interval", "noise_detour",
                                        "noise_phase",  "noise_seed",     "noise_file"};

}  // namespace

std::shared_ptr<const components::Noise> noise_of(const Parameters& values, const std::string& component,
                                                  const std::function<std::string(const std::string&)>& where,
                                                  const std::string& directory) {
  bool any = false;
  for (const char* n : kNoiseParameters) any = any || values.count(n);
  if (!any) return nullptr;
  auto at = [&](const char* name) {
    std::string w = where ? where(name) : std::string();
    for (const char* near : kNoiseParameters)
      if (w.empty() && where && values.count(near)) w = where(near);
    return w.empty() ? w : w + ": ";
  };
  auto fail = [&](const char* name, const std::string& what) -> void {
    throw InputError(at(name) + "noise parameter " + component + "." + name + " " + what);
  };
  auto find = [&](const char* name) -> const base::Value* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  };
  auto time = [&](const char* name) -> std::optional<components::Picoseconds> {
    const base::Value* v = find(name);
    if (!v) return std::nullopt;
    std::optional<components::Picoseconds> ps;
    if (v->kind == base::Value::Kind::Number && v->dimension == base::kTime && v->number <= 1e12)
      ps = components::ns_to_ps(v->number);
    if (!ps) fail(name, "= " + v->str() + " is out of range; it must be a time from 0 to 1e12 ns (e.g. 25us)");
    return ps;
  };
  auto text = [&](const char* name) -> std::optional<std::string> {
    const base::Value* v = find(name);
    if (!v) return std::nullopt;
    if (v->kind != base::Value::Kind::String) fail(name, "must be a string (it is " + v->str() + ")");
    return v->text;
  };

  components::NoiseSpec spec;
  const auto period = time("noise_period"), interval = time("noise_interval"), detour = time("noise_detour");
  const auto file = text("noise_file");
  if (file) {
    if (detour) fail("noise_detour", "does not go with noise_file: the file gives each detour's length");
    if (interval) fail("noise_interval", "does not go with noise_file (a trace repeats with noise_period)");
    spec.kind = components::NoiseKind::Trace;
    spec.file = network_file_path(*file, directory);
    spec.period = period.value_or(0);
  } else if (interval) {
    if (period) fail("noise_interval", "and noise_period exclude each other: poisson noise or periodic noise");
    if (!detour) fail("noise_detour", "is missing: poisson noise needs each detour's length (e.g. 25us)");
    spec.kind = components::NoiseKind::Poisson;
    spec.interval = *interval;
    spec.detour = *detour;
  } else if (period) {
    if (!detour) fail("noise_detour", "is missing: periodic noise needs each detour's length (e.g. 25us)");
    spec.kind = components::NoiseKind::Periodic;
    spec.period = *period;
    spec.detour = *detour;
  } else if (detour) {
    fail("noise_detour", "needs noise_period (periodic noise) or noise_interval (poisson noise)");
  }
  // A detour of 0 is no noise: a study can vary noise_detour from 0.
  if (detour && *detour == 0) spec.kind = components::NoiseKind::None;
  if (auto phase = text("noise_phase")) {
    if (*phase != "aligned" && *phase != "random")
      fail("noise_phase", "= \"" + *phase + "\" must be aligned or random");
    spec.aligned = *phase == "aligned";
  }
  if (const base::Value* seed = find("noise_seed")) {
    if (seed->kind != base::Value::Kind::Number || !seed->dimension.dimensionless() || seed->number < 0 ||
        seed->number > 9007199254740991.0 || seed->number != std::floor(seed->number))
      fail("noise_seed", "= " + seed->str() + " is out of range; it must be a whole number from 0 to 2^53 - 1");
    spec.seed = static_cast<std::uint64_t>(seed->number);
  }
  try {
    if (spec.kind == components::NoiseKind::Trace) spec.detours = components::read_noise_file(spec.file);
    return std::make_shared<const components::Noise>(std::move(spec));
  } catch (const components::NoiseError& e) {
    throw InputError(at(file ? "noise_file" : "noise_detour") + "noise of " + component + ": " + e.what());
  }
}

std::shared_ptr<const components::Noise> noise_of_component(const psl::Program& program, const psl::ComponentDecl& c,
                                                            const Parameters& parameters) {
  return noise_of(parameters, c.name.name, parameter_locator(program, c), component_directory(program, c));
}

}  // namespace poems::core
