// The static task graph and its lazy instantiation, checked against closed
// forms of Sweep3D (docs/references.md, Sweep3D facts) and small hand-countable graphs.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/taskgraph/dot.h"
#include "poems/taskgraph/dtg.h"
#include "poems/taskgraph/explicit_schedule.h"
#include "poems/taskgraph/goal.h"

using namespace poems;
using namespace poems::taskgraph;
using poems::psl::lower_model;
using poems::psl::LowerOptions;

namespace {

std::shared_ptr<const StaticTaskGraph> load(const std::string& path_or_text, bool is_text = false,
                                            LowerOptions options = {}) {
  static std::vector<std::unique_ptr<psl::Frontend>> keep;  // the graph points into nothing, but keep diagnostics alive
  auto fe = std::make_unique<psl::Frontend>();
  bool ok = is_text ? fe->load_text("test.psl", path_or_text) : fe->load_files({path_or_text});
  std::ostringstream diags;
  fe->diagnostics().print(diags);
  EXPECT_TRUE(ok) << diags.str();
  auto g = std::make_shared<StaticTaskGraph>(lower_model(fe->program(), fe->sources(), "", options));
  keep.push_back(std::move(fe));
  return g;
}

std::shared_ptr<const StaticTaskGraph> sweep3d() {
  static auto g = load(std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl");
  return g;
}

struct SweepCase {
  int it_g, jt_g, kt, npe_i, npe_j, mk, mmi, mm;
};

}  // namespace

TEST(Sweep3D, MessagesAndBytesMatchTheClosedForm) {
  const SweepCase cases[] = {
      {150, 150, 150, 2, 3, 30, 2, 6},  // docs/references.md: 840 messages per iteration
      {150, 150, 150, 1, 1, 10, 3, 6}, {50, 50, 50, 4, 4, 10, 3, 6},   {50, 50, 50, 1, 5, 7, 1, 6},
      {60, 40, 33, 3, 2, 5, 6, 6},     {255, 255, 255, 8, 8, 1, 1, 6}, {100, 100, 17, 5, 4, 4, 3, 6},
      {64, 64, 64, 16, 16, 64, 2, 6},  {31, 47, 10, 2, 7, 3, 1, 3},
  };
  for (const SweepCase& c : cases) {
    ParameterBinding b{{"it_g", c.it_g}, {"jt_g", c.jt_g}, {"kt", c.kt}, {"npe_i", c.npe_i}, {"npe_j", c.npe_j},
                       {"mk", c.mk},     {"mmi", c.mmi},   {"mm", c.mm}, {"iterations", 1}};
    ModelSchedule schedule(sweep3d(), b, {});
    GraphStatistics st = collect_statistics(schedule);
    const double mmo = c.mm / c.mmi, kb = std::ceil(double(c.kt) / c.mk);
    const double it = std::ceil(double(c.it_g) / c.npe_i), jt = std::ceil(double(c.jt_g) / c.npe_j);
    const double ew = 8 * mmo * kb * (c.npe_i - 1) * c.npe_j;  // messages across i boundaries
    const double ns = 8 * mmo * kb * c.npe_i * (c.npe_j - 1);
    SCOPED_TRACE(testing::Message() << c.it_g << "x" << c.jt_g << "x" << c.kt << " on " << c.npe_i << "x" << c.npe_j
                                    << " mk=" << c.mk << " mmi=" << c.mmi);
    EXPECT_EQ(st.processes, std::uint64_t(c.npe_i * c.npe_j));
    EXPECT_EQ(st.p2p_messages, std::uint64_t(ew + ns));
    // Full-size messages even for a short last k-block.
    EXPECT_EQ(st.p2p_bytes, std::uint64_t(ew * 8 * jt * c.mk * c.mmi + ns * 8 * it * c.mk * c.mmi));
    EXPECT_EQ(st.tasks, std::uint64_t(c.npe_i * c.npe_j * 8 * mmo * kb));
    if (c.npe_i >= 2 && c.npe_j >= 2) {
      // The Sweep3D facts' form (docs/references.md): kb[4(2mmo)4 + 2(npe_i-2)(2mmo)6 + 2(npe_j-2)(2mmo)6 +
      // (npe_i-2)(npe_j-2)(2mmo)8].
      double ends = kb * (4 * (2 * mmo) * 4 + 2 * (c.npe_i - 2) * (2 * mmo) * 6 + 2 * (c.npe_j - 2) * (2 * mmo) * 6 +
                          (c.npe_i - 2) * (c.npe_j - 2) * (2 * mmo) * 8);
      EXPECT_EQ(std::uint64_t(ends), st.p2p_messages);
    }
  }
}

TEST(Sweep3D, DesignKnownAnswer840) {
  ModelSchedule schedule(sweep3d(), {{"mk", 30}, {"mmi", 2}, {"iterations", 1}}, {});
  EXPECT_EQ(collect_statistics(schedule).p2p_messages, 840u);
}

TEST(Sweep3D, ComputeTimeIsWorkTimesWg) {
  InstantiateOptions opt;
  opt.ns_per_work = 2.5;  // Wg
  ModelSchedule schedule(sweep3d(), {{"iterations", 2}}, opt);
  GraphStatistics st = collect_statistics(schedule);
  // Defaults: 150^3 on 2x3, mk=10, mmi=3, mm=6: it=75, jt=50, kb=15, mmo=2.
  const double per_block = 75.0 * 50 * 10 * 3 * 2.5 * 1000;  // ps
  EXPECT_DOUBLE_EQ(st.total_work_ps, 6 * 2 * 8 * 2 * 15 * per_block);
  EXPECT_EQ(st.collectives, 2u);  // one allreduce per iteration
}

TEST(Sweep3D, OperationsFollowProgramOrderAndOctants) {
  // On a 2x1 grid rank 0 (pi = 0) first sweeps octant (-,-): it receives from pi+1.
  ModelSchedule schedule(sweep3d(), {{"npe_i", 2}, {"npe_j", 1}, {"iterations", 1}}, {});
  OpBuffer buf;
  schedule.pull(0, 3, buf);
  ASSERT_EQ(buf.ops.size(), 3u);
  EXPECT_EQ(buf.ops[0].kind, OpKind::Recv);
  EXPECT_EQ(buf.ops[0].peer, 1);
  EXPECT_EQ(buf.ops[0].tag, 0);
  EXPECT_EQ(buf.ops[0].bytes, 8u * 150 * 10 * 3);  // 8 jt mk mmi with jt = 150
  EXPECT_EQ(buf.ops[1].kind, OpKind::Calc);        // no j neighbour, no i-downstream for pi=0 in (-,-)
  EXPECT_EQ(buf.ops[2].kind, OpKind::Recv);        // next k-block
  // Every operation requires the completion of the one before it.
  for (std::size_t i = 1; i < buf.ops.size(); ++i) {
    ASSERT_EQ(buf.ops[i].dep_count, 1u);
    EXPECT_EQ(buf.deps[buf.ops[i].first_dep].op, i - 1);
    EXPECT_FALSE(buf.deps[buf.ops[i].first_dep].on_start);
  }
  EXPECT_EQ(schedule.node_info(buf.ops[0].node).label, "recv");
  EXPECT_NE(schedule.node_info(buf.ops[0].node).location.find("sweep3d.psl:"), std::string::npos);
}

TEST(Sweep3D, MillionProcessGraphIsLazy) {
  // 1000 x 1000 processes: instantiation and a first chunk of one rank never
  // touch the other ranks' (about 10^9) operations.
  ModelSchedule schedule(sweep3d(), {{"npe_i", 1000}, {"npe_j", 1000}, {"it_g", 1000}, {"jt_g", 1000}, {"kt", 1000}},
                         {});
  EXPECT_EQ(schedule.ranks(), 1000000u);
  OpBuffer buf;
  EXPECT_EQ(schedule.pull(999999, 100, buf), 100u);
  // The corner (999, 999) starts octant (-,-): compute, then send to (998, 999) and (999, 998).
  EXPECT_EQ(buf.ops[0].kind, OpKind::Calc);
  EXPECT_EQ(buf.ops[1].kind, OpKind::Send);
  EXPECT_EQ(buf.ops[1].peer, 998 * 1000 + 999);
  EXPECT_EQ(buf.ops[2].peer, 999 * 1000 + 998);
}

TEST(Condensation, MergesConsecutiveTasksAndPreservesWork) {
  const std::string spec = R"(
component Work in application[T] {
  accepts { profile { node_type = "w"; } transaction w(n: int); protocol dataflow; }
}
model T {
  param P = 4;
  taskgraph t {
    processes { [r] : 0 <= r < P };
    for k in 1 .. 3 {
      task a : Work(n = 10 * k);
      task b : Work(n = r + 1);
      task c : Work(n = 7);
      send to [r + 1] size 8;
      recv from [r - 1] size 8;
    }
  }
})";
  LowerOptions off;
  off.condense = false;
  ModelSchedule condensed(load(spec, true), {}, {});
  ModelSchedule separate(load(spec, true, off), {}, {});
  GraphStatistics a = collect_statistics(condensed), b = collect_statistics(separate);
  EXPECT_EQ(a.tasks * 3, b.tasks);
  EXPECT_EQ(a.total_work_ps, b.total_work_ps);
  // sum over r<4, k<=3 of 10k + (r+1) + 7, at 1 ns per unit of work
  EXPECT_DOUBLE_EQ(a.total_work_ps, 1000.0 * (4 * 60 + 3 * 10 + 4 * 3 * 7));
  EXPECT_EQ(a.p2p_messages, 3u * 3);
}

