// End-to-end: `poems direct` on programs built with poems-mpicxx (or by the
// build, as poems-mpicxx builds them), and the Sweep3D study `direct`.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "run_command.h"

namespace fs = std::filesystem;

namespace {

const std::string kPoems = POEMS_BINARY;

CommandResult direct(const std::string& args) { return run_command(kPoems + " direct " + args + " --no-store"); }
std::string program(const std::string& name) { return std::string(POEMS_BIN_DIR) + "/" + name; }

std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> k;
  for (const auto& [key, value] : j.items()) k.insert(key);
  return k;
}

// A directory `name` with the examples' machines.psl and their mpi.psl, with
// `edit` applied to the text of mpi.psl; returns the directory.
fs::path machine_files(const std::string& name, const std::function<void(std::string&)>& edit) {
  const fs::path dir = fs::temp_directory_path() / ("poems_direct_runtime_" + std::to_string(::getpid()) + "_" + name);
  fs::create_directories(dir);
  const fs::path examples = fs::path(POEMS_SOURCE_DIR) / "examples/sweep3d";
  fs::copy_file(examples / "machines.psl", dir / "machines.psl", fs::copy_options::overwrite_existing);
  std::string mpi = read_text(examples / "mpi.psl");
  edit(mpi);
  std::ofstream(dir / "mpi.psl") << mpi;
  return dir;
}

// Inserts `entry` into MPI_direct's accepts profile (`recv`: its recv
// profile instead of its send profile).
void direct_profile(std::string& mpi, const std::string& entry, bool recv = false) {
  const std::string send = "evaluation = simulation[direct]; handshake = false;";
  const std::string receive = "evaluation = simulation[direct]; }\n    transaction mpi_recv";
  const std::string& at = recv ? receive : send;
  const std::size_t pos = mpi.find(at);
  ASSERT_NE(pos, std::string::npos);
  mpi.insert(pos + std::string("evaluation = simulation[direct];").size(), " " + entry);
}

double finish_ns(const CommandResult& r) { return nlohmann::json::parse(r.out)["finish_ns"].get<double>(); }

}  // namespace

TEST(DirectCli, RingSourceBuildsRunsAndMatchesTheClosedForm) {
  // Two laps around 5 ranks: 10 hops of o + L + o + (8-1)G = 5542 ns (DESIGN 5.1's parameters).
  CommandResult r =
      direct(std::string(POEMS_SOURCE_DIR) + "/examples/direct/ring.cpp -np 5 --compute model --format json -- 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["finish_ns"], 55420);
  EXPECT_EQ(j["processes"], 5);
  EXPECT_EQ(j["messages"], 10);
  EXPECT_EQ(j["completed"], true);
  EXPECT_EQ(j["ranks"].size(), 5u);
  // The program's own output goes to stderr, away from the JSON.
  EXPECT_NE(r.err.find("token 22 after 2 lap(s) of 5 ranks in 55.420 us"), std::string::npos) << r.err;
  // The same JSON shape as `poems simulate`.
  CommandResult s = run_command(kPoems + " simulate --goal " + std::string(POEMS_SOURCE_DIR) +
                                "/examples/goal/tree8.goal --format json --no-store");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto sj = nlohmann::json::parse(s.out);
  EXPECT_EQ(keys(j), keys(sj));
  EXPECT_EQ(keys(j["ranks"][0]), keys(sj["ranks"][0]));
}

TEST(DirectCli, ABuildAndItsRunLeaveNothingInTheTemporaryDirectory) {
  // The binary built from a source, the run's result and its captured output
  // live in directories of their own under $TMPDIR, removed when poems is done
  // (the build directories were once left behind, one per run).
  const fs::path tmp = fs::temp_directory_path() / ("poems_direct_tmpdir_" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const CommandResult r =
      run_command("TMPDIR=" + tmp.string() + " " + kPoems + " direct " + std::string(POEMS_SOURCE_DIR) +
                  "/examples/direct/ring.cpp -np 3 --compute model --format json --no-store -- 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["messages"], 3);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(tmp)) left.push_back(entry.path().filename().string());
  EXPECT_TRUE(left.empty()) << left.size() << " left, the first " << left.front();
  fs::remove_all(tmp);
}

TEST(DirectCli, SemanticsSwitch) {
  // In the ring every receive is posted before its message arrives: both
  // semantics give the closed form (docs/simulator.md; the late-receive
  // cases are in tests/direct/p2p_test.cpp).
  const std::string ring = program("direct_ring") + " -np 5 --compute model --format json";
  CommandResult r = direct(ring + " --semantics loggopsim -- 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["finish_ns"], 55420);
  r = direct(ring + " --semantics loggopsim --rendezvous-handshake -- 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--rendezvous-handshake"), std::string::npos) << r.err;
  r = direct(ring + " --semantics exact -- 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--semantics"), std::string::npos) << r.err;
}

TEST(DirectCli, EarlySwitch) {
  // Going on early or waiting for the engine at every receive: the same
  // closed form; the host line counts the waits that went on early.
  const std::string ring = program("direct_ring") + " -np 5 --compute model --no-store";
  for (const char* early : {"on", "off"}) {
    CommandResult r = direct(ring + " --format json --early " + early + " -- 2");
    ASSERT_EQ(r.exit_code, 0) << early << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["finish_ns"], 55420) << early;
  }
  const CommandResult off = direct(ring + " --early off -- 2");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_NE(off.out.find(" thread switches, 0 completions early, "), std::string::npos) << off.out;
  const CommandResult on = direct(ring + " -- 2");
  ASSERT_EQ(on.exit_code, 0) << on.err;
  EXPECT_NE(on.out.find(" completions early, "), std::string::npos) << on.out;
  EXPECT_EQ(on.out.find(" thread switches, 0 completions early, "), std::string::npos) << on.out;
  const CommandResult bad = direct(ring + " --early sometimes -- 2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--early: sometimes not in {on,off}"), std::string::npos) << bad.err;
}

