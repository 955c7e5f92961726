// The `loggopsim` semantics against a second implementation of its rules
// (loggopsim_oracle.h) on random schedules, rank by rank; and, when
// POEMS_LOGGOPSIM names a LogGOPSim build, against LogGOPSim itself.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "loggopsim_oracle.h"
#include "sim_test_util.h"

namespace poems::sim::testing {
namespace {

// LogGOPSim's parameters for a random schedule: integer ns, o and g larger
// than the per-byte terms (a 0-byte message costs o - G in LogGOPSim).
oracle::Params random_params(std::mt19937_64& rng, std::uint64_t S) {
  oracle::Params p;
  p.L = 100 + rng() % 3000;
  p.o = 50 + rng() % 2000;
  p.g = 50 + rng() % 2000;
  p.G = rng() % 8;
  p.O = rng() % 4;
  p.S = S;
  if (p.o <= p.G + p.O) p.o = p.G + p.O + 1;
  if (p.g <= p.G) p.g = p.G + 1;
  return p;
}

SimulationOptions options_for(const oracle::Schedule& s, const oracle::Params& p) {
  SimulationOptions o;
  o.params = params(p.L, p.o, p.g, ns_per_byte(p.G), ns_per_byte(p.O), p.S);
  o.semantics = Semantics::Loggopsim;
  o.cpus = s.cpus();
  o.nics = s.nics();
  return o;
}

// Runs `count` random schedules (seeds from `seed`) through the engine and
// the oracle; returns how many completed (the rest deadlock, as both agree).
// `free_cpu`: o = O = 0, so that a message leaves the CPU free and only
// the NICs make events wait.
int compare_with_oracle(std::uint64_t seed, int count, const oracle::GeneratorOptions& g, bool lazy,
                        bool free_cpu = false) {
  int completed = 0;
  for (int i = 0; i < count; ++i) {
    std::mt19937_64 rng(seed + static_cast<std::uint64_t>(i));
    const oracle::Schedule s = oracle::random_schedule(rng, g);
    oracle::Params p = random_params(rng, g.S);
    if (free_cpu) p.o = p.O = 0;
    const oracle::Result want = oracle::simulate(s, p);
    auto schedule = goal(oracle::goal_text(s));
    if (!schedule) return completed;
    SimulationOptions o = options_for(s, p);
    o.try_lazy_reading = lazy;
    const SimulationResult got = simulate(*schedule, o);
    EXPECT_EQ(got.completed, want.completed) << "seed " << seed + i;
    if (!want.completed || !got.completed) continue;
    ++completed;
    for (std::size_t r = 0; r < s.ranks.size(); ++r)
      EXPECT_EQ(got.per_rank[r].finish, ns(want.finish[r])) << "seed " << seed + i << " rank " << r;
  }
  return completed;
}

TEST(LoggopsimDifferential, RandomSchedulesMatchTheOracleRankByRank) {
  oracle::GeneratorOptions g;
  g.min_ranks = 2;
  g.max_ranks = 64;
  const int completed = compare_with_oracle(1, 300, g, true);
  EXPECT_GE(completed, 240);  // most random schedules complete
}

TEST(LoggopsimDifferential, SmallSchedulesReadInFullMatchToo) {
  oracle::GeneratorOptions g;
  g.max_ranks = 6;
  g.steps_per_rank = 30;
  EXPECT_GE(compare_with_oracle(100000, 200, g, false), 90);  // longer schedules deadlock more often
}

TEST(LoggopsimDifferential, SchedulesInFileOrderMatch) {
  oracle::GeneratorOptions g;
  g.shuffle_file_order = false;
  g.max_ranks = 16;
  EXPECT_GE(compare_with_oracle(200000, 200, g, true), 150);
}

// Many operations of a rank ready at once, each waiting for the rank's one
// CPU (and its NIC): the events LogGOPSim queues again and again, which the
// engine parks in lots (engine.h, lgs_park). Per-byte costs in both orders
// (G above O: the NIC decides when a send may go; below: the CPU) and eager
// and rendezvous sizes; rank by rank against the oracle, which queues every
// event again as LogGOPSim does.
TEST(LoggopsimDifferential, ManyReadyOperationsMatchTheOracle) {
  oracle::GeneratorOptions g;
  g.max_ranks = 12;
  g.steps_per_rank = 40;
  g.multi_resource = false;
  g.program_order = 0.1;
  g.max_extra_deps = 1;
  EXPECT_GE(compare_with_oracle(300000, 150, g, true), 60);
  g.shuffle_file_order = false;
  g.max_ranks = 4;
  g.steps_per_rank = 80;
  EXPECT_GE(compare_with_oracle(400000, 100, g, false), 30);
  // Calcs of no time: a lot whose first member leaves the CPU free goes
  // back to the queue member by member.
  g.zero_calcs = 0.5;
  g.max_ranks = 8;
  EXPECT_GE(compare_with_oracle(500000, 100, g, true), 30);
  // Messages that cost the CPU nothing: a lot's first member can find its
  // NIC busy and its CPU free, so the lot goes back member by member and
  // that member where its NIC sends it.
  EXPECT_GE(compare_with_oracle(600000, 100, g, true, true), 30);
}

// Both reading paths give the same run, event for event: random schedules
// under both semantics, read lazily and in full (critical-path mode, no
// resource queuing, reads each rank in full up front).
TEST(ReadingPaths, DecodingIntoSlotsMatchesReadingOpBuffers) {
  oracle::GeneratorOptions g;
  g.max_ranks = 24;
  int compared = 0;
  for (int i = 0; i < 60; ++i) {
    std::mt19937_64 rng(300000 + static_cast<std::uint64_t>(i));
    const oracle::Schedule s = oracle::random_schedule(rng, g);
    const oracle::Params p = random_params(rng, g.S);
    auto schedule = goal(oracle::goal_text(s));
    ASSERT_TRUE(schedule);
    for (Semantics semantics : {Semantics::Loggopsim, Semantics::Matched}) {
      for (bool queuing : {true, false}) {
        SimulationOptions o = options_for(s, p);
        o.semantics = semantics;
        o.resource_queuing = queuing;
        o.per_rank_results = true;
        schedule->rewind();
        const SimulationResult direct = simulate(*schedule, o);
        schedule->rewind();
        Opaque opaque(*schedule);
        const SimulationResult buffered = simulate(opaque, o);
        ASSERT_EQ(direct.completed, buffered.completed) << "seed " << 300000 + i;
        EXPECT_EQ(direct.events, buffered.events) << "seed " << 300000 + i;
        EXPECT_EQ(direct.max_finish, buffered.max_finish) << "seed " << 300000 + i;
        EXPECT_EQ(direct.peak_window_ops, buffered.peak_window_ops) << "seed " << 300000 + i;
        ASSERT_EQ(direct.per_rank.size(), buffered.per_rank.size());
        for (std::size_t r = 0; r < direct.per_rank.size(); ++r) {
          EXPECT_EQ(direct.per_rank[r].finish, buffered.per_rank[r].finish) << "seed " << 300000 + i << " rank " << r;
          EXPECT_EQ(direct.per_rank[r].overhead, buffered.per_rank[r].overhead) << "seed " << 300000 + i;
        }
        if (direct.completed) ++compared;
      }
    }
  }
  EXPECT_GE(compared, 150);  // most of the 240 runs complete
}

// Optional: POEMS_LOGGOPSIM=/path/to/dir with LogGOPSim and txt2bin built
// (docs/simulator.md says how). Runs POEMS_LOGGOPSIM_COUNT schedules (200 by
// default) through LogGOPSim, the oracle and the engine; LogGOPSim prints
// every rank's time up to 16 ranks, only the maximum beyond.
TEST(LoggopsimReference, RandomSchedulesMatchLogGOPSim) {
  const char* dir = std::getenv("POEMS_LOGGOPSIM");
  if (!dir) GTEST_SKIP() << "set POEMS_LOGGOPSIM to a directory holding LogGOPSim and txt2bin";
  const int count = std::getenv("POEMS_LOGGOPSIM_COUNT") ? std::atoi(std::getenv("POEMS_LOGGOPSIM_COUNT")) : 200;
  const std::filesystem::path work = std::filesystem::temp_directory_path() / "poems_loggopsim_reference";
  std::filesystem::create_directories(work);
  const std::string goal_path = (work / "s.goal").string(), bin_path = (work / "s.bin").string();
  int compared = 0, matched = 0;
  for (int i = 0; i < count; ++i) {
    std::mt19937_64 rng(7000 + static_cast<std::uint64_t>(i));
    oracle::GeneratorOptions g;
    // POEMS_LOGGOPSIM_SHAPE=ready: the schedules of ManyReadyOperationsMatchTheOracle
    // (most operations ready at once, parked by the engine).
    if (const char* shape = std::getenv("POEMS_LOGGOPSIM_SHAPE"); shape && std::string(shape) == "ready") {
      g.max_ranks = 12;
      g.steps_per_rank = 40;
      g.multi_resource = false;
      g.program_order = 0.1;
      g.max_extra_deps = 1;
      g.zero_calcs = 0.2;
    }
    const oracle::Schedule s = oracle::random_schedule(rng, g);
    const oracle::Params p = random_params(rng, g.S);
    const oracle::Result want = oracle::simulate(s, p);
    if (!want.completed) continue;
    const std::string text = oracle::goal_text(s);
    std::ofstream(goal_path) << text;
    const std::string cmd = std::string(dir) + "/txt2bin -i " + goal_path + " -o " + bin_path + " >/dev/null && " +
                            dir + "/LogGOPSim -f " + bin_path + " -L " + std::to_string(p.L) + " -o " +
                            std::to_string(p.o) + " -g " + std::to_string(p.g) + " -G " + std::to_string(p.G) + " -O " +
                            std::to_string(p.O) + " -S " + std::to_string(p.S);
    std::string out;
    if (FILE* f = popen(cmd.c_str(), "r")) {
      char buf[4096];
      for (std::size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
      pclose(f);
    }
    auto schedule = goal(text);
    ASSERT_TRUE(schedule);
    const SimulationResult got = simulate(*schedule, options_for(s, p));
    ++compared;
    bool same = got.completed;
    if (s.ranks.size() <= 16) {
      for (std::size_t r = 0; r < s.ranks.size(); ++r) {
        const std::string key = "Host " + std::to_string(r) + ": ";
        const auto at = out.find(key);
        const unsigned long long lgs = at == std::string::npos ? ~0ull : std::stoull(out.substr(at + key.size()));
        EXPECT_EQ(lgs, want.finish[r]) << "seed " << 7000 + i << " rank " << r << "\n" << out;
        same = same && lgs == want.finish[r] && got.per_rank[r].finish == ns(lgs);
      }
    } else {
      unsigned host = 0;
      unsigned long long lgs = ~0ull;
      const auto at = out.find("Maximum finishing time at host ");
      if (at != std::string::npos)
        std::sscanf(out.c_str() + at, "Maximum finishing time at host %u: %llu", &host, &lgs);
      EXPECT_EQ(ns(lgs), got.max_finish) << "seed " << 7000 + i << "\n" << out;
      EXPECT_EQ(host, got.max_finish_rank) << "seed " << 7000 + i;
      same = same && ns(lgs) == got.max_finish && host == got.max_finish_rank;
    }
    matched += same ? 1 : 0;
  }
  std::printf("LogGOPSim reference: %d of %d completed random schedules match\n", matched, compared);
  EXPECT_EQ(matched, compared);
}

// Optional, as above: every kind of GOAL file POEMS writes — the examples
// read and written back, every collective and algorithm (7 and 16 ranks,
// eager and rendezvous), Sweep3D exported from its PSL model — goes through
// txt2bin, and LogGOPSim's finish times equal the loggopsim semantics'.
TEST(LoggopsimReference, Txt2binTakesEveryExportAndLogGOPSimAgrees) {
  const char* dir = std::getenv("POEMS_LOGGOPSIM");
  if (!dir) GTEST_SKIP() << "set POEMS_LOGGOPSIM to a directory holding LogGOPSim and txt2bin";
  const std::filesystem::path work = std::filesystem::temp_directory_path() / "poems_loggopsim_exports";
  std::filesystem::create_directories(work);
  std::vector<std::pair<std::string, std::unique_ptr<taskgraph::ExplicitSchedule>>> cases;
  for (const char* name : {"tree8.goal", "pingpong2.goal"}) {
    std::ifstream in(std::string(POEMS_SOURCE_DIR) + "/examples/goal/" + name);
    std::stringstream text;
    text << in.rdbuf();
    cases.emplace_back(name, goal(text.str()));
  }
  for (taskgraph::CollectiveOp op :
       {taskgraph::CollectiveOp::Bcast, taskgraph::CollectiveOp::Reduce, taskgraph::CollectiveOp::Allreduce,
        taskgraph::CollectiveOp::Gather, taskgraph::CollectiveOp::Scatter, taskgraph::CollectiveOp::Allgather,
        taskgraph::CollectiveOp::Alltoall, taskgraph::CollectiveOp::Barrier})
    for (taskgraph::CollectiveAlgorithm a : taskgraph::algorithms_for(op))
      for (std::uint32_t procs : {7u, 16u})
        for (std::uint64_t bytes : {1000ull, 100000ull}) {
          taskgraph::CollectiveCall call;
          call.op = op;
          call.algorithm = a;
          call.procs = procs;
          call.bytes = bytes;
          call.root = 2;
          taskgraph::CollectiveSchedule source(call);
          cases.emplace_back(std::string(taskgraph::collective_op_name(op)) + "/" +
                                 taskgraph::collective_algorithm_name(a) + " P=" + std::to_string(procs) +
                                 " s=" + std::to_string(bytes),
                             taskgraph::materialize(source));
        }
  int accepted = 0, agreed = 0;
  for (auto& [name, schedule] : cases) {
    ASSERT_TRUE(schedule) << name;
    std::ostringstream text;
    taskgraph::write_goal(text, *schedule);
    std::ofstream((work / "e.goal").string()) << text.str();
    const std::string convert =
        std::string(dir) + "/txt2bin -i " + (work / "e.goal").string() + " -o " + (work / "e.bin").string();
    const bool ok = std::system((convert + " >/dev/null 2>&1").c_str()) == 0;
    EXPECT_TRUE(ok) << name << "\n" << text.str().substr(0, 2000);
    if (!ok) continue;
    ++accepted;
    std::string out;
    if (FILE* f = popen((std::string(dir) + "/LogGOPSim -f " + (work / "e.bin").string()).c_str(), "r")) {
      char buf[4096];
      for (std::size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
      pclose(f);
    }
    auto back = goal(text.str());
    ASSERT_TRUE(back);
    SimulationOptions o;  // LogGOPSim's defaults are ours
    o.semantics = Semantics::Loggopsim;
    o.cpus = back->max_cpu() + 1;
    o.nics = back->max_nic() + 1;
    const SimulationResult r = simulate(*back, o);
    bool same = r.completed;
    for (std::uint32_t rank = 0; rank < r.ranks; ++rank) {
      const std::string key = "Host " + std::to_string(rank) + ": ";
      const auto at = out.find(key);
      const unsigned long long lgs = at == std::string::npos ? ~0ull : std::stoull(out.substr(at + key.size()));
      EXPECT_EQ(ns(lgs), r.per_rank[rank].finish) << name << " rank " << rank;
      same = same && ns(lgs) == r.per_rank[rank].finish;
    }
    agreed += same ? 1 : 0;
  }
  std::printf("txt2bin accepted %d of %zu exports; LogGOPSim agreed on %d\n", accepted, cases.size(), agreed);
}

}  // namespace
}  // namespace poems::sim::testing
