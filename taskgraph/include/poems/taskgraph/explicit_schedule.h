// Schedules held in memory: built op by op (GOAL import, tests, small
// graphs), or generated for one collective at any scale.
#pragma once

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <vector>

#include "poems/base/huge_pages.h"
#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/node_table.h"
#include "poems/taskgraph/schedule.h"

namespace poems::taskgraph {

// Node descriptions kept elsewhere than in a NodeTable: a GOAL file read
// without holding its text describes a node by reading its line back
// (read_goal_file).
class NodeDescriber {
 public:
  virtual ~NodeDescriber() = default;
  virtual std::uint32_t count() const = 0;
  virtual NodeInfo info(std::uint32_t node) const = 0;
  virtual std::size_t memory_bytes() const = 0;
};

// Every rank's operations, materialized and encoded: a two-byte header and
// the fields it announces per operation, peers relative to the rank, nodes
// and dependencies relative to the operation before (6.8 bytes an operation
// in the wavefront example, against 48 for an Operation and 16 per
// Dependency). A lazy reader comes back to a rank after many other ranks'
// pulls, so what it reads is out of cache: the fewer bytes, the fewer misses.
// Each rank's operations are one contiguous segment, set once. What an
// operation of its kind does not use is not kept: a Calc keeps its duration
// and cpu (no nic, peer, bytes, tag or comm); a Send or Recv no duration.
class ExplicitSchedule final : public ScheduleSource {
 public:
  explicit ExplicitSchedule(std::uint32_t ranks);

  // Sets rank `r`'s operations (dependency indices rank-local, as in a
  // stream). Each rank is set at most once; throws std::logic_error if `r`
  // already has operations, std::out_of_range if it is no rank,
  // std::invalid_argument for an operation it cannot encode (the rank then
  // stays unset).
  void set_rank(std::uint32_t r, const OpBuffer& ops);
  // Rank `r`'s operations, decoded (for tests and comparisons).
  OpBuffer operations(std::uint32_t r) const;
  std::uint64_t operation_count(std::uint32_t r) const { return streams_[r].ops; }
  // Rank `r`'s operations not yet pulled or decoded; its dependencies, all told.
  std::uint64_t operations_left(std::uint32_t r) const { return streams_[r].ops - streams_[r].op; }
  std::uint64_t dependency_count(std::uint32_t r) const { return segments_[r].deps; }

  // One operation's dependencies, decoded as they are read: next() at most
  // `left()` times (decode_into steps over the rest).
  class DependencyReader {
   public:
    std::uint32_t left() const { return left_; }
    Dependency next() {
      --left_;
      const std::uint64_t v = get_varint(p_);
      const auto order = (v & 2) != 0 ? static_cast<std::uint32_t>(get_varint(p_)) : 0;
      // How far back beyond the operation before, signed (an arithmetic shift
      // where a zigzag code would take four instructions).
      return Dependency{index_ - 1 - static_cast<std::uint64_t>(static_cast<std::int64_t>(v) >> 2), (v & 1) != 0,
                        order};
    }