TEST(DirectCli, HostCoresSwitch) {
  // Ranks at once on 1, 2 and 3 host cores (more than this 2-core host has
  // is allowed: the OS shares them): the ring's closed form every time; the
  // option's range and its refusal with ranks as threads name it.
  const std::string ring = program("direct_ring") + " -np 5 --compute model --no-store";
  for (const char* cores : {"1", "2", "3", "auto"}) {
    const CommandResult r = direct(ring + " --format json --host-cores " + cores + " -- 2");
    ASSERT_EQ(r.exit_code, 0) << cores << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["finish_ns"], 55420) << cores;
  }
  const CommandResult zero = direct(ring + " --host-cores 0 -- 2");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("--host-cores: 0 is out of range; expected auto or an integer in 1..1024"), std::string::npos)
      << zero.err;
  const CommandResult word = direct(ring + " --host-cores many -- 2");
  EXPECT_EQ(word.exit_code, 2);
  EXPECT_NE(word.err.find("--host-cores: 'many' is not a number"), std::string::npos) << word.err;
  const CommandResult threads = direct(ring + " --host-cores 2 --isolation threads -- 2");
  EXPECT_EQ(threads.exit_code, 2);
  EXPECT_NE(threads.err.find("--host-cores: needs --isolation processes"), std::string::npos) << threads.err;
}

TEST(DirectCli, ReceiveOverheadSwitch) {
  // The ring's receives are blocking: the same closed form under both rules
  // (the cases that differ are in tests/direct/receive_overhead_test.cpp).
  const std::string ring = program("direct_ring") + " -np 5 --compute model --format json --no-store";
  for (const char* rule : {"match", "wait"}) {
    const CommandResult r = direct(ring + " --receive-overhead " + rule + " -- 2");
    ASSERT_EQ(r.exit_code, 0) << rule << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["finish_ns"], 55420) << rule;
  }
  const CommandResult table =
      direct(program("direct_ring") + " -np 5 --compute model --no-store --receive-overhead wait -- 2");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("a receive's o paid in the call that completes it (--receive-overhead wait)"),
            std::string::npos)
      << table.out;
  CommandResult r = direct(ring + " --receive-overhead later -- 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--receive-overhead"), std::string::npos) << r.err;
  r = direct(ring + " --receive-overhead wait --semantics loggopsim -- 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--receive-overhead: wait needs the matched semantics"), std::string::npos) << r.err;
}

