// The encoded in-memory schedule and the node table: every field an
// operation carries comes back exactly, at the ends of its range, whether
// read whole or in the chunks a lazy reader pulls.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

#include "poems/taskgraph/explicit_schedule.h"
#include "poems/taskgraph/node_table.h"

namespace poems::taskgraph {
namespace {

constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max();

void add(OpBuffer& b, Operation op, std::initializer_list<Dependency> deps = {}) {
  op.first_dep = static_cast<std::uint32_t>(b.deps.size());
  op.dep_count = static_cast<std::uint32_t>(deps.size());
  b.deps.insert(b.deps.end(), deps);
  b.ops.push_back(op);
}

Operation send(std::int32_t peer, std::uint64_t bytes, std::int32_t tag = 0, std::uint32_t comm = 0) {
  Operation op;
  op.kind = OpKind::Send;
  op.peer = peer;
  op.bytes = bytes;
  op.tag = tag;
  op.comm = comm;
  return op;
}

Operation recv(std::int32_t peer, std::uint64_t bytes, std::int32_t tag = 0, std::uint32_t comm = 0) {
  Operation op = send(peer, bytes, tag, comm);
  op.kind = OpKind::Recv;
  return op;
}

Operation calc(Picoseconds duration) {
  Operation op;
  op.kind = OpKind::Calc;
  op.duration = duration;
  return op;
}

// Every field of every operation, and the dependencies each one names.
void expect_same(const OpBuffer& want, const OpBuffer& got) {
  ASSERT_EQ(want.ops.size(), got.ops.size());
  for (std::size_t i = 0; i < want.ops.size(); ++i) {
    SCOPED_TRACE("operation " + std::to_string(i));
    const Operation& a = want.ops[i];
    const Operation& b = got.ops[i];
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.cpu, b.cpu);
    EXPECT_EQ(a.node, b.node);
    if (a.kind == OpKind::Calc) {
      EXPECT_EQ(a.duration, b.duration);
    } else {
      EXPECT_EQ(a.nic, b.nic);
      EXPECT_EQ(a.peer, b.peer);
      EXPECT_EQ(a.bytes, b.bytes);
      EXPECT_EQ(a.tag, b.tag);
      EXPECT_EQ(a.comm, b.comm);
    }
    ASSERT_EQ(a.dep_count, b.dep_count);
    for (std::uint32_t k = 0; k < a.dep_count; ++k) {
      EXPECT_EQ(want.deps[a.first_dep + k].op, got.deps[b.first_dep + k].op) << "dependency " << k;
      EXPECT_EQ(want.deps[a.first_dep + k].on_start, got.deps[b.first_dep + k].on_start) << "dependency " << k;
      EXPECT_EQ(want.deps[a.first_dep + k].order, got.deps[b.first_dep + k].order) << "dependency " << k;
    }
  }
}

// Operations at the ends of every field's range, on rank `rank` of `ranks`.
OpBuffer extremes(std::int32_t rank, std::int32_t ranks) {
  OpBuffer b;
  add(b, calc(0));
  add(b, calc(kMax64), {{0, false}});
  add(b, send(ranks - 1, 0, std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::uint32_t>::max()),
      {{1, true}, {0, false}});
  add(b, recv(kAnySource, kMax64, kAnyTag, 0), {{2, false}, {1, true}, {0, false}});
  add(b, recv(0, 1, std::numeric_limits<std::int32_t>::min(), 7),
      {{3, false}, {2, true}, {1, false}, {0, true}, {3, true}});
  add(b, send(rank, 1 << 20));  // to itself: a peer offset of zero
  Operation on_cpu = calc(1'000'000'007);
  on_cpu.cpu = 255;
  add(b, on_cpu, {{5, true}});
  Operation on_nic = send(0, 65536, 3);
  on_nic.nic = 255;
  on_nic.cpu = 1;
  add(b, on_nic);
  // A dependency on a later operation is kept (the simulator reports it),
  // and one on the largest index wraps around exactly.
  add(b, calc(5), {{9, false}, {kMax64, true}});
  add(b, calc(6));
  // Node ids that go down as well as up, to both ends.
  const std::uint32_t nodes[] = {3, 0, std::numeric_limits<std::uint32_t>::max(), 1, 2, 2, 0, 9, 8, 7};
  for (std::size_t i = 0; i < b.ops.size(); ++i) b.ops[i].node = nodes[i];
  return b;
}

TEST(ExplicitSchedule, EveryFieldRoundTripsAtTheEndsOfItsRange) {
  ExplicitSchedule s(3);
  const OpBuffer first = extremes(0, 3), last = extremes(2, 3);
  s.set_rank(2, last);  // in any order
  s.set_rank(0, first);
  expect_same(first, s.operations(0));
  expect_same(last, s.operations(2));
  EXPECT_TRUE(s.operations(1).ops.empty());
  EXPECT_EQ(s.operation_count(0), 10u);
  EXPECT_EQ(s.operation_count(1), 0u);
  EXPECT_EQ(s.total_operations(), 20u);
}

// Values on both sides of every length the encoding gives a field: the
// amount (bytes or duration) in 0..6 or 8 bytes, the peer's offset from the
// rank in 1..4 bytes of two's complement (modulo 2^32), the tag in 0, 1, 2 or 4 bytes
// (zigzag), the node as "the last plus one" or a difference, and
// dependencies on the operation before (one byte of 0), further back, on a
// start, in an order, or on later operations.
constexpr std::uint64_t kAmounts[] = {0,
                                      1,
                                      0xff,
                                      0x100,
                                      0xffff,
                                      0x10000,
                                      0xffffff,
                                      0x1000000,
                                      0xffffffff,
                                      0x100000000,
                                      0xffffffffff,
                                      0x10000000000,
                                      0xffffffffffff,
                                      0x1000000000000,
                                      0xffffffffffffff,
                                      0x100000000000000,
                                      kMax64 - 1,
                                      kMax64};
constexpr std::int64_t kPeerOffsets[] = {0,        1,       -1,       127,        -128,        128,
                                         -129,     32767,   -32768,   32768,      -32769,      8388607,
                                         -8388608, 8388608, -8388609, 2147483647, -2147483648, -2147483649};
constexpr std::int32_t kTags[] = {0,
                                  1,
                                  -1,
                                  63,
                                  -64,
                                  127,
                                  -128,
                                  128,
                                  -129,
                                  32767,
                                  -32768,
                                  32768,
                                  -32769,
                                  std::numeric_limits<std::int32_t>::max(),
                                  std::numeric_limits<std::int32_t>::min()};

OpBuffer boundaries(std::uint32_t rank) {
  OpBuffer b;
  std::uint32_t node = 0;
  auto next = [&](Operation op, std::initializer_list<Dependency> deps) {
    op.node = node;
    add(b, op, deps);
  };
  std::uint64_t i = 0;
  for (std::uint64_t v : kAmounts) {
    ++node;  // the last plus one
    next(calc(v), {});
    next(send(static_cast<std::int32_t>(rank), v), {{i, false}});  // on the one before
    i += 2;
  }
  for (std::int64_t offset : kPeerOffsets) {
    const std::int64_t peer = std::int64_t{rank} + offset;
    if (peer < std::numeric_limits<std::int32_t>::min() || peer > std::numeric_limits<std::int32_t>::max()) continue;
    node += 1000;                                                     // a difference
    next(recv(static_cast<std::int32_t>(peer), 8), {{i - 1, true}});  // on the one before, but on its start
    ++i;
  }
  for (std::int32_t tag : kTags) {
    node -= 3;
    next(send(0, 1, tag), {{i - 1, false, 7}});                       // on the one before, in an order
    next(recv(kAnySource, 2, tag, 5), {{i - 2, false}, {i, false}});  // the one before, second
    i += 2;
  }
  // Three and more dependencies; a node id wrapping
  // around to 0 counts as the last plus one.
  node = std::numeric_limits<std::uint32_t>::max() - 1;
  next(calc(3), {{i - 1, false}, {i - 2, true}, {0, false, 1}});
  node = std::numeric_limits<std::uint32_t>::max();
  next(calc(4), {{i, false}, {i - 1, true}, {i - 2, false}, {i - 3, false}});
  node = 0;
  Operation units = send(1, 9, -5, 3);
  units.cpu = 255;
  units.nic = 254;
  next(units, {{i + 1, false}});
  units.nic = 0;
  next(units, {{i + 2, false}});
  Operation on_nic = recv(2, 9);
  on_nic.nic = 1;
  next(on_nic, {});
  return b;
}

TEST(ExplicitSchedule, ValuesAtEveryLengthBoundaryRoundTrip) {
  // A rank far from 0, so that peer offsets go beyond int32 both ways.
  constexpr std::uint32_t kRanks = 70'000;
  ExplicitSchedule s(kRanks);
  const OpBuffer low = boundaries(0), high = boundaries(kRanks - 1);
  s.set_rank(0, low);
  s.set_rank(kRanks - 1, high);  // the last bytes of the code
  expect_same(low, s.operations(0));
  expect_same(high, s.operations(kRanks - 1));
  // One operation at a time, as a lazy reader pulls them: the node carried
  // from pull to pull.
  for (std::uint32_t r : {0u, kRanks - 1}) {
    OpBuffer all;
    while (s.pull(r, 1, all) != 0) {
    }
    expect_same(r == 0 ? low : high, all);
  }
}

// The shortest length is chosen for each field: two header bytes, then
// the amount's, the peer offset's and the tag's bytes (and 8 of padding).
TEST(ExplicitSchedule, EachFieldTakesTheFewestBytesItsLengthsAllow) {
  const std::size_t amount_bytes[] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 8, 8, 8, 8, 8};
  for (std::size_t k = 0; k < std::size(kAmounts); ++k) {
    ExplicitSchedule s(1);
    OpBuffer b;
    Operation op = calc(kAmounts[k]);
    op.node = 1;
    add(b, op);
    s.set_rank(0, b);
    EXPECT_EQ(s.encoded_bytes(), 2 + amount_bytes[k] + 8) << kAmounts[k];
  }
  // Peers are 32-bit: an offset below -2^31 needs a rank above 0 (and
  // takes 4 bytes, modulo 2^32).
  const std::size_t peer_bytes[] = {1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4};
  static_assert(std::size(kPeerOffsets) == std::size(peer_bytes));
  for (std::size_t k = 0; k < std::size(kPeerOffsets); ++k) {
    const std::int64_t offset = kPeerOffsets[k];
    const std::uint32_t rank = offset < std::numeric_limits<std::int32_t>::min() ? 1 : 0;
    const std::int64_t peer = std::int64_t{rank} + offset;
    ExplicitSchedule s(2);
    OpBuffer b;
    Operation op = send(static_cast<std::int32_t>(peer), 0);
    op.node = 1;
    add(b, op);
    s.set_rank(rank, b);
    EXPECT_EQ(s.encoded_bytes(), 2 + peer_bytes[k] + 8) << offset;
    expect_same(b, s.operations(rank));
  }
  const std::size_t tag_bytes[] = {0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4};
  static_assert(std::size(kTags) == std::size(tag_bytes));
  for (std::size_t k = 0; k < std::size(kTags); ++k) {
    ExplicitSchedule s(1);
    OpBuffer b;
    Operation op = recv(0, 0, kTags[k]);
    op.node = 1;
    add(b, op);
    s.set_rank(0, b);
    EXPECT_EQ(s.encoded_bytes(), 2 + 1 + tag_bytes[k] + 8) << kTags[k];
  }
}

TEST(ExplicitSchedule, ChunkedPullsReturnWhatOperationsDoesAndMarkTheEnd) {
  ExplicitSchedule s(2);
  const OpBuffer ops = extremes(1, 2);
  s.set_rank(1, ops);
  for (std::size_t chunk : {1u, 3u, 4u, 10u, 64u}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    s.rewind();
    OpBuffer all;
    std::size_t pulls = 0;
    for (;;) {
      OpBuffer part;
      const std::size_t n = s.pull(1, chunk, part);
      if (n == 0) break;
      ++pulls;
      EXPECT_LE(n, chunk);
      // Only the pull that hands over the rank's last operation says so.
      EXPECT_EQ(part.rank_done, all.ops.size() + n == ops.ops.size());
      for (Operation op : part.ops) {
        op.first_dep += static_cast<std::uint32_t>(all.deps.size());
        all.ops.push_back(op);
      }
      all.deps.insert(all.deps.end(), part.deps.begin(), part.deps.end());
    }
    EXPECT_EQ(pulls, (ops.ops.size() + chunk - 1) / chunk);
    expect_same(ops, all);
    OpBuffer none;
    EXPECT_EQ(s.pull(0, chunk, none), 0u);
  }
}

// decode_into hands over what pull does, operation by operation with its
// dependencies read one at a time, in chunks that continue each other (and
// continue pulls); a sink that reads no dependency leaves the stream intact.
TEST(ExplicitSchedule, DecodeIntoHandsOverWhatPullDoes) {
  ExplicitSchedule s(3);
  const OpBuffer ops = extremes(1, 3);
  s.set_rank(1, ops);
  std::uint64_t deps = 0;
  for (const Operation& op : ops.ops) deps += op.dep_count;
  EXPECT_EQ(s.dependency_count(1), deps);
  EXPECT_EQ(s.dependency_count(0), 0u);
  for (std::size_t chunk : {1u, 3u, 10u, 64u}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    s.rewind();
    OpBuffer all;
    auto append = [&all](const Operation& op, ExplicitSchedule::DependencyReader& reader) {
      Operation o = op;
      o.first_dep = static_cast<std::uint32_t>(all.deps.size());
      EXPECT_EQ(reader.left(), op.dep_count);
      while (reader.left() != 0) all.deps.push_back(reader.next());
      all.ops.push_back(o);
    };
    while (s.operations_left(1) != 0) {
      const std::uint64_t left = s.operations_left(1);
      const std::size_t n = s.decode_into(1, chunk, append);
      EXPECT_EQ(n, std::min<std::uint64_t>(chunk, left));
      EXPECT_EQ(s.operations_left(1), left - n);
      // A pull goes on where decode_into stopped.
      if (s.operations_left(1) != 0) {
        OpBuffer part;
        ASSERT_EQ(s.pull(1, 1, part), 1u);
        Operation o = part.ops[0];
        o.first_dep = static_cast<std::uint32_t>(all.deps.size());
        all.deps.insert(all.deps.end(), part.deps.begin(), part.deps.end());
        all.ops.push_back(o);
      }
    }
    expect_same(ops, all);
    EXPECT_EQ(s.decode_into(1, chunk, append), 0u);
    EXPECT_EQ(s.decode_into(0, chunk, append), 0u);
  }
  // Skipped dependencies are still stepped over.
  s.rewind();
  std::vector<std::uint32_t> nodes;
  EXPECT_EQ(s.decode_into(1, 100,
                          [&](const Operation& op, ExplicitSchedule::DependencyReader&) { nodes.push_back(op.node); }),
            ops.ops.size());
  ASSERT_EQ(nodes.size(), ops.ops.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(nodes[i], ops.ops[i].node);
}

TEST(ExplicitSchedule, TypicalOperationsTakeAFewBytes) {
  // A Sweep3D-like rank: receive from the neighbour before, compute, send
  // on, each depending on the one before it.
  OpBuffer b;
  for (std::uint32_t i = 0; i < 300; ++i) {
    Operation op = i % 3 == 0 ? recv(4, 2400) : i % 3 == 1 ? calc(123'456) : send(6, 2400);
    op.node = i + 1;
    if (i == 0)
      add(b, op);
    else
      add(b, op, {{i - 1, false}});
  }
  ExplicitSchedule s(8);
  s.set_rank(5, b);
  expect_same(b, s.operations(5));
  // Two header bytes (the next node implied), a peer offset byte, two size
  // bytes and a dependency for a message; the header, three duration bytes
  // and a dependency for a computation (the first operation has none); and
  // the padding.
  EXPECT_EQ(s.encoded_bytes(), 300u * 6 - 1 + 8);
}

TEST(ExplicitSchedule, EachRankIsSetOnceAndMustExist) {
  ExplicitSchedule s(2);
  OpBuffer b;
  add(b, calc(1));
  s.set_rank(0, b);
  EXPECT_THROW(s.set_rank(0, b), std::logic_error);
  EXPECT_THROW(s.set_rank(2, b), std::out_of_range);
  OpBuffer far;
  add(far, calc(1));
  add(far, calc(2), {{std::uint64_t{1} << 62, false}});
  const std::size_t bytes = s.encoded_bytes();
  try {
    s.set_rank(1, far);
    FAIL() << "a dependency 2^62 operations away was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("too far to encode"), std::string::npos) << e.what();
  }
  // The failed rank is left unset and the schedule as it was: nothing to
  // read after a rewind, and the rank can still be set.
  EXPECT_EQ(s.encoded_bytes(), bytes);
  EXPECT_EQ(s.operation_count(1), 0u);
  s.rewind();
  OpBuffer none;
  EXPECT_EQ(s.pull(1, 4, none), 0u);
  OpBuffer near;
  add(near, calc(7));
  s.set_rank(1, near);
  expect_same(near, s.operations(1));
  expect_same(b, s.operations(0));
}

// The facts a reader checks once instead of per operation: the largest
// message and calc, over every rank set; peers that are ranks (a receive's
// wildcard included, a send's -1 not); dependencies on earlier operations
// only. A rank that fails to encode changes none of them.
TEST(ExplicitSchedule, KnowsWhatEveryOperationSetSatisfies) {
  ExplicitSchedule s(3);
  EXPECT_EQ(s.max_message_bytes(), 0u);
  EXPECT_EQ(s.max_calc_duration(), 0u);
  EXPECT_TRUE(s.peers_are_ranks());
  EXPECT_TRUE(s.depends_on_earlier());
  OpBuffer a;
  add(a, calc(70));
  add(a, send(2, 1000), {{0, false}});
  add(a, recv(kAnySource, 5), {{1, true}});
  s.set_rank(0, a);
  EXPECT_EQ(s.max_message_bytes(), 1000u);
  EXPECT_EQ(s.max_calc_duration(), 70u);
  EXPECT_TRUE(s.peers_are_ranks());
  EXPECT_TRUE(s.depends_on_earlier());
  OpBuffer far;  // fails to encode: nothing of it counts
  add(far, calc(9000));
  add(far, send(3, 9000), {{std::uint64_t{1} << 62, false}});
  EXPECT_THROW(s.set_rank(1, far), std::invalid_argument);
  EXPECT_EQ(s.max_message_bytes(), 1000u);
  EXPECT_EQ(s.max_calc_duration(), 70u);
  EXPECT_TRUE(s.peers_are_ranks());
  EXPECT_TRUE(s.depends_on_earlier());
  OpBuffer b;
  add(b, recv(0, 4000));
  add(b, calc(20), {{1, false}});  // on itself
  s.set_rank(1, b);
  EXPECT_EQ(s.max_message_bytes(), 4000u);
  EXPECT_EQ(s.max_calc_duration(), 70u);
  EXPECT_TRUE(s.peers_are_ranks());
  EXPECT_FALSE(s.depends_on_earlier());
  OpBuffer c;
  add(c, send(-1, 1));  // kAnySource names no destination
  s.set_rank(2, c);
  EXPECT_FALSE(s.peers_are_ranks());
  ExplicitSchedule t(2);
  OpBuffer d;
  add(d, recv(2, 1));  // one past the last rank
  t.set_rank(0, d);
  EXPECT_FALSE(t.peers_are_ranks());
  EXPECT_TRUE(t.depends_on_earlier());
}

TEST(ExplicitSchedule, MaterializeKeepsOperationsAndNodes) {
  ExplicitSchedule s(2);
  s.nodes().add(NodeInfo{"sweep", "a.psl:3:7"});
  const std::uint32_t file = s.nodes().add_file("b.goal");
  EXPECT_EQ(s.nodes().add("l1", file, 12, 5), 2u);
  s.set_rank(0, extremes(0, 2));
  s.set_rank(1, extremes(1, 2));
  const auto copy = materialize(s);
  ASSERT_EQ(copy->ranks(), 2u);
  expect_same(s.operations(0), copy->operations(0));
  expect_same(s.operations(1), copy->operations(1));
  ASSERT_EQ(copy->node_count(), 3u);
  EXPECT_EQ(copy->node_info(1).label, "sweep");
  EXPECT_EQ(copy->node_info(1).location, "a.psl:3:7");
  EXPECT_EQ(copy->node_info(2).label, "l1");
  EXPECT_EQ(copy->node_info(2).location, "b.goal:12:5");
}

TEST(NodeTable, BuildsLabelsAndLocationsOnDemand) {
  NodeTable t;
  EXPECT_EQ(t.size(), 1u);  // node 0: none
  EXPECT_EQ(t.info(0).label, "");
  EXPECT_EQ(t.info(0).location, "");
  const std::uint32_t a = t.add_file("sweep3d.goal");
  EXPECT_EQ(t.add_file("sweep3d.goal"), a);  // interned
  const std::uint32_t b = t.add_file("other.goal");
  EXPECT_NE(a, b);
  EXPECT_EQ(t.add("l17", a, 4, 1), 1u);
  EXPECT_EQ(t.add("", b, 0, 0), 2u);
  EXPECT_EQ(t.add(NodeInfo{"recv", "x.psl:31:13"}), 3u);
  EXPECT_EQ(t.info(1).label, "l17");
  EXPECT_EQ(t.info(1).location, "sweep3d.goal:4:1");
  EXPECT_EQ(t.info(2).label, "");
  EXPECT_EQ(t.info(2).location, "other.goal");  // line 0: the file alone
  EXPECT_EQ(t.info(3).label, "recv");
  EXPECT_EQ(t.info(3).location, "x.psl:31:13");
  EXPECT_EQ(t.info(4).label, "");  // out of range
  EXPECT_THROW(t.add("x", 99, 1, 1), std::out_of_range);
}

TEST(NodeTable, KeepsEveryNodeAcrossItsStorageBlocks) {
  // More nodes than one block of entries, labels filling several 1 MiB
  // blocks of label text (100,000 labels of 32 bytes and more), and labels
  // longer than a block.
  NodeTable t;
  const std::uint32_t f = t.add_file("big.goal");
  const std::string huge(3 << 20, 'h');
  const std::string pad(30, 'p');
  std::size_t label_bytes = 0;
  for (std::uint32_t i = 1; i <= 100'000; ++i) {
    const std::string label = i % 25'000 == 0 ? huge + std::to_string(i) : pad + std::to_string(i);
    label_bytes += label.size();
    ASSERT_EQ(t.add(label, f, i, i % 80), i);
  }
  // Entries in four blocks of 32,768; label blocks wasted by at most the
  // one being filled (a long label does not end it).
  EXPECT_GE(t.memory_bytes(), 100'001 * 24 + label_bytes);
  EXPECT_LE(t.memory_bytes(), 4 * 32'768 * 24 + label_bytes + (1 << 20) + 64);
  ASSERT_EQ(t.size(), 100'001u);
  for (std::uint32_t i : {1u, 2u, 32'767u, 32'768u, 32'769u, 24'999u, 25'000u, 25'001u, 65'536u, 99'999u, 100'000u}) {
    const NodeInfo n = t.info(i);
    EXPECT_EQ(n.label, i % 25'000 == 0 ? huge + std::to_string(i) : pad + std::to_string(i)) << i;
    EXPECT_EQ(n.location, "big.goal:" + std::to_string(i) + ":" + std::to_string(i % 80)) << i;
  }
  EXPECT_EQ(t.info(100'001).label, "");
}

}  // namespace
}  // namespace poems::taskgraph
