// `poems comet` (docs/comet.md), in process: on a flat LogGOPS machine the
// direct execution of CoMet's kernels and their closed forms are the same
// messages, so they agree to the nanosecond; the JSON a user reads, the
// bad parameters, the knowledge base, and (where mpirun runs) a measurement.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "comet_json.h"

namespace {

TEST(CometCommand, EchoAndPairwiseEqualTheirClosedFormOnAFlatMachine) {
  const nlohmann::json doc = run_json("--kernels echo,pairwise --sizes 8,1K --reps 3" + kFlat);
  EXPECT_FALSE(doc.at("measured").get<bool>());
  for (const std::string name : {"echo", "pairwise"}) {
    const nlohmann::json& k = kernel(doc, name);
    ASSERT_EQ(k.at("points").size(), 2u) << k.dump();
    for (const nlohmann::json& p : k.at("points")) {
      const double bytes = p.at("bytes").get<double>();
      const double expected = 7000.0 + bytes - 1.0;  // 7007 ns at 8 B, 8023 ns at 1 KiB
      EXPECT_EQ(p.at("direct").at("median_ns").get<double>(), expected) << name << ' ' << p.dump();
      EXPECT_EQ(p.at("closed_form").at("ns").get<double>(), expected) << name << ' ' << p.dump();
      EXPECT_FALSE(p.contains("measured"));
    }
  }
}

TEST(CometCommand, RendezvousAddsTheSyncToEchoInBothPredictions) {
  // Above S = 1 KiB the request reaches the receiver first: + L.
  const nlohmann::json doc = run_json("--kernels echo --sizes 4K --reps 3 -S 1KiB" + kFlat);
  const nlohmann::json& p = kernel(doc, "echo").at("points").at(0);
  EXPECT_EQ(p.at("closed_form").at("ns").get<double>(), 7000.0 + 4095.0 + 5000.0) << p.dump();
  EXPECT_EQ(p.at("direct").at("median_ns").get<double>(), p.at("closed_form").at("ns").get<double>()) << p.dump();
}

TEST(CometCommand, CollectivesEqualTheirClosedFormsOnAFlatMachine) {
  for (const std::string procs : {"2", "4", "8"}) {
    const nlohmann::json doc =
        run_json("--kernels broadcast,allreduce,barrier --sizes 8,1K,256K --reps 3 --procs " + procs + kFlat);
    for (const std::string name : {"broadcast", "allreduce", "barrier"}) {
      const nlohmann::json& k = kernel(doc, name);
      ASSERT_FALSE(k.at("points").empty()) << k.dump();
      EXPECT_TRUE(k.contains("closed_form")) << k.dump();
      // The broadcast ends on the ranks at different times: the barrier before
      // the next repetition lets the last rank out L = 5 us before the root,
      // and CoMet times each rank from its own exit (docs/comet.md).
      const double skew = name == "broadcast" ? 5000.0 : 0.0;
      for (const nlohmann::json& p : k.at("points"))
        EXPECT_EQ(p.at("direct").at("median_ns").get<double>(), p.at("closed_form").at("ns").get<double>() + skew)
            << procs << " ranks, " << name << ' ' << p.dump();
    }
  }
}

TEST(CometCommand, PredictsANamedMachineWithoutMeasuringIt) {
  // Odin (examples/sweep3d/machines.psl): L 5.3 us, o 2.3 us, G 2.5 ns/B, O 1 ns/B:
  // 2o + L + (s-1)max{O, G} = 9917.5 ns at 8 B, 12457.5 ns at 1 KiB.
  const CommandResult r =
      poems_in_process("comet --machine Odin --kernels echo,pairwise --sizes 8,1K --reps 3 --no-store --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_FALSE(doc.at("measured").get<bool>());  // Odin is not this host
  EXPECT_NE(doc.at("machine").get<std::string>().find("Odin"), std::string::npos);
  for (const std::string name : {"echo", "pairwise"}) {
    const nlohmann::json& points = kernel(doc, name).at("points");
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[0].at("bytes"), 8);
    EXPECT_EQ(points[0].at("direct").at("median_ns").get<double>(), 9917.5) << points.dump();
    EXPECT_EQ(points[0].at("closed_form").at("ns").get<double>(), 9917.5) << points.dump();
    EXPECT_EQ(points[1].at("bytes"), 1024);
    EXPECT_EQ(points[1].at("direct").at("median_ns").get<double>(), 12457.5) << points.dump();
    EXPECT_EQ(points[1].at("closed_form").at("ns").get<double>(), 12457.5) << points.dump();
  }
}

TEST(CometCommand, KernelsWithoutAClosedFormSayWhy) {
  const nlohmann::json doc = run_json("--kernels guard,transpose,contention --sizes 8 --reps 2" + kFlat);
  for (const std::string name : {"guard", "transpose", "contention"}) {
    const nlohmann::json& k = kernel(doc, name);
    EXPECT_EQ(k.at("note"), "no closed form for this kernel") << k.dump();
    ASSERT_EQ(k.at("points").size(), 1u);
    EXPECT_GT(k.at("points")[0].at("direct").at("median_ns").get<double>(), 0.0);
  }
}

TEST(CometCommand, BadParametersAreUsageErrorsNamingTheParameter) {
  struct Case {
    std::string args, option, value;
  };
  const Case cases[] = {
      {"--kernels echo,pingpong", "--kernels", "'pingpong' is not a CoMet kernel"},
      {"--kernels ''", "--kernels", "allowed: all"},
      {"--sizes 8,17M", "--sizes", "'17M' is not allowed; allowed: 1 to 64 sizes in bytes from 0 to 16M"},
      {"--sizes 8,1G", "--sizes", "'1G' is not allowed"},
      {"--sizes 8,-1", "--sizes", "'-1' is not allowed"},
      {"--procs 0", "--procs", "'0' is not allowed; allowed: an integer from 1 to 1024"},
      {"--procs 2000", "--procs", "an integer from 1 to 1024"},
      {"--reps 0", "--reps", "'0' is not allowed; allowed: an integer from 1 to 100000"},
      {"--reps abc", "--reps", "'abc' is not allowed; allowed: an integer from 1 to 100000"},
      {"--reps 100001", "--reps", "'100001' is not allowed; allowed: an integer from 1 to 100000"},
      {"--reps -3", "--reps", "allowed: an integer from 1 to 100000"},
      {"--reps 2.5", "--reps", "'2.5' is not allowed"},
  };
  for (const Case& c : cases) {
    const CommandResult r = poems_in_process("comet --no-measure --no-store " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.option + ": "), std::string::npos) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.value), std::string::npos) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args << ": " << r.out;
  }
}