TEST(ProcessSets, TriangleIsEnumeratedAndBoundariesSkipped) {
  const std::string spec = R"(
model T {
  param N = 4;
  taskgraph t {
    processes { [i, j] : 0 <= j <= i < N };
    send to [i, j + 1] size 8;
    recv from [i, j - 1] size 8;
  }
})";
  ModelSchedule s(load(spec, true), {}, {});
  EXPECT_EQ(s.ranks(), 10u);
  EXPECT_FALSE(s.processes().is_box());
  // Lexicographic rank order: (0,0) (1,0) (1,1) (2,0) ...
  double c[2] = {1, 1};
  EXPECT_EQ(s.processes().rank(c), 2);
  double outside[2] = {1, 2};
  EXPECT_EQ(s.processes().rank(outside), -1);
  // (i, j+1) exists for j < i: 6 messages.
  EXPECT_EQ(collect_statistics(s).p2p_messages, 6u);
}

TEST(Peers, IslMapWithConstraint) {
  const std::string spec = R"(
model T {
  param P = 5;
  taskgraph t {
    processes { [r] : 0 <= r < P };
    send to { [q] -> [q + 2] : q % 2 == 0 } size 16;
  }
})";
  ModelSchedule s(load(spec, true), {}, {});
  GraphStatistics st = collect_statistics(s);
  EXPECT_EQ(st.p2p_messages, 2u);  // 0 -> 2, 2 -> 4 (4 -> 6 is outside)
  EXPECT_EQ(st.p2p_bytes, 32u);
}

