// Placing MPI ranks on the machine's nodes: block, round-robin, PUPPET's
// generalized wrap (a list of nodes, repeated) or a mapping file.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace poems::components {

enum class MappingKind : std::uint8_t { Block, RoundRobin, Wrap, File };

struct MappingSpec {
  MappingKind kind = MappingKind::Block;
  std::uint32_t ranks_per_node = 1;  // block and round-robin: at most this many ranks on a node
  std::vector<std::uint32_t> wrap;   // Wrap: node ids, repeated over the ranks
  std::string file;                  // File: the mapping file's path
};

// A bad mapping: which rank, which node, where in the file.
class MappingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// node_of[r] for each rank r < ranks on a machine of `nodes` nodes:
//   Block: r / ranks_per_node (ranks 0..c-1 on node 0, and so on).
//   RoundRobin: r % used, used = ceil(ranks / ranks_per_node) nodes, so each
//     node holds at most ranks_per_node ranks.
//   Wrap: wrap[r % wrap.size()].
//   File: lines "rank node" ('#' starts a comment), each rank exactly once.
// Block and round-robin refuse more ranks than nodes·ranks_per_node; wrap and
// file place ranks as told (more ranks on a node than its cores is
// multitasking, the machine's business). Throws MappingError: "rank 5 is
// placed on node 9, but the machine has 8 nodes (0..7)", "file:line:col:
// error: rank 3 is placed twice (first at line 2)", "file: error: rank 4 is
// not placed" (the first missing rank).
std::vector<std::uint32_t> map_ranks(const MappingSpec& spec, std::uint32_t ranks, std::uint32_t nodes);
// A mapping file given as text (`name` is what its errors call it).
std::vector<std::uint32_t> map_ranks_from_text(std::string_view name, std::string_view text, std::uint32_t ranks,
                                               std::uint32_t nodes);

// "block", "round-robin", "wrap", "file".
const char* mapping_name(MappingKind kind);
std::optional<MappingKind> parse_mapping(std::string_view name);

}  // namespace poems::components
