// GOAL import/export: parsing, topological order, round trips, diagnostics.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "poems/taskgraph/goal.h"

namespace poems::taskgraph {
namespace {

namespace fs = std::filesystem;

struct Parsed {
  std::unique_ptr<ExplicitSchedule> schedule;
  std::string diagnostics;
};

Parsed parse(const std::string& text, const std::string& path = "t.goal") {
  psl::SourceManager sources;
  psl::FileId f = sources.add(path, text);
  psl::DiagnosticEngine diags(sources);
  Parsed p{parse_goal(sources, f, diags), ""};
  for (const auto& d : diags.all()) p.diagnostics += diags.render(d);
  return p;
}

std::string export_goal(ScheduleSource& s) {
  std::ostringstream out;
  write_goal(out, s);
  return out.str();
}

void expect_round_trip(ExplicitSchedule& original) {
  original.rewind();
  std::string text = export_goal(original);
  Parsed back = parse(text);
  ASSERT_TRUE(back.schedule) << back.diagnostics << "\n" << text;
  std::string why;
  EXPECT_TRUE(same_after_export(original, *back.schedule, &why)) << why << "\n" << text;
  // And the text itself is a fixed point.
  EXPECT_EQ(export_goal(*back.schedule), text);
  // As LogGOPSim's txt2bin reads it: no line starts with blanks.
  EXPECT_EQ(text.find("\n "), std::string::npos);
  EXPECT_EQ(text.find("comm"), std::string::npos);
  EXPECT_EQ(text.find("any"), std::string::npos);
}

TEST(Goal, ParsesTheSeedExample) {
  Parsed p = parse(R"(num_ranks 2
rank 0 {
   l1: calc 100 cpu 0
   l2: send 10b to 1 tag 0 cpu 0 nic 0
   l3: recv 10b from 1 tag 0 cpu 0 nic 0
   l2 requires l1
}
rank 1 { l1: recv 10b from 0; l2: send 10b to 0; l2 requires l1 }
)");
  ASSERT_TRUE(p.schedule) << p.diagnostics;
  const OpBuffer r0 = p.schedule->operations(0);
  ASSERT_EQ(r0.ops.size(), 3u);
  EXPECT_EQ(r0.ops[0].kind, OpKind::Calc);
  EXPECT_EQ(r0.ops[0].duration, 100 * kPsPerNs);
  EXPECT_EQ(r0.ops[1].kind, OpKind::Send);
  EXPECT_EQ(r0.ops[1].bytes, 10u);
  EXPECT_EQ(r0.ops[1].peer, 1);
  ASSERT_EQ(r0.ops[1].dep_count, 1u);
  EXPECT_EQ(r0.deps[r0.ops[1].first_dep].op, 0u);
  EXPECT_FALSE(r0.deps[r0.ops[1].first_dep].on_start);
  EXPECT_EQ(p.schedule->node_info(r0.ops[2].node).label, "l3");
  EXPECT_EQ(p.schedule->node_info(r0.ops[2].node).location, "t.goal:5:4");
}

TEST(Goal, OrdersOperationsTopologically) {
  Parsed p = parse("num_ranks 1\nrank 0 { c: calc 3; b: calc 2 cpu 1; a: calc 1.5; c requires b; b irequires a }\n");
  ASSERT_TRUE(p.schedule) << p.diagnostics;
  const OpBuffer r = p.schedule->operations(0);
  ASSERT_EQ(r.ops.size(), 3u);
  EXPECT_EQ(r.ops[0].duration, 1500u);  // a
  EXPECT_EQ(r.ops[1].duration, 2000u);  // b
  EXPECT_EQ(r.ops[2].duration, 3000u);  // c
  EXPECT_TRUE(r.deps[r.ops[1].first_dep].on_start);
  EXPECT_EQ(r.deps[r.ops[2].first_dep].op, 1u);
}

TEST(Goal, WildcardsAndCommunicators) {
  Parsed p = parse("num_ranks 2\nrank 1 { r: recv 5b from any tag any comm 7; s: recv 5 from -1 tag -1 }\n");
  ASSERT_TRUE(p.schedule) << p.diagnostics;
  const OpBuffer r = p.schedule->operations(1);
  EXPECT_EQ(r.ops[0].peer, kAnySource);
  EXPECT_EQ(r.ops[0].tag, kAnyTag);
  EXPECT_EQ(r.ops[0].comm, 7u);
  EXPECT_EQ(r.ops[1].peer, kAnySource);
  EXPECT_EQ(p.schedule->operation_count(0), 0u);
}

TEST(Goal, RoundTripOfTheExamples) {
  for (const char* name : {"tree8.goal", "pingpong2.goal", "deadlock.goal"}) {
    std::ifstream in(std::string(POEMS_SOURCE_DIR) + "/examples/goal/" + name);
    std::stringstream text;
    text << in.rdbuf();
    Parsed p = parse(text.str(), name);
    ASSERT_TRUE(p.schedule) << name << p.diagnostics;
    expect_round_trip(*p.schedule);
  }
}

TEST(Goal, RoundTripOfCollectives) {
  for (CollectiveOp op :
       {CollectiveOp::Bcast, CollectiveOp::Reduce, CollectiveOp::Allreduce, CollectiveOp::Gather, CollectiveOp::Scatter,
        CollectiveOp::Allgather, CollectiveOp::Alltoall, CollectiveOp::Barrier})
    for (CollectiveAlgorithm a : algorithms_for(op)) {
      CollectiveCall call;
      call.op = op;
      call.algorithm = a;
      call.procs = 7;
      call.bytes = 1000;
      call.root = 2;
      CollectiveSchedule source(call);
      auto explicit_schedule = materialize(source);
      expect_round_trip(*explicit_schedule);
    }
}

TEST(Goal, RoundTripOfRandomSchedules) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 20; ++trial) {
    const std::uint32_t ranks = 1 + rng() % 6;
    ExplicitSchedule s(ranks);
    for (std::uint32_t r = 0; r < ranks; ++r) {
      OpBuffer b;
      const std::size_t n = rng() % 30;
      for (std::size_t i = 0; i < n; ++i) {
        Operation op;
        op.kind = static_cast<OpKind>(rng() % 3);
        op.cpu = static_cast<std::uint8_t>(rng() % 3);
        if (op.kind == OpKind::Calc) {
          op.duration = rng() % 5'000'000;  // any picosecond count (written rounded to ns)
        } else {
          op.nic = static_cast<std::uint8_t>(rng() % 2);
          op.peer = static_cast<std::int32_t>(rng() % ranks);
          op.tag = static_cast<std::int32_t>(rng() % 4);
          op.comm = rng() % 4 == 0 ? collective_comm(3) : 0;
          op.bytes = rng() % 100000;
          if (op.kind == OpKind::Recv && rng() % 4 == 0) op.peer = kAnySource;
          if (op.kind == OpKind::Recv && op.comm == 0 && rng() % 4 == 0) op.tag = kAnyTag;
        }
        op.first_dep = static_cast<std::uint32_t>(b.deps.size());
        for (std::size_t k = 0; i > 0 && k < rng() % 3; ++k) b.deps.push_back(Dependency{rng() % i, rng() % 2 == 0});
        op.dep_count = static_cast<std::uint32_t>(b.deps.size() - op.first_dep);
        b.ops.push_back(op);
      }
      s.set_rank(r, b);
    }
    expect_round_trip(s);
  }
}

