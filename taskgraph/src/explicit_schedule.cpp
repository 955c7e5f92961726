#include "poems/taskgraph/explicit_schedule.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace poems::taskgraph {

namespace {

// Header byte of an encoded operation.
constexpr std::uint8_t kKindMask = 0x03;
constexpr std::uint8_t kHasCpu = 0x04;
constexpr std::uint8_t kHasNic = 0x08;
constexpr std::uint8_t kHasTag = 0x10;
constexpr std::uint8_t kHasComm = 0x20;
constexpr unsigned kDepShift = 6;      // dependency count 0..2 in the top bits;
constexpr std::uint32_t kDepMore = 3;  // 3: the count minus 3 follows

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) { return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1); }

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

inline std::uint64_t get_varint(const std::uint8_t*& p) {
  std::uint64_t v = *p++;
  if (v < 0x80) return v;
  v &= 0x7f;
  for (unsigned shift = 7;; shift += 7) {
    const std::uint64_t b = *p++;
    v |= (b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
}

}  // namespace

ExplicitSchedule::ExplicitSchedule(std::uint32_t ranks) : segments_(ranks), cursor_(ranks) {
  static_assert(sizeof(Segment) + sizeof(Cursor) == kBytesPerRank);
}

void ExplicitSchedule::set_rank(std::uint32_t r, const OpBuffer& ops) {
  if (r >= segments_.size())
    throw std::out_of_range("rank " + std::to_string(r) + " is not a rank of the schedule (0.." +
                            std::to_string(segments_.size()) + "-1)");
  Segment& seg = segments_[r];
  if (seg.set) throw std::logic_error("rank " + std::to_string(r) + "'s operations are already set");
  const std::size_t begin = code_.size();
  try {
    encode(r, ops);
  } catch (...) {
    code_.resize(begin);  // the rank stays unset and the schedule as it was
    throw;
  }
  for (const Operation& op : ops.ops) {
    max_cpu_ = std::max<std::uint32_t>(max_cpu_, op.cpu);
    if (op.kind != OpKind::Calc) max_nic_ = std::max<std::uint32_t>(max_nic_, op.nic);
  }
  seg.begin = begin;
  seg.end = code_.size();
  seg.ops = ops.ops.size();
  seg.set = true;
  cursor_[r] = Cursor{seg.begin, 0, 0};
}

void ExplicitSchedule::encode(std::uint32_t r, const OpBuffer& ops) {
  std::uint32_t node = 0;
  for (std::uint64_t i = 0; i < ops.ops.size(); ++i) {
    const Operation& op = ops.ops[i];
    if (static_cast<std::uint8_t>(op.kind) > static_cast<std::uint8_t>(OpKind::Recv))
      throw std::invalid_argument("rank " + std::to_string(r) + " operation " + std::to_string(i) + ": no such kind");
    const bool message = op.kind != OpKind::Calc;
    std::uint8_t h = static_cast<std::uint8_t>(op.kind);
    if (op.cpu != 0) h |= kHasCpu;
    if (message && op.nic != 0) h |= kHasNic;
    if (message && op.tag != 0) h |= kHasTag;
    if (message && op.comm != 0) h |= kHasComm;
    h |= static_cast<std::uint8_t>(std::min(op.dep_count, kDepMore) << kDepShift);
    code_.push_back(h);
    if (op.cpu != 0) code_.push_back(op.cpu);
    if (message && op.nic != 0) code_.push_back(op.nic);
    if (op.dep_count >= kDepMore) put_varint(code_, op.dep_count - kDepMore);
    put_varint(code_, zigzag(std::int64_t{op.node} - std::int64_t{node}));
    node = op.node;
    if (message) {
      put_varint(code_, zigzag(std::int64_t{op.peer} - std::int64_t{r}));
      put_varint(code_, op.bytes);
      if (op.tag != 0) put_varint(code_, zigzag(op.tag));
      if (op.comm != 0) put_varint(code_, op.comm);
    } else {
      put_varint(code_, op.duration);
    }
    for (std::uint32_t k = 0; k < op.dep_count; ++k) {
      const Dependency& d = ops.deps[op.first_dep + k];
      // How far back, so the usual "the one before" is one byte; a
      // dependency on a later operation stays representable (the evaluator
      // reports it).
      const auto back = static_cast<std::int64_t>(i - d.op);
      if (back >= (std::int64_t{1} << 60) || back <= -(std::int64_t{1} << 60))
        throw std::invalid_argument("rank " + std::to_string(r) + " operation " + std::to_string(i) +
                                    " depends on operation " + std::to_string(d.op) + ", too far to encode");
      put_varint(code_, zigzag(back) << 2 | (d.order != 0 ? 2 : 0) | (d.on_start ? 1 : 0));
      if (d.order != 0) put_varint(code_, d.order);
    }
  }
}

std::size_t ExplicitSchedule::decode(std::uint32_t rank, Cursor& c, std::size_t max_ops, OpBuffer& out) const {
  const std::uint8_t* p = code_.data() + c.at;
  // The rank's operations left bound the count, so the loop needs no end test
  // and the buffers grow once (most operations have one or two dependencies).
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(max_ops, segments_[rank].ops - c.op));
  std::size_t op_at = out.ops.size();
  out.ops.resize(op_at + n);
  if (out.deps.capacity() < out.deps.size() + 2 * n)  // geometric: callers append pull after pull
    out.deps.reserve(std::max(2 * out.deps.capacity(), out.deps.size() + 2 * n));
  std::uint64_t index = c.op;
  std::uint32_t node = c.node;
  for (std::size_t k = 0; k < n; ++k, ++index) {
    const std::uint8_t h = *p++;
    Operation& op = out.ops[op_at++];
    op.kind = static_cast<OpKind>(h & kKindMask);
    if (h & kHasCpu) op.cpu = *p++;
    if (h & kHasNic) op.nic = *p++;
    std::uint32_t deps = h >> kDepShift;
    if (deps == kDepMore) deps += static_cast<std::uint32_t>(get_varint(p));
    node = static_cast<std::uint32_t>(std::int64_t{node} + unzigzag(get_varint(p)));
    op.node = node;
    if (op.kind != OpKind::Calc) {
      op.peer = static_cast<std::int32_t>(std::int64_t{rank} + unzigzag(get_varint(p)));
      op.bytes = get_varint(p);
      if (h & kHasTag) op.tag = static_cast<std::int32_t>(unzigzag(get_varint(p)));
      if (h & kHasComm) op.comm = static_cast<std::uint32_t>(get_varint(p));
    } else {
      op.duration = get_varint(p);
    }
    op.first_dep = static_cast<std::uint32_t>(out.deps.size());
    op.dep_count = deps;
    for (std::uint32_t d = 0; d < deps; ++d) {
      const std::uint64_t v = get_varint(p);
      const auto order = (v & 2) != 0 ? static_cast<std::uint32_t>(get_varint(p)) : 0;
      out.deps.push_back(Dependency{index - static_cast<std::uint64_t>(unzigzag(v >> 2)), (v & 1) != 0, order});
    }
  }
  c.op = index;
  c.node = node;
  c.at = static_cast<std::uint64_t>(p - code_.data());
  return n;
}

