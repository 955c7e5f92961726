// End-to-end: `poems measure` (the real Sweep3D under mpirun beside the
// predictions, stored as measured runs) and `poems calibrate` (LogGOPS and Wg
// of this machine, a PSL machine file that studies run on). Tiny decks: a few
// seconds in all.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "run_command.h"

namespace fs = std::filesystem;

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace measure_tests {

namespace {

const std::string kPoems = POEMS_BINARY;
const std::string kSweep3D = std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl";
// 8^3 cells, mk = 4 (kb = 2), mmi = 3 (mmo = 2), 2 iterations.
const std::string kTiny = " --set it_g=8 --set jt_g=8 --set kt=8 --set mk=4 --set mmi=3 --set iterations=2";

}  // namespace

TEST(MeasureCommand, OneBindingMeasuredBesideTheAnalyticPrediction) {
  const fs::path dir = fresh_temp_dir("measure_one");
  const std::string db = " --db " + (dir / "kb.db").string();
  const std::string command = sanitizer_environment() + kPoems + " measure " + kSweep3D +
                              " --set npe_i=2 --set npe_j=1" + kTiny +
                              " --compare analytic --machine Odin --repetitions 1 --format json" + db;
  CommandResult r = run_command(command);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["measured_ns"].get<double>(), 0);
  EXPECT_GT(j["predicted_ns"].get<double>(), 0);
  EXPECT_EQ(j["paradigm"], "analytic[LogGP]");
  EXPECT_EQ(j["processes"], 2);
  const nlohmann::json& run = j["measurement"]["extra"]["best_run"];
  // 2 iterations x 8 octants x mmo 2 x kb 2 x one i-message from one process.
  EXPECT_EQ(run["messages"], 64);
  EXPECT_EQ(run["computation"], "kernel");
  EXPECT_LT(std::abs(run["balance_sweep"].get<double>()), 1e-12);
  EXPECT_EQ(j["measurement"]["stored"], false);

  // Stored as a measured run under its key: the same command reuses it.
  CommandResult again = run_command(command);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  nlohmann::json k = nlohmann::json::parse(again.out);
  EXPECT_EQ(k["measurement"]["stored"], true);
  EXPECT_EQ(k["measured_ns"], j["measured_ns"]);
  CommandResult q = run_command(kPoems + " db query" + db +
                                " \"SELECT r.evaluator, s.kind FROM runs r JOIN results s ON s.run_id = r.id "
                                "ORDER BY r.evaluator\" --format json");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(nlohmann::json::parse(q.out),
            nlohmann::json::parse(R"([{"evaluator": "analytic[LogGP]", "kind": "predicted"},
                                      {"evaluator": "measurement[mpirun]", "kind": "measured"}])"));
}

TEST(MeasureCommand, BindingsThatDoNotFitAreSkippedNotRun) {
  CommandResult r = run_command(kPoems + " measure " + kSweep3D + " --set npe_i=4 --set npe_j=4" + kTiny +
                                " --max-ranks 2 --format json --no-store");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["measured_ns"].is_null());
  EXPECT_EQ(j["skipped"], "not measured: 16 processes exceed the 2 this machine runs (--max-ranks)");
  CommandResult varied = run_command(kPoems + " measure " + kSweep3D + " --study scaling --set npe_i=1");
  EXPECT_EQ(varied.exit_code, 2);
  EXPECT_NE(varied.err.find("--set npe_i: study scaling varies npe_i"), std::string::npos) << varied.err;
}

TEST(MeasureCommand, StudyMeasuresWhatFitsAndComparesTheRest) {
  const fs::path dir = fresh_temp_dir("measure_study");
  const fs::path spec = dir / "tiny.psl";
  std::ofstream(spec) << "import \"" << kSweep3D << "\";\n"
                      << "study tiny {\n  model Sweep3D on Odin;\n"
                      << "  set it_g = 8, jt_g = 8, kt = 8, mk = 4, mmi = 3, iterations = 2, compute = processor[wg];\n"
                      << "  vary (npe_i, npe_j) in [(1, 1), (1, 2), (4, 4)];\n"
                      << "  compare analytic[LogGP], simulation[MPI-Sim];\n}\n";
  CommandResult r =
      run_command(sanitizer_environment() + kPoems + " measure " + spec.string() +
                  " --study tiny --max-ranks 2 --repetitions 1 --format json --db " + (dir / "kb.db").string());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("measuring 2 of 3 bindings; 1 do not fit this machine"), std::string::npos) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["paradigms"], nlohmann::json::array({"measurement[mpirun]", "analytic[LogGP]", "simulation[MPI-Sim]"}));
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) {
    EXPECT_GT(row["times_ns"]["measurement[mpirun]"].get<double>(), 0) << row.dump();
    EXPECT_TRUE(row["differences_pct"].contains("analytic[LogGP]"));
    EXPECT_TRUE(row["differences_pct"].contains("simulation[MPI-Sim]"));
  }
}