   private:
    friend class ExplicitSchedule;
    DependencyReader(const std::uint8_t* p, std::uint64_t index, std::uint32_t n) : p_(p), index_(index), left_(n) {}
    const std::uint8_t* p_;
    std::uint64_t index_;
    std::uint32_t left_;
  };
  // The next min(max_ops, operations_left(rank)) operations of `rank`, handed
  // to (a copy of) `sink(const Operation&, DependencyReader&)` one by one without an
  // OpBuffer in between (the simulator writes them straight into its
  // slots); `first_dep` of the operation means nothing. Returns the count.
  // Advances the stream as pull() does, once every operation was handed over
  // (if `sink` throws, the stream stays where it was; rewind() to read again).
  template <class Sink>
  std::size_t decode_into(std::uint32_t rank, std::size_t max_ops, Sink&& sink);
  // Fetches the next bytes of `rank`'s stream into the cache (a reader that
  // will pull them soon).
  [[gnu::always_inline]] void prefetch_stream(std::uint32_t rank) const {
    __builtin_prefetch(code_.data() + streams_[rank].at);
  }
  std::uint64_t total_operations() const;
  // The highest CPU and NIC index any operation names (LogGOPSim gives
  // every process that many plus one).
  std::uint32_t max_cpu() const { return max_cpu_; }
  std::uint32_t max_nic() const { return max_nic_; }
  // What every operation set so far satisfies, so that a reader can check
  // once per schedule what it would otherwise check per operation: the
  // largest message and Calc duration, whether every message's peer is a
  // rank (or a Recv's kAnySource), whether every dependency names an
  // earlier operation. The encoding keeps any value, for the reader to report.
  std::uint64_t max_message_bytes() const { return max_message_bytes_; }
  Picoseconds max_calc_duration() const { return max_calc_duration_; }
  bool peers_are_ranks() const { return peers_are_ranks_; }
  bool depends_on_earlier() const { return depends_on_earlier_; }
  // Bytes of the encoded operations (and padding) and of the node table.
  std::size_t encoded_bytes() const { return code_.size(); }
  std::size_t node_bytes() const { return describer_ ? describer_->memory_bytes() : nodes_.memory_bytes(); }
  // Bytes the schedule takes per rank before any operation is set.
  static constexpr std::size_t kBytesPerRank = 56;
  // Hands node descriptions to `d` instead of the node table.
  void set_node_describer(std::unique_ptr<NodeDescriber> d) { describer_ = std::move(d); }

  NodeTable& nodes() { return nodes_; }
  const NodeTable& nodes() const { return nodes_; }

  // Streams start over (a source is otherwise read once).
  void rewind();
  bool restart() override {
    rewind();
    return true;
  }

  std::uint32_t ranks() const override { return static_cast<std::uint32_t>(streams_.size()); }
  std::size_t pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) override;
  std::uint32_t node_count() const override { return describer_ ? describer_->count() : nodes_.size(); }
  NodeInfo node_info(std::uint32_t node) const override {
    return describer_ ? describer_->info(node) : nodes_.info(node);
  }

