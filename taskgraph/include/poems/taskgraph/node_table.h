// Static node descriptions kept compactly: a GOAL file has a node per
// operation (its label and line), millions of them, so each entry is a few
// words and the strings are built only when a report asks for one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "poems/taskgraph/schedule.h"

namespace poems::taskgraph {

class NodeTable {
 public:
  NodeTable();  // with node 0: none

  // A file that locations point into; returns its id for add().
  std::uint32_t add_file(std::string_view path);
  // A node labelled `label` at file:line:column (line 0: no line, the
  // location is the file's name alone); returns its id.
  std::uint32_t add(std::string_view label, std::uint32_t file, std::uint32_t line, std::uint32_t column);
  // A node described in full (its location is kept as given).
  std::uint32_t add(const NodeInfo& info);

  std::uint32_t size() const { return size_; }
  // {} for ids out of range.
  NodeInfo info(std::uint32_t node) const;
  // Bytes held, for memory reports.
  std::size_t memory_bytes() const;

 private:
  struct Entry {
    std::uint32_t label_block;  // index into label_blocks_
    std::uint32_t label_at;     // offset in that block
    std::uint32_t label_size;
    std::uint32_t file;  // index into files_
    std::uint32_t line;
    std::uint32_t column;
  };
  // Fixed-size blocks, never moved: a growing vector would copy millions of
  // entries on each doubling, touch fresh pages each time and keep up to
  // twice the memory it needs.
  static constexpr unsigned kEntryBlockBits = 15;  // 768 KiB of entries
  static constexpr std::size_t kEntryBlock = std::size_t{1} << kEntryBlockBits;
  static constexpr std::size_t kLabelBlock = std::size_t{1} << 20;

  struct LabelBlock {
    std::unique_ptr<char[]> bytes;
    std::size_t size = 0, capacity = 0;
  };

  std::uint32_t size_ = 0;
  std::vector<std::unique_ptr<Entry[]>> entry_blocks_;
  static constexpr std::uint32_t kNoBlock = ~std::uint32_t{0};
  std::vector<LabelBlock> label_blocks_;
  std::uint32_t filling_ = kNoBlock;  // the label block short labels go to
  std::vector<std::string> files_;
  std::unordered_map<std::string, std::uint32_t> file_ids_;
};

}  // namespace poems::taskgraph