TEST(Dependencies, NonblockingAndWaitall) {
  const std::string spec = R"(
model T {
  taskgraph t {
    processes { [r] : 0 <= r < 2 };
    irecv from [1 - r] size 8 tag 1;
    isend to [1 - r] size 8 tag 1;
    waitall;
    send to [1 - r] size 4;
  }
})";
  ModelSchedule s(load(spec, true), {}, {});
  OpBuffer buf;
  ASSERT_EQ(s.pull(0, 100, buf), 3u);
  // isend may start once the irecv has started (irequires) ...
  ASSERT_EQ(buf.ops[1].dep_count, 1u);
  EXPECT_TRUE(buf.deps[buf.ops[1].first_dep].on_start);
  // ... and the blocking send after waitall requires both to complete.
  const Operation& last = buf.ops[2];
  std::vector<std::pair<std::uint64_t, bool>> deps;
  for (std::uint32_t k = 0; k < last.dep_count; ++k)
    deps.push_back({buf.deps[last.first_dep + k].op, buf.deps[last.first_dep + k].on_start});
  EXPECT_NE(std::find(deps.begin(), deps.end(), std::make_pair(std::uint64_t{0}, false)), deps.end());
  EXPECT_NE(std::find(deps.begin(), deps.end(), std::make_pair(std::uint64_t{1}, false)), deps.end());
}

