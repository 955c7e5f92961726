// End-to-end: a program and a kernel attached in PSL (docs/psl.md, "Programs
// and kernels"; docs/tutorial.md). The Jacobi solver of examples/jacobi runs
// under every paradigm of one study: its model analysed and simulated, its
// source built with poems-mpicc and run on simulated ranks, built with mpicc
// and measured under mpirun, its stencil timed by its kernel mode.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "poems/core/attached_program.h"
#include "poems/core/error.h"
#include "run_command.h"

namespace fs = std::filesystem;

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace attached_program_tests {

namespace {

const std::string kPoems = POEMS_BINARY;
const fs::path kJacobi = fs::path(POEMS_SOURCE_DIR) / "examples/jacobi";
// A small grid: every paradigm in a few seconds.
const std::string kSmall = " --set nx=256 --set ny=256 --set iterations=40";

// jacobi.psl with `from` replaced by `to` (the test's own variant), beside jacobi.c.
fs::path variant(const std::string& name, const std::string& from, const std::string& to) {
  const fs::path dir = fresh_temp_dir("attached_" + name);
  fs::copy_file(kJacobi / "jacobi.c", dir / "jacobi.c");
  std::string text = read_text(kJacobi / "jacobi.psl");
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("'" + from + "' is not in jacobi.psl");
  text.replace(at, from.size(), to);
  std::ofstream(dir / "jacobi.psl") << text;
  return dir / "jacobi.psl";
}

double load_average() {
  double l[1];
  return ::getloadavg(l, 1) == 1 ? l[0] : 99;
}

}  // namespace

TEST(AttachedProgram, TheJacobiExampleChecks) {
  const CommandResult r = run_command(kPoems + " check " + (kJacobi / "jacobi.psl").string());
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
}

TEST(AttachedProgram, EntriesAreCheckedWithTheirPlace) {
  const fs::path psl = variant("entries", "    sources = \"jacobi.c\";\n",
                               "    source = \"jacobi.c\";\n    ranks = 2s;\n    time_unit = 4;\n");
  const CommandResult r = run_command(kPoems + " check " + psl.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("jacobi.psl:37:5: error: unknown program entry 'source' (entries: sources, flags, "
                       "executable, direct_executable, args, ranks, inputs, time, time_unit, compute, timeout); "
                       "did you mean 'sources'?"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("jacobi.psl:38:13: error: program entry 'ranks' must be a plain integer, not a time"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("jacobi.psl:39:17: error: program entry 'time_unit' is a time, e.g. 1s or 1ms"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("duplicate program entry 'ranks'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the program has no 'sources', 'executable' or 'direct_executable'"), std::string::npos)
      << r.err;
  // The kernel runs the program built for mpirun, which it now lacks.
  EXPECT_NE(r.err.find("error: the kernel runs model Jacobi's program, which has no 'sources' or 'executable'"),
            std::string::npos)
      << r.err;

  const fs::path pattern = variant("pattern", "time = \"jacobi time_s=([0-9.e+-]+)\";", "time = \"jacobi time_s=\";");
  const CommandResult p = run_command(kPoems + " check " + pattern.string());
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("error: the 'time' pattern has no group"), std::string::npos) << p.err;

  const fs::path args = variant("args", "args = [\"--kernel\", rows, cols];", "args = [\"--kernel\", rows, colz];");
  const CommandResult a = run_command(kPoems + " check " + args.string());
  EXPECT_EQ(a.exit_code, 1);
  EXPECT_NE(a.err.find("'colz'"), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("did you mean 'cols'?"), std::string::npos) << a.err;
}

TEST(AttachedProgram, AMissingSourceIsALocatedError) {
  const fs::path psl = variant("missing", "sources = \"jacobi.c\";", "sources = [\"jacobi.c\", \"halo.c\"];");
  const CommandResult r = run_command(kPoems + " analyze " + psl.string() + " --machine Workstation --no-store");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("jacobi.psl:37:28: error: no file 'halo.c' ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sources = [\"jacobi.c\", \"halo.c\"];"), std::string::npos) << r.err;
}

// Every paradigm of the study evaluates the model; direct execution charges
// each sweep at the kernel's measured rate, as the simulator does, so the
// two agree closely (they differ by the program's own halo packing, which
// the model leaves out, and the measured rate's run-to-run spread).
TEST(AttachedProgram, EveryParadigmEvaluatesTheUsersProgram) {
  const fs::path dir = fresh_temp_dir("attached_study");
  const CommandResult r =
      run_command(sanitizer_environment() + kPoems + " run " + (kJacobi / "jacobi.psl").string() +
                  " --study validation" + kSmall + " --repetitions 1 --format json --db " + (dir / "kb.db").string());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json rows = nlohmann::json::parse(r.out)["rows"];
  ASSERT_EQ(rows.size(), 3u);
  for (const nlohmann::json& row : rows) {
    SCOPED_TRACE(row.dump());
    EXPECT_FALSE(row.contains("errors"));
    EXPECT_FALSE(row.contains("skipped"));
    const nlohmann::json& t = row["times_ns"];
    for (const char* p : {"analytic[LogGP]", "simulation[MPI-Sim]", "simulation[direct]", "measurement[mpirun]"})
      ASSERT_TRUE(t[p].is_number()) << p;
    const double sim = t["simulation[MPI-Sim]"].get<double>(), direct = t["simulation[direct]"].get<double>();
    EXPECT_GT(sim, 1e5);  // 40 sweeps of 65,536 cells at >= 0.05 ns each
    EXPECT_LT(std::abs(direct - sim) / sim, 0.10) << "direct " << direct << " vs simulated " << sim;
  }
  EXPECT_EQ(rows[0]["processes"], 1);
  EXPECT_EQ(rows[1]["processes"], 2);
}

// Predicted against measured within 10 % at 1 and 2 processes (the issue's
// bar), where the host is quiet enough to measure: under load the mpirun
// runs are slowed by other work, not by the model's error. A quiet VM still
// moves one cell's measured time by up to a third between runs
// (docs/tutorial.md), so the study may run up to three times: one run with
// every cell within 10 % passes, and a model that is off fails all three.
TEST(AttachedProgram, PredictionsAgreeWithTheRealRunOnAQuietHost) {
  if (load_average() > 1.5) GTEST_SKIP() << "load average " << load_average() << " > 1.5: not a quiet host";
  std::string attempts;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const CommandResult r = run_command(sanitizer_environment() + kPoems + " run " + (kJacobi / "jacobi.psl").string() +
                                        " --study validation --repetitions 3 --format json --no-store");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    bool within = true;
    attempts += "attempt " + std::to_string(attempt) + ":";
    for (const nlohmann::json& row : nlohmann::json::parse(r.out)["rows"]) {
      const nlohmann::json& t = row["times_ns"];
      const double measured = t["measurement[mpirun]"].get<double>();
      for (const char* p : {"analytic[LogGP]", "simulation[MPI-Sim]", "simulation[direct]"}) {
        const double error = (t[p].get<double>() - measured) / measured;
        within = within && std::abs(error) < 0.10;
        attempts += " " + std::string(p) + " " + std::to_string(100 * error) + "%";
      }
    }
    attempts += "\n";
    if (within) return;
  }
  FAIL() << "no run of the study had every prediction within 10 % of the measurement:\n" << attempts;
}

// The program's kernel mode fits the stencil's rate: `poems calibrate` on
// the study's tasks (blocks of 1024 x 1024, 512 x 1024 and 1024 x 512 cells)
// writes a machine whose Wg is the time of one cell.
TEST(AttachedProgram, CalibrateFitsTheKernelOfTheStudysTasks) {
  const fs::path dir = fresh_temp_dir("attached_calibrate");
  const CommandResult r =
      run_command(sanitizer_environment() + kPoems + " calibrate " + (kJacobi / "jacobi.psl").string() +
                  " --study validation --quick --format json --psl " + (dir / "local.psl").string() + " --db " +
                  (dir / "kb.db").string());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel"], "Stencil") << r.out;
  const double wg = j["Wg_ns"].get<double>();
  EXPECT_GT(wg, 0.05) << r.out;  // a 5-point stencil: a few flops and loads per cell
  EXPECT_LT(wg, 50.0) << r.out;
  const std::string psl = read_text(dir / "local.psl");
  EXPECT_NE(psl.find("component local_cpu in hardware[processor]"), std::string::npos) << psl;
  EXPECT_NE(psl.find("the kernel of Stencil (program of Jacobi (jacobi.c, "), std::string::npos) << psl;
}

// A program given only as an mpicc-built executable cannot run on simulated
// ranks: `poems check` says so at the study's compare entry, and a cell that
// runs anyway says what is missing while the others are evaluated.
TEST(AttachedProgram, DirectExecutionNeedsADirectBuild) {
  const fs::path dir = fresh_temp_dir("attached_executable");
  ASSERT_EQ(run_command("mpicc -O2 -o " + (dir / "jacobi").string() + " " + (kJacobi / "jacobi.c").string()).exit_code,
            0);
  std::string text = read_text(kJacobi / "jacobi.psl");
  text.replace(text.find("sources = \"jacobi.c\";"), std::string("sources = \"jacobi.c\";").size(),
               "executable = \"jacobi\";");
  std::ofstream(dir / "jacobi.psl") << text;
  const std::string psl = (dir / "jacobi.psl").string();
  const CommandResult check = run_command(kPoems + " check " + psl);
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_NE(check.err.find("error: study 'validation' compares simulation[direct], which runs model Jacobi's program, "
                           "but its program gives no 'sources' or 'direct_executable' (built with poems-mpicc)"),
            std::string::npos)
      << check.err;
  const CommandResult r =
      run_command(sanitizer_environment() + kPoems + " run " + psl + " --study validation" + kSmall +
                  " --paradigm simulation[direct] --paradigm analytic[LogGP] "
                  "--format json --no-store");
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;  // an evaluation failed
  const nlohmann::json rows = nlohmann::json::parse(r.out)["rows"];
  ASSERT_FALSE(rows.empty()) << r.out;
  EXPECT_TRUE(rows[0]["times_ns"]["analytic[LogGP]"].is_number()) << r.out;
  EXPECT_NE(rows[0]["errors"]["simulation[direct]"].get<std::string>().find(
                "model Jacobi's program gives no 'direct_executable' or 'sources'"),
            std::string::npos)
      << r.out;
}

// Every match of the pattern is a time, in the given unit; a group that is
// not a number is an error quoting it.
TEST(AttachedProgram, TimesAreEveryMatchOfThePattern) {
  const std::string out = "rank 1 t=0.5\nnoise\nrank 0 t=1.25e-1\n";
  EXPECT_EQ(poems::core::matched_times_ns(out, "t=([0-9.e+-]+)", 1e9), (std::vector<double>{0.5e9, 0.125e9}));
  EXPECT_EQ(poems::core::matched_times_ns(out, "t=([0-9.e+-]+)", 1e3), (std::vector<double>{500, 125}));
  EXPECT_TRUE(poems::core::matched_times_ns("nothing", "t=([0-9.]+)", 1).empty());
  try {
    poems::core::matched_times_ns("t=1.2.3", "t=([0-9.]+)", 1);
    FAIL() << "no error";
  } catch (const poems::core::EvaluationError& e) {
    EXPECT_NE(std::string(e.what()).find("matched 't=1.2.3', whose group '1.2.3' is not a number"), std::string::npos)
        << e.what();
  }
}

// `poems trace --spec` records the model's program for a binding: built with
// mpicc, its arguments and process count from the parameters. On a 2 x 1
// grid each of 5 iterations sends one halo row each way (8 x (64 + 2) bytes),
// and the replay of the archive is then a model like any other.
TEST(AttachedProgram, TraceRecordsTheModelsProgram) {
  const fs::path dir = fresh_temp_dir("attached_trace");
  const CommandResult r =
      run_command(sanitizer_environment() + kPoems + " trace --spec " + (kJacobi / "jacobi.psl").string() +
                  " --set px=2 --set nx=64 --set ny=64 --set iterations=5 -o " + (dir / "run").string());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("poems trace: 2 processes recorded in " + (dir / "run" / "traces.otf2").string()),
            std::string::npos)
      << r.err;
  const CommandResult info = run_command(kPoems + " trace --info " + (dir / "run").string() + " --format json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const nlohmann::json j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["ranks"], 2);
  EXPECT_EQ(j["messages"], 10);
  EXPECT_EQ(j["message_bytes"], 10 * 8 * 66);

  const CommandResult bad = run_command(kPoems + " trace --spec " + (kJacobi / "jacobi.psl").string() +
                                        " --set px=2000000 -o " + (dir / "none").string());
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("the program's ranks = 2000000 (an integer in 1..1000000)"), std::string::npos) << bad.err;
  const CommandResult stray = run_command(kPoems + " trace --set px=2 -- ./jacobi");
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.err.find("--set: takes --spec"), std::string::npos) << stray.err;
}

