// `poems compile` (SystemModel and plan as JSON, DOT, located
// composition errors) and `poems run` (a two-paradigm Sweep3D study that must
// agree within 2%, stored and reused from the knowledge base, CSV, a plot),
// in process.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_command.h"

namespace fs = std::filesystem;

namespace {

CommandResult poems_run(const std::string& args) { return poems_in_process(args); }
const std::string kSource = POEMS_SOURCE_DIR;
const std::string kSweep3D = kSource + "/examples/sweep3d/sweep3d.psl";
const std::string kSmall = kSource + "/tests/compiler/studies/sweep3d_small.psl";

std::string temp_db(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("poems_" + name + "_" + std::to_string(::getpid()) + ".db");
  fs::remove(p);
  return p.string();
}

}  // namespace

TEST(CompileCommand, JsonHasSystemAndPlan) {
  CommandResult r =
      poems_run("compile " + kSweep3D + " --study scaling --paradigm 'simulation[MPI-Sim]' --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "Sweep3D");
  EXPECT_EQ(j["study"]["paradigm"], "simulation[MPI-Sim]");
  EXPECT_EQ(j["domains"]["runtime"], nlohmann::json::array({"MPI_simulated"}));
  EXPECT_EQ(j["domains"]["hardware"], nlohmann::json::array({"Opteron", "Odin"}));
  EXPECT_EQ(j["plan"]["communication"], "simulation[MPI-Sim]");
  EXPECT_EQ(j["plan"]["network"]["component"], "Odin");
  EXPECT_EQ(j["plan"]["network"]["L_ns"], "5300");
  ASSERT_EQ(j["plan"]["teds"].size(), 6u);
  EXPECT_EQ(j["plan"]["teds"][2]["evaluator"], "processor[wg]");
  EXPECT_EQ(j["plan"]["teds"][2]["parameters"]["Wg"], "60ns");
  for (const auto& b : j["bindings"]) EXPECT_FALSE(b["location"].get<std::string>().empty());
}

TEST(CompileCommand, MeasuredComputeIsAStudySetting) {
  CommandResult r =
      poems_run("compile " + kSweep3D + " --machine Odin --set 'compute=processor[measured]' --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["teds"][2]["evaluator"], "processor[measured]");
  EXPECT_EQ(j["plan"]["teds"][2]["parameters"]["kernel"], "sweep3d.kblock");
}

TEST(CompileCommand, DotDrawsDomains) {
  const fs::path dot = fs::temp_directory_path() / ("poems_compile_" + std::to_string(::getpid()) + ".dot");
  CommandResult r = poems_run("compile " + kSweep3D + " --machine Odin --dot " + dot.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_text(dot);
  for (const char* s : {"cluster_application", "cluster_runtime", "cluster_hardware", "cluster_taskgraph",
                        "mpi_send (call_return)", "message (call_return)"})
    EXPECT_NE(text.find(s), std::string::npos) << s;
  fs::remove(dot);
}

TEST(CompileCommand, AmbiguousMachineIsALocatedError) {
  CommandResult r = poems_run("compile " + kSweep3D);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("mpi.psl:26:21: error: request 'wire' of 'MPI_analytic' matches 2 components: 'Odin', 'BigRed'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("note: candidate 'BigRed'"), std::string::npos) << r.err;
}

TEST(RunCommand, TwoParadigmsAgreeAndResultsAreReused) {
  const std::string db = temp_db("run_small");
  CommandResult r = poems_run("run " + kSmall + " --study small --format json --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 4u);
  std::vector<int> processes;
  for (const auto& row : j["rows"]) {
    processes.push_back(row["processes"]);
    const double a = row["times_ns"]["analytic[LogGP]"], s = row["times_ns"]["simulation[MPI-Sim]"];
    EXPECT_GT(a, 0);
    EXPECT_LT(std::abs(row["difference_pct"].get<double>()), 2.0) << row.dump();
    EXPECT_DOUBLE_EQ(row["difference_pct"].get<double>(), (s - a) / a * 100);
  }
  EXPECT_EQ(processes, (std::vector<int>{1, 4, 12, 16}));
  // 1x1: no communication, both paradigms give the compute time exactly.
  EXPECT_EQ(j["rows"][0]["times_ns"]["analytic[LogGP]"], j["rows"][0]["times_ns"]["simulation[MPI-Sim]"]);
  EXPECT_EQ(j["rows"][0]["speedup"]["analytic[LogGP]"], 1.0);
  const double t1 = j["rows"][0]["times_ns"]["simulation[MPI-Sim]"],
               t16 = j["rows"][3]["times_ns"]["simulation[MPI-Sim]"];
  EXPECT_DOUBLE_EQ(j["rows"][3]["speedup"]["simulation[MPI-Sim]"].get<double>(), t1 / t16);
  EXPECT_NE(r.err.find("[8/8]"), std::string::npos) << r.err;

  // A second run evaluates nothing: every cell comes from the knowledge base, unchanged.
  CommandResult again = poems_run("run " + kSmall + " --study small --format json --db " + db);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  nlohmann::json k = nlohmann::json::parse(again.out);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(k["rows"][i]["times_ns"], j["rows"][i]["times_ns"]);
    EXPECT_EQ(k["rows"][i]["breakdown"]["simulation[MPI-Sim]"]["stored"], true);
  }
  EXPECT_EQ(again.err.find("evaluated"), std::string::npos) << again.err;
  // The runs are linked to the study, with their TEDs.
  CommandResult q = poems_in_process("db query --db " + db +
                                     " \"SELECT COUNT(*) FROM study_runs JOIN studies ON studies.id = study_id WHERE "
                                     "studies.name = 'small'\"");
  EXPECT_NE(q.out.find("8"), std::string::npos) << q.out << q.err;
  fs::remove(db);
}

TEST(RunCommand, MachineParameterVariesAndCsvAndPlot) {
  const fs::path png = fs::temp_directory_path() / ("poems_run_" + std::to_string(::getpid()) + ".png");
  CommandResult r =
      poems_run("run " + kSmall + " --study latency_small --no-store --format csv --plot " + png.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Header plus four rows; a 10x latency slows the 2x2 grid and leaves 1x1 alone.
  std::istringstream lines(r.out);
  std::vector<std::string> rows;
  for (std::string l; std::getline(lines, l);) rows.push_back(l);
  ASSERT_EQ(rows.size(), 5u) << r.out;
  EXPECT_EQ(rows[0].rfind("Odin.L,npe_i,npe_j,processes,", 0), 0u) << rows[0];
  auto time_of = [](const std::string& row) {
    std::vector<std::string> f;
    std::stringstream s(row);
    for (std::string x; std::getline(s, x, ',');) f.push_back(x);
    return std::stod(f.at(4));
  };
  EXPECT_EQ(time_of(rows[1]), time_of(rows[3]));
  EXPECT_LT(time_of(rows[2]), time_of(rows[4]));
  EXPECT_GT(fs::file_size(png), 1000u);
  fs::remove(png);
}

TEST(RunCommand, UnknownStudyNamesTheStudies) {
  CommandResult r = poems_run("run " + kSweep3D + " --study nope --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(
                "studies: scaling, scaling_50, projection, projection_analytic, blocking, latency, direct, validation"),
            std::string::npos)
      << r.err;
}

TEST(RunCommand, MeasuredComputeTimesTheRealKernel) {
  // processor[measured] is a study setting: the same model, its compute nodes
  // timed on this machine with the k-block kernel, once per block shape.
  CommandResult r = poems_run("run " + kSmall + " --study measured_small --no-store --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  const double t1 = j["rows"][0]["times_ns"]["simulation[MPI-Sim]"];
  // 24^3 cells x 48 angles x 1 iteration: between 0.1 and 1000 ns per cell-angle on any machine we run on.
  EXPECT_GT(t1, 24.0 * 24 * 24 * 48 * 0.1);
  EXPECT_LT(t1, 24.0 * 24 * 24 * 48 * 1000);
  // 1x1 has no messages: both paradigms give the compute time exactly.
  EXPECT_EQ(j["rows"][0]["times_ns"]["analytic[LogGP]"], j["rows"][0]["times_ns"]["simulation[MPI-Sim]"]);
  EXPECT_LT(std::abs(j["rows"][1]["difference_pct"].get<double>()), 2.0);
}

TEST(RunCommand, ExternalProcessorErrorsAreReported) {
  // A processor[external] whose command fails: the cell fails with the
  // processor's message, the run exits 3, nothing crashes.
  const fs::path dir = fs::temp_directory_path() / ("poems_external_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "spec.psl") << "import \"" << kSource << "/examples/sweep3d/sweep3d.psl\";\n"
                                  << R"(component Gem5 in hardware[processor] {
  accepts {
    profile { node_type = "cpu"; evaluation = processor[external]; command = "exit 7"; }
    transaction execute_code_block(work: real) -> time;
    protocol call_return;
  }
}
study ext {
  model Sweep3D on Odin;
  set it_g = 12, jt_g = 12, kt = 12, mk = 4, mmi = 3, mm = 6, iterations = 1;
  set compute = processor[external];
  vary (npe_i, npe_j) in [(1, 1)];
  compare analytic[LogGP];
}
)";
  CommandResult r = poems_run("run " + (dir / "spec.psl").string() + " --study ext --no-store");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("failed: npe_i=1 npe_j=1 analytic[LogGP]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'Gem5' (processor[external])"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exit code 7"), std::string::npos) << r.out;

  // The same component answering 2 ns per unit of work: 12^3 on one process,
  // mk = 4, mmi = 3, mm = 6, one iteration is 8 octants x 2 angle blocks x 3
  // k-blocks of 12*12*4 cells x 3 angles = 82944 units, so exactly 165888 ns.
  std::ofstream(dir / "model.py") << "import json, sys\n"
                                     "r = json.load(sys.stdin)\n"
                                     "print(json.dumps({\"time_ns\": r[\"params\"][\"work\"] * 2}))\n";
  std::string spec = read_text(dir / "spec.psl");
  spec.replace(spec.find("exit 7"), 6, "python3 " + (dir / "model.py").string());
  std::ofstream(dir / "spec.psl") << spec;
  CommandResult ok = poems_run("run " + (dir / "spec.psl").string() + " --study ext --no-store --format json");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["rows"][0]["times_ns"]["analytic[LogGP]"], 165888.0);
  fs::remove_all(dir);
}
