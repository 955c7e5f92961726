// End-to-end: the message-progress semantics as a setting of the MPI runtime
// component (examples/sweep3d/mpi.psl, `semantics = "matched"`): a study
// varies it, --set overrides it, --semantics wins over both, and a bad value
// is a located PSL error naming the allowed values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "run_command.h"

namespace fs = std::filesystem;

namespace {

const std::string kSpec = std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl";
// The binding of the `semantics` study (examples/sweep3d/sweep3d.psl), for one grid.
const std::string kBinding =
    " --machine Odin --set it_g=40 --set jt_g=40 --set kt=20 --set mk=1 --set mmi=1 --set mm=6 --set iterations=1"
    " --set 'compute=processor[wg]'";

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("poems_semantics_setting_" + std::to_string(::getpid()) + "_" + name)).string();
}

double finish_ns(const CommandResult& r) { return nlohmann::json::parse(r.out)["finish_ns"].get<double>(); }

}  // namespace

// The study's cells are exactly `poems simulate --semantics X` on the same
// binding, and the two semantics differ there (fine blocks on 16 and 64 ranks).
TEST(SemanticsSetting, StudyCellsAreTheSimulationsOfEachSemantics) {
  const std::string db = temp_path("study.db");
  CommandResult run = poems_in_process("run " + kSpec + " --study semantics --format json --db " + db);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["rows"].size(), 6u) << run.out;
  std::map<std::string, std::map<std::string, double>> sim;  // semantics -> grid -> ns
  for (const auto& row : j["rows"]) {
    const auto& b = row["binding"];
    const std::string semantics = b["MPI_simulated.semantics"];  // as PSL writes it, quoted
    const std::string name = semantics == "\"loggopsim\"" ? "loggopsim" : "matched";
    const std::string npe_i = std::to_string(b["npe_i"].get<int>()), npe_j = std::to_string(b["npe_j"].get<int>());
    const double t = row["times_ns"]["simulation[MPI-Sim]"];
    sim[name][npe_i + "x" + npe_j] = t;
    CommandResult one =
        poems_in_process("simulate " + kSpec + kBinding + " --set npe_i=" + npe_i + " --set npe_j=" + npe_j +
                         " --semantics " + name + " --no-store --format json");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(finish_ns(one), t) << row.dump();
  }
  ASSERT_EQ(sim.size(), 2u) << run.out;
  ASSERT_EQ(sim["matched"].size(), 3u) << run.out;
  ASSERT_EQ(sim["loggopsim"].size(), 3u) << run.out;
  // Early messages delay the wavefront under loggopsim (docs/simulator.md).
  EXPECT_GT(sim["loggopsim"]["8x8"], sim["matched"]["8x8"] * 1.2);
  // Stored apart: a second run reuses every cell, each under its semantics.
  CommandResult again = poems_in_process("run " + kSpec + " --study semantics --format json --db " + db);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const nlohmann::json k = nlohmann::json::parse(again.out);
  ASSERT_EQ(k["rows"].size(), j["rows"].size());
  for (std::size_t i = 0; i < k["rows"].size(); ++i) {
    EXPECT_EQ(k["rows"][i]["binding"], j["rows"][i]["binding"]);
    EXPECT_EQ(k["rows"][i]["times_ns"], j["rows"][i]["times_ns"]);
    EXPECT_EQ(k["rows"][i]["breakdown"]["simulation[MPI-Sim]"]["stored"], true);
  }
  EXPECT_EQ(again.err.find("evaluated"), std::string::npos) << again.err;
  fs::remove(db);
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
}

// --set Runtime.semantics selects it for one run; --semantics wins over it.
TEST(SemanticsSetting, SetAndTheCommandLineSwitch) {
  const std::string grid = kBinding + " --set npe_i=8 --set npe_j=8 --no-store --format json";
  CommandResult matched = poems_in_process("simulate " + kSpec + grid);
  CommandResult lgs = poems_in_process("simulate " + kSpec + grid + " --semantics loggopsim");
  CommandResult set = poems_in_process("simulate " + kSpec + grid + " --set 'MPI_simulated.semantics=\"loggopsim\"'");
  CommandResult wins = poems_in_process("simulate " + kSpec + grid +
                                        " --set 'MPI_simulated.semantics=\"loggopsim\"' --semantics matched");
  for (const CommandResult* r : {&matched, &lgs, &set, &wins}) ASSERT_EQ(r->exit_code, 0) << r->err;
  EXPECT_NE(finish_ns(matched), finish_ns(lgs));
  EXPECT_EQ(finish_ns(set), finish_ns(lgs));
  EXPECT_EQ(finish_ns(wins), finish_ns(matched));
  // The table names the semantics the run used.
  CommandResult table =
      poems_in_process("simulate " + kSpec + kBinding + " --set 'MPI_simulated.semantics=\"loggopsim\"' --no-store");
  EXPECT_NE(table.out.find("loggopsim semantics"), std::string::npos) << table.out;
}