TEST(DirectCli, TableOnAMachine) {
  // Odin: o + L + o + max(7 O, 7 G) = 2.3 + 5.3 + 2.3 + 0.0175 us per hop.
  CommandResult r = direct(program("direct_ring") + " -np 4 --machine Odin --compute model -- 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("token 21 after 3 lap(s) of 4 ranks in 119.010 us"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("program direct_ring (4 ranks) on Odin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("finish 119010 ns (rank 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("direct execution: "), std::string::npos) << r.out;
}

TEST(DirectCli, MeasuredComputationCounts) {
  CommandResult r = direct(program("direct_ring") + " -np 3 --format json -- 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["compute_ns"].get<double>(), 0);
  EXPECT_GT(j["finish_ns"].get<double>(), 3 * 5542);
}

TEST(DirectCli, DeadlockIsAnEvaluationFailure) {
  CommandResult r = direct(program("direct_deadlock") + " -np 2");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("deadlock: 2 rank(s) cannot go on"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rank 0: the program waits in MPI_Recv"), std::string::npos) << r.err;
}

TEST(DirectCli, UnsupportedCallIsNamed) {
  CommandResult r = direct(program("direct_unsupported") + " -np 2");
  EXPECT_EQ(r.exit_code, 3);
  // (Both ranks call it; with the ranks at once either may get there first, as under mpirun.)
  EXPECT_NE(r.err.find(": MPI_File_open: is not supported by POEMS direct execution"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("poems: error: rank "), std::string::npos) << r.err;
  const CommandResult one = direct(program("direct_unsupported") + " -np 2 --host-cores 1");
  EXPECT_NE(one.err.find("poems: error: rank 0: MPI_File_open: is not supported by POEMS direct execution"),
            std::string::npos)
      << one.err;
  // One line, and no deadlock report before it.
  EXPECT_EQ(r.err.find("deadlock"), std::string::npos) << r.err;
}

TEST(DirectCli, ExitEndsARankOrTheRun) {
  CommandResult ok = direct(program("direct_exits") + " -np 3");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  CommandResult early = direct(program("direct_exits") + " -np 3 -- early");
  EXPECT_EQ(early.exit_code, 3);
  EXPECT_NE(early.err.find("rank 1 exited with status 4 before MPI_Finalize"), std::string::npos) << early.err;
}

TEST(DirectCli, BadInputs) {
  CommandResult r = direct(program("direct_ring") + " -np 0");
  EXPECT_EQ(r.exit_code, 2);
  // mpirun's -np spells --procs, the process count of every command.
  EXPECT_NE(r.err.find("--procs: '0' is out of range; expected an integer in 1..16777216"), std::string::npos) << r.err;
  r = direct("/nonexistent/program -np 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not an executable file or a C, C++ or Fortran source"), std::string::npos) << r.err;
  r = direct("/bin/true -np 2");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("without a result; build it with poems-mpicc, poems-mpicxx or poems-mpif90"), std::string::npos)
      << r.err;
  r = direct(program("direct_ring") + " -np 2 --algorithm allreduce=linear");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an algorithm of allreduce"), std::string::npos) << r.err;
  r = direct(program("direct_ring") + " -np 2 --handover fast");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--handover: fast not in {one-cpu,spin,sleep}"), std::string::npos) << r.err;
  r = direct(program("direct_ring") + " -np 2 --machine Nowhere");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no component named 'Nowhere'"), std::string::npos) << r.err;
  // Every MPI-3.1 function is declared: one the simulated MPI does not run
  // compiles and stops the run naming itself.
  const fs::path source = fs::temp_directory_path() / ("poems_direct_spawn_" + std::to_string(::getpid()) + ".cpp");
  std::ofstream(source) << "#include <mpi.h>\nint main(int c, char** v) { MPI_Init(&c, &v);\n"
                           "  MPI_Comm_spawn(0, 0, 1, 0, 0, MPI_COMM_WORLD, 0, 0); return 0; }\n";
  r = direct(source.string() + " -np 2");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find(": MPI_Comm_spawn: is not supported by POEMS direct execution"), std::string::npos) << r.err;
  fs::remove(source);
}

TEST(DirectCli, EveryRankHasItsOwnGlobalsUnlessThreadsAreAskedFor) {
  const fs::path source = fs::temp_directory_path() / ("poems_direct_globals_" + std::to_string(::getpid()) + ".cpp");
  std::ofstream(source) << "#include <mpi.h>\n#include <cstdio>\nint counter = 0;\nconst int limit = 3;\n"
                           "int main(int c, char** v) { static int calls = 0; MPI_Init(&c, &v); ++counter; ++calls;\n"
                           "  MPI_Finalize(); std::printf(\"%d %d %d\\n\", counter, calls, limit); return 0; }\n";
  // Ranks are processes: each has its own counter, as under mpirun.
  CommandResult r = direct(source.string() + " -np 3");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("3 3 3"), std::string::npos) << r.out;
  std::size_t own = 0;
  for (std::size_t at = r.out.find("1 1 3"); at != std::string::npos; at = r.out.find("1 1 3", at + 1)) ++own;
  EXPECT_EQ(own, 3u) << r.out;
  EXPECT_EQ(r.err.find("mutable global"), std::string::npos) << r.err;
  // Threads share them: asked for explicitly, and each mutable global is named.
  r = direct(source.string() + " -np 3 --isolation threads");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("defines the mutable global 'counter': with --isolation threads all simulated ranks share it"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("defines the mutable global 'main::calls'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("'limit'"), std::string::npos) << r.err;  // constants are fine
  EXPECT_NE(r.out.find("3 3 3"), std::string::npos) << r.out;    // one counter for all ranks
  fs::remove(source);
}

TEST(DirectCli, Sweep3DStudyAgreesWithTheSimulatorAndTheClosedForm) {
  CommandResult r = run_command(kPoems + " run " + std::string(POEMS_SOURCE_DIR) +
                                "/examples/sweep3d/sweep3d.psl --study direct --format json --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 5u);
  for (const auto& row : j["rows"]) {
    const double direct_ns = row["times_ns"]["simulation[direct]"].get<double>();
    const double sim_ns = row["times_ns"]["simulation[MPI-Sim]"].get<double>();
    const double form_ns = row["times_ns"]["analytic[LogGP]"].get<double>();
    EXPECT_LT(std::fabs(direct_ns - sim_ns), 0.05 * sim_ns) << row.dump();
    EXPECT_LT(std::fabs(direct_ns - form_ns), 0.05 * form_ns) << row.dump();
  }
}

// `poems direct --machine` runs under the MPI runtime a study's
// simulation[direct] cells are bound to (MPI_direct of mpi.psl): its
// eager_limit replaces the machine's S exactly as -S would, and -S
// overrides it. The ring's 8-byte messages lie between the runtime's 4 B
// and Odin's S = 32768 B: 12 hops of o + L + o + 7G = 9917.5 ns eager,
// rendezvous (no handshake) one L more per hop: 12 x 15217.5 = 182610 ns.
TEST(DirectCli, MachineRunsUnderTheRuntimesEagerLimit) {
  const fs::path plain = machine_files("plain", [](std::string&) {});
  const fs::path limited = machine_files("limited", [](std::string& mpi) { direct_profile(mpi, "eager_limit = 4B;"); });
  auto ring = [](const fs::path& dir, const std::string& options) {
    return direct(program("direct_ring") + " -np 4 --machine Odin --import " + (dir / "machines.psl").string() +
                  " --import " + (dir / "mpi.psl").string() + " --compute model " + options + " -- 3");
  };
  const CommandResult eager = ring(plain, "--format json");  // MPI_direct names no eager_limit: Odin's S
  const CommandResult runtime = ring(limited, "--format json");
  const CommandResult s4 = ring(plain, "--format json -S 4");
  const CommandResult overridden = ring(limited, "--format json -S 32KiB");
  for (const CommandResult* r : {&eager, &runtime, &s4, &overridden}) ASSERT_EQ(r->exit_code, 0) << r->err;
  EXPECT_EQ(finish_ns(eager), 119010);
  EXPECT_EQ(finish_ns(runtime), 182610);
  EXPECT_EQ(finish_ns(runtime), finish_ns(s4));
  EXPECT_EQ(finish_ns(overridden), 119010);  // -S wins over the runtime's eager_limit
  // The machine files without a runtime: the machine's S, as before.
  const CommandResult bare = direct(program("direct_ring") + " -np 4 --machine Odin --import " +
                                    (limited / "machines.psl").string() + " --compute model --format json -- 3");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(finish_ns(bare), 119010);
  // The table names the runtime and shows the S in use.
  const CommandResult table = ring(limited, "");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("program direct_ring (4 ranks) on Odin with MPI_direct"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" S=4B"), std::string::npos) << table.out;
  // Equal settings are equal runs: the runtime's 4 B and -S 4 share one key in the knowledge base.
  const fs::path db = fs::temp_directory_path() / ("poems_direct_runtime_" + std::to_string(::getpid()) + ".db");
  fs::remove(db);
  const std::string stored = program("direct_ring") + " -np 4 --machine Odin --compute model --db " + db.string();
  CommandResult first = run_command(kPoems + " direct " + stored + " --import " + (limited / "machines.psl").string() +
                                    " --import " + (limited / "mpi.psl").string() + " -- 3");
  CommandResult second =
      run_command(kPoems + " direct " + stored + " --import " + (plain / "machines.psl").string() + " -S 4 -- 3");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("already stored"), std::string::npos) << second.err;
  fs::remove(db);
  fs::remove_all(plain);
  fs::remove_all(limited);
}

// The runtime is composed with --machine as a study `on` the machine would
// compose it: a runtime whose requests reach another network, or none, is
// an error located at it, never applied to messages it does not carry.
TEST(DirectCli, MachinesRuntimeMustReachIt) {
  const fs::path big_red = machine_files("big_red", [](std::string& mpi) {
    const std::string wire = "requests wire {\n    selector domain == hardware[network];";
    const std::size_t at = mpi.find(wire, mpi.find("component MPI_direct"));
    ASSERT_NE(at, std::string::npos);
    mpi.replace(at, wire.size(), "requests wire {\n    selector domain == hardware[network] and name == \"BigRed\";");
  });
  const std::string files =
      " --import " + (big_red / "machines.psl").string() + " --import " + (big_red / "mpi.psl").string();
  auto ring = [&](const std::string& machine) {
    return direct(program("direct_ring") + " -np 4 --machine " + machine + " --compute model --format json" + files +
                  " -- 3");
  };
  CommandResult r = ring("Odin");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("runtime MPI_direct does not carry the messages of --machine Odin"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("mpi.psl:"), std::string::npos) << r.err;  // located, at the request
  r = ring("BigRed");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(finish_ns(r), 0);

  const fs::path unwired = machine_files("unwired", [](std::string& mpi) {
    const std::size_t from = mpi.find("requests wire {", mpi.find("component MPI_direct"));
    ASSERT_NE(from, std::string::npos);
    mpi.erase(from, mpi.find("}", from) + 1 - from);
  });
  r = direct(program("direct_ring") + " -np 4 --machine Odin --compute model --format json --import " +
             (unwired / "machines.psl").string() + " --import " + (unwired / "mpi.psl").string() + " -- 3");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the requests of runtime MPI_direct reach no hardware component, not --machine Odin"),
            std::string::npos)
      << r.err;
  fs::remove_all(big_red);
  fs::remove_all(unwired);
}

// Which runtime: the only one accepting simulation[direct], or --runtime;
// several are an error naming them, never a silent pick. A runtime's bad
// value is located where it is written.
TEST(DirectCli, MachinesRuntimeIsChosenNeverGuessed) {
  const fs::path two = machine_files("two", [](std::string& mpi) {
    direct_profile(mpi, "eager_limit = 4B;");
    std::string second = mpi.substr(mpi.find("component MPI_direct"));
    second = second.substr(0, second.find("\n}\n") + 3);
    second.replace(second.find("MPI_direct"), 10, "MPI_direct_big");
    second.replace(second.find("eager_limit = 4B;"), 17, "eager_limit = 16B;");
    mpi += "\n" + second;
  });
  const std::string files = " --import " + (two / "machines.psl").string() + " --import " + (two / "mpi.psl").string();
  const std::string ring = program("direct_ring") + " -np 4 --machine Odin --compute model --format json" + files;
  CommandResult r = direct(ring + " -- 3");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--runtime: several runtime components accept simulation[direct] messages (MPI_direct, "
                       "MPI_direct_big); choose one with --runtime NAME"),
            std::string::npos)
      << r.err;
  r = direct(ring + " --runtime MPI_direct -- 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(finish_ns(r), 182610);
  r = direct(ring + " --runtime MPI_direct_big -- 3");  // 8 B messages are eager under 16 B
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(finish_ns(r), 119010);
  r = direct(ring + " --runtime MPI_simulated -- 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--runtime: 'MPI_simulated' accepts no simulation[direct] messages"), std::string::npos)
      << r.err;
  r = direct(ring + " --runtime Odin -- 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--runtime: 'Odin' is hardware[network], not a runtime component"), std::string::npos) << r.err;
  r = direct(ring + " --runtime MPI_direkt -- 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--runtime: no component named 'MPI_direkt' (runtime components: "), std::string::npos) << r.err;
  r = direct(program("direct_ring") + " -np 4 --runtime MPI_direct" + files + " -- 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--runtime: sets the protocol of a machine component's messages; give --machine NAME too"),
            std::string::npos)
      << r.err;

  const fs::path bad = machine_files("bad", [](std::string& mpi) { direct_profile(mpi, "eager_limit = 5us;"); });
  r = direct(program("direct_ring") + " -np 4 --machine Odin --import " + (bad / "machines.psl").string() +
             " --import " + (bad / "mpi.psl").string() + " -- 3");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(
      r.err.find(
          "mpi.psl:64:81: error: MPI_direct (accepts): eager_limit = 5000ns is not an eager limit; it must be a whole "
          "number of bytes from 0 to 9e15, e.g. 4096B"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("^"), std::string::npos) << r.err;

  const fs::path differ = machine_files("differ", [](std::string& mpi) {
    direct_profile(mpi, "eager_limit = 4B;");
    direct_profile(mpi, "eager_limit = 8B;", true);
  });
  r = direct(program("direct_ring") + " -np 4 --machine Odin --import " + (differ / "machines.psl").string() +
             " --import " + (differ / "mpi.psl").string() + " -- 3");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: MPI_direct (recv): eager_limit = 8B disagrees with eager_limit = 4B in MPI_direct "
                       "(accepts)"),
            std::string::npos)
      << r.err;

  const fs::path lazy = machine_files("lazy", [](std::string& mpi) {
    const std::string from = "component MPI_direct in runtime[MPI] {\n  param semantics = \"matched\";";
    const std::size_t at = mpi.find(from);
    ASSERT_NE(at, std::string::npos);
    mpi.replace(at, from.size(), "component MPI_direct in runtime[MPI] {\n  param semantics = \"lazy\";");
  });
  r = direct(program("direct_ring") + " -np 4 --machine Odin --import " + (lazy / "machines.psl").string() +
             " --import " + (lazy / "mpi.psl").string() + " -- 3");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("mpi.psl:62:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("MPI_direct.semantics = \"lazy\" is not a message-progress semantics"), std::string::npos)
      << r.err;
  for (const fs::path& d : {two, bad, differ, lazy}) fs::remove_all(d);
}

