#include "poems/components/network.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace poems::components {

bool NetworkSpec::flat() const {
  return topology.kind == TopologyKind::Complete && mapping.ranks_per_node == 1 && mapping.kind == MappingKind::Block &&
         !intra && cores_per_node == 0 && contention == Contention::None && regimes.empty() && intra_regimes.empty() &&
         copy_per_byte == 0;
}

const char* contention_name(Contention c) { return c == Contention::MaxMin ? "max-min" : "none"; }

std::optional<Contention> parse_contention(std::string_view name) {
  if (name == "none") return Contention::None;
  if (name == "max-min" || name == "maxmin") return Contention::MaxMin;
  return std::nullopt;
}

const char* time_sharing_name(TimeSharing t) {
  return t == TimeSharing::ProcessorSharing ? "processor-sharing" : "fcfs";
}

std::optional<TimeSharing> parse_time_sharing(std::string_view name) {
  if (name == "fcfs") return TimeSharing::FirstCome;
  if (name == "processor-sharing") return TimeSharing::ProcessorSharing;
  return std::nullopt;
}

namespace {

Topology build_topology(TopologySpec spec) {
  // The complete network has as many nodes as the ranks need (nodes_for).
  if (spec.kind == TopologyKind::Complete && spec.dims.empty()) spec.dims = {1};
  try {
    return Topology::build(spec);
  } catch (const std::exception& e) {
    throw NetworkError(e.what());
  }
}

// The contents of a mapping or network file as the run key holds them, so
// that editing the file makes a new run (FNV-1a, 64 bits, in hex; "" if
// the file cannot be read, which building the Network already refused).
std::string file_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::uint64_t h = 0xcbf29ce484222325ull;
  char buffer[4096];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buffer[i]);
      h *= 0x100000001b3ull;
    }
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

}  // namespace

Network::Network(NetworkSpec spec) : spec_(std::move(spec)), topology_(build_topology(spec_.topology)) {
  if (spec_.mapping.ranks_per_node == 0 || spec_.mapping.ranks_per_node > (1u << 20))
    throw NetworkError("ranks_per_node = " + std::to_string(spec_.mapping.ranks_per_node) +
                       " is out of range; it must be from 1 to 1048576");
  if (spec_.cores_per_node > (1u << 20))
    throw NetworkError("cores_per_node = " + std::to_string(spec_.cores_per_node) +
                       " is out of range; it must be from 1 to 1048576");
  if (spec_.backbone_per_byte != 0 && !complete())
    throw NetworkError(std::string("backbone_G is for the complete network; a ") + topology_name(spec_.topology.kind) +
                       " routes over its own links");
  if (spec_.nic_per_byte && spec_.contention != Contention::MaxMin)
    throw NetworkError("nic_G needs contention = \"max-min\": without contention the NIC's per-byte gap is G");
  if (spec_.backbone_per_byte != 0 && spec_.contention != Contention::MaxMin)
    throw NetworkError("backbone_G needs contention = \"max-min\": without contention a shared link adds nothing");
  if (spec_.rtt_bytes && spec_.contention != Contention::MaxMin)
    throw NetworkError("rtt_bytes needs contention = \"max-min\": without contention no flows share a link");
  if (spec_.wire_overhead_bytes && spec_.contention != Contention::MaxMin)
    throw NetworkError(
        "wire_overhead_bytes needs contention = \"max-min\": without contention a message's latency already holds "
        "them");
  for (const auto* list : {&spec_.regimes, &spec_.intra_regimes}) {
    const char* prefix = list == &spec_.regimes ? "from_" : "shm_from_";
    if (list->size() > kMaxSizeRegimes)
      throw NetworkError(std::string("a machine has at most ") + std::to_string(kMaxSizeRegimes) + " " + prefix +
                         "K message-size regimes; this one has " + std::to_string(list->size()));
    for (std::size_t k = 0; k < list->size(); ++k)
      if ((*list)[k].from_bytes < 1 || (k > 0 && (*list)[k].from_bytes <= (*list)[k - 1].from_bytes))
        throw NetworkError(std::string(prefix) + std::to_string(k + 1) + " = " + std::to_string((*list)[k].from_bytes) +
                           "B is out of range; the regimes' sizes must be at least 1 byte and increase (" + prefix +
                           std::to_string(k + 1) + " > " + prefix + std::to_string(k) + ")");
  }
}

