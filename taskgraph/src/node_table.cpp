#include "poems/taskgraph/node_table.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace poems::taskgraph {

NodeTable::NodeTable() { add("", add_file(""), 0, 0); }

std::uint32_t NodeTable::add_file(std::string_view path) {
  auto [it, fresh] = file_ids_.emplace(std::string(path), static_cast<std::uint32_t>(files_.size()));
  if (fresh) files_.emplace_back(path);
  return it->second;
}

std::uint32_t NodeTable::add(std::string_view label, std::uint32_t file, std::uint32_t line, std::uint32_t column) {
  if (size_ == std::numeric_limits<std::uint32_t>::max()) throw std::length_error("more than 2^32 - 1 static nodes");
  if (file >= files_.size()) throw std::out_of_range("node file id " + std::to_string(file) + " was not added");
  if (label.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("a node label longer than 2^32 - 1 bytes");
  // A label lies within one block. One longer than a block gets a block of
  // its own, and the block being filled stays the one short labels go to.
  std::uint32_t block = filling_;
  if (label.size() > kLabelBlock) {
    label_blocks_.push_back(LabelBlock{std::make_unique_for_overwrite<char[]>(label.size()), 0, label.size()});
    block = static_cast<std::uint32_t>(label_blocks_.size() - 1);
  } else if (block == kNoBlock || label_blocks_[block].capacity - label_blocks_[block].size < label.size()) {
    label_blocks_.push_back(LabelBlock{std::make_unique_for_overwrite<char[]>(kLabelBlock), 0, kLabelBlock});
    block = filling_ = static_cast<std::uint32_t>(label_blocks_.size() - 1);
  }
  LabelBlock& labels = label_blocks_[block];
  if (!label.empty()) std::memcpy(labels.bytes.get() + labels.size, label.data(), label.size());
  const Entry entry{
      block, static_cast<std::uint32_t>(labels.size), static_cast<std::uint32_t>(label.size()), file, line, column};
  labels.size += label.size();
  if ((size_ & (kEntryBlock - 1)) == 0) entry_blocks_.push_back(std::make_unique_for_overwrite<Entry[]>(kEntryBlock));
  entry_blocks_.back()[size_ & (kEntryBlock - 1)] = entry;
  return size_++;
}

std::uint32_t NodeTable::add(const NodeInfo& info) { return add(info.label, add_file(info.location), 0, 0); }

NodeInfo NodeTable::info(std::uint32_t node) const {
  if (node >= size_) return {};
  const Entry& e = entry_blocks_[node >> kEntryBlockBits][node & (kEntryBlock - 1)];
  NodeInfo out{std::string(label_blocks_[e.label_block].bytes.get() + e.label_at, e.label_size), files_[e.file]};
  if (e.line != 0) out.location += ":" + std::to_string(e.line) + ":" + std::to_string(e.column);
  return out;
}

std::size_t NodeTable::memory_bytes() const {
  std::size_t n = entry_blocks_.size() * kEntryBlock * sizeof(Entry);
  for (const LabelBlock& b : label_blocks_) n += b.capacity;
  for (const std::string& f : files_) n += f.capacity();
  return n;
}

}  // namespace poems::taskgraph
