// Topologies and deterministic routing: hop counts and routes worked out by
// hand, each switching technique on each topology, network files and every
// error's text.
#include "poems/components/topology.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>

// Counts the allocations of this test program, to show that path() makes none.
// GCC takes the replaced pair (malloc inside new, free inside delete) for a
// mismatch once inlined; it is the standard way to replace them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<std::uint64_t> allocations{0};
}
void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace poems::components {
namespace {

constexpr Picoseconds kL = 50'000;           // 50 ns a hop
constexpr FemtosecondsPerByte kG = 100'000;  // 0.1 ns/B a link

Topology make(TopologyKind kind, std::vector<std::uint32_t> dims) {
  TopologySpec spec;
  spec.kind = kind;
  spec.dims = std::move(dims);
  spec.hop_latency = kL;
  spec.link_per_byte = kG;
  return Topology::build(spec);
}

std::string build_error(TopologyKind kind, std::vector<std::uint32_t> dims, Picoseconds latency = 0) {
  TopologySpec spec;
  spec.kind = kind;
  spec.dims = std::move(dims);
  spec.hop_latency = latency;
  try {
    Topology::build(spec);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string text_error(std::string_view text) {
  try {
    Topology::from_network_text("net", text);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::uint32_t> route_of(const Topology& t, std::uint32_t a, std::uint32_t b) {
  std::vector<std::uint32_t> links;
  t.route(a, b, links);
  return links;
}

std::vector<std::string> classes_of(const Topology& t, const std::vector<std::uint32_t>& links) {
  std::vector<std::string> names;
  for (std::uint32_t id : links) names.emplace_back(t.link_class(id));
  return names;
}

// Every pair: route() has path().hops links, each a valid id, and no route from a node to itself.
void expect_routes_consistent(const Topology& t) {
  std::vector<std::uint32_t> links;
  for (std::uint32_t a = 0; a < t.nodes(); ++a)
    for (std::uint32_t b = 0; b < t.nodes(); ++b) {
      t.route(a, b, links);
      ASSERT_EQ(links.size(), t.path(a, b).hops) << t.describe() << ": " << a << " -> " << b;
      for (std::uint32_t id : links) ASSERT_LT(id, t.links()) << t.describe() << ": " << a << " -> " << b;
      if (a == b) {
        ASSERT_TRUE(links.empty());
      }
    }
}

TEST(Topology, HopsByHandOnEachKind) {
  EXPECT_EQ(make(TopologyKind::Complete, {8}).path(0, 5).hops, 1u);
  const Topology ring = make(TopologyKind::Ring, {8});
  EXPECT_EQ(ring.path(1, 6).hops, 3u);  // min(5, 8 - 5)
  EXPECT_EQ(ring.path(0, 4).hops, 4u);  // a tie
  const Topology mesh = make(TopologyKind::Mesh, {4, 4});
  EXPECT_EQ(mesh.path(0, 15).hops, 6u);  // (0,0) -> (3,3): 3 + 3
  EXPECT_EQ(mesh.path(5, 6).hops, 1u);   // (1,1) -> (2,1)
  const Topology torus = make(TopologyKind::Torus, {4, 4});
  EXPECT_EQ(torus.path(0, 10).hops, 4u);  // (0,0) -> (2,2): 2 + 2
  EXPECT_EQ(torus.path(0, 15).hops, 2u);  // (0,0) -> (3,3): 1 + 1 the other way round
  const Topology cube = make(TopologyKind::Hypercube, {3});
  EXPECT_EQ(cube.nodes(), 8u);
  EXPECT_EQ(cube.path(0, 7).hops, 3u);  // 000 -> 111
  EXPECT_EQ(cube.path(1, 6).hops, 3u);  // 001 -> 110
  EXPECT_EQ(cube.path(2, 3).hops, 1u);  // 010 -> 011
  const Topology tree = make(TopologyKind::Tree, {2, 7});
  EXPECT_EQ(tree.path(3, 4).hops, 2u);  // siblings under 1
  EXPECT_EQ(tree.path(3, 6).hops, 4u);  // 3 -> 1 -> 0 -> 2 -> 6
  EXPECT_EQ(tree.path(0, 5).hops, 2u);  // 0 -> 2 -> 5
  EXPECT_EQ(tree.path(1, 3).hops, 1u);  // parent and child
  const Topology chain = make(TopologyKind::Tree, {1, 5});
  EXPECT_EQ(chain.path(4, 1).hops, 3u);
  const Topology fat = make(TopologyKind::FatTree, {2, 3});
  EXPECT_EQ(fat.nodes(), 8u);
  EXPECT_EQ(fat.path(0, 1).hops, 2u);  // one leaf switch
  EXPECT_EQ(fat.path(0, 2).hops, 4u);  // up to level 2
  EXPECT_EQ(fat.path(0, 7).hops, 6u);  // up to level 3
  EXPECT_EQ(fat.path(5, 4).hops, 2u);
  // Dragonfly: 3 groups of 4 routers of 2 nodes; node x on router x/2, router r in group r/4.
  const Topology fly = make(TopologyKind::Dragonfly, {3, 4, 2});
  EXPECT_EQ(fly.nodes(), 24u);
  EXPECT_EQ(fly.path(0, 1).hops, 2u);  // one router
  EXPECT_EQ(fly.path(0, 2).hops, 3u);  // routers 0 and 1 of group 0
  // Group 0 -> group 1: router 1 of group 0 holds the link, to router 4 (router 0 of group 1).
  EXPECT_EQ(fly.path(0, 8).hops, 4u);   // node, local 0-1, global, node
  EXPECT_EQ(fly.path(2, 8).hops, 3u);   // router 1 -> router 4 directly: node, global, node
  EXPECT_EQ(fly.path(0, 23).hops, 5u);  // node, local 0-2, global, local 8-11, node
  EXPECT_EQ(fly.path(7, 7).hops, 0u);
}

TEST(Topology, RoutesByHand) {
  // Torus 4x4: x links are 0..15 (node u owns u -> u+x), y links 16..31.
  const Topology torus = make(TopologyKind::Torus, {4, 4});
  EXPECT_EQ(torus.links(), 32u);
  EXPECT_EQ(route_of(torus, 0, 10), (std::vector<std::uint32_t>{0, 1, 18, 22}));  // ties go +x, then +y
  EXPECT_EQ(classes_of(torus, route_of(torus, 0, 10)), (std::vector<std::string>{"x", "x", "y", "y"}));
  EXPECT_EQ(route_of(torus, 0, 3), (std::vector<std::uint32_t>{3}));  // -x: the link node 3 owns
  // Mesh 4x4: 3 x links per row (row r: 3r .. 3r+2), then y links 12 + c + 3·column.
  const Topology mesh = make(TopologyKind::Mesh, {4, 4});
  EXPECT_EQ(mesh.links(), 24u);
  EXPECT_EQ(route_of(mesh, 0, 15), (std::vector<std::uint32_t>{0, 1, 2, 21, 22, 23}));
  EXPECT_EQ(route_of(mesh, 15, 0), (std::vector<std::uint32_t>{11, 10, 9, 14, 13, 12}));
  // Hypercube 3: dimension i's links are 4i + (the node without bit i).
  const Topology cube = make(TopologyKind::Hypercube, {3});
  EXPECT_EQ(cube.links(), 12u);
  EXPECT_EQ(route_of(cube, 0, 7), (std::vector<std::uint32_t>{0, 5, 11}));
  EXPECT_EQ(classes_of(cube, route_of(cube, 0, 7)), (std::vector<std::string>{"x", "y", "z"}));
  // Tree: vertex v owns link v-1 to its parent.
  const Topology tree = make(TopologyKind::Tree, {2, 7});
  EXPECT_EQ(tree.links(), 6u);
  EXPECT_EQ(route_of(tree, 3, 6), (std::vector<std::uint32_t>{2, 0, 1, 5}));
  // Ring 8: a tie goes the positive way.
  EXPECT_EQ(route_of(make(TopologyKind::Ring, {8}), 0, 4), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(route_of(make(TopologyKind::Ring, {8}), 1, 6), (std::vector<std::uint32_t>{0, 7, 6}));
  // Fat tree 2-ary 3-tree: node links 0..7, level 1-2 links 8..15, level 2-3 links 16..23
  // (level-l switch w's up link to the switch with digit l-1 set to c is 8l + 2w + c).
  const Topology fat = make(TopologyKind::FatTree, {2, 3});
  EXPECT_EQ(fat.links(), 24u);
  EXPECT_EQ(route_of(fat, 0, 7), (std::vector<std::uint32_t>{0, 9, 19, 23, 15, 7}));
  EXPECT_EQ(classes_of(fat, route_of(fat, 0, 7)),
            (std::vector<std::string>{"node", "level1-2", "level2-3", "level2-3", "level1-2", "node"}));
  // Dragonfly 3x4x2: node links 0..23, local links 24..41 (6 a group), global 42..44.
  const Topology fly = make(TopologyKind::Dragonfly, {3, 4, 2});
  EXPECT_EQ(fly.links(), 45u);
  EXPECT_EQ(route_of(fly, 0, 23), (std::vector<std::uint32_t>{0, 25, 43, 38, 23}));
  EXPECT_EQ(classes_of(fly, route_of(fly, 0, 23)),
            (std::vector<std::string>{"node", "local", "global", "local", "node"}));
  // Complete 4: pair links (0,1) 0, (0,2) 1, (0,3) 2, (1,2) 3, (1,3) 4, (2,3) 5.
  EXPECT_EQ(route_of(make(TopologyKind::Complete, {4}), 3, 1), (std::vector<std::uint32_t>{4}));
}

TEST(Topology, RoutesAgreeWithPathsOnEveryPair) {
  expect_routes_consistent(make(TopologyKind::Complete, {6}));
  expect_routes_consistent(make(TopologyKind::Ring, {7}));
  expect_routes_consistent(make(TopologyKind::Ring, {2}));
  expect_routes_consistent(make(TopologyKind::Mesh, {3, 4, 2}));
  expect_routes_consistent(make(TopologyKind::Torus, {3, 4, 2}));
  expect_routes_consistent(make(TopologyKind::Hypercube, {4}));
  expect_routes_consistent(make(TopologyKind::Tree, {3, 20}));
  expect_routes_consistent(make(TopologyKind::Tree, {1, 6}));
  expect_routes_consistent(make(TopologyKind::FatTree, {3, 3}));
  expect_routes_consistent(make(TopologyKind::Dragonfly, {5, 3, 2}));  // fewer routers than groups
  expect_routes_consistent(make(TopologyKind::Dragonfly, {1, 3, 2}));
}

TEST(Topology, HypercubeHasTheHopsOfTorusTwoByTwoByTwo) {
  const Topology cube = make(TopologyKind::Hypercube, {3});
  const Topology torus = make(TopologyKind::Torus, {2, 2, 2});
  for (std::uint32_t a = 0; a < 8; ++a)
    for (std::uint32_t b = 0; b < 8; ++b) EXPECT_EQ(cube.path(a, b).hops, torus.path(a, b).hops) << a << " " << b;
}

TEST(Topology, TorusHopsMatchTheFormulaOnEveryPair) {
  // Torus 5x4x3: sum over dimensions of min(|ai - bi|, ki - |ai - bi|).
  const std::uint32_t k[3] = {5, 4, 3};
  const Topology torus = make(TopologyKind::Torus, {5, 4, 3});
  for (std::uint32_t a = 0; a < 60; ++a)
    for (std::uint32_t b = 0; b < 60; ++b) {
      std::uint32_t expected = 0, x = a, y = b;
      for (std::uint32_t ki : k) {
        const std::uint32_t d = x % ki > y % ki ? x % ki - y % ki : y % ki - x % ki;
        expected += std::min(d, ki - d);
        x /= ki, y /= ki;
      }
      ASSERT_EQ(torus.path(a, b).hops, expected) << a << " " << b;
    }
}

// Each switching technique on each topology: d from the routing, then PUPPET's
// formula with l = 50 ns, G = 0.1 ns/B, s = 100 B, h = 16, c = 8, f = 8:
//   packet      d·(50 + 10) ns                    = 60 d ns
//   cut-through d·(50 + 1.6) ns + 10 ns           = 51.6 d + 10 ns
//   circuit     d·(50 + 0.8) ns + 10 ns           = 50.8 d + 10 ns
//   wormhole    (d - 1 + 13)·(50 + 0.8) ns        = 50.8 (d + 12) ns
TEST(Topology, EachSwitchingOnEachTopology) {
  struct Case {
    TopologyKind kind;
    std::vector<std::uint32_t> dims;
    std::uint32_t a, b, hops;
    Picoseconds packet, cut_through, circuit, wormhole;
  };
  const Case cases[] = {
      {TopologyKind::Complete, {8}, 0, 5, 1, 60'000, 61'600, 60'800, 660'400},
      {TopologyKind::Ring, {8}, 1, 6, 3, 180'000, 164'800, 162'400, 762'000},
      {TopologyKind::Mesh, {4, 4}, 0, 15, 6, 360'000, 319'600, 314'800, 914'400},
      {TopologyKind::Torus, {4, 4}, 0, 10, 4, 240'000, 216'400, 213'200, 812'800},
      {TopologyKind::Hypercube, {3}, 1, 6, 3, 180'000, 164'800, 162'400, 762'000},
      {TopologyKind::Tree, {2, 7}, 3, 6, 4, 240'000, 216'400, 213'200, 812'800},
      {TopologyKind::FatTree, {2, 3}, 0, 2, 4, 240'000, 216'400, 213'200, 812'800},
      {TopologyKind::FatTree, {2, 3}, 0, 7, 6, 360'000, 319'600, 314'800, 914'400},
      {TopologyKind::Dragonfly, {3, 4, 2}, 0, 1, 2, 120'000, 113'200, 111'600, 711'200},
      {TopologyKind::Dragonfly, {3, 4, 2}, 0, 23, 5, 300'000, 268'000, 264'000, 863'600},
  };
  for (const Case& c : cases) {
    const Topology t = make(c.kind, c.dims);
    const PathCost path = t.path(c.a, c.b);
    EXPECT_EQ(path, uniform_path(c.hops, kL, kG)) << t.describe();
    SwitchingModel m;
    m.header_bytes = 16, m.control_bytes = 8, m.flit_bytes = 8;
    m.kind = Switching::Packet;
    EXPECT_EQ(m.time(path, 100), c.packet) << t.describe();
    m.kind = Switching::VirtualCutThrough;
    EXPECT_EQ(m.time(path, 100), c.cut_through) << t.describe();
    m.kind = Switching::Circuit;
    EXPECT_EQ(m.time(path, 100), c.circuit) << t.describe();
    m.kind = Switching::Wormhole;
    EXPECT_EQ(m.time(path, 100), c.wormhole) << t.describe();
  }
}

TEST(Topology, PathMakesNoAllocation) {
  const Topology topologies[] = {make(TopologyKind::Torus, {4, 4, 4}),
                                 make(TopologyKind::FatTree, {4, 3}),
                                 make(TopologyKind::Dragonfly, {4, 4, 4}),
                                 make(TopologyKind::Tree, {3, 64}),
                                 make(TopologyKind::Mesh, {8, 8}),
                                 Topology::from_network_text("net",
                                                             "nodes 4\nswitches 1\n"
                                                             "link n0 s0 latency 1ns bandwidth 1GB/s\n"
                                                             "link n1 s0 latency 1ns bandwidth 1GB/s\n"
                                                             "link n2 s0 latency 1ns bandwidth 1GB/s\n"
                                                             "link n3 n2 latency 1ns bandwidth 1GB/s\n")};
  std::uint64_t hops = 0;
  const std::uint64_t before = allocations.load();
  for (const Topology& t : topologies)
    for (std::uint32_t a = 0; a < t.nodes(); ++a)
      for (std::uint32_t b = 0; b < t.nodes(); ++b) hops += t.path(a, b).hops;
  EXPECT_EQ(allocations.load() - before, 0u);
  EXPECT_GT(hops, 0u);
}

TEST(Topology, Describe) {
  EXPECT_EQ(make(TopologyKind::Torus, {4, 4, 4}).describe(), "torus 4x4x4, 64 nodes, dimension-order routing");
  EXPECT_EQ(make(TopologyKind::FatTree, {2, 3}).describe(),
            "fat tree 2-ary 3-tree, 8 nodes, 12 switches, up/down routing");
  EXPECT_EQ(make(TopologyKind::Dragonfly, {3, 4, 2}).describe(),
            "dragonfly 3 groups x 4 routers x 2 nodes, 24 nodes, minimal routing");
  EXPECT_EQ(make(TopologyKind::Complete, {8}).describe(), "complete, 8 nodes, direct links");
}

TEST(Topology, Names) {
  for (auto kind :
       {TopologyKind::Complete, TopologyKind::Ring, TopologyKind::Mesh, TopologyKind::Torus, TopologyKind::Hypercube,
        TopologyKind::Tree, TopologyKind::FatTree, TopologyKind::Dragonfly, TopologyKind::File})
    EXPECT_EQ(parse_topology(topology_name(kind)), kind);
  EXPECT_EQ(parse_topology("fattree"), TopologyKind::FatTree);
  EXPECT_STREQ(topology_name(TopologyKind::FatTree), "fat-tree");
  EXPECT_EQ(parse_topology("butterfly"), std::nullopt);
}

TEST(Topology, SpecErrorsNameTheParameterAndRange) {
  EXPECT_EQ(build_error(TopologyKind::Torus, {4, 1}), "torus dimensions must be 2 or more each, got 1 in 4x1");
  EXPECT_EQ(build_error(TopologyKind::Mesh, {}), "mesh topology wants its dimensions {k1, ..., km}, got none");
  EXPECT_EQ(build_error(TopologyKind::Torus, {4096, 4096, 2}), "torus 4096x4096x2 has more than 16777216 nodes");
  EXPECT_EQ(build_error(TopologyKind::Ring, {1}), "ring nodes must be 2 to 16777216, got 1");
  EXPECT_EQ(build_error(TopologyKind::Ring, {4, 4}), "ring topology wants {nodes}, got 2 values");
  EXPECT_EQ(build_error(TopologyKind::Hypercube, {25}), "hypercube dimension must be 1 to 24 (2^m nodes), got 25");
  EXPECT_EQ(build_error(TopologyKind::Tree, {0, 5}), "tree arity k must be 1 or more, got 0");
  EXPECT_EQ(build_error(TopologyKind::Tree, {2, 0}), "tree nodes must be 1 to 16777216, got 0");
  EXPECT_EQ(build_error(TopologyKind::FatTree, {1, 3}), "fat tree arity k must be 2 or more, got 1");
  EXPECT_EQ(build_error(TopologyKind::FatTree, {2, 25}), "fat tree 2-ary 25-tree has more than 16777216 nodes (k^n)");
  EXPECT_EQ(build_error(TopologyKind::Dragonfly, {2, 0, 1}), "dragonfly routers per group must be 1 or more, got 0");
  EXPECT_EQ(build_error(TopologyKind::Dragonfly, {2, 2}),
            "dragonfly topology wants {groups, routers per group, nodes per router}, got 2 values");
  EXPECT_EQ(build_error(TopologyKind::Dragonfly, {1, 16777216, 1}),
            "dragonfly topology 1x16777216x1 has 140737496743936 links, more than the 2^32 - 1 that link ids can "
            "number");
  EXPECT_EQ(build_error(TopologyKind::Complete, {100000}),
            "complete topology nodes must be 1 to 92682 (its n(n-1)/2 links are numbered in 32 bits), got 100000");
  // 2^23 hops of 2^40 ps: 2^63 ps.
  EXPECT_EQ(build_error(TopologyKind::Ring, {16777216}, Picoseconds{1} << 40),
            "link latency or per-byte time too large: a route of up to 8388608 hops would exceed 2^62 ps (or fs per "
            "byte)");
  const Topology torus = make(TopologyKind::Torus, {4, 4, 4});
  try {
    torus.path(0, 64);
    ADD_FAILURE() << "no error";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "node 64 is not in the topology (64 nodes)");
  }
}

// Three nodes, three switches; n0 and n1 on s0, n2 reached from s0 through
// s1 (a slow link, 1 us and 1 GB/s) or s2 (both 3 hops from n0).
constexpr const char* kNetwork =
    "# a small network\n"
    "nodes 3\n"
    "switches 3\n"
    "link n0 s0 latency 100ns bandwidth 10GB/s   # link 0\n"
    "link n1 s0 latency 100ns bandwidth 10GB/s   # link 1\n"
    "link s0 s1 latency 1us bandwidth 1GB/s      # link 2, the slow one\n"
    "link s0 s2 latency 0.2us bandwidth 10GB/s   # link 3\n"
    "link s1 n2 bandwidth 10GB/s latency 100ns   # link 4\n"
    "link s2 n2 latency 100ns bandwidth 10GB/s   # link 5\n";

TEST(NetworkFile, FewestHopsLowestLinkIdFirst) {
  const Topology t = Topology::from_network_text("small.net", kNetwork);
  EXPECT_EQ(t.nodes(), 3u);
  EXPECT_EQ(t.links(), 6u);
  EXPECT_EQ(t.describe(), "network file small.net, 3 nodes, 3 switches, 6 links, fewest-hop routing");
  // n0 -> n2: through s1 (link 2 is lower than link 3).
  EXPECT_EQ(route_of(t, 0, 2), (std::vector<std::uint32_t>{0, 2, 4}));
  EXPECT_EQ(route_of(t, 2, 0), (std::vector<std::uint32_t>{4, 2, 0}));
  EXPECT_EQ(route_of(t, 0, 1), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(classes_of(t, route_of(t, 0, 2)), (std::vector<std::string>{"node", "switch", "node"}));
  // 100 + 1000 + 100 ns; 0.1 + 1 + 0.1 ns/B; the slow link is the largest of both.
  EXPECT_EQ(t.path(0, 2), (PathCost{3, 1'200'000, 1'000'000, 1'200'000, 1'000'000}));
  EXPECT_EQ(t.path(0, 1), (PathCost{2, 200'000, 100'000, 200'000, 100'000}));
  SwitchingModel m;  // cut-through: 1200 ns + 1000 B · 1 ns/B = 2200 ns
  EXPECT_EQ(m.time(t.path(0, 2), 1000), 2'200'000u);
  m.kind = Switching::Packet;  // 1200 ns + 1000 B · 1.2 ns/B = 2400 ns
  EXPECT_EQ(m.time(t.path(0, 2), 1000), 2'400'000u);
  // Declared the other way, s2's link comes first: the route avoids the slow link.
  std::string swapped = kNetwork;
  const std::string slow = "link s0 s1 latency 1us bandwidth 1GB/s      # link 2, the slow one\n";
  swapped.erase(swapped.find(slow), slow.size());
  swapped += slow;
  const Topology u = Topology::from_network_text("swapped.net", swapped);
  // Links now: 0 n0-s0, 1 n1-s0, 2 s0-s2, 3 s1-n2, 4 s2-n2, 5 s0-s1.
  EXPECT_EQ(route_of(u, 0, 2), (std::vector<std::uint32_t>{0, 2, 4}));
  EXPECT_EQ(u.path(0, 2), (PathCost{3, 400'000, 200'000, 300'000, 100'000}));
}

TEST(NetworkFile, FromAFile) {
  const auto path = std::filesystem::temp_directory_path() / ("poems_topology_" + std::to_string(getpid()) + ".net");
  std::ofstream(path) << kNetwork;
  TopologySpec spec;
  spec.kind = TopologyKind::File;
  spec.file = path.string();
  const Topology t = Topology::build(spec);
  std::filesystem::remove(path);
  EXPECT_EQ(t.path(0, 2).hops, 3u);
  spec.file = "/nonexistent/x.net";
  try {
    Topology::build(spec);
    ADD_FAILURE() << "no error";
  } catch (const TopologyError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/x.net: error: cannot read the network file: No such file or directory");
  }
}

TEST(NetworkFile, ErrorsAreLocated) {
  const std::string link = " latency 1ns bandwidth 1GB/s\n";
  EXPECT_EQ(text_error("nodes 3\nnodes 4\n"), "net:2:1: error: 'nodes' is declared twice (first at line 1)");
  EXPECT_EQ(text_error("nodes x\n"), "net:1:7: error: bad count 'x' (a whole number)");
  EXPECT_EQ(text_error("nodes 0\n"), "net:1:7: error: nodes must be 1 to 4096, got 0");
  EXPECT_EQ(text_error("nodes 4097\n"), "net:1:7: error: nodes must be 1 to 4096, got 4097");
  EXPECT_EQ(text_error("nodes\n"), "net:1:6: error: 'nodes' wants a count");
  EXPECT_EQ(text_error("nodes 3 4\n"), "net:1:9: error: unexpected '4' after the declaration");
  EXPECT_EQ(text_error("switches 5000\n"), "net:1:10: error: switches must be 0 to 4096, got 5000");
  EXPECT_EQ(text_error("nodes 2\nrouter r0\n"), "net:2:1: error: unknown declaration 'router' (nodes, switches, link)");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n5" + link), "net:2:9: error: unknown node 'n5' (nodes are n0..n1)");
  EXPECT_EQ(text_error("link n0 n1" + link + "nodes 2\n"),
            "net:1:6: error: unknown node 'n0' (no 'nodes' declared before it)");
  EXPECT_EQ(text_error("nodes 2\nlink n0 s0" + link),
            "net:2:9: error: unknown switch 's0' (no 'switches' declared before it)");
  EXPECT_EQ(text_error("nodes 2\nswitches 1\nlink n0 s1" + link),
            "net:3:9: error: unknown switch 's1' (switches are s0..s0)");
  EXPECT_EQ(text_error("nodes 2\nlink x0 n1" + link),
            "net:2:6: error: bad endpoint 'x0' (a node n<i> or a switch s<i>)");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n0" + link), "net:2:9: error: a link from 'n0' to itself");
  EXPECT_EQ(text_error("nodes 2\nlink n0\n"), "net:2:8: error: 'link' wants two endpoints, then latency and bandwidth");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 latency 5xs bandwidth 1GB/s\n"),
            "net:2:20: error: bad latency '5xs' (a number and ns, us, ms or s)");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 latency -1ns bandwidth 1GB/s\n"),
            "net:2:20: error: latency must not be negative, got -1ns");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 latency 1000s bandwidth 1GB/s\n"),
            "net:2:20: error: latency 1000s is too large (at most 2^49 ps, about 563 s)");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 latency 5ns bandwidth 10Gbps\n"),
            "net:2:34: error: bad bandwidth '10Gbps' (a number and B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s or GiB/s)");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 latency 5ns bandwidth 0GB/s\n"),
            "net:2:34: error: bandwidth must be more than 0, got 0GB/s");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 latency 5ns bandwidth 1B/s\n"),
            "net:2:34: error: bandwidth 1B/s is too small (at most 2^49 fs per byte)");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 latency 5ns\n"), "net:2:23: error: the link has no 'bandwidth'");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 bandwidth 1GB/s\n"), "net:2:27: error: the link has no 'latency'");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 latency 5ns latency 6ns\n"), "net:2:24: error: 'latency' is given twice");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 latency\n"), "net:2:19: error: 'latency' wants a value");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1 speed 5\n"),
            "net:2:12: error: expected 'latency' or 'bandwidth', got 'speed'");
  EXPECT_EQ(text_error("nodes 2\nlink n0 n1" + link + "link n1 n0" + link),
            "net:3:6: error: the link between n1 and n0 is declared twice (first at line 2)");
  EXPECT_EQ(text_error("nodes 3\nlink n0 n1" + link), "net: error: nodes n0 and n2 are not connected");
  EXPECT_EQ(text_error("# nothing\n"), "net: error: no 'nodes' declaration");
}

TEST(NetworkFile, UnitsConvertExactly) {
  // 1.5 us = 1500000 ps; 1 GiB/s = 1073741824 B/s: 1e15 / 2^30 = 931322.57 -> 931323 fs/B.
  const Topology t = Topology::from_network_text("u", "nodes 2\nlink n0 n1 latency 1.5us bandwidth 1GiB/s\n");
  EXPECT_EQ(t.path(0, 1), (PathCost{1, 1'500'000, 1'500'000, 931'323, 931'323}));
  const Topology v = Topology::from_network_text("v", "nodes 2\nlink n0 n1 latency 2ms bandwidth 400MB/s\n");
  EXPECT_EQ(v.path(1, 0), (PathCost{1, 2'000'000'000, 2'000'000'000, 2'500'000, 2'500'000}));
}

}  // namespace
}  // namespace poems::components
