// `poems comet`'s simulation column (docs/comet.md, "The PSL model"): the
// PSL models of examples/comet/comet.psl send the messages comet.c sends, so
// on a flat LogGOPS machine their simulation and comet.c's direct execution
// agree to comet.c's printed 0.1 ns, kernel by kernel; and the closed forms
// equal the simulator's answers where they hold.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "comet_json.h"

namespace {

double median(const nlohmann::json& point, const std::string& column) {
  return point.at(column).at("median_ns").get<double>();
}

// Every kernel, every point: the simulation's min, median and max are direct execution's.
void expect_simulation_equals_direct(const nlohmann::json& doc, const std::string& what) {
  std::size_t points = 0;
  for (const nlohmann::json& k : doc.at("kernels")) {
    if (k.contains("note") && k.at("note").get<std::string>().rfind("skipped", 0) == 0) continue;
    for (const nlohmann::json& p : k.at("points")) {
      ASSERT_TRUE(p.contains("simulation")) << what << ' ' << k.dump();
      for (const std::string field : {"min_ns", "median_ns", "max_ns"})
        EXPECT_EQ(p.at("simulation").at(field).get<double>(), p.at("direct").at(field).get<double>())
            << what << ", " << k.at("kernel") << " at " << p.at("bytes") << " B, " << field;
      ++points;
    }
  }
  EXPECT_GT(points, 0u) << what;
}

TEST(CometSimulation, EveryKernelEqualsDirectExecutionOnAFlatMachine) {
  // 2 ranks (a 1 x 2 grid), 4 (2 x 2) and 8 (2 x 4): eager and rendezvous sizes.
  for (const std::string procs : {"2", "4", "8"}) {
    const nlohmann::json doc = run_json("--sizes 0,8,1K,256K --reps 3 --procs " + procs + kFlat);
    ASSERT_EQ(doc.at("kernels").size(), 13u);
    expect_simulation_equals_direct(doc, procs + " ranks");
  }
}

TEST(CometSimulation, OddRankCountsAndTheRendezvousHandshake) {
  // 3 ranks: pairwise and overlap leave rank 2 idle, the grid is 1 x 3, the
  // collectives' trees are incomplete; 5 ranks likewise.
  for (const std::string procs : {"3", "5"}) {
    const nlohmann::json doc = run_json("--sizes 8,64K --reps 2 --procs " + procs + kFlat);
    expect_simulation_equals_direct(doc, procs + " ranks");
  }
  const nlohmann::json doc = run_json("--sizes 8,4K --reps 2 --procs 4 -S 1KiB --rendezvous-handshake" + kFlat);
  expect_simulation_equals_direct(doc, "4 ranks with the handshake");
}

// On 6 ranks (a 2 x 3 grid) the barrier does not remove the skew a size
// leaves, so rowbcast at 8 B depends on the size comet.c ran before it:
// 12007 ns alone, 12921 ns after 64 B. The model replays that size's
// repetitions and the MPI_Allreduce of their times, and follows.
TEST(CometSimulation, ReplaysTheSizeBefore) {
  const std::string args = " --kernels rowbcast --reps 3 --procs 6" + kFlat;
  const nlohmann::json alone = run_json("--sizes 8" + args);
  EXPECT_EQ(median(kernel(alone, "rowbcast").at("points").at(0), "simulation"), 12007.0) << alone.dump();
  expect_simulation_equals_direct(alone, "8 B alone");
  const nlohmann::json after = run_json("--sizes 64,8" + args);
  EXPECT_EQ(median(kernel(after, "rowbcast").at("points").at(0), "simulation"), 12921.0) << after.dump();
  expect_simulation_equals_direct(after, "8 B after 64 B");
}

TEST(CometSimulation, OneRankSkipsWhatComet_cSkips) {
  const nlohmann::json doc = run_json("--kernels echo,broadcast,shift --sizes 8 --reps 2 --procs 1" + kFlat);
  EXPECT_TRUE(kernel(doc, "echo").at("points").empty());
  expect_simulation_equals_direct(doc, "1 rank");
}

TEST(CometSimulation, ANamedMachine) {
  // Odin (examples/sweep3d/machines.psl): O = 1 ns/B, g < 2o + L.
  const nlohmann::json doc = run_json(
      "--machine Odin --kernels echo,pairwise,broadcast,reduce,guard,transpose --sizes 8,1K,64K --reps 2 --procs 4 "
      "--no-store --format json");
  expect_simulation_equals_direct(doc, "Odin, 4 ranks");
  // 2o + L + (s-1)max{O, G} = 9917.5 ns at 8 B (docs/comet.md).
  EXPECT_EQ(median(kernel(doc, "echo").at("points").at(0), "simulation"), 9917.5);
}

// The closed forms equal the simulator's answers: echo and pairwise alone;
// broadcast and reduce L = 5 us above theirs, the skew the barrier before
// each repetition leaves when the kernel ends on the ranks at different
// times (docs/comet.md, "The closed forms").
TEST(CometSimulation, ClosedFormsEqualTheSimulation) {
  for (const std::string procs : {"2", "4", "8"}) {
    const nlohmann::json doc =
        run_json("--kernels echo,pairwise,broadcast,reduce --sizes 8,1K,256K --reps 3 --procs " + procs + kFlat);
    for (const std::string name : {"echo", "pairwise", "broadcast", "reduce"}) {
      const nlohmann::json& k = kernel(doc, name);
      ASSERT_EQ(k.at("points").size(), 3u) << k.dump();
      const double skew = name == "broadcast" || name == "reduce" ? 5000.0 : 0.0;
      for (const nlohmann::json& p : k.at("points")) {
        ASSERT_TRUE(p.contains("closed_form")) << procs << " ranks, " << name << ' ' << p.dump();
        EXPECT_EQ(median(p, "simulation"), p.at("closed_form").at("ns").get<double>() + skew)
            << procs << " ranks, " << name << ' ' << p.dump();
      }
    }
  }
}

TEST(CometSimulation, ReduceClosedFormByHand) {
  // 8 ranks, 1 KiB (128 doubles): 3 levels of o + L + (s-1)G + o = 8023 ns.
  const nlohmann::json doc = run_json("--kernels reduce --sizes 1K --reps 2 --procs 8" + kFlat);
  const nlohmann::json& k = kernel(doc, "reduce");
  EXPECT_EQ(k.at("points").at(0).at("closed_form").at("ns").get<double>(), 24069.0) << k.dump();
  EXPECT_NE(k.at("closed_form").get<std::string>().find("binomial reduce"), std::string::npos) << k.dump();
}

TEST(CometSimulation, StoredAsSimulationMpiSim) {
  const std::filesystem::path dir = fresh_temp_dir("comet_simulation_store");
  const std::string db = (dir / "kb.db").string();
  const std::string args =
      "comet --kernels echo --sizes 8 --reps 2 -L 5us -o 1us -g 2us -G 1ns/B --no-measure --format json --db " + db;
  const CommandResult first = poems_in_process(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  // Direct execution, the simulation and the closed form.
  EXPECT_EQ(nlohmann::json::parse(first.out).at("stored"), 3) << first.out;
  const CommandResult runs = poems_in_process("db runs --db " + db + " --evaluator simulation[MPI-Sim] --format csv");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_NE(runs.out.find("comet.echo"), std::string::npos) << runs.out;
  EXPECT_NE(runs.out.find("7007"), std::string::npos) << runs.out;
  std::filesystem::remove_all(dir);
}

// On the 4 x 4 x 4 torus of examples/network/alltoall.psl, with the mapping
// that routes the cross pair (2, 3) over the timed pair's links
// (docs/comet.md, "Contention on a modelled torus"): without contention
// the torus costs the flat machine's time plus its hops' latency; under
// max-min the timed exchange shares a link each way and slows by more than
// half, while on the flat machine (a link per pair) max-min is within 0.2 %
// of LogGOPS at 1 MiB. Direct execution equals the simulation throughout.
TEST(CometSimulation, CrossTrafficOnATorusLink) {
  const std::string source = POEMS_SOURCE_DIR;
  const std::string args = " --kernels contention --sizes 1M --reps 1 --procs 64 --no-measure --no-store --format json";
  const std::string torus = " --import " + source +
                            "/examples/network/alltoall.psl --machine Torus --ranks-per-node 1 --map " + source +
                            "/examples/comet/torus-crossing.map";
  const auto time = [&](const std::string& machine, const std::string& contention) {
    const nlohmann::json doc = run_json(machine + " --contention " + contention + args);
    expect_simulation_equals_direct(doc, machine + ", " + contention);
    return median(kernel(doc, "contention").at("points").at(0), "direct");
  };
  const double flat_none = time(" --machine Odin", "none"), flat_shared = time(" --machine Odin", "max-min");
  const double torus_none = time(torus, "none"), torus_shared = time(torus, "max-min");
  // The timed route is 2 hops each way where the flat machine has 1: one
  // more hop of 100 ns on each of the two messages' paths.
  EXPECT_EQ(torus_none, flat_none + 200.0);
  EXPECT_NEAR(flat_shared / flat_none, 1.0, 0.002);
  EXPECT_GT(torus_shared / torus_none, 1.5);
  EXPECT_LT(torus_shared / torus_none, 2.0);  // the two exchanges do not start together
}

}  // namespace