// A program's `inputs` are copied into the directory each run starts in, so
// a program that opens its deck by a relative name finds it, under mpirun
// and on simulated ranks alike; the time it prints (here read from the deck)
// is the result, in `time_unit`. Runs are stored under the sources' identity.
TEST(AttachedProgram, InputsAreInTheRunsWorkingDirectory) {
  const fs::path dir = fresh_temp_dir("attached_inputs");
  std::ofstream(dir / "reader.c") << R"(#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  FILE* f = fopen(argv[1], "r");
  double ms = -1;
  if (!f || fscanf(f, "%lf", &ms) != 1) return 3;
  if (rank == 0) printf("took %g ms\n", ms);
  MPI_Finalize();
  return 0;
}
)";
  std::ofstream(dir / "deck.txt") << "12.5\n";
  std::ofstream(dir / "reader.psl") << R"(model Reader {
  param p = 2;
  taskgraph g {
    processes { [r] : 0 <= r < p };
    barrier;
  }
  program {
    sources = "reader.c";
    inputs = ["deck.txt"];
    args = ["deck.txt"];
    ranks = p;
    time = "took ([0-9.]+) ms";
    time_unit = 1ms;
  }
}
component Net in hardware[network] {
  param L = 2us, o = 1us, g = 1us, G = 0.5ns/B, O = 0ns/B, S = 64KiB;
  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
            transaction message(bytes: bytes) -> time; protocol call_return; }
}
study read {
  model Reader on Net;
  compare measurement[mpirun], simulation[direct];
}
)";
  const std::string command = "cd " + fs::temp_directory_path().string() + " && " + sanitizer_environment() + kPoems +
                              " run " + (dir / "reader.psl").string() +
                              " --study read --repetitions 1 --format json --db " + (dir / "kb.db").string();
  auto stored = [&](const std::string& out, const char* paradigm) {
    return nlohmann::json::parse(out)["rows"][0]["breakdown"][paradigm]["stored"].get<bool>();
  };
  const CommandResult r = run_command(command);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json t = nlohmann::json::parse(r.out)["rows"][0]["times_ns"];
  EXPECT_EQ(t["measurement[mpirun]"].get<double>(), 12.5e6) << r.out;
  EXPECT_EQ(t["simulation[direct]"].get<double>(), 12.5e6) << r.out;
  EXPECT_FALSE(stored(r.out, "simulation[direct]"));
  // Stored under the sources' identity: the same code is not run again,
  // edited code is, by both paradigms that run it.
  const CommandResult again = run_command(command);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(stored(again.out, "simulation[direct]")) << again.out;
  EXPECT_TRUE(stored(again.out, "measurement[mpirun]")) << again.out;
  std::ofstream(dir / "reader.c", std::ios::app) << "/* edited */\n";
  const CommandResult edited = run_command(command);
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  EXPECT_FALSE(stored(edited.out, "simulation[direct]")) << edited.out;
  EXPECT_FALSE(stored(edited.out, "measurement[mpirun]")) << edited.out;
}

