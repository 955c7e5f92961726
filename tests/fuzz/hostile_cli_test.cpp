// The reproducers of issue 25 that need the real `poems`: command injection
// through gnuplot, exit codes (1, never 0 with a wrong result, never a
// crash), bounded output, the global limits options.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run_command.h"

namespace fs = std::filesystem;

namespace {

const std::string kPoems = POEMS_BINARY;
const std::string kSource = POEMS_SOURCE_DIR;

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("poems_hostile_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  CommandResult poems(const std::string& args) { return run_command(kPoems + " " + args); }
  fs::path dir_;
};

// Two processes exchange one message of `size` bytes, with a machine.
std::string message_spec(const std::string& size, const std::string& params = "P = 2, n = 8, r = 1") {
  return "model M {\n  param " + params +
         ";\n  taskgraph g {\n    processes { [p] : 0 <= p < P };\n"
         "    if p == 0 { send to [1] size " +
         size + "; } else { recv from [0] size " + size +
         "; }\n  }\n}\n"
         "component Net in hardware[network] {\n  param L = 2us, o = 1us, g = 1us, G = 0.5ns/B, O = 0ns/B, S = 64KiB;\n"
         "  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }\n"
         "            transaction message(bytes: bytes) -> time; protocol call_return; }\n}\n"
         "component Cpu in hardware[processor] {\n  param Wg = 50ns;\n"
         "  accepts { profile { evaluation = processor[wg]; Wg = Wg; }\n"
         "            transaction execute_code_block(work: real) -> time; protocol call_return; }\n}\n";
}

}  // namespace

// ---------------------------------------------------------------- injection