namespace {

// A program whose every rank charges 1e6 units of work (POEMS_Compute) and
// sends nothing: its finish is 1e6 x the Wg that priced the work.
fs::path charging_program(const fs::path& dir) {
  const fs::path source = dir / "charge.cpp";
  std::ofstream(source) << "#include <mpi.h>\nint main(int c, char** v) { MPI_Init(&c, &v);\n"
                           "  POEMS_Compute(1000000.0); MPI_Finalize(); return 0; }\n";
  return source;
}

// A 2-D Jacobi model beside the examples' machines (Opteron, Wg = 60ns):
// its relaxation's requests select its own processor `first` (Wg = 2ns);
// `second_request`, if not "", is the selector of a second task's request.
fs::path jacobi_model(const fs::path& dir, const std::string& second_request = "") {
  std::string psl =
      "import \"machines.psl\";\n"
      "model Jacobi {\n  param n = 1000;\n  taskgraph iterate {\n    processes { [p] : 0 <= p < 4 };\n"
      "    task relax : JacobiRelax(cells = n * n);\n" +
      std::string(second_request.empty() ? "" : "    task halo : JacobiHalo(cells = n);\n") +
      "  }\n}\n"
      "component JacobiRelax in application[Jacobi] {\n"
      "  accepts { profile { node_type = \"relax\"; } transaction relax(cells: int); protocol dataflow; }\n"
      "  requests cpu {\n"
      "    selector domain == hardware[processor] and evaluation == study.compute and name == \"JacobiCpu\";\n"
      "    transaction execute_code_block(work = cells);\n    protocol call_return;\n  }\n}\n"
      "component JacobiCpu in hardware[processor] {\n  param Wg = 2ns;\n"
      "  accepts {\n    profile { node_type = \"cpu\"; evaluation = processor[wg]; Wg = Wg; }\n"
      "    transaction execute_code_block(work: real) -> time;\n    protocol call_return;\n  }\n}\n";
  if (!second_request.empty())
    psl +=
        "component JacobiHalo in application[Jacobi] {\n"
        "  accepts { profile { node_type = \"halo\"; } transaction halo(cells: int); protocol dataflow; }\n"
        "  requests cpu {\n    selector " +
        second_request + ";\n    transaction execute_code_block(work = cells);\n    protocol call_return;\n  }\n}\n";
  const fs::path model = dir / "model.psl";
  std::ofstream(model) << psl;
  return model;
}

}  // namespace