// What goes wrong with an attached program is the cell's error, named, while
// the run goes on: a program that prints no time (under mpirun and on
// simulated ranks), one that does not build (with each paradigm's compiler),
// and a kernel that prints no time, fails, or whose program does not build.
TEST(AttachedProgram, FailuresOfTheProgramAreTheCellsErrors) {
  const fs::path dir = fresh_temp_dir("attached_failures");
  const std::string program = R"c(#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--kernel") == 0) {
    printf("kernel ran\n");
    return 0;
  }
  MPI_Init(&argc, &argv);
  printf("hello\n");
  MPI_Finalize();
  return 0;
}
)c";
  std::ofstream(dir / "quiet.c") << program;
  std::ofstream(dir / "quiet.psl") << R"psl(model Quiet {
  param p = 2;
  taskgraph g {
    processes { [r] : 0 <= r < p };
    task w : Work(n = 4);
    barrier;
  }
  program {
    sources = "quiet.c";
    ranks = p;
    time = "took ([0-9.]+) ms";
    time_unit = 1ms;
  }
}
component Work in application[Quiet] {
  accepts {
    profile { node_type = "work"; }
    transaction w(n: int);
    protocol dataflow;
  }
  requests cpu {
    selector domain == hardware[processor] and evaluation == study.compute;
    transaction execute_code_block(work = n);
    protocol call_return;
  }
  kernel {
    args = ["--kernel"];
    time = "kernel_s=([0-9.]+)";
  }
}
component Host_measured in hardware[processor] {
  accepts {
    profile { node_type = "cpu"; evaluation = processor[measured]; repetitions = 1; }
    transaction execute_code_block(work: real) -> time;
    protocol call_return;
  }
}
component Host_wg in hardware[processor] {
  param Wg = 1ns;
  accepts {
    profile { node_type = "cpu"; evaluation = processor[wg]; Wg = Wg; }
    transaction execute_code_block(work: real) -> time;
    protocol call_return;
  }
}
component Net in hardware[network] {
  param L = 2us, o = 1us, g = 1us, G = 0.5ns/B, O = 0ns/B, S = 64KiB;
  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
            transaction message(bytes: bytes) -> time; protocol call_return; }
}
study silent {
  model Quiet on Net;
  set compute = processor[wg];
  compare measurement[mpirun], simulation[direct];
}
study timed {
  model Quiet on Net;
  set compute = processor[measured];
  compare analytic[LogGP];
}
)psl";
  auto run = [&](const std::string& study) {
    const CommandResult r =
        run_command("cd " + dir.string() + " && " + sanitizer_environment() + kPoems + " run quiet.psl --study " +
                    study + " --repetitions 1 --format json --no-store");
    EXPECT_EQ(r.exit_code, 3) << r.err << r.out;  // an evaluation failed, and the table is printed
    return nlohmann::json::parse(r.out)["rows"][0]["errors"];
  };
  auto contains = [](const nlohmann::json& error, const std::string& text) {
    return error.is_string() && error.get<std::string>().find(text) != std::string::npos;
  };

  nlohmann::json errors = run("silent");
  const std::string no_time =
      "the program printed no time matching \"took ([0-9.]+) ms\"; its output ends:\nhello\nhello";
  EXPECT_TRUE(contains(errors["measurement[mpirun]"], "under mpirun -np 2: " + no_time)) << errors;
  EXPECT_TRUE(contains(errors["simulation[direct]"], "simulation[direct]: program of Quiet (quiet.c, ")) << errors;
  EXPECT_TRUE(contains(errors["simulation[direct]"], ") on 2 simulated ranks: " + no_time)) << errors;
  errors = run("timed");
  EXPECT_TRUE(contains(errors["analytic[LogGP]"],
                       "processor component 'Host_measured' (processor[measured]): kernel 'Work' failed for task "
                       "Work.execute_code_block: it printed no time matching \"kernel_s=([0-9.]+)\"; its output "
                       "ends:\nkernel ran"))
      << errors;

  std::string failing = program;
  failing.insert(failing.find("printf(\"kernel ran"), "return 4; ");
  std::ofstream(dir / "quiet.c") << failing;
  errors = run("timed");
  EXPECT_TRUE(contains(errors["analytic[LogGP]"], "kernel 'Work' failed for task Work.execute_code_block: exit code 4"))
      << errors;

  std::ofstream(dir / "quiet.c") << "int main( { return 0; }\n";
  errors = run("silent");
  EXPECT_TRUE(contains(errors["measurement[mpirun]"], "model Quiet's program does not build (mpicc -O2 quiet.c -o "))
      << errors;
  EXPECT_TRUE(contains(errors["simulation[direct]"], "model Quiet's program does not build (" +
                                                         (fs::path(kPoems).parent_path() / "poems-mpicc").string() +
                                                         " -O2 quiet.c -o "))
      << errors;
  for (const char* paradigm : {"measurement[mpirun]", "simulation[direct]"})
    EXPECT_TRUE(contains(errors[paradigm], "): exit code 1\nquiet.c:1:11: error: ")) << errors;
  errors = run("timed");
  EXPECT_TRUE(contains(errors["analytic[LogGP]"],
                       "kernel 'Work' failed for task Work.execute_code_block: model "
                       "Quiet's program does not build (mpicc -O2 quiet.c"))
      << errors;
}

}  // namespace attached_program_tests