std::uint32_t Network::nodes_for(std::uint32_t ranks) const {
  if (!complete() || !spec_.topology.dims.empty()) return topology_.nodes();
  const std::uint32_t per = spec_.mapping.ranks_per_node;
  const std::uint32_t needed = static_cast<std::uint32_t>((std::uint64_t{ranks} + per - 1) / per);
  // A mapping that names nodes (wrap, file) may name more than the block
  // layout needs: the complete network has whatever nodes it names.
  std::uint32_t named = 0;
  for (std::uint32_t n : spec_.mapping.wrap) named = std::max(named, n + 1);
  if (spec_.mapping.kind == MappingKind::File) return std::max<std::uint32_t>({needed, ranks, 1});
  return std::max<std::uint32_t>({needed, named, 1});
}

RankPlacement Network::place(std::uint32_t ranks) const {
  RankPlacement p;
  p.nodes = nodes_for(ranks);
  try {
    p.node_of = map_ranks(spec_.mapping, ranks, p.nodes);
  } catch (const std::exception& e) {
    throw NetworkError(e.what());
  }
  p.ranks_on.assign(p.nodes, 0);
  p.local.resize(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) p.local[r] = p.ranks_on[p.node_of[r]]++;
  return p;
}

std::uint32_t Network::cores(std::uint32_t ranks_on_node, std::uint32_t cpus) const {
  if (spec_.cores_per_node != 0) return spec_.cores_per_node;
  return std::max<std::uint32_t>(1, ranks_on_node * cpus);
}

Picoseconds Network::path_delay(std::uint32_t a, std::uint32_t b, std::uint64_t bytes, FemtosecondsPerByte G) const {
  if (complete() || a == b) return 0;
  constexpr Picoseconds kSaturated = Picoseconds{1} << 61;
  Picoseconds t = 0;
  try {
    t = spec_.switching.time(topology_.path(a, b), bytes);
  } catch (const std::overflow_error&) {
    return kSaturated;
  }
  const Picoseconds endpoints = LogGOPS::per_byte(bytes, G);
  return std::min(kSaturated, t > endpoints ? t - endpoints : 0);
}

Picoseconds Network::flow_latency(std::uint32_t a, std::uint32_t b, std::uint64_t bytes) const {
  if (complete() || a == b) return 0;
  constexpr Picoseconds kSaturated = Picoseconds{1} << 61;
  const PathCost path = topology_.path(a, b);
  Picoseconds t = 0;
  try {
    t = spec_.switching.time(path, bytes);
  } catch (const std::overflow_error&) {
    return kSaturated;
  }
  const Picoseconds streaming = LogGOPS::per_byte(bytes, path.per_byte_max);
  return std::min(kSaturated, t > streaming ? t - streaming : 0);
}

