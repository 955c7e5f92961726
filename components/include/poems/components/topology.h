// The network as a graph of compute nodes, switches and links, with
// deterministic routing: which links a message from node a to node b crosses,
// and what that route costs (PathCost, for the switching formulas). Built-in
// topologies have identical links (one latency, one per-byte time); a network
// file gives each link its own.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "poems/components/loggops.h"
#include "poems/components/switching.h"

namespace poems::components {

enum class TopologyKind : std::uint8_t { Complete, Ring, Mesh, Torus, Hypercube, Tree, FatTree, Dragonfly, File };

// "complete", "ring", "mesh", "torus", "hypercube", "tree", "fat-tree", "dragonfly", "file".
const char* topology_name(TopologyKind kind);
// The names above (and "fattree").
std::optional<TopologyKind> parse_topology(std::string_view name);

struct TopologySpec {
  TopologyKind kind = TopologyKind::Complete;
  // Complete {nodes}; Ring {n}; Mesh and Torus {k1, ..., km}; Hypercube {m}
  // (2^m nodes); Tree {k, nodes}; FatTree {k, n} (k-ary n-tree, k^n nodes);
  // Dragonfly {groups, routers per group, nodes per router}.
  std::vector<std::uint32_t> dims;
  std::string file;                       // File: the network file's path
  Picoseconds hop_latency = 0;            // l of every link (built-in kinds)
  FemtosecondsPerByte link_per_byte = 0;  // G of every link (built-in kinds)
};

// A bad specification or network file: the message names the parameter and
// its allowed range, or is "file:line:col: error: ..." for a network file.
class TopologyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Limits (each a TopologyError when exceeded).
inline constexpr std::uint32_t kMaxTopologyNodes = std::uint32_t{1} << 24;  // compute nodes, every kind
inline constexpr std::uint32_t kMaxFileNodes = 4096;                        // compute nodes of a network file
inline constexpr std::uint32_t kMaxFileSwitches = 4096;                     // switches of a network file
inline constexpr std::uint32_t kMaxFileLinks = 65536;                       // links of a network file
// A network file's routes are computed at build, one breadth-first search per
// node, into a table of nodes x (nodes + switches) next links (at most 128 MiB).

// Routing rules (hops d of a route from a to b, a != b):
//   Complete: a direct link, d = 1.
//   Ring n: the shorter way round, d = min(|a-b|, n-|a-b|); a tie goes the positive way,
//     except from k/2 to 0 (the negative way), as SimGrid's torus routes.
//   Mesh k1 x ... x km: dimension order (first dimension first), d = sum |ai - bi|,
//     node id = a1 + k1·(a2 + k2·(...)).
//   Torus: dimension order, the shorter way round in each dimension (a tie as on a ring), d = sum min(|ai-bi|,
//   ki-|ai-bi|). Hypercube m: dimension order over the bits, d = Hamming distance (a 2 x ... x 2 mesh). Tree {k,
//   nodes}: every vertex is a compute node, the parent of i is (i-1)/k;
//     up to the lowest common ancestor and down, d = depth(a) + depth(b) - 2·depth(lca).
//   FatTree {k, n}: compute nodes at the leaves under n levels of k^(n-1)
//     switches each (the k-ary n-tree, as SimGrid's FAT_TREE cluster
//     "n;k,...,k;1,k,...,k;1,...,1"); up to the lowest common level and down,
//     d = 2j with j the smallest level >= 1 where a/k^j == b/k^j; going up, level
//     l picks its parent by digit l-1 of b (d-mod-k), as SimGrid does.
//   Dragonfly {g, a, p}: node x is on router x/p, router r in group r/a; every
//     pair of routers of a group has a local link, every pair of groups one
//     global link, held in group i by router (j mod a) for the link to group j
//     (SimGrid's DRAGONFLY cluster "g,1;1,1;a,1;p" when a >= g). Minimal
//     routing: node->router, a local link to the router holding the global link
//     (none if it is the source router), the global link, a local link to the
//     destination router (none if it holds the link), router->node: 2 hops on
//     one router, 3 in one group, 3 to 5 between groups.
//   File: fewest hops; among those, at each step the link of lowest id (the
//     order of declaration) that stays on a fewest-hop route.
class Topology {
 public:
  // Throws TopologyError naming the parameter and its allowed range ("torus
  // dimensions must be 2 or more each, got 1 in 4x1"), or "file:line:col:
  // error: ..." for a network file.
  static Topology build(const TopologySpec& spec);
  // A network file given as text (`name` is what its errors call it).
  static Topology from_network_text(std::string_view name, std::string_view text);

  TopologyKind kind() const { return kind_; }
  std::uint32_t nodes() const { return nodes_; }  // compute nodes (endpoints)
  std::uint32_t links() const { return links_; }  // link ids are 0 .. links()-1

  // The cost of the route from a to b (a == b: 0 hops). No allocation; O(1)
  // on the regular kinds, O(depth) on trees, O(hops) on a network file.
  // Throws std::out_of_range for a node id >= nodes().
  PathCost path(std::uint32_t a, std::uint32_t b) const;
  // The links of the same route, in order (links_out is cleared first); a
  // link is one id for both directions.
  void route(std::uint32_t a, std::uint32_t b, std::vector<std::uint32_t>& links_out) const;
  // The same route with each link's direction, as 2·id + 0 (from the link's
  // first end to its second: the positive way of a dimension, up a tree, the
  // lower-numbered end first) or 2·id + 1 (the other way): a link carries
  // each direction at its full speed (full duplex), so contention is per
  // direction.
  void route_directed(std::uint32_t a, std::uint32_t b, std::vector<std::uint32_t>& out) const;
  // Link `id`'s per-byte time (fs/B; 0: no limit). std::out_of_range past links().
  FemtosecondsPerByte link_per_byte(std::uint32_t id) const;
  // A short class name of link `id` for per-class reports: "direct", "ring",
  // "x", "y", "z", "d3", ... (mesh, torus, hypercube dimensions), "tree",
  // "node" (a compute node's link to its switch or router), "level1-2", ...
  // (fat tree), "local", "global" (dragonfly), "switch" (file: between switches).
  std::string_view link_class(std::uint32_t id) const;
  // "torus 4x4x4, 64 nodes, dimension-order routing".
  std::string describe() const;

 private:
  struct FileLink {
    std::uint32_t a, b;  // vertices: compute nodes 0..N-1, then switches
    Picoseconds latency;
    FemtosecondsPerByte per_byte;
  };
  void check_node(std::uint32_t id) const;
  std::uint32_t hops(std::uint32_t a, std::uint32_t b) const;
  template <class Visit>
  void walk_route(std::uint32_t a, std::uint32_t b, Visit&& visit) const;
  template <class Visit>
  void walk_file(std::uint32_t a, std::uint32_t b, Visit&& visit) const;

  TopologyKind kind_ = TopologyKind::Complete;
  std::vector<std::uint32_t> dims_;
  std::vector<std::uint64_t> strides_;  // mesh, torus: node id stride of each dimension
  std::vector<std::uint64_t> offsets_;  // mesh, torus: first link id of each dimension
  std::uint32_t nodes_ = 0;
  std::uint32_t links_ = 0;
  Picoseconds hop_latency_ = 0;
  FemtosecondsPerByte link_per_byte_ = 0;
  std::string file_;
  std::uint32_t switches_ = 0;
  std::vector<FileLink> file_links_;
  // next_link_[b * vertices + v]: the link a route to compute node b takes from vertex v.
  std::vector<std::uint32_t> next_link_;
  std::vector<std::string> class_names_;
};

}  // namespace poems::components