// Every file in tests/goal/errors states the diagnostics it must produce as
// `// expect: LINE:COL: message` lines; each must appear, with nothing else.
TEST(Goal, ErrorCorpus) {
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(POEMS_GOAL_ERRORS)) {
    if (entry.path().extension() != ".goal") continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string name = entry.path().filename().string();
    std::vector<std::string> expected;
    std::istringstream lines(text.str());
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("// expect: ", 0) == 0) expected.push_back(name + ":" + line.substr(11));
    ASSERT_FALSE(expected.empty()) << name;
    Parsed p = parse(text.str(), name);
    EXPECT_FALSE(p.schedule) << name;
    std::size_t errors = 0;
    for (std::size_t at = 0; (at = p.diagnostics.find(": error: ", at)) != std::string::npos; ++at) ++errors;
    EXPECT_EQ(errors, expected.size()) << name << "\n" << p.diagnostics;
    for (const std::string& e : expected) {
      std::string want =
          e.substr(0, e.find(": ", name.size() + 1)) + ": error: " + e.substr(e.find(": ", name.size() + 1) + 2) + "\n";
      EXPECT_NE(p.diagnostics.find(want), std::string::npos) << "missing: " << want << "in:\n" << p.diagnostics;
    }
  }
  EXPECT_GE(files, 9u);
}

TEST(Goal, DiagnosticsQuoteTheLineWithACaret) {
  Parsed p = parse("num_ranks 2\nrank 0 { s: send 8b to 9 }\n");
  EXPECT_FALSE(p.schedule);
  EXPECT_NE(p.diagnostics.find("t.goal:2:24: error: a rank '9' is out of range (0..1)"), std::string::npos)
      << p.diagnostics;
  EXPECT_NE(p.diagnostics.find("rank 0 { s: send 8b to 9 }\n"), std::string::npos) << p.diagnostics;
  EXPECT_NE(p.diagnostics.find("^"), std::string::npos) << p.diagnostics;
}