std::string Network::describe() const {
  std::string text =
      complete() && spec_.topology.dims.empty() ? "complete network (direct links)" : topology_.describe();
  if (!complete()) text += std::string(", ") + switching_name(spec_.switching.kind) + " switching";
  text += ", " + std::to_string(spec_.mapping.ranks_per_node) + " rank" +
          (spec_.mapping.ranks_per_node == 1 ? "" : "s") + " per node (" + mapping_name(spec_.mapping.kind) + ")";
  if (spec_.cores_per_node) text += ", " + std::to_string(spec_.cores_per_node) + " cores per node";
  if (spec_.time_sharing != TimeSharing::FirstCome) text += std::string(", ") + time_sharing_name(spec_.time_sharing);
  if (spec_.contention != Contention::None)
    text += std::string(", ") + contention_name(spec_.contention) + " contention";
  if (spec_.backbone_per_byte) text += ", backbone G=" + format_fs_per_byte(spec_.backbone_per_byte);
  if (spec_.nic_per_byte) text += ", NIC G=" + format_fs_per_byte(*spec_.nic_per_byte);
  if (spec_.rtt_bytes) text += ", shares by route latency + " + std::to_string(*spec_.rtt_bytes) + "B x G";
  if (spec_.wire_overhead_bytes)
    text += ", " + std::to_string(spec_.wire_overhead_bytes) + "B more on the wire a message";
  auto params = [](const LogGOPS& p) {
    return "L=" + format_ps(p.L) + " o=" + format_ps(p.o) + " g=" + format_ps(p.g) + " G=" + format_fs_per_byte(p.G) +
           " O=" + format_fs_per_byte(p.O);
  };
  for (const SizeRegime& r : spec_.regimes) text += ", from " + std::to_string(r.from_bytes) + "B " + params(r.params);
  if (spec_.intra) text += ", shared memory " + params(*spec_.intra) + " S=" + std::to_string(spec_.intra->S) + "B";
  for (const SizeRegime& r : spec_.intra_regimes)
    text += ", shared memory from " + std::to_string(r.from_bytes) + "B " + params(r.params);
  if (spec_.copy_per_byte) text += ", own-block copy " + format_fs_per_byte(spec_.copy_per_byte);
  return text;
}

nlohmann::json network_key_json(const NetworkSpec& s) {
  if (s.flat()) return nullptr;
  nlohmann::json k;
  k["topology"] = topology_name(s.topology.kind);
  k["dims"] = s.topology.dims;
  if (!s.topology.file.empty()) {
    k["network_file"] = s.topology.file;
    k["network_file_fnv1a"] = file_digest(s.topology.file);
  }
  k["hop_latency_ps"] = s.topology.hop_latency;
  k["link_fs_per_byte"] = s.topology.link_per_byte;
  k["switching"] = switching_name(s.switching.kind);
  k["header_bytes"] = s.switching.header_bytes;
  k["control_bytes"] = s.switching.control_bytes;
  k["flit_bytes"] = s.switching.flit_bytes;
  k["ranks_per_node"] = s.mapping.ranks_per_node;
  k["mapping"] = mapping_name(s.mapping.kind);
  if (!s.mapping.wrap.empty()) k["wrap"] = s.mapping.wrap;
  if (!s.mapping.file.empty()) {
    k["map_file"] = s.mapping.file;
    k["map_file_fnv1a"] = file_digest(s.mapping.file);
  }
  k["cores_per_node"] = s.cores_per_node;
  if (s.intra) k["intra"] = machine_key_json(*s.intra, false);
  // Only when set: keys stored before contention existed still match.
  if (s.contention != Contention::None) k["contention"] = contention_name(s.contention);
  if (s.backbone_per_byte) k["backbone_fs_per_byte"] = s.backbone_per_byte;
  if (s.nic_per_byte) k["nic_fs_per_byte"] = *s.nic_per_byte;
  if (s.rtt_bytes) k["rtt_bytes"] = *s.rtt_bytes;
  if (s.wire_overhead_bytes) k["wire_overhead_bytes"] = s.wire_overhead_bytes;
  if (s.time_sharing != TimeSharing::FirstCome) k["time_sharing"] = time_sharing_name(s.time_sharing);
  auto regimes = [](const std::vector<SizeRegime>& list) {
    nlohmann::json a = nlohmann::json::array();
    for (const SizeRegime& r : list) {
      nlohmann::json j = machine_key_json(r.params, false);
      j["from_bytes"] = r.from_bytes;
      a.push_back(j);
    }
    return a;
  };
  if (!s.regimes.empty()) k["regimes"] = regimes(s.regimes);
  if (!s.intra_regimes.empty()) k["intra_regimes"] = regimes(s.intra_regimes);
  if (s.copy_per_byte) k["copy_fs_per_byte"] = s.copy_per_byte;
  return k;
}