TEST(CometCommand, StoresEveryFigureAndFindsItAgain) {
  const std::filesystem::path db =
      std::filesystem::temp_directory_path() / ("poems_comet_test_" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(db);
  const std::string args =
      "comet --kernels echo,barrier --sizes 8,1K --reps 2 -L 5us -o 1us -g 2us -G 1ns/B "
      "--no-measure --format json --db " +
      db.string();
  // echo: 2 sizes x (direct + simulation + closed form); barrier: one line x 3.
  const CommandResult first = poems_in_process(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(nlohmann::json::parse(first.out).at("stored"), 9) << first.out;
  const CommandResult again = poems_in_process(args);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out).at("already_stored"), 9) << again.out;
  const CommandResult runs = poems_in_process("db runs --db " + db.string() + " --format csv");
  EXPECT_NE(runs.out.find("comet.echo"), std::string::npos) << runs.out << runs.err;
  EXPECT_NE(runs.out.find("analytic[closed-form]"), std::string::npos) << runs.out;
  EXPECT_NE(runs.out.find("simulation[direct]"), std::string::npos) << runs.out;
  EXPECT_NE(runs.out.find("simulation[MPI-Sim]"), std::string::npos) << runs.out;
  std::filesystem::remove(db);
}

TEST(CometCommand, TextAndCsvAndPlots) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("poems_comet_plots_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string machine =
      " --kernels echo,barrier --sizes 8,1K --reps 2 -L 5us -o 1us -g 2us -G 1ns/B "
      "--no-measure --no-store";
  const CommandResult text = poems_in_process("comet" + machine + " --plot " + dir.string());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("echo  (closed form: o + L + max{(s-1)O, (s-1)G} + o"), std::string::npos) << text.out;
  // size, direct, simulation, closed form.
  EXPECT_NE(text.out.find("\n  8 B    7007.0  7007.0      7007.0\n"), std::string::npos) << text.out;
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "comet-echo.png")) << text.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "comet-barrier.png")) << text.err;
  EXPECT_GT(std::filesystem::file_size(dir / "comet-echo.png"), 1000u);
  std::filesystem::remove_all(dir);
  const CommandResult csv = poems_in_process("comet" + machine + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("kernel,bytes,procs,reps,measured_median_ns,", 0), 0u) << csv.out;
  // measured (3 empty), direct, its error, the simulation, its error, the closed form, its error.
  EXPECT_NE(csv.out.find("\necho,8,2,2,,,,7007.000,,7007.000,,7007.000,\n"), std::string::npos) << csv.out;
}

TEST(CometCommand, MeasuresThisHostUnderMpirun) {
  if (::access(POEMS_MPIRUN, X_OK) != 0) GTEST_SKIP() << "no mpirun";
  // Host times vary: only that the run measured every size, in order.
  const nlohmann::json doc = run_json("--kernels echo,broadcast --sizes 8,1K --reps 3 --no-store --format json");
  EXPECT_TRUE(doc.at("measured").get<bool>());
  for (const std::string name : {"echo", "broadcast"}) {
    const nlohmann::json& points = kernel(doc, name).at("points");
    ASSERT_EQ(points.size(), 2u);
    for (const nlohmann::json& p : points) {
      const nlohmann::json& m = p.at("measured");
      EXPECT_GT(m.at("median_ns").get<double>(), 0.0);
      EXPECT_LE(m.at("min_ns").get<double>(), m.at("median_ns").get<double>());
      EXPECT_LE(m.at("median_ns").get<double>(), m.at("max_ns").get<double>());
      EXPECT_TRUE(p.at("direct").contains("error_pct"));
    }
  }
}

}  // namespace