TEST(Collectives, MessageCountsPerAlgorithm) {
  auto count = [](CollectiveOp op, CollectiveAlgorithm a, std::uint32_t p) {
    CollectiveCall call;
    call.op = op;
    call.algorithm = a;
    call.procs = p;
    call.bytes = 64;
    call.root = p > 3 ? 3 : 0;
    CollectiveSchedule s(call);
    return collect_statistics(s).collective_messages;
  };
  using O = CollectiveOp;
  using A = CollectiveAlgorithm;
  for (std::uint32_t p : {1u, 2u, 5u, 8u, 13u, 64u}) {
    SCOPED_TRACE(p);
    std::uint64_t lg = p <= 1 ? 0 : static_cast<std::uint64_t>(std::ceil(std::log2(p)));
    EXPECT_EQ(count(O::Bcast, A::Binomial, p), p - 1);
    EXPECT_EQ(count(O::Bcast, A::Linear, p), p - 1);
    EXPECT_EQ(count(O::Reduce, A::Binomial, p), p - 1);
    EXPECT_EQ(count(O::Gather, A::Linear, p), p - 1);
    EXPECT_EQ(count(O::Scatter, A::Binomial, p), p - 1);
    EXPECT_EQ(count(O::Allreduce, A::Dissemination, p), p * lg);
    EXPECT_EQ(count(O::Barrier, A::Dissemination, p), p * lg);
    EXPECT_EQ(count(O::Allgather, A::Ring, p), p * (p - 1));
    EXPECT_EQ(count(O::Alltoall, A::Pairwise, p), p * (p - 1));
    EXPECT_EQ(count(O::Allreduce, A::Ring, p), 2 * p * (p - 1));
    EXPECT_EQ(count(O::Allreduce, A::Binomial, p), 2 * (p - 1));
    // Recursive doubling: p2 log2(p2) exchanges plus 2 per extra rank.
    std::uint64_t p2 = p <= 1 ? 1 : std::uint64_t{1} << static_cast<int>(std::floor(std::log2(p)));
    std::uint64_t rd = p <= 1 ? 0 : p2 * static_cast<std::uint64_t>(std::log2(p2)) + 2 * (p - p2);
    EXPECT_EQ(count(O::Allreduce, A::RecursiveDoubling, p), rd);
  }
}

// OpBuffer::rank_done is set only by the pull that hands over a rank's last
// operations (the simulator then stops pulling that rank), and is set there
// whenever the source can tell: the explicit schedule always, a collective
// and a PSL model whenever their last chunk is short of what was asked.
TEST(Sources, RankDoneMarksOnlyTheLastChunk) {
  // `always`: the source must mark the last chunk even when it is full.
  auto check = [](ScheduleSource& source, std::size_t chunk, bool always, const std::string& what) {
    for (std::uint32_t r = 0; r < source.ranks(); ++r) {
      SCOPED_TRACE(what + " rank " + std::to_string(r) + " chunk " + std::to_string(chunk));
      OpBuffer buf;
      std::size_t pulls = 0, done_at = 0, last = 0;
      while (true) {
        buf.clear();
        std::size_t n = source.pull(r, chunk, buf);
        if (n == 0) {
          EXPECT_FALSE(buf.rank_done);
          break;
        }
        ++pulls;
        last = n;
        EXPECT_EQ(done_at, 0u) << "operations after the chunk marked last";
        if (buf.rank_done) done_at = pulls;
      }
      if (pulls > 0 && (always || last < chunk)) {
        EXPECT_EQ(done_at, pulls);
      }
    }
  };
  for (std::size_t chunk : {1, 2, 3, 4, 1000}) {
    CollectiveCall call;
    call.op = CollectiveOp::Bcast;
    call.algorithm = CollectiveAlgorithm::Binomial;
    call.procs = 13;
    call.root = 5;
    call.bytes = 8;
    CollectiveSchedule bcast(call);
    check(bcast, chunk, false, "bcast");
    call.op = CollectiveOp::Allreduce;
    call.algorithm = CollectiveAlgorithm::Dissemination;
    CollectiveSchedule allreduce(call);
    check(allreduce, chunk, false, "allreduce");
    ModelSchedule model(sweep3d(), {{"npe_i", 3}, {"npe_j", 2}, {"iterations", 1}}, {});
    check(model, chunk, false, "sweep3d model");
    ModelSchedule for_explicit(sweep3d(), {{"npe_i", 2}, {"npe_j", 2}, {"iterations", 1}}, {});
    auto explicit_schedule = materialize(for_explicit);
    check(*explicit_schedule, chunk, true, "explicit");
  }
}

