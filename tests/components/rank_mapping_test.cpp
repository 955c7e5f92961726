// Placing ranks on nodes: block, round-robin, wrap and mapping files, with
// every error's text.
#include "poems/components/rank_mapping.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace poems::components {
namespace {

using Nodes = std::vector<std::uint32_t>;

MappingSpec spec_of(MappingKind kind, std::uint32_t per_node, Nodes wrap = {}) {
  MappingSpec spec;
  spec.kind = kind;
  spec.ranks_per_node = per_node;
  spec.wrap = std::move(wrap);
  return spec;
}

std::string error_of(const MappingSpec& spec, std::uint32_t ranks, std::uint32_t nodes) {
  try {
    map_ranks(spec, ranks, nodes);
  } catch (const MappingError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string text_error(std::string_view text, std::uint32_t ranks, std::uint32_t nodes) {
  try {
    map_ranks_from_text("map", text, ranks, nodes);
  } catch (const MappingError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RankMapping, Block) {
  EXPECT_EQ(map_ranks(spec_of(MappingKind::Block, 2), 8, 4), (Nodes{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(map_ranks(spec_of(MappingKind::Block, 2), 5, 4), (Nodes{0, 0, 1, 1, 2}));
  EXPECT_EQ(map_ranks(spec_of(MappingKind::Block, 1), 3, 8), (Nodes{0, 1, 2}));
}

TEST(RankMapping, RoundRobinUsesOnlyTheNodesItNeeds) {
  // 5 ranks at 2 a node need ceil(5/2) = 3 nodes: 0 1 2 0 1.
  EXPECT_EQ(map_ranks(spec_of(MappingKind::RoundRobin, 2), 5, 4), (Nodes{0, 1, 2, 0, 1}));
  EXPECT_EQ(map_ranks(spec_of(MappingKind::RoundRobin, 4), 8, 2), (Nodes{0, 1, 0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(map_ranks(spec_of(MappingKind::RoundRobin, 1), 4, 4), (Nodes{0, 1, 2, 3}));
}

TEST(RankMapping, Wrap) {
  EXPECT_EQ(map_ranks(spec_of(MappingKind::Wrap, 1, {3, 1, 2}), 7, 4), (Nodes{3, 1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(map_ranks(spec_of(MappingKind::Wrap, 1, {0}), 3, 1), (Nodes{0, 0, 0}));
}

TEST(RankMapping, Errors) {
  EXPECT_EQ(error_of(spec_of(MappingKind::Block, 2), 9, 4),
            "9 ranks at 2 per node need 5 nodes, but the machine has 4 nodes (0..3)");
  EXPECT_EQ(error_of(spec_of(MappingKind::RoundRobin, 1), 2, 1),
            "2 ranks at 1 per node need 2 nodes, but the machine has 1 node (0)");
  EXPECT_EQ(error_of(spec_of(MappingKind::Block, 0), 4, 4), "ranks per node must be 1 or more, got 0");
  EXPECT_EQ(error_of(spec_of(MappingKind::Block, 1), 4, 0), "the machine has no nodes");
  EXPECT_EQ(error_of(spec_of(MappingKind::Wrap, 1, {0, 1, 2, 3, 4, 9}), 8, 8),
            "rank 5 is placed on node 9, but the machine has 8 nodes (0..7)");
  EXPECT_EQ(error_of(spec_of(MappingKind::Wrap, 1, {0, 9}), 1, 8),
            "wrap entry 1 is node 9, but the machine has 8 nodes (0..7)");
  EXPECT_EQ(error_of(spec_of(MappingKind::Wrap, 1, {}), 1, 8), "a wrap mapping needs a list of one or more nodes");
}

TEST(RankMapping, FileGood) {
  EXPECT_EQ(map_ranks_from_text("map", "# rank node\n0 1\n\n2 0   # a comment\n1 1\r\n\t3 0\n", 4, 2),
            (Nodes{1, 1, 0, 0}));
  const auto path = std::filesystem::temp_directory_path() / ("poems_mapping_" + std::to_string(getpid()) + ".map");
  std::ofstream(path) << "1 0\n0 2\n";
  MappingSpec spec;
  spec.kind = MappingKind::File;
  spec.file = path.string();
  EXPECT_EQ(map_ranks(spec, 2, 3), (Nodes{2, 0}));
  std::filesystem::remove(path);
  spec.file = "/nonexistent/ranks.map";
  EXPECT_EQ(error_of(spec, 2, 3),
            "/nonexistent/ranks.map: error: cannot read the mapping file: No such file or directory");
}

TEST(RankMapping, FileErrorsAreLocated) {
  EXPECT_EQ(text_error("0 0\n3 1\n1 0\n  3 0\n", 4, 2), "map:4:3: error: rank 3 is placed twice (first at line 2)");
  EXPECT_EQ(text_error("0 0\n1 0\n2 1\n3 1\n", 6, 2), "map: error: rank 4 is not placed");
  EXPECT_EQ(text_error("0 0\n1 9\n", 2, 8),
            "map:2:3: error: rank 1 is placed on node 9, but the machine has 8 nodes (0..7)");
  EXPECT_EQ(text_error("7 0\n", 4, 2), "map:1:1: error: rank 7 is not in the run (4 ranks, 0..3)");
  EXPECT_EQ(text_error("0 x\n", 1, 2), "map:1:3: error: bad node 'x' (a whole number)");
  EXPECT_EQ(text_error("zero 1\n", 1, 2), "map:1:1: error: bad rank 'zero' (a whole number)");
  EXPECT_EQ(text_error("-1 0\n", 1, 2), "map:1:1: error: bad rank '-1' (a whole number)");
  EXPECT_EQ(text_error("0\n", 1, 2), "map:1:2: error: expected 'rank node', got only '0'");
  EXPECT_EQ(text_error("0 1 2\n", 1, 2), "map:1:5: error: unexpected '2' after 'rank node'");
  EXPECT_EQ(text_error("# nothing\n", 1, 2), "map: error: rank 0 is not placed");
}

TEST(RankMapping, Names) {
  for (auto kind : {MappingKind::Block, MappingKind::RoundRobin, MappingKind::Wrap, MappingKind::File})
    EXPECT_EQ(parse_mapping(mapping_name(kind)), kind);
  EXPECT_STREQ(mapping_name(MappingKind::RoundRobin), "round-robin");
  EXPECT_EQ(parse_mapping("cyclic"), std::nullopt);
}

}  // namespace
}  // namespace poems::components