 private:
  // Where a rank's stream stands, all a pull reads (32 bytes, so one cache
  // line): the next byte, the index of the next operation (dependencies are
  // relative to it), the rank's operation count and the last node id (node
  // ids are coded as differences).
  struct alignas(32) Stream {
    std::uint64_t at = 0;
    std::uint64_t op = 0;
    std::uint64_t ops = 0;
    std::uint32_t node = 0;
    bool set = false;
  };
  // The rank's bytes of code_ and its dependency count, for rewind() and
  // readers that reserve room for a whole rank.
  struct Segment {
    std::uint64_t begin = 0, end = 0;
    std::uint64_t deps = 0;
  };
  // An encoded operation: a two-byte header (little-endian), then the
  // fields it announces, in this order: the cpu byte (and a message's nic
  // byte), the dependency count minus 3 (varint), the node's difference
  // from the last (zigzag varint), the amount (bytes or duration: 0..6 or 8
  // bytes), a message's peer relative to the rank (1..4 bytes, two's
  // complement, modulo 2^32), its tag (0, 1, 2 or 4 bytes, zigzag) and its communicator
  // (varint); then the dependencies (varints). The fixed-width fields'
  // lengths are in the header, so each is one 8-byte load and a mask, no
  // loop or branch; code_ ends in kPadding zero bytes so that such a load
  // never leaves it.
  static constexpr unsigned kKindMask = 0x3;
  static constexpr unsigned kHasUnits = 1u << 2;  // cpu (and for a message nic) bytes follow
  static constexpr unsigned kHasComm = 1u << 3;
  static constexpr unsigned kDepShift = 4;        // dependency count 0..2 in 2 bits;
  static constexpr std::uint32_t kDepMore = 3;    // 3: the count minus 3 follows
  static constexpr unsigned kNextNode = 1u << 7;  // the node is the last one plus 1 (no difference coded); bit 6 unused
  static constexpr unsigned kAmountShift = 8;     // 3 bits: an index into kAmountBytes
  static constexpr unsigned kPeerShift = 11;      // 2 bits: the peer offset's bytes minus 1 (bit 13 unused)
  static constexpr unsigned kTagShift = 14;       // 2 bits: an index into kTagBytes
  static constexpr std::size_t kPadding = 8;
  static constexpr std::uint8_t kAmountBytes[8] = {0, 1, 2, 3, 4, 5, 6, 8};
  static constexpr std::uint64_t kAmountMask[8] = {0,          0xff,         0xffff,         0xffffff,
                                                   0xffffffff, 0xffffffffff, 0xffffffffffff, ~std::uint64_t{0}};
  static constexpr std::uint8_t kTagBytes[4] = {0, 1, 2, 4};
  static constexpr std::uint64_t kTagMask[4] = {0, 0xff, 0xffff, 0xffffffff};
  static std::uint64_t load8(const std::uint8_t* p) {
    static_assert(std::endian::native == std::endian::little, "the fixed-width fields are little-endian");
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static std::int64_t unzigzag(std::uint64_t v) {
    return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
  }
  static std::uint64_t get_varint(const std::uint8_t*& p) {
    std::uint64_t v = *p++;
    if (v < 0x80) [[likely]]  // most are one byte (a dependency on the operation before: 0)
      return v;
    v &= 0x7f;
    for (unsigned shift = 7;; shift += 7) {
      const std::uint64_t b = *p++;
      v |= (b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
  }
  // Appends rank `r`'s operations to code_ (set_rank undoes it if this throws).
  void encode(std::uint32_t r, const OpBuffer& ops);
  // decode_into from `s` (which it advances) over `n` operations. The sink
  // by value: a copy whose address does not escape keeps its captures in
  // registers across the stores it makes.
  template <class Sink>
  const std::uint8_t* decode_from(std::uint32_t rank, Stream& s, std::size_t n, Sink sink) const;
  // A lazy reader comes back for this rank's next operations after many
  // other pulls, by which time a hardware prefetcher has lost the stream:
  // fetch about as much again as this pull took, now.
  // Inline: one call less per pull (1.2 M instructions of 249.5 M on the
  // 16x16 Sweep3D export).
  void prefetch_next(std::uint32_t rank, std::uint64_t from) const {
    // Bounded by the code's end, not the rank's (which lies on another cache
    // line): the bytes past a rank's end are another rank's.
    const Stream& s = streams_[rank];
    if (s.op == s.ops) return;
    const std::uint64_t ahead =
        std::min<std::uint64_t>(std::max<std::uint64_t>(2 * (s.at - from), 128), code_.size() - s.at);
    const std::uint8_t* next = code_.data() + s.at;
    for (std::uint64_t b = 0; b < ahead; b += 64) __builtin_prefetch(next + b);
  }

  // On huge pages: a simulation reads the ranks' streams in turn, thousands
  // of places at once, and with 4 KiB pages nearly every pull would be a TLB
  // miss (docs/PERFORMANCE.md: 5-10 % of the 64x64 Sweep3D simulation).
  using Code = std::vector<std::uint8_t, base::HugePageAllocator<std::uint8_t>>;
  Code code_;
  std::vector<Stream> streams_;
  std::vector<Segment> segments_;
  NodeTable nodes_;
  std::unique_ptr<NodeDescriber> describer_;
  std::uint32_t max_cpu_ = 0, max_nic_ = 0;
  std::uint64_t max_message_bytes_ = 0;
  Picoseconds max_calc_duration_ = 0;
  bool peers_are_ranks_ = true, depends_on_earlier_ = true;
};

template <class Sink>
const std::uint8_t* ExplicitSchedule::decode_from(std::uint32_t rank, Stream& s, std::size_t n, Sink sink) const {
  const std::uint8_t* p = code_.data() + s.at;
  std::uint64_t index = s.op;
  std::uint32_t node = s.node;
  for (std::size_t k = 0; k < n; ++k, ++index) {
    std::uint16_t header;
    std::memcpy(&header, p, sizeof header);
    const unsigned h = header;
    p += 2;
    Operation op;
    op.kind = static_cast<OpKind>(h & kKindMask);
    const bool message = op.kind != OpKind::Calc;
    if (h & kHasUnits) [[unlikely]] {
      op.cpu = p[0];
      if (message) op.nic = p[1];
      p += message ? 2 : 1;
    }
    std::uint32_t deps = (h >> kDepShift) & 3;
    if (deps == kDepMore) [[unlikely]]
      deps += static_cast<std::uint32_t>(get_varint(p));
    if (h & kNextNode) [[likely]]
      ++node;
    else
      node = static_cast<std::uint32_t>(std::int64_t{node} + unzigzag(get_varint(p)));
    op.node = node;
    const unsigned amount = (h >> kAmountShift) & 7;
    const std::uint64_t value = load8(p) & kAmountMask[amount];
    p += kAmountBytes[amount];
    if (message) {
      op.bytes = value;
      const unsigned peer_bytes = ((h >> kPeerShift) & 3) + 1;
      const unsigned shift = 32 - 8 * peer_bytes;  // sign-extends the offset
      const auto offset = static_cast<std::int32_t>(static_cast<std::uint32_t>(load8(p)) << shift) >> shift;
      op.peer = static_cast<std::int32_t>(rank + static_cast<std::uint32_t>(offset));
      p += peer_bytes;
      const unsigned tag = h >> kTagShift;
      op.tag = static_cast<std::int32_t>(unzigzag(load8(p) & kTagMask[tag]));
      p += kTagBytes[tag];
      if (h & kHasComm) [[unlikely]]
        op.comm = static_cast<std::uint32_t>(get_varint(p));
    } else {
      op.duration = value;
    }
    op.dep_count = deps;
    DependencyReader reader(p, index, deps);
    sink(static_cast<const Operation&>(op), reader);
    while (reader.left_ != 0) reader.next();  // what the sink did not read
    p = reader.p_;
  }
  s.op = index;
  s.node = node;
  return p;
}

template <class Sink>
std::size_t ExplicitSchedule::decode_into(std::uint32_t rank, std::size_t max_ops, Sink&& sink) {
  Stream& s = streams_[rank];
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(max_ops, s.ops - s.op));
  const std::uint64_t from = s.at;
  s.at = static_cast<std::uint64_t>(decode_from(rank, s, n, sink) - code_.data());
  if (n > 0) prefetch_next(rank, from);
  return n;
}

// Reads a whole source into memory (for small graphs: export, tests).
std::unique_ptr<ExplicitSchedule> materialize(ScheduleSource& source);

// One collective on `call.procs` ranks, generated per rank on demand: the
// memory of a run is that of the evaluator, not of the schedule.
class CollectiveSchedule final : public ScheduleSource {
 public:
  explicit CollectiveSchedule(CollectiveCall call);
  std::uint32_t ranks() const override { return call_.procs; }
  std::size_t pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) override;
  std::uint32_t node_count() const override { return static_cast<std::uint32_t>(nodes_.size()); }
  NodeInfo node_info(std::uint32_t node) const override { return node_info_in(nodes_, node); }
  // Every round of the algorithms waits for the whole previous round.
  bool issues_in_order() const override { return true; }

 private:
  CollectiveCall call_;
  std::vector<std::uint32_t> next_;  // per rank: the first operation not yet handed over
  std::vector<NodeInfo> nodes_;
};

}  // namespace poems::taskgraph