OpBuffer ExplicitSchedule::operations(std::uint32_t r) const {
  OpBuffer out;
  Cursor c{segments_[r].begin, 0, 0};
  decode(r, c, segments_[r].ops, out);
  return out;
}

std::uint64_t ExplicitSchedule::total_operations() const {
  std::uint64_t n = 0;
  for (const Segment& s : segments_) n += s.ops;
  return n;
}

void ExplicitSchedule::rewind() {
  for (std::size_t r = 0; r < segments_.size(); ++r) cursor_[r] = Cursor{segments_[r].begin, 0, 0};
}

std::size_t ExplicitSchedule::pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) {
  Cursor& c = cursor_[rank];
  const std::uint64_t from = c.at;
  const std::size_t n = decode(rank, c, max_ops, out);
  const std::uint64_t end = segments_[rank].end;
  if (n > 0 && c.at == end) out.rank_done = true;
  if (n > 0 && c.at < end) {
    // A lazy reader comes back for this rank's next operations after many
    // other pulls, by which time a hardware prefetcher has lost the stream:
    // fetch about as much again as this pull took, now.
    const std::uint64_t ahead = std::min<std::uint64_t>(std::max<std::uint64_t>(2 * (c.at - from), 128), end - c.at);
    const std::uint8_t* next = code_.data() + c.at;
    for (std::uint64_t b = 0; b < ahead; b += 64) __builtin_prefetch(next + b);
  }
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
