#include "poems/taskgraph/explicit_schedule.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace poems::taskgraph {

namespace {

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
template <class Bytes>
void put_varint(Bytes& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}
// The low `n` bytes of `v`, little-endian.
template <class Bytes>
void put_bytes(Bytes& out, std::uint64_t v, unsigned n) {
  for (unsigned k = 0; k < n; ++k) out.push_back(static_cast<std::uint8_t>(v >> 8 * k));
}

}  // namespace

ExplicitSchedule::ExplicitSchedule(std::uint32_t ranks) : code_(kPadding, 0), streams_(ranks), segments_(ranks) {
  static_assert(sizeof(Stream) + sizeof(Segment) == kBytesPerRank);
}

void ExplicitSchedule::set_rank(std::uint32_t r, const OpBuffer& ops) {
  if (r >= streams_.size())
    throw std::out_of_range("rank " + std::to_string(r) + " is not a rank of the schedule (0.." +
                            std::to_string(streams_.size()) + "-1)");
  Segment& seg = segments_[r];
  if (streams_[r].set) throw std::logic_error("rank " + std::to_string(r) + "'s operations are already set");
  // The rank's operations go where the padding was; the padding after them.
  // (erase, not resize: the code always ends in the padding, which GCC
  // cannot see, and a resize that could grow draws -Wstringop-overflow at -O1)
  const std::size_t begin = code_.size() - kPadding;
  code_.erase(code_.end() - static_cast<std::ptrdiff_t>(kPadding), code_.end());
  try {
    encode(r, ops);
  } catch (...) {
    code_.resize(begin + kPadding, 0);  // the rank stays unset and the schedule as it was
    throw;
  }
  code_.resize(code_.size() + kPadding, 0);
  const auto ranks = static_cast<std::uint32_t>(streams_.size());
  for (std::uint64_t i = 0; i < ops.ops.size(); ++i) {
    const Operation& op = ops.ops[i];
    max_cpu_ = std::max<std::uint32_t>(max_cpu_, op.cpu);
    if (op.kind == OpKind::Calc) {
      max_calc_duration_ = std::max(max_calc_duration_, op.duration);
    } else {
      max_nic_ = std::max<std::uint32_t>(max_nic_, op.nic);
      max_message_bytes_ = std::max(max_message_bytes_, op.bytes);
      if (!peer_is_rank(op, ranks)) peers_are_ranks_ = false;
    }
    for (std::uint32_t k = 0; k < op.dep_count; ++k)
      if (ops.deps[op.first_dep + k].op >= i) depends_on_earlier_ = false;
  }
  seg.begin = begin;
  seg.end = code_.size() - kPadding;
  seg.deps = 0;
  for (const Operation& op : ops.ops) seg.deps += op.dep_count;
  streams_[r] = Stream{begin, 0, ops.ops.size(), 0, true};
}

void ExplicitSchedule::encode(std::uint32_t r, const OpBuffer& ops) {
  std::uint32_t node = 0;
  for (std::uint64_t i = 0; i < ops.ops.size(); ++i) {
    const Operation& op = ops.ops[i];
    if (static_cast<std::uint8_t>(op.kind) > static_cast<std::uint8_t>(OpKind::Recv))
      throw std::invalid_argument("rank " + std::to_string(r) + " operation " + std::to_string(i) + ": no such kind");
    const bool message = op.kind != OpKind::Calc;
    const bool units = op.cpu != 0 || (message && op.nic != 0);
    const bool comm = message && op.comm != 0;
    const bool next_node = op.node == node + 1;  // wraps from the largest id to 0, as the decoder does
    const std::uint64_t amount = message ? op.bytes : op.duration;
    const unsigned amount_bytes = static_cast<unsigned>(std::bit_width(amount) + 7) / 8;  // 0..8
    const unsigned amount_code = amount_bytes <= 6 ? amount_bytes : 7;
    // The peer offset in the fewest bytes of two's complement: 1..4, as the
    // offset counts modulo 2^32 (peers and ranks are 32-bit).
    const auto peer = static_cast<std::int32_t>(static_cast<std::uint32_t>(op.peer) - r);
    unsigned peer_bytes = 1;
    while (peer_bytes < 4 &&
           (peer < -(std::int32_t{1} << (8 * peer_bytes - 1)) || peer >= (std::int32_t{1} << (8 * peer_bytes - 1))))
      ++peer_bytes;
    const std::uint64_t tag = zigzag(op.tag);
    const unsigned tag_code = tag == 0 ? 0 : tag <= 0xff ? 1 : tag <= 0xffff ? 2 : 3;
    unsigned h = static_cast<unsigned>(op.kind);
    if (units) h |= kHasUnits;
    if (comm) h |= kHasComm;
    h |= std::min(op.dep_count, kDepMore) << kDepShift;
    if (next_node) h |= kNextNode;
    h |= amount_code << kAmountShift;
    if (message) h |= (peer_bytes - 1) << kPeerShift | tag_code << kTagShift;
    code_.push_back(static_cast<std::uint8_t>(h));
    code_.push_back(static_cast<std::uint8_t>(h >> 8));
    if (units) {
      code_.push_back(op.cpu);
      if (message) code_.push_back(op.nic);
    }
    if (op.dep_count >= kDepMore) put_varint(code_, op.dep_count - kDepMore);
    if (!next_node) put_varint(code_, zigzag(std::int64_t{op.node} - std::int64_t{node}));
    node = op.node;
    put_bytes(code_, amount, kAmountBytes[amount_code]);
    if (message) {
      put_bytes(code_, static_cast<std::uint32_t>(peer), peer_bytes);
      put_bytes(code_, tag, kTagBytes[tag_code]);
      if (comm) put_varint(code_, op.comm);
    }
    for (std::uint32_t k = 0; k < op.dep_count; ++k) {
      const Dependency& d = ops.deps[op.first_dep + k];
      // How far back beyond the operation before, so the usual "the one
      // before" is one byte of 0; a dependency on a later operation stays
      // representable (the evaluator reports it), in ten bytes.
      const auto back = static_cast<std::int64_t>(i - d.op);
      if (back >= (std::int64_t{1} << 60) || back <= -(std::int64_t{1} << 60))
        throw std::invalid_argument("rank " + std::to_string(r) + " operation " + std::to_string(i) +
                                    " depends on operation " + std::to_string(d.op) + ", too far to encode");
      put_varint(code_, static_cast<std::uint64_t>(back - 1) << 2 | (d.order != 0 ? 2 : 0) | (d.on_start ? 1 : 0));
      if (d.order != 0) put_varint(code_, d.order);
    }
  }
}