// A bad value is an input error at the place it was written, with the
// allowed values: in a study's vary list, and in the component itself.
TEST(SemanticsSetting, ABadValueIsALocatedErrorNamingTheAllowedValues) {
  const std::string dir = temp_path("spec");
  fs::create_directories(dir);
  for (const char* f : {"sweep3d.psl", "machines.psl", "mpi.psl"})
    fs::copy_file(std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/" + f, dir + "/" + f,
                  fs::copy_options::overwrite_existing);
  {
    std::ofstream(dir + "/sweep3d.psl", std::ios::app) << R"(
study lazy {
  model Sweep3D on Odin;
  set it_g = 8, jt_g = 8, kt = 4, mk = 2, iterations = 1;
  set compute = processor[wg];
  vary MPI_simulated.semantics in ["matched", "lazy"];
  compare simulation[MPI-Sim];
}
)";
  }
  CommandResult study = poems_in_process("run " + dir + "/sweep3d.psl --study lazy --no-store");
  EXPECT_EQ(study.exit_code, 1) << study.out << study.err;
  EXPECT_NE(study.err.find("sweep3d.psl:"), std::string::npos) << study.err;
  EXPECT_NE(study.err.find(": error: MPI_simulated.semantics = \"lazy\" is not a message-progress semantics; allowed: "
                           "\"matched\", \"loggopsim\""),
            std::string::npos)
      << study.err;
  EXPECT_NE(study.err.find("  vary MPI_simulated.semantics in [\"matched\", \"lazy\"];"), std::string::npos)
      << study.err;
  EXPECT_NE(study.err.find("^"), std::string::npos) << study.err;

  // In the component: the parameter's declaration, line and column.
  std::string mpi = read_text(dir + "/mpi.psl");
  const std::string declared = "component MPI_simulated in runtime[MPI] {\n  param semantics = ";
  const std::size_t at = mpi.find(declared);
  ASSERT_NE(at, std::string::npos);
  mpi.replace(at + declared.size(), std::string("\"matched\"").size(), "\"loggopsin\"");
  std::ofstream(dir + "/mpi.psl") << mpi;
  const int line = 1 + static_cast<int>(std::count(mpi.begin(), mpi.begin() + static_cast<long>(at), '\n')) + 1;
  CommandResult decl = poems_in_process("simulate " + dir + "/sweep3d.psl" + kBinding + " --no-store");
  EXPECT_EQ(decl.exit_code, 1) << decl.err;
  EXPECT_NE(decl.err.find("mpi.psl:" + std::to_string(line) + ":21: error: MPI_simulated.semantics = \"loggopsin\""),
            std::string::npos)
      << decl.err;
  EXPECT_NE(decl.err.find("did you mean 'loggopsim'"), std::string::npos) << decl.err;
  // --semantics does not hide a bad specification: the file is read first.
  CommandResult over =
      poems_in_process("simulate " + dir + "/sweep3d.psl" + kBinding + " --semantics matched --no-store");
  EXPECT_EQ(over.exit_code, 1) << over.err;
  // Other paradigms compose other runtime components and are not affected.
  CommandResult analytic = poems_in_process("analyze " + dir + "/sweep3d.psl" + kBinding + " --no-store");
  EXPECT_EQ(analytic.exit_code, 0) << analytic.err;
  // LogGOPSim's rendezvous has no handshake: the two together are refused at the setting.
  mpi.replace(at + declared.size(), std::string("\"loggopsin\"").size(), "\"matched\"");
  // (The send profile's handshake = false turned on: recv and collective
  // profiles do not name it, so nothing disagrees.)
  const std::string profile = "evaluation = simulation[MPI-Sim]; handshake = false;";
  const std::size_t hs = mpi.find(profile);
  ASSERT_NE(hs, std::string::npos);
  mpi.replace(hs + profile.size() - std::string("false;").size(), std::string("false").size(), "true");
  std::ofstream(dir + "/mpi.psl") << mpi;
  CommandResult both = poems_in_process("simulate " + dir + "/sweep3d.psl" + kBinding +
                                        " --set 'MPI_simulated.semantics=\"loggopsim\"' --no-store");
  EXPECT_EQ(both.exit_code, 1) << both.err;
  EXPECT_NE(both.err.find("(command line):"), std::string::npos) << both.err;
  EXPECT_NE(both.err.find("with the rendezvous handshake"), std::string::npos) << both.err;
  fs::remove_all(dir);
}
