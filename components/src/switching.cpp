#include "poems/components/switching.h"

#include <stdexcept>
#include <string>

namespace poems::components {

namespace {

using Wide = unsigned __int128;

// k·G fs rounded to the nearest ps, half up.
Wide per_byte_ps(std::uint64_t bytes, FemtosecondsPerByte per_byte) {
  return (static_cast<Wide>(bytes) * per_byte + 500) / 1000;
}

}  // namespace

PathCost uniform_path(std::uint32_t hops, Picoseconds latency, FemtosecondsPerByte per_byte) {
  if (hops == 0) return {};
  return {hops, hops * latency, latency, hops * per_byte, per_byte};
}

const char* switching_name(Switching kind) {
  switch (kind) {
    case Switching::Packet: return "packet";
    case Switching::VirtualCutThrough: return "cut-through";
    case Switching::Circuit: return "circuit";
    case Switching::Wormhole: return "wormhole";
  }
  return "?";
}

std::optional<Switching> parse_switching(std::string_view name) {
  if (name == "packet" || name == "store-and-forward") return Switching::Packet;
  if (name == "cut-through" || name == "virtual-cut-through") return Switching::VirtualCutThrough;
  if (name == "circuit") return Switching::Circuit;
  if (name == "wormhole") return Switching::Wormhole;
  return std::nullopt;
}

Picoseconds SwitchingModel::time(const PathCost& path, std::uint64_t bytes) const {
  if (kind == Switching::Wormhole && flit_bytes == 0)
    throw std::invalid_argument("wormhole switching needs a flit size of 1 byte or more, got 0");
  if (path.hops == 0) return 0;
  Wide total = 0;
  switch (kind) {
    case Switching::Packet: total = Wide{path.latency_sum} + per_byte_ps(bytes, path.per_byte_sum); break;
    case Switching::VirtualCutThrough:
      total =
          Wide{path.latency_sum} + per_byte_ps(header_bytes, path.per_byte_sum) + per_byte_ps(bytes, path.per_byte_max);
      break;
    case Switching::Circuit:
      total = Wide{path.latency_sum} + per_byte_ps(control_bytes, path.per_byte_sum) +
              per_byte_ps(bytes, path.per_byte_max);
      break;
    case Switching::Wormhole: {
      const std::uint64_t flits = bytes == 0 ? 1 : bytes / flit_bytes + (bytes % flit_bytes != 0);
      const Wide stage = Wide{path.latency_max} + per_byte_ps(flit_bytes, path.per_byte_max);
      total = (Wide{path.hops} - 1 + flits) * stage;
      break;
    }
  }
  if (total > kMaxSwitchingTime)
    throw std::overflow_error(std::string(switching_name(kind)) + " switching time of " + std::to_string(bytes) +
                              " bytes over " + std::to_string(path.hops) + " hops exceeds 2^62 ps");
  return static_cast<Picoseconds>(total);
}

}  // namespace poems::components