// A rank's collective handed over in chunks is the whole collective, field
// for field and dependency for dependency, whatever the chunk size.
TEST(Collectives, RangesConcatenateToTheWholeCollective) {
  auto same = [](const OpBuffer& a, const OpBuffer& b) {
    if (a.ops.size() != b.ops.size()) return false;
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
      const Operation &x = a.ops[i], &y = b.ops[i];
      if (x.kind != y.kind || x.cpu != y.cpu || x.nic != y.nic || x.peer != y.peer || x.tag != y.tag ||
          x.comm != y.comm || x.node != y.node || x.bytes != y.bytes || x.duration != y.duration ||
          x.dep_count != y.dep_count)
        return false;
      for (std::uint32_t k = 0; k < x.dep_count; ++k) {
        const Dependency &d = a.deps[x.first_dep + k], &e = b.deps[y.first_dep + k];
        if (d.op != e.op || d.on_start != e.on_start) return false;
      }
    }
    return true;
  };
  const CollectiveOp all_ops[] = {CollectiveOp::Barrier,   CollectiveOp::Bcast,   CollectiveOp::Reduce,
                                  CollectiveOp::Allreduce, CollectiveOp::Gather,  CollectiveOp::Scatter,
                                  CollectiveOp::Allgather, CollectiveOp::Alltoall};
  for (CollectiveOp op : all_ops)
    for (CollectiveAlgorithm a : algorithms_for(op))
      for (std::uint32_t p : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 12u, 13u, 16u, 33u})
        for (std::uint32_t root : {0u, p / 2, p - 1})
          for (std::uint32_t r = 0; r < p; ++r) {
            CollectiveCall call;
            call.op = op;
            call.algorithm = a;
            call.procs = p;
            call.rank = r;
            call.root = root;
            call.bytes = 1000;
            call.comm = 3;
            call.tag = 7;
            call.node = 2;
            OpBuffer whole;
            append_collective(call, 0, {}, whole);
            for (std::size_t chunk : {1, 2, 3, 5, 64}) {
              SCOPED_TRACE(std::string(collective_op_name(op)) + "/" + collective_algorithm_name(a) +
                           " p=" + std::to_string(p) + " root=" + std::to_string(root) + " rank=" + std::to_string(r) +
                           " chunk=" + std::to_string(chunk));
              OpBuffer pieces;
              std::uint64_t from = 0;
              while (std::size_t n = append_collective_range(call, from, chunk, pieces)) {
                ASSERT_LE(n, chunk);
                from += n;
              }
              ASSERT_TRUE(same(whole, pieces));
            }
          }
}

