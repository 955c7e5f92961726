// `poems calibrate --network comet` end to end (docs/comet.md): CoMet's echo
// and pairwise under mpirun, the trains' o and g, the fit, the PSL machine,
// the knowledge base, and `poems comet` predicting on the machine written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "run_command.h"

namespace fs = std::filesystem;

namespace comet_calibrate_tests {
namespace {

const std::string kPoems = POEMS_BINARY;

TEST(CometCalibrate, BadNetworkIsAUsageErrorNamingTheAllowedValues) {
  const CommandResult r = run_command(kPoems + " calibrate --network pingpong --no-store");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--network: 'pingpong' is not allowed; allowed: loggops, comet"), std::string::npos) << r.err;
  const CommandResult sizes = run_command(kPoems + " calibrate --network comet --sizes 0,17M --no-store");
  EXPECT_EQ(sizes.exit_code, 2) << sizes.err;
  EXPECT_NE(sizes.err.find("--sizes: '17M' is not allowed; allowed: 1 to 64 sizes in bytes from 0 to 16M"),
            std::string::npos)
      << sizes.err;
  const CommandResult zero = run_command(kPoems + " calibrate --network comet --sizes 0 --no-store");
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_NE(zero.err.find("--sizes: '0' is not allowed with --network comet"), std::string::npos) << zero.err;
}

TEST(CometCalibrate, QuickFitsCometsEchoAndPairwiseAndWritesTheMachine) {
  if (::access(POEMS_MPIRUN, X_OK) != 0) GTEST_SKIP() << "no mpirun";
  const fs::path dir = fresh_temp_dir("comet_calibrate");
  const std::string db = " --db " + (dir / "kb.db").string();
  const fs::path psl = dir / "lab.psl";
  const CommandResult r =
      run_command(sanitizer_environment() + kPoems + " calibrate --network comet --quick --np 2 --name lab --psl " +
                  psl.string() + " --shape 8,8,4,3,8 --format json" + db);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["network"], "comet");
  const nlohmann::json& comet = j["comet"];
  // 0 B and the powers of 2 from 1 B to 1 MiB.
  ASSERT_EQ(comet["points"].size(), 22u) << comet;
  EXPECT_EQ(comet["points"][0]["bytes"], 0);
  EXPECT_EQ(comet["points"][21]["bytes"], 1048576);
  EXPECT_NE(comet["command"].get<std::string>().find("--kernels echo"), std::string::npos) << comet["command"];
  const double L = j["L_ns"], o = j["o_ns"], G = j["G_ns_per_byte"], O = j["O_ns_per_byte"], S = j["S_bytes"];
  for (const char* p : {"L_ns", "o_ns", "g_ns", "G_ns_per_byte", "O_ns_per_byte"})
    EXPECT_GE(j[p].get<double>(), 0) << p;
  EXPECT_LE(O, G);
  // S is the last size of the echo's first regime; the model columns are the
  // machine's closed forms at each size.
  EXPECT_EQ(S, comet["echo_regimes"][0][1].get<double>());
  for (const nlohmann::json& p : comet["points"]) {
    const double s = p["bytes"], per_byte = std::max(0.0, s - 1);
    EXPECT_GT(p["echo_ns"].get<double>(), 0) << p;
    EXPECT_GT(p["pairwise_ns"].get<double>(), 0) << p;
    EXPECT_EQ(p["regime"], s > S ? "rendezvous" : "eager") << p;
    const double echo = (s > S ? 2 : 1) * L + 2 * o + per_byte * std::max(O, G);
    EXPECT_NEAR(p["model_echo_ns"].get<double>(), echo, 1e-6 * echo) << p;
    const double pairwise = echo + std::max(0.0, per_byte * O - L);
    EXPECT_NEAR(p["model_pairwise_ns"].get<double>(), pairwise, 1e-6 * pairwise) << p;
    EXPECT_NEAR(p["echo_residual"].get<double>(), (echo - p["echo_ns"].get<double>()) / p["echo_ns"].get<double>(),
                1e-6)
        << p;
  }
  EXPECT_FALSE(comet["eager"].is_null()) << comet;

  const CommandResult check = run_command(kPoems + " check " + psl.string());
  EXPECT_EQ(check.exit_code, 0) << check.err;
  const CommandResult stored = run_command(
      kPoems + " db query" + db +
      " \"SELECT json_extract(m.parameters, '$.network_benchmark') AS network, (SELECT count(*) FROM calibrations c "
      "WHERE c.parameter LIKE 'echo[%' AND c.method LIKE 'CoMet echo%') AS echoes FROM machines m\" --format json");
  ASSERT_EQ(stored.exit_code, 0) << stored.err;
  const nlohmann::json m = nlohmann::json::parse(stored.out);
  ASSERT_EQ(m.size(), 1u) << m;
  EXPECT_EQ(m[0]["echoes"], 22);
  EXPECT_NE(m[0]["network"].get<std::string>().find("CoMet"), std::string::npos) << m;

  // The report card's machine: poems comet predicts on it.
  const CommandResult card = run_command(kPoems + " comet --import " + psl.string() +
                                         " --machine lab --kernels echo --sizes 8 --reps 3 --no-store --format json");
  ASSERT_EQ(card.exit_code, 0) << card.err;
  const nlohmann::json c = nlohmann::json::parse(card.out);
  EXPECT_GT(c["kernels"][0]["points"][0]["direct"]["median_ns"].get<double>(), 0) << c;
}

}  // namespace
}  // namespace comet_calibrate_tests