NetworkSpec network_spec_from_json(const nlohmann::json& k) {
  try {
    NetworkSpec s;
    auto topology = parse_topology(k.at("topology").get<std::string>());
    auto switching = parse_switching(k.at("switching").get<std::string>());
    auto mapping = parse_mapping(k.at("mapping").get<std::string>());
    if (!topology || !switching || !mapping) throw NetworkError("a network key names an unknown kind");
    s.topology.kind = *topology;
    s.topology.dims = k.at("dims").get<std::vector<std::uint32_t>>();
    s.topology.file = k.value("network_file", std::string());
    s.topology.hop_latency = k.at("hop_latency_ps").get<Picoseconds>();
    s.topology.link_per_byte = k.at("link_fs_per_byte").get<FemtosecondsPerByte>();
    s.switching.kind = *switching;
    s.switching.header_bytes = k.at("header_bytes").get<std::uint64_t>();
    s.switching.control_bytes = k.at("control_bytes").get<std::uint64_t>();
    s.switching.flit_bytes = k.at("flit_bytes").get<std::uint64_t>();
    s.mapping.kind = *mapping;
    s.mapping.ranks_per_node = k.at("ranks_per_node").get<std::uint32_t>();
    s.mapping.wrap = k.value("wrap", std::vector<std::uint32_t>{});
    s.mapping.file = k.value("map_file", std::string());
    s.cores_per_node = k.at("cores_per_node").get<std::uint32_t>();
    if (k.contains("contention")) {
      auto contention = parse_contention(k.at("contention").get<std::string>());
      if (!contention) throw NetworkError("a network key names an unknown contention model");
      s.contention = *contention;
    }
    s.backbone_per_byte = k.value("backbone_fs_per_byte", FemtosecondsPerByte{0});
    if (k.contains("nic_fs_per_byte")) s.nic_per_byte = k.at("nic_fs_per_byte").get<FemtosecondsPerByte>();
    if (k.contains("rtt_bytes")) s.rtt_bytes = k.at("rtt_bytes").get<std::uint64_t>();
    s.wire_overhead_bytes = k.value("wire_overhead_bytes", std::uint64_t{0});
    if (k.contains("time_sharing")) {
      auto sharing = parse_time_sharing(k.at("time_sharing").get<std::string>());
      if (!sharing) throw NetworkError("a network key names an unknown time-sharing rule");
      s.time_sharing = *sharing;
    }
    auto loggops = [](const nlohmann::json& i) {
      LogGOPS p;
      p.L = i.at("L_ps").get<Picoseconds>();
      p.o = i.at("o_ps").get<Picoseconds>();
      p.g = i.at("g_ps").get<Picoseconds>();
      p.G = i.at("G_fs_per_byte").get<FemtosecondsPerByte>();
      p.O = i.at("O_fs_per_byte").get<FemtosecondsPerByte>();
      p.S = i.at("S_bytes").get<std::uint64_t>();
      return p;
    };
    if (k.contains("intra")) s.intra = loggops(k.at("intra"));
    auto regimes = [&](const char* name, std::vector<SizeRegime>& out) {
      if (!k.contains(name)) return;
      for (const nlohmann::json& r : k.at(name)) out.push_back({r.at("from_bytes").get<std::uint64_t>(), loggops(r)});
    };
    regimes("regimes", s.regimes);
    regimes("intra_regimes", s.intra_regimes);
    s.copy_per_byte = k.value("copy_fs_per_byte", FemtosecondsPerByte{0});
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw NetworkError(std::string("a malformed network key: ") + e.what());
  }
}

}  // namespace poems::components
