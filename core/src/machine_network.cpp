// A network component's nodes, topology and switching (docs/network.md),
// read from its PSL parameters beside its LogGOPS (machine.cpp).
#include <cmath>
#include <filesystem>
#include <string_view>

#include "poems/base/suggest.h"
#include "poems/core/error.h"
#include "poems/core/machine.h"

namespace poems::core {

namespace {

using Parameters = std::map<std::string, base::Value>;

struct Reader {
  const Parameters& values;
  const std::string& component;
  const std::function<std::string(const std::string&)>& where;

  const base::Value* find(const char* name) const {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
  [[noreturn]] void fail(const char* name, const std::string& what) const {
    std::string at = where ? where(name) : std::string();
    // A parameter that is missing: where the component's network is declared.
    for (const char* near : {"topology", "mapping", "L"})
      if (at.empty() && where) at = where(near);
    throw InputError((at.empty() ? "" : at + ": ") + "network parameter " + component + "." + name + " " + what);
  }
  std::optional<std::string> text(const char* name) const {
    const base::Value* v = find(name);
    if (!v) return std::nullopt;
    if (v->kind != base::Value::Kind::String) fail(name, "must be a string (it is " + v->str() + ")");
    return v->text;
  }
  // A whole number in [lo, hi].
  std::optional<std::uint32_t> count(const char* name, std::uint32_t lo, std::uint32_t hi) const {
    const base::Value* v = find(name);
    if (!v) return std::nullopt;
    if (v->kind != base::Value::Kind::Number || !v->dimension.dimensionless() || v->number != std::floor(v->number) ||
        v->number < lo || v->number > hi)
      fail(name, "= " + v->str() + " is out of range; it must be a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi));
    return static_cast<std::uint32_t>(v->number);
  }
  std::optional<std::uint64_t> bytes(const char* name, std::uint64_t lo) const {
    const base::Value* v = find(name);
    if (!v) return std::nullopt;
    if (v->kind != base::Value::Kind::Number || !(v->dimension == base::kBytes || v->dimension.dimensionless()) ||
        v->number != std::floor(v->number) || v->number < static_cast<double>(lo) || v->number > 1048576)
      fail(name, "= " + v->str() + " is out of range; it must be a whole number of bytes from " + std::to_string(lo) +
                     " to 1048576 (e.g. 8B)");
    return static_cast<std::uint64_t>(v->number);
  }
  std::optional<components::Picoseconds> time(const char* name) const {
    const base::Value* v = find(name);
    if (!v) return std::nullopt;
    std::optional<components::Picoseconds> ps;
    if (v->kind == base::Value::Kind::Number && v->dimension == base::kTime && v->number <= 1e12)
      ps = components::ns_to_ps(v->number);
    if (!ps) fail(name, "= " + v->str() + " is out of range; it must be a time from 0 to 1e12 ns (e.g. 100ns)");
    return ps;
  }
  std::optional<components::FemtosecondsPerByte> per_byte(const char* name) const {
    const base::Value* v = find(name);
    if (!v) return std::nullopt;
    std::optional<components::FemtosecondsPerByte> fs;
    if (v->kind == base::Value::Kind::Number && v->dimension == base::kTimePerByte && v->number <= 1e6)
      fs = components::ns_per_byte_to_fs(v->number);
    if (!fs)
      fail(name, "= " + v->str() + " is out of range; it must be a time per byte from 0 to 1e6 ns/B (e.g. 0.1ns/B)");
    return fs;
  }
  // A list of whole numbers, [4, 4, 4], or its text "4x4x4".
  std::optional<std::vector<std::uint32_t>> dims(const char* name) const {
    const base::Value* v = find(name);
    if (!v) return std::nullopt;
    std::vector<std::uint32_t> out;
    auto bad = [&] {
      fail(name,
           "= " + v->str() + " is not a list of dimensions; write e.g. [4, 4, 4] or \"4x4x4\" (each 1 to 16777216)");
    };
    if (v->kind == base::Value::Kind::List || v->kind == base::Value::Kind::Tuple) {
      for (const base::Value& item : v->items) {
        if (item.kind != base::Value::Kind::Number || !item.dimension.dimensionless() || item.number < 1 ||
            item.number > 16777216 || item.number != std::floor(item.number))
          bad();
        out.push_back(static_cast<std::uint32_t>(item.number));
      }
    } else if (v->kind == base::Value::Kind::String) {
      std::size_t at = 0;
      const std::string& t = v->text;
      while (at <= t.size()) {
        std::size_t end = t.find('x', at);
        if (end == std::string::npos) end = t.size();
        const std::string part = t.substr(at, end - at);
        if (part.empty() || part.size() > 8 || part.find_first_not_of("0123456789") != std::string::npos) bad();
        const unsigned long n = std::stoul(part);
        if (n < 1 || n > 16777216) bad();
        out.push_back(static_cast<std::uint32_t>(n));
        at = end + 1;
      }
    } else if (v->kind == base::Value::Kind::Number) {
      if (!v->dimension.dimensionless() || v->number < 1 || v->number > 16777216 || v->number != std::floor(v->number))
        bad();
      out.push_back(static_cast<std::uint32_t>(v->number));
    } else {
      bad();
    }
    if (out.empty() || out.size() > 8) bad();
    return out;
  }
};

}  // namespace

std::string network_file_path(const std::string& file, const std::string& directory) {
  if (file.empty()) return file;
  std::filesystem::path p(file);
  if (!p.is_absolute() && !directory.empty()) p = std::filesystem::path(directory) / p;
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(p, ec);
  return ec ? p.string() : absolute.lexically_normal().string();
}

const std::vector<std::string>& network_parameter_names() {
  static const std::vector<std::string> names = {"topology",
                                                 "dims",
                                                 "nodes",
                                                 "arity",
                                                 "levels",
                                                 "groups",
                                                 "routers_per_group",
                                                 "nodes_per_router",
                                                 "network_file",
                                                 "hop_latency",
                                                 "link_G",
                                                 "switching",
                                                 "header_bytes",
                                                 "control_bytes",
                                                 "flit_bytes",
                                                 "ranks_per_node",
                                                 "cores_per_node",
                                                 "time_sharing",
                                                 "mapping",
                                                 "wrap",
                                                 "map_file",
                                                 "shm_L",
                                                 "shm_o",
                                                 "shm_g",
                                                 "shm_G",
                                                 "shm_O",
                                                 "shm_S",
                                                 "contention",
                                                 "backbone_G",
                                                 "nic_G",
                                                 "rtt_bytes",
                                                 "wire_overhead_bytes",
                                                 "copy_G"};
  // Message-size regimes: from_K and L_K ... O_K between nodes, shm_from_K
  // and shm_L_K ... between ranks of one node (K = 1 .. kMaxSizeRegimes).
  static const std::vector<std::string> all = [] {
    std::vector<std::string> out = names;
    for (std::size_t k = 1; k <= components::kMaxSizeRegimes; ++k)
      for (const char* prefix : {"", "shm_"})
        for (const char* p : {"from", "L", "o", "g", "G", "O"})
          out.push_back(std::string(prefix) + p + "_" + std::to_string(k));
    return out;
  }();
  return all;
}

std::shared_ptr<const components::Network> network_of(const Parameters& values, const std::string& component,
                                                      const components::LogGOPS& network,
                                                      const std::function<std::string(const std::string&)>& where,
                                                      const std::string& directory) {
  Reader in{values, component, where};
  // A regime's parameter numbered past the last regime a machine may have is
  // an error, not a parameter nobody reads.
  for (const auto& [name, value] : values) {
    std::string_view rest(name);
    if (rest.substr(0, 4) == "shm_") rest.remove_prefix(4);
    const std::size_t bar = rest.find('_');
    if (bar == std::string_view::npos || bar + 1 == rest.size()) continue;
    const std::string_view stem = rest.substr(0, bar), number = rest.substr(bar + 1);
    if (stem != "from" && stem != "L" && stem != "o" && stem != "g" && stem != "G" && stem != "O") continue;
    if (number.find_first_not_of("0123456789") != std::string_view::npos) continue;
    const unsigned long k = number.size() > 3 ? ~0ul : std::stoul(std::string(number));
    if (k < 1 || k > components::kMaxSizeRegimes)
      in.fail(name.c_str(), "names message-size regime " + std::string(number) + "; a machine has regimes 1 to " +
                                std::to_string(components::kMaxSizeRegimes));
  }
  bool any = false;
  for (const std::string& n : network_parameter_names()) any = any || values.count(n);
  if (!any) return nullptr;

  components::NetworkSpec spec;
  components::TopologySpec& topo = spec.topology;
  if (auto name = in.text("topology")) {
    auto kind = components::parse_topology(*name);
    if (!kind)
      in.fail("topology", "= \"" + *name +
                              "\" is not a topology; allowed: complete, ring, mesh, torus, hypercube, "
                              "tree, fat-tree, dragonfly, file");
    topo.kind = *kind;
  }
  using K = components::TopologyKind;
  // Each topology's size parameters, in TopologySpec::dims order.
  auto need = [&](const char* name, std::uint32_t lo) {
    auto n = in.count(name, lo, 16777216);
    if (!n)
      in.fail(name, std::string("is missing: a ") + components::topology_name(topo.kind) +
                        " network needs it (e.g. param " + name + " = 4;)");
    return *n;
  };
  switch (topo.kind) {
    case K::Complete:
      if (auto n = in.count("nodes", 1, 16777216)) topo.dims = {*n};
      break;
    case K::Ring: topo.dims = {need("nodes", 2)}; break;
    case K::Mesh:
    case K::Torus: {
      auto d = in.dims("dims");
      if (!d)
        in.fail("dims", std::string("is missing: a ") + components::topology_name(topo.kind) +
                            " network needs its dimensions (e.g. param dims = [4, 4, 4];)");
      topo.dims = *d;
      break;
    }
    case K::Hypercube: topo.dims = {need("dims", 1)}; break;
    case K::Tree: topo.dims = {need("arity", 1), need("nodes", 1)}; break;
    case K::FatTree: topo.dims = {need("arity", 2), need("levels", 1)}; break;
    case K::Dragonfly:
      topo.dims = {need("groups", 1), need("routers_per_group", 1), need("nodes_per_router", 1)};
      break;
    case K::File: {
      auto f = in.text("network_file");
      if (!f) in.fail("network_file", "is missing: a network of topology \"file\" reads its nodes and links from one");
      topo.file = network_file_path(*f, directory);
      break;
    }
  }
  topo.hop_latency = in.time("hop_latency").value_or(0);
  topo.link_per_byte = in.per_byte("link_G").value_or(network.G);
  if (auto name = in.text("switching")) {
    auto kind = components::parse_switching(*name);
    if (!kind)
      in.fail("switching", "= \"" + *name +
                               "\" is not a switching technique; allowed: packet, cut-through, circuit, "
                               "wormhole");
    spec.switching.kind = *kind;
  }
  spec.switching.header_bytes = in.bytes("header_bytes", 0).value_or(0);
  spec.switching.control_bytes = in.bytes("control_bytes", 0).value_or(0);
  spec.switching.flit_bytes = in.bytes("flit_bytes", 1).value_or(8);
  spec.mapping.ranks_per_node = in.count("ranks_per_node", 1, 1u << 20).value_or(1);
  spec.cores_per_node = in.count("cores_per_node", 1, 1u << 20).value_or(0);
  if (auto name = in.text("time_sharing")) {
    auto rule = components::parse_time_sharing(*name);
    if (!rule)
      in.fail("time_sharing", "= \"" + *name + "\" is not a time-sharing rule; allowed: fcfs, processor-sharing");
    spec.time_sharing = *rule;
  }
  if (auto name = in.text("mapping")) {
    auto kind = components::parse_mapping(*name);
    if (!kind) in.fail("mapping", "= \"" + *name + "\" is not a mapping; allowed: block, round-robin, wrap, file");
    spec.mapping.kind = *kind;
  }
  if (spec.mapping.kind == components::MappingKind::Wrap) {
    auto list = in.dims("wrap");
    if (!list)
      in.fail("wrap",
              "is missing: a wrap mapping lists the nodes ranks go to in turn (e.g. param wrap = [0, 2, 1, 3];)");
    for (std::uint32_t n : *list) spec.mapping.wrap.push_back(n);
  }
  if (spec.mapping.kind == components::MappingKind::File) {
    auto f = in.text("map_file");
    if (!f) in.fail("map_file", "is missing: a file mapping reads \"rank node\" lines from one");
    spec.mapping.file = network_file_path(*f, directory);
  }
  if (auto name = in.text("contention")) {
    auto kind = components::parse_contention(*name);
    if (!kind) in.fail("contention", "= \"" + *name + "\" is not a contention model; allowed: none, max-min");
    spec.contention = *kind;
  }
  spec.backbone_per_byte = in.per_byte("backbone_G").value_or(0);
  spec.nic_per_byte = in.per_byte("nic_G");
  spec.rtt_bytes = in.bytes("rtt_bytes", 0);
  spec.wire_overhead_bytes = in.bytes("wire_overhead_bytes", 0).value_or(0);
  spec.copy_per_byte = in.per_byte("copy_G").value_or(0);
  // Shared memory between ranks of one node: each parameter not given is the network's.
  const char* shm[] = {"shm_L", "shm_o", "shm_g", "shm_G", "shm_O", "shm_S"};
  bool any_shm = false;
  for (const char* n : shm) any_shm = any_shm || values.count(n);
  if (any_shm) {
    components::LogGOPS intra = network;
    intra.L = in.time("shm_L").value_or(network.L);
    intra.o = in.time("shm_o").value_or(network.o);
    intra.g = in.time("shm_g").value_or(network.g);
    intra.G = in.per_byte("shm_G").value_or(network.G);
    intra.O = in.per_byte("shm_O").value_or(network.O);
    if (const base::Value* v = in.find("shm_S")) {
      if (v->kind != base::Value::Kind::Number || !(v->dimension == base::kBytes || v->dimension.dimensionless()) ||
          v->number < 0 || v->number > 9007199254740991.0 || v->number != std::floor(v->number))
        in.fail("shm_S", "= " + v->str() + " is out of range; it must be a whole number of bytes from 0 to 2^53 - 1");
      intra.S = static_cast<std::uint64_t>(v->number);
    }
    spec.intra = intra;
  }
  // Message-size regimes: regime K (from 1, in order) prices the messages of
  // at least from_K bytes; each parameter not given is the set below it's.
  auto regimes = [&](const std::string& prefix, const components::LogGOPS& base) {
    std::vector<components::SizeRegime> out;
    components::LogGOPS below = base;
    for (std::size_t k = 1; k <= components::kMaxSizeRegimes; ++k) {
      const std::string n = "_" + std::to_string(k);
      const std::string from = prefix + "from" + n;
      if (!values.count(from)) {
        for (const char* p : {"L", "o", "g", "G", "O"})
          if (values.count(prefix + p + n))
            in.fail((prefix + p + n).c_str(),
                    "has no " + from + ": a message-size regime starts at a size (e.g. param " + from + " = 4096B;)");
        continue;
      }
      if (out.size() != k - 1)
        in.fail(from.c_str(), "follows a missing " + prefix + "from_" + std::to_string(out.size() + 1) +
                                  ": regimes are numbered from 1 without gaps");
      components::SizeRegime r;
      const base::Value& v = values.at(from);
      if (v.kind != base::Value::Kind::Number || !(v.dimension == base::kBytes || v.dimension.dimensionless()) ||
          v.number != std::floor(v.number) || v.number < 1 || v.number > 1099511627776.0)
        in.fail(from.c_str(), "= " + v.str() + " is out of range; it must be a whole number of bytes from 1 to 2^40");
      r.from_bytes = static_cast<std::uint64_t>(v.number);
      if (!out.empty() && r.from_bytes <= out.back().from_bytes)
        in.fail(from.c_str(), "= " + std::to_string(r.from_bytes) + "B must be larger than " + prefix + "from_" +
                                  std::to_string(k - 1) + " = " + std::to_string(out.back().from_bytes) + "B");
      r.params = below;
      r.params.L = in.time((prefix + "L" + n).c_str()).value_or(below.L);
      r.params.o = in.time((prefix + "o" + n).c_str()).value_or(below.o);
      r.params.g = in.time((prefix + "g" + n).c_str()).value_or(below.g);
      r.params.G = in.per_byte((prefix + "G" + n).c_str()).value_or(below.G);
      r.params.O = in.per_byte((prefix + "O" + n).c_str()).value_or(below.O);
      below = r.params;
      out.push_back(r);
    }
    return out;
  };
  spec.regimes = regimes("", network);
  spec.intra_regimes = regimes("shm_", spec.intra.value_or(network));
  try {
    auto model = std::make_shared<const components::Network>(std::move(spec));
    if (model->flat()) return nullptr;
    return model;
  } catch (const components::NetworkError& e) {
    const std::string at = where ? where("topology") : std::string();
    throw InputError((at.empty() ? "" : at + ": ") + "network " + component + ": " + e.what());
  }
}

std::function<std::string(const std::string&)> parameter_locator(const psl::Program& program,
                                                                 const psl::ComponentDecl& c) {
  return [&program, &c](const std::string& parameter) {
    for (const psl::Binding& p : c.params)
      if (p.name.name == parameter) return program.location_text(p.name.location);
    return std::string();
  };
}

std::string component_directory(const psl::Program& program, const psl::ComponentDecl& c) {
  std::string directory;
  for (const psl::Module& m : program.modules)
    if (m.file == c.location.file) directory = std::filesystem::path(m.path).parent_path().string();
  return directory;
}

std::shared_ptr<const components::Network> network_of_component(const psl::Program& program,
                                                                const psl::ComponentDecl& c,
                                                                const Parameters& parameters,
                                                                const components::LogGOPS& network) {
  return network_of(parameters, c.name.name, network, parameter_locator(program, c), component_directory(program, c));
}

}  // namespace poems::core