TEST_F(Hostile, AStringValueCannotRunGnuplotCommands) {
  // Issue 25: the value "x\ne\nsystem \"touch FILE\"\n" in a varied string
  // parameter created FILE when the study was plotted.
  const fs::path pwned = dir_ / "PWNED";
  const std::string spec = write(
      "inj.psl", "import \"" + kSource +
                     "/examples/sweep3d/sweep3d.psl\";\n"
                     "component Tagged in hardware[network] {\n"
                     "  param L = 5.3us, o = 2.3us, g = 2us, G = 2.5ns/B, O = 1ns/B, S = 32768B, label = \"plain\";\n"
                     "  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }\n"
                     "            transaction message(bytes: bytes) -> time; protocol call_return; }\n}\n"
                     "study inj {\n  model Sweep3D on Tagged;\n"
                     "  set it_g = 12, jt_g = 12, kt = 12, mk = 4, mmi = 3, mm = 6, iterations = 1;\n"
                     "  set compute = processor[wg];\n"
                     "  vary Tagged.label in [\"x\\ne\\nsystem \\\"touch " +
                     pwned.string() + "\\\"\\n'q' \\\\ \\u0007 `touch " + pwned.string() +
                     "`\", \"y\"];\n  vary (npe_i, npe_j) in [(1, 1), (2, 2)];\n"
                     "  compare analytic[LogGP];\n  report time;\n}\n");
  const fs::path svg = dir_ / "out.svg";
  CommandResult r = poems("run " + quote(spec) + " --study inj --no-store --plot " + quote(svg.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(pwned)) << "gnuplot ran a command from the study";
  std::ifstream in(svg);
  std::stringstream picture;
  picture << in.rdbuf();
  // The title is drawn as text, its newlines spelled out.
  EXPECT_NE(picture.str().find("Tagged.label=\"x\\x0ae\\x0asystem"), std::string::npos)
      << picture.str().substr(0, 2000);
  // The terminal table does not carry raw control characters either.
  EXPECT_EQ(r.out.find('\x07'), std::string::npos);
}

TEST_F(Hostile, APlotPathWithNewlinesIsOnlyAName) {
  // Issue 25: a newline in the --plot path ran gnuplot commands.
  const fs::path pwned = dir_ / "PWNED2";
  const std::string name = "o\nsystem \"touch " + pwned.filename().string() + "\"\n'.svg";
  const std::string spec = kSource + "/tests/compiler/studies/sweep3d_small.psl";
  CommandResult r = run_command("cd " + quote(dir_.string()) + " && " + kPoems + " run " + quote(spec) +
                                " --study latency_small --no-store --plot " + quote(name));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(pwned));
  EXPECT_TRUE(fs::exists(dir_ / name));
  EXPECT_NE(r.err.find("plot written to o\\nsystem"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------- wrong results

TEST_F(Hostile, BadMessageSizesAreLocatedInputErrorsInEveryCommand) {
  // Issue 25: `--set n=-8` gave p2p_bytes 18446744073709551592 and a 15 us run, exit 0.
  const std::string spec = write("sz.psl", message_spec("n * 8"));
  for (const std::string& command : {"taskgraph " + spec + " --stats", "simulate " + spec + " --no-store",
                                     "analyze " + spec + " --method critical-path --no-store"}) {
    CommandResult r = poems(command + " --set n=-8");
    EXPECT_EQ(r.exit_code, 1) << command << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("sz.psl:5:17: send size 'n * 8' is -64 with this binding"), std::string::npos)
        << command << ": " << r.err;
    EXPECT_EQ(r.out.find("18446744073709551"), std::string::npos) << r.out;
  }
  // `size 2^63`, `size 1e300`, `floor(8/r)` and `8 % r` at r = 0 became 0 or 2^63 bytes.
  for (const char* size : {"pow(2, 63 * (1 - r))", "1e300 * (1 - r) + 8", "floor(8 / r)", "8 % r"}) {
    CommandResult r = poems("simulate " + write("s.psl", message_spec(size)) + " --set r=0 --no-store");
    EXPECT_EQ(r.exit_code, 1) << size << ": " << r.err;
    EXPECT_NE(r.err.find("a message size must be a whole number of bytes from 0 to 2^53 - 1"), std::string::npos)
        << size << ": " << r.err;
  }
  // Constants the checker refuses before anything runs.
  CommandResult constant = poems("check " + write("c.psl", message_spec("pow(2, 63)")));
  EXPECT_EQ(constant.exit_code, 1);
  EXPECT_NE(constant.err.find("c.psl:5:34: error: send size is 9.22337203685e+18; sizes must be below 2^53 bytes"),
            std::string::npos)
      << constant.err;
}

TEST_F(Hostile, ErrorsMetWhileSimulatingAreInputErrorsNotAborts) {
  // A collective root that leaves the process set only in the third iteration.
  const std::string spec = write("root.psl",
                                 "model M {\n  param P = 2;\n  taskgraph g {\n    processes { [p] : 0 <= p < P };\n"
                                 "    for k in 0 .. 3 { bcast size 8 root k; }\n  }\n}\n" +
                                     message_spec("8").substr(message_spec("8").find("component Net")));
  CommandResult r = poems("simulate " + spec + " --no-store");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("root.psl:5:23: bcast root 'k' is 2 with this binding; the root must be a rank from 0 to 1"),
            std::string::npos)
      << r.err;
}

TEST_F(Hostile, MachineParametersOutOfRangeAreLocated) {
  // Issue 25: `L = 1e18us` said "out of range" without a location or the range.
  std::string text = message_spec("8");
  text.replace(text.find("L = 2us"), 7, "L = 1e18us");
  const std::string spec = write("big.psl", text);
  CommandResult check = poems("check " + spec);
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_NE(check.err.find("big.psl:9:13: error: network parameter 'L' of 'Net' is 1e+21ns; it must be from 0 to "
                           "9e+15ns"),
            std::string::npos)
      << check.err;
  CommandResult set = poems("simulate " + write("ok.psl", message_spec("8")) + " --set Net.L=1e18us --no-store");
  EXPECT_EQ(set.exit_code, 1);
  EXPECT_NE(set.err.find("ok.psl:9:9: machine parameter Net.L = 1e+21ns is out of range; it must be from 0 to "
                         "9e+15ns"),
            std::string::npos)
      << set.err;
}

// ---------------------------------------------------------------- resources

TEST_F(Hostile, ABillionProcessesAreRefusedBeforeAllocating) {
  // Issue 25: P = 10^9 aborted on bad_alloc after 8-18 GB.
  const std::string spec = write("p.psl", message_spec("8", "P = 1000000000, n = 8, r = 1"));
  CommandResult r = poems("--memory-limit 4GiB taskgraph " + spec + " --stats");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("instantiating 1000000000 processes of model M"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than the memory limit of 4.0 GiB (--memory-limit)"), std::string::npos) << r.err;
  CommandResult ranks = poems("taskgraph " + spec + " --stats --set P=2147483648");
  EXPECT_EQ(ranks.exit_code, 1);
  EXPECT_NE(ranks.err.find("at most 2^31 - 1 are supported"), std::string::npos) << ranks.err;
  EXPECT_EQ(poems("--memory-limit lots taskgraph " + spec + " --stats").exit_code, 2);
}

TEST_F(Hostile, ATrillionIterationLoopStopsAtOnce) {
  const std::string spec = write("loop.psl",
                                 "model M {\n  param P = 2;\n  taskgraph g {\n    processes { [p] : 0 <= p < P };\n"
                                 "    for k in 1 .. 1e12 { barrier; }\n  }\n}\n" +
                                     message_spec("8").substr(message_spec("8").find("component Net")));
  for (const char* command : {"taskgraph --stats", "simulate --no-store"}) {
    const std::string c(command);
    const std::string sub = c.substr(0, c.find(' ')), rest = c.substr(c.find(' '));
    CommandResult r = poems(sub + " " + spec + rest);
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_NE(r.err.find("loop.psl:5:5: loop 'for k in 1 .. 1000000000000' would run 1000000000000 times"),
              std::string::npos)
        << r.err;
  }
  // --limit raises it (here: lowers it, to show the option reaches the instantiation).
  CommandResult lowered = poems("--limit loop-iterations=10 taskgraph " +
                                write("ten.psl",
                                      "model M {\n  taskgraph g {\n    processes { [p] : 0 <= p < 2 };\n"
                                      "    for k in 1 .. 11 { barrier; }\n  }\n}\n") +
                                " --stats");
  EXPECT_EQ(lowered.exit_code, 1);
  EXPECT_NE(lowered.err.find("the limit is 10 iterations"), std::string::npos) << lowered.err;
  EXPECT_EQ(poems("--limit no-such-limit=3 check " + spec).exit_code, 2);
}

TEST_F(Hostile, DiagnosticsOutputIsBounded) {
  // Issue 25: 100,000 `$` printed 14 GB; a 20 KB one-line file 300 MB.
  CommandResult dollars = poems("check " + write("d.psl", std::string(100000, '$')));
  EXPECT_EQ(dollars.exit_code, 1);
  EXPECT_LT(dollars.err.size(), 8000u);
  EXPECT_NE(dollars.err.find("100001 errors generated."), std::string::npos) << dollars.err.substr(0, 400);
  CommandResult three = poems("--max-errors 3 check " + write("d3.psl", std::string(100, '$')));
  EXPECT_EQ(std::count(three.err.begin(), three.err.end(), '^'), 3);
  std::string line = "model M { param ";
  for (int i = 0; i < 2000; ++i) line += "a" + std::to_string(i) + " = 1us + 8KB, ";
  line += "z = 1; }";
  CommandResult wide = poems("check " + write("w.psl", line));
  EXPECT_EQ(wide.exit_code, 1);
  EXPECT_LT(wide.err.size(), 8000u) << wide.err.size();
  CommandResult chain = poems("check " + write(
                                             "c.psl", "model M { param P = 1" + [] {
                                               std::string s;
                                               for (int i = 0; i < 300000; ++i) s += "+1";
                                               return s;
                                             }() + "; }"));
  EXPECT_EQ(chain.exit_code, 1);  // not a SIGSEGV (139)
  EXPECT_NE(chain.err.find("expression nested 300000 operations deep; the limit is 1000"), std::string::npos)
      << chain.err.substr(0, 300);
}

// ---------------------------------------------------------------- second round (issue 44)

TEST_F(Hostile, AVeryLongSetNameIsAUsageError) {
  // Issue 44: a 30,000-character --set name ended in SIGSEGV (std::regex
  // recursed once per character); 10,000 was a clean usage error.
  const std::string spec = write("ok.psl", message_spec("8"));
  for (std::size_t length : {300u, 30000u, 100000u}) {
    CommandResult r = poems("simulate " + spec + " --no-store --set " + std::string(length, 'a') + "=1");
    EXPECT_EQ(r.exit_code, 2) << length << ": " << r.err.substr(0, 300);
    EXPECT_NE(r.err.find("is " + std::to_string(length) + " characters long; a name has at most 256"),
              std::string::npos)
        << r.err.substr(0, 300);
  }
  CommandResult value = poems("simulate " + spec + " --no-store --set n=" + std::string(5000, '1'));
  EXPECT_EQ(value.exit_code, 2);
  EXPECT_NE(value.err.find("--set n: the value is 5000 bytes long; a value has at most 4096"), std::string::npos)
      << value.err.substr(0, 300);
  // The recommender's A..B ranges were a regex too.
  CommandResult range =
      poems("recommend " + spec + " --no-store --vary n=" + std::string(50000, '1') + ".." + std::string(50000, '2'));
  EXPECT_EQ(range.exit_code, 2) << range.err.substr(0, 300);
}

TEST_F(Hostile, DepthLimitsCannotBeRaisedPastTheStack) {
  // Issue 44: --limit expression-depth=1000000 on a 300,000-term chain turned
  // the located error back into a stack overflow.
  std::string chain = "p";
  for (int i = 0; i < 300000; ++i) chain += " + p";
  std::string text = message_spec("n");
  text.replace(text.find("send to [1] size n"), 18, "send to [1] size " + chain);
  const std::string spec = write("deep.psl", text);
  CommandResult raised = poems("--limit expression-depth=1000000 check " + spec);
  EXPECT_EQ(raised.exit_code, 2) << raised.err.substr(0, 300);
  EXPECT_NE(raised.err.find("--limit: expression-depth=1000000 is beyond what the evaluation's stack holds; it must be "
                            "from 1 to 10000"),
            std::string::npos)
      << raised.err.substr(0, 300);
  CommandResult nesting = poems("--limit nesting=100000 check " + spec);
  EXPECT_EQ(nesting.exit_code, 2);
  EXPECT_NE(nesting.err.find("it must be from 1 to 2000"), std::string::npos) << nesting.err.substr(0, 300);
  EXPECT_NE(poems("--limit =3 check " + spec).err.find("'=3' names no limit of docs/limits.md"), std::string::npos);
  for (const char* bad : {"expression-depth=-5", "expression-depth=99999999999999999999999", "tokens="}) {
    CommandResult r = poems(std::string("--limit ") + bad + " check " + spec);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("is not NAME=N"), std::string::npos) << bad << ": " << r.err.substr(0, 300);
  }
  // At the highest limit a chain that deep goes through every stage: each
  // walk after parsing runs on the command's large stack.
  std::string deep = "p";
  for (int i = 0; i < 9999; ++i) deep += " + p";
  text = message_spec("n");
  text.replace(text.find("send to [1] size n"), 18, "send to [1] size " + deep);
  const std::string at_limit = write("limit.psl", text);
  for (const char* command : {"check", "compile", "taskgraph", "simulate --no-store", "analyze --no-store"}) {
    const std::string c(command);
    const std::size_t space = c.find(' ');
    CommandResult r = poems("--limit expression-depth=10000 " + c.substr(0, space) + " " + at_limit +
                            (space == std::string::npos ? "" : c.substr(space)));
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err.substr(0, 300);
  }
  // Rank 0 sends 8 + 0 * 10000 bytes: the deep size evaluated, not dropped.
  CommandResult sim = poems("--limit expression-depth=10000 simulate " + at_limit + " --no-store --format json");
  EXPECT_NE(sim.out.find("\"messages\": 1"), std::string::npos) << sim.out.substr(0, 400);
}

TEST_F(Hostile, EagerLimitIsRangeCheckedOnEveryPath) {
  // Issue 44: S = 2e19 B through --set simulated with S = 0 B and stored it;
  // values between 2^53 and 1.8e19 were taken as given.
  const std::string spec = write("ok.psl", message_spec("8"));
  for (const char* value : {"2e19B", "1e300B", "9007199254740992B"}) {
    CommandResult r = poems("simulate " + spec + " --set Net.S=" + value + " --no-store");
    EXPECT_EQ(r.exit_code, 1) << value << ": " << r.err;
    EXPECT_NE(r.err.find("machine parameter Net.S = "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("is out of range; it must be from 0 to 9007199254740991B (2^53 - 1)"), std::string::npos)
        << r.err;
  }
  CommandResult largest = poems("simulate " + spec + " --set Net.S=9007199254740991B --no-store --format json");
  EXPECT_EQ(largest.exit_code, 0) << largest.err;
  for (const char* value : {"2e19", "1e300B", "9007199254740992", "1.5"}) {
    CommandResult r = poems(std::string("simulate --collective bcast --procs 4 --size 8 --no-store -S ") + value);
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.err;
    EXPECT_NE(r.err.find("-S: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("0..9007199254740991 (2^53 - 1"), std::string::npos) << r.err;
  }
  // In a study's `set`, located at the study.
  std::string text = message_spec("8") +
                     "study s {\n  model M on Net;\n  set Net.S = 2e19B;\n  compare "
                     "simulation[MPI-Sim];\n  report time;\n}\n";
  CommandResult study = poems("simulate " + write("study.psl", text) + " --study s --no-store");
  EXPECT_EQ(study.exit_code, 1) << study.err;
  EXPECT_NE(study.err.find("machine parameter Net.S = 2e+19B is out of range"), std::string::npos) << study.err;
}

TEST_F(Hostile, StringParametersAreInEveryRunKey) {
  // Issue 44: `simulate --study` and `analyze --study` of a model with a
  // string parameter failed with "a run key cannot hold NaN or infinity";
  // `poems run` stored every value of it as 0, so "a" and "b" were one run.
  std::string text = message_spec("8", "P = 2, n = 8, r = 1, label = \"plain\"") +
                     "study s {\n  model M on Net;\n  vary label in [\"a\", \"b\"];\n  compare "
                     "simulation[MPI-Sim];\n  report time;\n}\n";
  const std::string spec = write("label.psl", text);
  const std::string db = (dir_ / "kb.db").string();
  CommandResult run = poems("run " + spec + " --study s --db " + db);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(poems("simulate " + spec + " --study s --set label='\"x\"' --db " + db).exit_code, 0);
  EXPECT_EQ(poems("analyze " + spec + " --study s --set label='\"y\"' --db " + db).exit_code, 0);
  EXPECT_EQ(poems("simulate " + spec + " --db " + db).exit_code, 0);  // the default, "plain"
  CommandResult runs = poems("db runs --format json --db " + db);
  for (const char* label : {"\"label\": \"\\\"a\\\"\"", "\"label\": \"\\\"b\\\"\"", "\"label\": \"\\\"x\\\"\"",
                            "\"label\": \"\\\"y\\\"\"", "\"label\": \"\\\"plain\\\"\""})
    EXPECT_NE(runs.out.find(label), std::string::npos) << label << "\n" << runs.out.substr(0, 2000);
  EXPECT_EQ(runs.out.find("\"label\": 0"), std::string::npos);
  EXPECT_NE(runs.out.find("\"id\": 5"), std::string::npos);
}

TEST_F(Hostile, SimulateAndAnalyzeStopAtTheirTimeout) {
  // Issue 44: simulate and analyze had no --timeout; an input that blocks or
  // a model far larger than meant ran until killed by hand. Four million
  // processes of a dissemination allreduce take seconds; the limit is 0.2 s.
  for (const char* command : {"simulate", "analyze --method critical-path"}) {
    const auto start = std::chrono::steady_clock::now();
    CommandResult r =
        poems(std::string(command) + " --collective allreduce --procs 4194304 --size 8 --no-store --timeout 0.2");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exit_code, 3) << command << ": " << r.err << " after " << seconds << " s";
    const std::string name = std::string(command).substr(0, std::string(command).find(' '));
    EXPECT_NE(r.err.find("poems: error: poems " + name + " did not finish within --timeout 0.2 s"), std::string::npos)
        << r.err;
  }
  EXPECT_EQ(poems("simulate --collective bcast --procs 4 --size 8 --no-store --timeout 60").exit_code, 0);
  EXPECT_EQ(poems("simulate --collective bcast --procs 4 --size 8 --no-store --timeout -1").exit_code, 2);
}