// --compute model with an imported model prices the program's work with the
// processor the model's requests select (JacobiCpu, 2ns), not the machine
// file's Opteron (60ns); --processor and --wg still win.
TEST(DirectCli, ComputeModelUsesTheProcessorTheModelSelects) {
  const fs::path dir = machine_files("model_cpu", [](std::string&) {});
  const fs::path source = charging_program(dir);
  const std::string model = jacobi_model(dir).string();
  CommandResult r = direct(source.string() + " -np 4 --machine Odin --compute model --import " + model);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("finish 2000000 ns"), std::string::npos) << r.out;  // 1e6 x 2ns
  EXPECT_NE(r.out.find("on Odin, Wg=2ns from JacobiCpu (model Jacobi), compute from the processor model"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("Opteron"), std::string::npos) << r.out;
  r = direct(source.string() + " -np 4 --machine Odin --compute model --processor Opteron --format json --import " +
             model);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(finish_ns(r), 60000000);  // 1e6 x 60ns
  r = direct(source.string() + " -np 4 --machine Odin --compute model --wg 5ns --format json --import " + model);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(finish_ns(r), 5000000);
  fs::remove_all(dir);
}

// Requests that reach processors with different Wg, or none, are an error
// naming the candidates, never a silent pick.
TEST(DirectCli, ComputeModelProcessorIsNeverGuessed) {
  const fs::path dir = machine_files("model_cpus", [](std::string&) {});
  const fs::path source = charging_program(dir);
  std::string model =
      jacobi_model(dir, "domain == hardware[processor] and evaluation == study.compute and name == \"Opteron\"")
          .string();
  CommandResult r = direct(source.string() + " -np 4 --machine Odin --compute model --import " + model);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--processor: the compute requests of model Jacobi reach processors with different Wg "
                       "(JacobiCpu (Wg=2ns), Opteron (Wg=60ns)); choose one with --processor NAME, or give --wg T"),
            std::string::npos)
      << r.err;
  // A relaxation without requests: its computation reaches no processor.
  model = jacobi_model(dir).string();
  std::string text = read_text(model);
  const std::size_t from = text.find("  requests cpu {");
  ASSERT_NE(from, std::string::npos);
  text.erase(from, text.find("  }\n", from) + 4 - from);
  std::ofstream(model) << text;
  r = direct(source.string() + " -np 4 --machine Odin --compute model --import " + model);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--processor: the compute requests of model Jacobi reach no hardware[processor] on --machine "
                       "Odin (processors with a Wg: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("choose one with --processor NAME, or give --wg T"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// Measured computation prices nothing with a processor: the banner names none.
TEST(DirectCli, MeasuredBannerHasNoWg) {
  CommandResult r = direct(program("direct_ring") + " -np 4 --machine Odin -- 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("program direct_ring (4 ranks) on Odin, compute measured x1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Wg"), std::string::npos) << r.out;
}
