#include "poems/components/rank_mapping.h"
#include "poems/base/file_bytes.h"

#include <cerrno>
#include <charconv>
#include <cstring>

namespace poems::components {

namespace {

[[noreturn]] void fail(const std::string& message) { throw MappingError(message); }

std::string machine_text(std::uint32_t nodes) {
  return "the machine has " + std::to_string(nodes) +
         (nodes == 1 ? " node (0)" : " nodes (0.." + std::to_string(nodes - 1) + ")");
}

void check_machine(std::uint32_t nodes) {
  if (nodes == 0) fail("the machine has no nodes");
}

}  // namespace

const char* mapping_name(MappingKind kind) {
  switch (kind) {
    case MappingKind::Block: return "block";
    case MappingKind::RoundRobin: return "round-robin";
    case MappingKind::Wrap: return "wrap";
    case MappingKind::File: return "file";
  }
  return "?";
}

std::optional<MappingKind> parse_mapping(std::string_view name) {
  for (auto kind : {MappingKind::Block, MappingKind::RoundRobin, MappingKind::Wrap, MappingKind::File})
    if (name == mapping_name(kind)) return kind;
  return std::nullopt;
}

std::vector<std::uint32_t> map_ranks(const MappingSpec& spec, std::uint32_t ranks, std::uint32_t nodes) {
  check_machine(nodes);
  std::vector<std::uint32_t> node_of;
  switch (spec.kind) {
    case MappingKind::Block:
    case MappingKind::RoundRobin: {
      const std::uint64_t per_node = spec.ranks_per_node;
      if (per_node == 0) fail("ranks per node must be 1 or more, got 0");
      const std::uint64_t used = (std::uint64_t{ranks} + per_node - 1) / per_node;
      if (used > nodes)
        fail(std::to_string(ranks) + " ranks at " + std::to_string(per_node) + " per node need " +
             std::to_string(used) + " nodes, but " + machine_text(nodes));
      node_of.resize(ranks);
      for (std::uint32_t r = 0; r < ranks; ++r)
        node_of[r] = static_cast<std::uint32_t>(spec.kind == MappingKind::Block ? r / per_node : r % used);
      return node_of;
    }
    case MappingKind::Wrap: {
      if (spec.wrap.empty()) fail("a wrap mapping needs a list of one or more nodes");
      for (std::size_t i = 0; i < spec.wrap.size(); ++i)
        if (spec.wrap[i] >= nodes) {
          if (i < ranks)
            fail("rank " + std::to_string(i) + " is placed on node " + std::to_string(spec.wrap[i]) + ", but " +
                 machine_text(nodes));
          fail("wrap entry " + std::to_string(i) + " is node " + std::to_string(spec.wrap[i]) + ", but " +
               machine_text(nodes));
        }
      node_of.resize(ranks);
      for (std::uint32_t r = 0; r < ranks; ++r) node_of[r] = spec.wrap[r % spec.wrap.size()];
      return node_of;
    }
    case MappingKind::File: {
      const std::optional<std::string> text = base::read_file_bytes(spec.file);
      if (!text) fail(spec.file + ": error: cannot read the mapping file: " + std::strerror(errno));
      return map_ranks_from_text(spec.file, *text, ranks, nodes);
    }
  }
  return node_of;
}

std::vector<std::uint32_t> map_ranks_from_text(std::string_view name, std::string_view text, std::uint32_t ranks,
                                               std::uint32_t nodes) {
  check_machine(nodes);
  const std::string file(name);
  constexpr std::uint32_t kUnplaced = 0;  // placed_line value of a rank not yet seen
  std::vector<std::uint32_t> node_of(ranks, 0), placed_line(ranks, kUnplaced);
  std::uint32_t line_number = 0;
  auto located = [&](std::size_t col, const std::string& message) {
    fail(file + ":" + std::to_string(line_number) + ":" + std::to_string(col) + ": error: " + message);
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_number;
    if (std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    // Up to three fields: rank, node and anything after them (an error).
    std::string_view fields[3];
    std::size_t cols[3] = {0, 0, 0}, count = 0, i = 0;
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (i < line.size() && count < 3) {
      if (blank(line[i])) {
        ++i;
        continue;
      }
      std::size_t start = i;
      while (i < line.size() && !blank(line[i])) ++i;
      fields[count] = line.substr(start, i - start);
      cols[count++] = start + 1;
    }
    if (count == 0) continue;
    if (count == 1) located(line.size() + 1, "expected 'rank node', got only '" + std::string(fields[0]) + "'");
    if (count == 3) located(cols[2], "unexpected '" + std::string(fields[2]) + "' after 'rank node'");
    std::uint32_t values[2];
    for (int f = 0; f < 2; ++f) {
      auto [end, ec] = std::from_chars(fields[f].data(), fields[f].data() + fields[f].size(), values[f]);
      if (ec != std::errc() || end != fields[f].data() + fields[f].size())
        located(cols[f], std::string("bad ") + (f == 0 ? "rank" : "node") + " '" + std::string(fields[f]) +
                             "' (a whole number)");
    }
    const std::uint32_t rank = values[0], node = values[1];
    if (rank >= ranks)
      located(cols[0], "rank " + std::to_string(rank) + " is not in the run (" + std::to_string(ranks) + " ranks, 0.." +
                           std::to_string(ranks == 0 ? 0 : ranks - 1) + ")");
    if (placed_line[rank] != kUnplaced)
      located(cols[0], "rank " + std::to_string(rank) + " is placed twice (first at line " +
                           std::to_string(placed_line[rank]) + ")");
    if (node >= nodes)
      located(cols[1], "rank " + std::to_string(rank) + " is placed on node " + std::to_string(node) + ", but " +
                           machine_text(nodes));
    node_of[rank] = node;
    placed_line[rank] = line_number;
  }
  for (std::uint32_t r = 0; r < ranks; ++r)
    if (placed_line[r] == kUnplaced) fail(file + ": error: rank " + std::to_string(r) + " is not placed");
  return node_of;
}

}  // namespace poems::components