TEST(Goal, MalformedInputNeverCrashes) {
  const std::string good =
      "num_ranks 3\nrank 0 { a: send 8b to 1 tag 2; b: recv 8b from any; b irequires a }\n"
      "rank 1 { /* c */ r: recv 8b from 0 tag 2 # x\n }\n";
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::string t = good;
    for (int k = 0; k < 3; ++k) {
      std::size_t at = rng() % t.size();
      switch (rng() % 3) {
        case 0: t.erase(at, 1 + rng() % 4); break;
        case 1: t.insert(at, 1, "{}:;ab1-x/*#\n"[rng() % 13]); break;
        default: t[at] = "{}:;ab1-x/*#\n"[rng() % 13];
      }
      if (t.empty()) t = "x";
    }
    Parsed p = parse(t);
    EXPECT_TRUE(p.schedule || !p.diagnostics.empty()) << t;
  }
}

}  // namespace
}  // namespace poems::taskgraph

namespace poems::taskgraph {
namespace {

// What LogGOPSim's txt2bin reads, POEMS reads: a size's `b` apart, tags up
// to 2^32-1 (2^32-1 and -1 the wildcard, on a send too), -1 sources,
// comments at a statement's start, cpu and nic after the tag.
TEST(Goal, ReadsLogGOPSimsSyntax) {
  Parsed p = parse(R"(num_ranks 2
// a comment
rank 0 {
/* another */
a: send 8 b to 1 tag 4294967294 cpu 1 nic 1
b: send 8b to 1 tag -1
c: calc 100 cpu 1
b requires a
c irequires b
}
rank 1 {
x: recv 8b from -1 tag 4294967295
y: recv 8b from 0 tag 4294967294
}
)");
  ASSERT_TRUE(p.schedule) << p.diagnostics;
  const OpBuffer r0 = p.schedule->operations(0), r1 = p.schedule->operations(1);
  EXPECT_EQ(r0.ops[0].bytes, 8u);
  EXPECT_EQ(static_cast<std::uint32_t>(r0.ops[0].tag), 4294967294u);
  EXPECT_EQ(r0.ops[0].cpu, 1);
  EXPECT_EQ(r0.ops[0].nic, 1);
  EXPECT_EQ(r0.ops[1].tag, kAnyTag);
  EXPECT_EQ(r1.ops[0].peer, kAnySource);
  EXPECT_EQ(r1.ops[0].tag, kAnyTag);
  EXPECT_EQ(p.schedule->max_cpu(), 1u);
  EXPECT_EQ(p.schedule->max_nic(), 1u);
  // Written back as LogGOPSim writes it: the large tag as is, -1 for wildcards.
  const std::string text = export_goal(*p.schedule);
  EXPECT_NE(text.find("l0: send 8b to 1 tag 4294967294 cpu 1 nic 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("l1: send 8b to 1 tag -1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("l0: recv 8b from -1 tag -1\n"), std::string::npos) << text;
}

TEST(Goal, ValuesOutOfRangeAreLocatedErrorsWithTheRange) {
  Parsed size = parse("num_ranks 2\nrank 0 { s: send 9007199254740992b to 1 }\n");
  EXPECT_FALSE(size.schedule);
  EXPECT_NE(size.diagnostics.find("t.goal:2:18: error: a size in bytes '9007199254740992' is out of range "
                                  "(0..9007199254740991)"),
            std::string::npos)
      << size.diagnostics;
  EXPECT_TRUE(parse("num_ranks 2\nrank 0 { s: send 9007199254740991b to 1 }\n").schedule);
  Parsed calc = parse("num_ranks 1\nrank 0 { c: calc 2305843009213693.953 }\n");
  EXPECT_FALSE(calc.schedule);
  EXPECT_NE(calc.diagnostics.find("a duration in ns '2305843009213693.953' is out of range"), std::string::npos)
      << calc.diagnostics;
  EXPECT_TRUE(parse("num_ranks 1\nrank 0 { c: calc 2305843009213693.952 }\n").schedule);  // 2^61 ps
  Parsed ranks = parse("num_ranks 1000000\n");
  EXPECT_TRUE(ranks.schedule) << ranks.diagnostics;
  psl::SourceManager sources;
  psl::DiagnosticEngine diags(sources);
  GoalReadOptions small;
  small.memory_limit = 1 << 20;
  EXPECT_FALSE(parse_goal(sources, sources.add("r.goal", "num_ranks 1000000\n"), diags, small));
  ASSERT_EQ(diags.error_count(), 1u);
  EXPECT_NE(diags.render(diags.all()[0])
                .find("num_ranks 1000000 needs about 53.4 MiB before any operation (56 bytes "
                      "per rank for the schedule); the limit is 1.0 MiB (--memory-limit)"),
            std::string::npos)
      << diags.render(diags.all()[0]);
}

// LogGOPSim frees the operations waiting on one operation in the order of
// their statements; where that is not program order the dependencies carry
// it, and the writer lists the statements in that order again.
TEST(Goal, StatementOrderSurvivesWhereItIsNotProgramOrder) {
  Parsed p = parse("num_ranks 1\nrank 0 {\na: calc 1\nx: calc 2\ny: calc 3\ny requires a\nx requires a\n}\n");
  ASSERT_TRUE(p.schedule) << p.diagnostics;
  const OpBuffer r = p.schedule->operations(0);
  EXPECT_EQ(r.deps[r.ops[1].first_dep].order, 2u);  // x: the second statement
  EXPECT_EQ(r.deps[r.ops[2].first_dep].order, 1u);  // y: the first
  const std::string text = export_goal(*p.schedule);
  EXPECT_NE(text.find("l2 requires l0\nl1 requires l0\n"), std::string::npos) << text;
  Parsed back = parse(text);
  ASSERT_TRUE(back.schedule);
  const OpBuffer b = back.schedule->operations(0);
  EXPECT_EQ(b.deps[b.ops[1].first_dep].order, 2u);
  EXPECT_EQ(b.deps[b.ops[2].first_dep].order, 1u);
  // In program order, nothing is carried.
  Parsed plain = parse("num_ranks 1\nrank 0 {\na: calc 1\nx: calc 2\ny: calc 3\nx requires a\ny requires a\n}\n");
  const OpBuffer q = plain.schedule->operations(0);
  EXPECT_EQ(q.deps[q.ops[1].first_dep].order, 0u);
  EXPECT_EQ(q.deps[q.ops[2].first_dep].order, 0u);
}

// read_goal_file: the same schedule as parse_goal, without the text; node
// labels and locations read back from the file; errors quote the line.
TEST(Goal, ReadingAFileKeepsNoTextButFindsTheLines) {
  const fs::path file = fs::temp_directory_path() / ("poems_goal_file_" + std::to_string(::getpid()) + ".goal");
  const std::string text =
      "num_ranks 2\nrank 1 {\n  r: recv 8b from 0\n  c: calc 5\n  c requires r\n}\nrank 0 {\n  s: send 8b to 1\n}\n";
  std::ofstream(file) << text;
  psl::SourceManager sources;
  psl::DiagnosticEngine diags(sources);
  std::string io_error;
  auto s = read_goal_file(file.string(), sources, diags, {}, io_error);
  ASSERT_TRUE(s) << io_error;
  EXPECT_EQ(sources.size(), 0u);  // the text was not kept
  Parsed p = parse(text);
  std::string why;
  EXPECT_TRUE(same_operations(*s, *p.schedule, &why)) << why;
  const OpBuffer r1 = s->operations(1), r0 = s->operations(0);
  EXPECT_EQ(s->node_info(r1.ops[1].node).label, "c");
  EXPECT_EQ(s->node_info(r1.ops[1].node).location, file.string() + ":4:3");
  EXPECT_EQ(s->node_info(r0.ops[0].node).location, file.string() + ":8:3");
  EXPECT_EQ(s->node_info(0).label, "");
  std::ofstream(file, std::ios::app) << "\n";  // changed since: no location
  EXPECT_EQ(s->node_info(r1.ops[1].node).label, "operation 1 of its rank");
  std::ofstream(file) << "num_ranks 2\nrank 0 {\n  s: send 8b to 7\n}\n";
  psl::DiagnosticEngine errors(sources);
  EXPECT_FALSE(read_goal_file(file.string(), sources, errors, {}, io_error));
  ASSERT_EQ(errors.error_count(), 1u);
  const std::string rendered = errors.render(errors.all()[0]);
  EXPECT_NE(rendered.find(":3:17: error: a rank '7' is out of range (0..1)\n"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find("  s: send 8b to 7\n"), std::string::npos) << rendered;
  EXPECT_FALSE(read_goal_file("/nonexistent.goal", sources, errors, {}, io_error));
  EXPECT_EQ(io_error, "cannot read '/nonexistent.goal'");
  fs::remove(file);
}

// A write_goal refusal: a receive on another communicator that takes any tag.
TEST(Goal, WritingRefusesWhatLogGOPSimCannotKeepApart) {
  ExplicitSchedule s(2);
  OpBuffer b;
  Operation op;
  op.kind = OpKind::Recv;
  op.peer = 0;
  op.tag = kAnyTag;
  op.comm = 5;
  b.ops.push_back(op);
  s.set_rank(1, b);
  std::ostringstream out;
  EXPECT_THROW(write_goal(out, s), std::runtime_error);
}

}  // namespace
}  // namespace poems::taskgraph