TEST(Collectives, BinomialTreeOfTheDesignKnownAnswer) {
  // Reduce on 8 ranks: rank 0 receives from 1, 2, 4; rank 1 from 3, 5; rank 2 from 6; rank 3 from 7.
  CollectiveCall call;
  call.op = CollectiveOp::Reduce;
  call.algorithm = CollectiveAlgorithm::Binomial;
  call.procs = 8;
  call.bytes = 1024;
  auto peers = [&](std::uint32_t rank, OpKind kind) {
    OpBuffer buf;
    call.rank = rank;
    append_collective(call, 0, {}, buf);
    std::vector<int> out;
    for (const Operation& o : buf.ops)
      if (o.kind == kind) out.push_back(o.peer);
    return out;
  };
  EXPECT_EQ(peers(0, OpKind::Recv), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(peers(1, OpKind::Recv), (std::vector<int>{3, 5}));
  EXPECT_EQ(peers(1, OpKind::Send), (std::vector<int>{0}));
  EXPECT_EQ(peers(2, OpKind::Recv), (std::vector<int>{6}));
  EXPECT_EQ(peers(3, OpKind::Recv), (std::vector<int>{7}));
  EXPECT_EQ(peers(7, OpKind::Send), (std::vector<int>{3}));
}

TEST(StaticGraph, NodesCarryIslForms) {
  auto g = sweep3d();
  const StaticNode* recv = nullptr;
  const StaticNode* kblock = nullptr;
  for (const StaticNode& n : g->nodes) {
    if (n.kind == StaticNode::Kind::Recv && !recv) recv = &n;
    if (n.kind == StaticNode::Kind::Compute) kblock = &n;
  }
  ASSERT_TRUE(recv && kblock);
  // Instances: process coordinates and the four enclosing loop variables.
  EXPECT_NE(kblock->instances.find("{ [_pi, _pj, _its, _iq, _mo, _kk]"), std::string::npos) << kblock->instances;
  EXPECT_EQ(kblock->work, "(cells * angles)");
  EXPECT_EQ(kblock->component, "KBlock");
  // The octant direction di = iq < 4 ? -1 : 1 becomes two pieces of the message relation,
  // written from the sender's side: [sender, loops] -> [receiver, loops, tag].
  EXPECT_NE(recv->messages.find("; "), std::string::npos) << recv->messages;
  EXPECT_NE(recv->messages.find("[__peer0, __peer1, _its, _iq, _mo, _kk] -> [_pi, _pj, _its, _iq, _mo, _kk, __tag]"),
            std::string::npos)
      << recv->messages;
}

TEST(Instantiation, BadBindingsAreErrors) {
  EXPECT_THROW(ModelSchedule(sweep3d(), {{"nosuch", 1}}, {}), InstantiationError);
  EXPECT_THROW(ModelSchedule(sweep3d(), {{"npe_i", 0}}, {}), InstantiationError);
  EXPECT_THROW(ModelSchedule(sweep3d(), {{"npe_i", 2.5}}, {}), InstantiationError);
}

TEST(Dot, StaticGraphHasLoopClustersAndMessageEdges) {
  std::ostringstream out;
  write_static_dot(*sweep3d(), out);
  const std::string dot = out.str();
  EXPECT_NE(dot.find("label=\"for kk in 1 .. kb\""), std::string::npos);
  EXPECT_NE(dot.find("task kblock : KBlock"), std::string::npos);
  // Exactly two message edges: east-west and north-south sends to their receives.
  std::size_t edges = 0;
  for (std::size_t p = 0; (p = dot.find("label=\"message\"", p)) != std::string::npos; ++p) ++edges;
  EXPECT_EQ(edges, 2u);
  EXPECT_NE(dot.find("processes { [pi, pj] : 0 <= pi < npe_i and 0 <= pj < npe_j }"), std::string::npos);
}

TEST(Dot, DynamicGraphIsForSmallBindingsOnly) {
  ModelSchedule small(sweep3d(), {{"npe_i", 2}, {"npe_j", 1}, {"mk", 150}, {"mmi", 6}, {"iterations", 1}}, {});
  std::ostringstream out;
  write_dynamic_dot(small, out);
  EXPECT_NE(out.str().find("subgraph cluster_rank1"), std::string::npos);
  EXPECT_NE(out.str().find("[color=red, constraint=false]"), std::string::npos);  // a message edge
  ModelSchedule big(sweep3d(), {}, {});
  std::ostringstream ignored;
  EXPECT_THROW(write_dynamic_dot(big, ignored, 100), std::length_error);
}

TEST(Goal, Sweep3DExportReimportsAsTheSameGraph) {
  ParameterBinding b{{"npe_i", 3}, {"npe_j", 2}, {"mk", 50}, {"mmi", 3}, {"iterations", 2}};
  InstantiateOptions opt;
  opt.ns_per_work = 2;  // whole ns: GOAL calc times are integers (LogGOPSim's txt2bin)
  ModelSchedule lazy(sweep3d(), b, opt);
  std::ostringstream text;
  write_goal(text, lazy);

  psl::SourceManager sources;
  psl::DiagnosticEngine diags(sources);
  psl::FileId file = sources.add("sweep3d.goal", text.str());
  auto imported = parse_goal(sources, file, diags);
  std::ostringstream errors;
  diags.print(errors);
  ASSERT_TRUE(imported) << errors.str();

  ModelSchedule again(sweep3d(), b, opt);
  auto original = materialize(again);
  std::string why;
  EXPECT_TRUE(same_after_export(*original, *imported, &why)) << why;
  EXPECT_EQ(imported->total_operations(), collect_statistics(*original).operations);
}

TEST(Instantiation, FractionalLoopBoundsAreErrors) {
  try {
    ModelSchedule s(sweep3d(), {{"mmi", 4}}, {});  // mmo = 6 / 4
    FAIL() << "accepted a fractional loop bound";
  } catch (const InstantiationError& e) {
    EXPECT_NE(std::string(e.what()).find("loop 'for mo in 1 .. mmo' has the bound 1.5"), std::string::npos) << e.what();
  }
}