TEST(CalibrateCommand, WritesAMachineThatStudiesRunOn) {
  const fs::path dir = fresh_temp_dir("calibrate");
  const std::string db = " --db " + (dir / "kb.db").string();
  const fs::path psl = dir / "lab.psl";
  CommandResult r = run_command(sanitizer_environment() + kPoems + " calibrate --quick --np 2 --name lab --psl " +
                                psl.string() + " --shape 8,8,4,3,8 --format json" + db);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["machine"], "lab");
  for (const char* p : {"L_ns", "o_ns", "g_ns", "G_ns_per_byte", "O_ns_per_byte", "S_bytes"})
    EXPECT_GE(j[p].get<double>(), 0) << p;
  EXPECT_GT(j["Wg_ns"].get<double>(), 0);
  EXPECT_EQ(j["Wg_shapes"][0]["shape"], "8x8x4x3,kt=8");
  EXPECT_FALSE(j["sizes"].empty());
  // memcpy of 64 MiB: between 0.1 GB/s and 1 TB/s on any host, and in the file.
  EXPECT_GT(j["copy_G_ns_per_byte"].get<double>(), 0.001);
  EXPECT_LT(j["copy_G_ns_per_byte"].get<double>(), 10);
  EXPECT_NE(read_text(psl).find("  param copy_G = "), std::string::npos);

  CommandResult check = run_command(kPoems + " check " + psl.string());
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.out, "OK: 0 models, 3 components, 0 studies\n");  // lab, lab_cpu, lab_hierarchy

  CommandResult machines =
      run_command(kPoems + " db query" + db +
                  " \"SELECT name, provenance, json_extract(parameters, '$.psl_file') AS file FROM machines\" "
                  "--format json");
  ASSERT_EQ(machines.exit_code, 0) << machines.err;
  nlohmann::json m = nlohmann::json::parse(machines.out);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]["name"], "lab");
  EXPECT_EQ(m[0]["provenance"], "calibrated");
  EXPECT_EQ(m[0]["file"], fs::absolute(psl).string());
  CommandResult calibrations = run_command(
      kPoems + " db query" + db + " \"SELECT count(*) AS n FROM calibrations WHERE parameter = 'Wg'\" --format json");
  EXPECT_EQ(nlohmann::json::parse(calibrations.out), nlohmann::json::parse(R"([{"n": 1}])")) << calibrations.out;

  // The written machine composes: a prediction on it with its own Wg.
  CommandResult on = run_command(kPoems + " measure " + kSweep3D + " --set npe_i=4 --set npe_j=4" + kTiny +
                                 " --max-ranks 1 --compare analytic --machine lab --processor lab_cpu --import " +
                                 psl.string() + " --format json" + db);
  EXPECT_EQ(on.exit_code, 1) << on.err;  // not measured (16 processes), but predicted
  nlohmann::json p = nlohmann::json::parse(on.out);
  EXPECT_GT(p["predicted_ns"].get<double>(), 0) << on.out;
}