namespace {

// Appends each operation handed over, with its dependencies, to an OpBuffer.
struct AppendTo {
  OpBuffer& out;
  void operator()(const Operation& op, ExplicitSchedule::DependencyReader& deps) {
    Operation& o = out.ops.emplace_back(op);
    o.first_dep = static_cast<std::uint32_t>(out.deps.size());
    while (deps.left() != 0) out.deps.push_back(deps.next());
  }
};

}  // namespace

OpBuffer ExplicitSchedule::operations(std::uint32_t r) const {
  OpBuffer out;
  Stream s{segments_[r].begin, 0, streams_[r].ops, 0, true};
  out.ops.reserve(s.ops);
  out.deps.reserve(segments_[r].deps);
  AppendTo sink{out};
  decode_from(r, s, s.ops, sink);
  return out;
}

std::uint64_t ExplicitSchedule::total_operations() const {
  std::uint64_t n = 0;
  for (const Stream& s : streams_) n += s.ops;
  return n;
}

void ExplicitSchedule::rewind() {
  for (std::size_t r = 0; r < streams_.size(); ++r) {
    Stream& s = streams_[r];
    s.at = segments_[r].begin;
    s.op = 0;
    s.node = 0;
  }
}

std::size_t ExplicitSchedule::pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) {
  const std::size_t n = std::min<std::uint64_t>(max_ops, operations_left(rank));
  // The count bounds the buffers' growth: once, geometric (callers append
  // pull after pull; most operations have one or two dependencies).
  if (out.ops.capacity() < out.ops.size() + n) out.ops.reserve(std::max(2 * out.ops.capacity(), out.ops.size() + n));
  if (out.deps.capacity() < out.deps.size() + 2 * n)
    out.deps.reserve(std::max(2 * out.deps.capacity(), out.deps.size() + 2 * n));
  decode_into(rank, n, AppendTo{out});
  if (n > 0 && operations_left(rank) == 0) out.rank_done = true;
  return n;
}

std::unique_ptr<ExplicitSchedule> materialize(ScheduleSource& source) {
  auto out = std::make_unique<ExplicitSchedule>(source.ranks());
  for (std::uint32_t i = 1; i < source.node_count(); ++i) out->nodes().add(source.node_info(i));
  OpBuffer buf;
  for (std::uint32_t r = 0; r < source.ranks(); ++r) {
    buf.clear();
    while (source.pull(r, 4096, buf) > 0) {
    }
    out->set_rank(r, buf);
  }
  return out;
}

CollectiveSchedule::CollectiveSchedule(CollectiveCall call) : call_(call), next_(call.procs, 0) {
  nodes_.push_back(NodeInfo{});
  nodes_.push_back(
      NodeInfo{std::string(collective_op_name(call.op)) + "/" + collective_algorithm_name(call.algorithm), ""});
  call_.node = 1;
}

// Hands a rank's collective over in the chunks the reader asks for, so a
// lazy reader holds a few operations per rank, not its whole collective.
std::size_t CollectiveSchedule::pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) {
  CollectiveCall c = call_;
  c.rank = rank;
  const std::size_t n = append_collective_range(c, next_[rank], max_ops, out);
  next_[rank] += static_cast<std::uint32_t>(n);
  // The emitter stops short only at the end of the rank's part.
  if (n > 0 && n < max_ops) out.rank_done = true;
  return n;
}

}  // namespace poems::taskgraph