// The processor[hierarchy] curve: one point per cache level of this host and
// one in DRAM, in the PSL file and the knowledge base; a prediction on it is
// the work times Wg read off the curve at the column's working set.
TEST(CalibrateCommand, WritesTheWorkingSetCurveThatProcessorHierarchyReads) {
  const fs::path dir = fresh_temp_dir("calibrate-hierarchy");
  const std::string db = " --db " + (dir / "kb.db").string();
  const fs::path psl = dir / "lab.psl";
  CommandResult r = run_command(sanitizer_environment() + kPoems + " calibrate --quick --np 2 --name lab --psl " +
                                psl.string() + " --shape 8,8,4,3,8 --format json" + db);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json h = nlohmann::json::parse(r.out)["hierarchy"];
  ASSERT_GE(h["points"].size(), 2u) << h;
  EXPECT_EQ(h["points"].back()["level"], "DRAM");
  EXPECT_EQ(h["points"][0]["level"], "L1");
  EXPECT_NE(h["caches"].get<std::string>().find("L1 "), std::string::npos) << h;
  double last = 0;
  for (const nlohmann::json& point : h["points"]) {
    EXPECT_GT(point["working_set_bytes"].get<double>(), last) << h;
    last = point["working_set_bytes"].get<double>();
    EXPECT_GT(point["Wg_ns"].get<double>(), 0);
    EXPECT_GT(point["Wg_busy_ns"].get<double>(), 0);
  }
  CommandResult stored = run_command(kPoems + " db query" + db +
                                     " \"SELECT count(*) AS n FROM calibrations WHERE parameter LIKE 'Wg[L1 %' OR "
                                     "parameter LIKE 'Wg_busy[DRAM %'\" --format json");
  EXPECT_EQ(nlohmann::json::parse(stored.out), nlohmann::json::parse(R"([{"n": 2}])")) << stored.out;

  // The curve as written (6 significant digits), read back from the PSL file.
  std::ifstream in(psl);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<double> ws, wg;
  for (std::size_t k = 1;; ++k) {
    const std::string at = "param ws_" + std::to_string(k) + " = ";
    const std::size_t p = text.find(at);
    if (p == std::string::npos) break;
    ws.push_back(std::stod(text.substr(p + at.size())));
    const std::string g = "Wg_" + std::to_string(k) + " = ";
    wg.push_back(std::stod(text.substr(text.find(g, p) + g.size())));
  }
  ASSERT_EQ(ws.size(), h["points"].size()) << text;

  // One process, a 40^3 column: working set 8 B * (3 * 40^3 + 3 * (40*4 + 40*4 + 40*40)) = 1,582,080 B.
  const double column = 8.0 * (3 * 64000 + 3 * (160 + 160 + 1600)), work = 64000.0 * 6 * 8 * 2;
  double expected_wg = column <= ws.front() ? wg.front() : wg.back();
  for (std::size_t k = 0; k + 1 < ws.size(); ++k)
    if (column > ws[k] && column <= ws[k + 1])
      expected_wg = wg[k] + (wg[k + 1] - wg[k]) * std::log2(column / ws[k]) / std::log2(ws[k + 1] / ws[k]);
  CommandResult sim = run_command(kPoems + " simulate " + kSweep3D +
                                  " --set npe_i=1 --set npe_j=1 --set it_g=40 --set jt_g=40 --set kt=40 --set mk=4"
                                  " --set mmi=3 --set iterations=2 --set compute=processor[hierarchy] --machine lab"
                                  " --processor lab_hierarchy --import " +
                                  psl.string() + " --format json --no-store");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  // The simulator's clock is in picoseconds: each of the 320 tasks (2 x 8 x 2 x 10) rounds.
  EXPECT_NEAR(nlohmann::json::parse(sim.out)["finish_ns"].get<double>(), work * expected_wg, 320 * 0.001)
      << "Wg " << expected_wg;
}

TEST(CalibrateCommand, BadOptionsAreUsageErrors) {
  CommandResult np = run_command(kPoems + " calibrate --np 1 --no-store");
  EXPECT_EQ(np.exit_code, 2);
  EXPECT_NE(np.err.find("--procs: '1' is out of range; expected an integer in 2..64"), std::string::npos) << np.err;
  CommandResult name = run_command(kPoems + " calibrate --name 9x --no-store");
  EXPECT_EQ(name.exit_code, 2);
  EXPECT_NE(name.err.find("'9x' is not a PSL identifier"), std::string::npos) << name.err;
  CommandResult shape = run_command(kPoems + " calibrate --shape 1,2,3 --no-store");
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_NE(shape.err.find("'1,2,3' is not IT,JT,MK,MMI[,KT]"), std::string::npos) << shape.err;
}

TEST(CalibrateCommand, CachesimNeedsAStudyAndANativeKernel) {
  CommandResult alone = run_command(kPoems + " calibrate --cachesim --no-store");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("--cachesim: needs a specification and --study"), std::string::npos) << alone.err;
  CommandResult kernel =
      run_command(kPoems + " calibrate " + kSweep3D + " --study validation --cachesim --kernel nope --no-store");
  EXPECT_EQ(kernel.exit_code, 2);
  CommandResult shape = run_command(kPoems + " calibrate --cachesim --shape 10,10,5,3 --no-store");
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_NE(shape.err.find("--shape: does not apply with --cachesim"), std::string::npos) << shape.err;
  EXPECT_NE(kernel.err.find("--kernel: processor[cachesim] needs a registered native kernel; 'nope' is not one"),
            std::string::npos)
      << kernel.err;
}

}  // namespace measure_tests
