// The command line fuzzed (issue 44): random options of every evaluating
// subcommand, each given hostile values (empty, negative, huge, NaN, 20,000
// characters, escape sequences, a directory, a FIFO, /dev/zero), run through
// the real `poems`. Every run must end by itself (a 60 s watchdog counts a
// hang), with an exit code of docs/limits.md (0, 1, 2 or 3, never a signal),
// at most 1 MiB of output, and no terminal escape in what it prints.
// Deterministic: the seed and the index reproduce an input.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "run_command.h"

namespace fs = std::filesystem;

namespace {

const std::string kPoems = POEMS_BINARY;

std::size_t env_count(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The options a subcommand's --help lists (each line's first "--name" or "-x").
std::vector<std::string> options_of(const std::string& command) {
  const CommandResult help = run_command(kPoems + " " + command + " --help");
  std::vector<std::string> out;
  std::istringstream lines(help.out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] != '-' || first > 4) continue;
    std::string name = line.substr(first, line.find_first_of(" ,", first) - first);
    if (name == "-h" || name == "--help") continue;
    out.push_back(name);
  }
  return out;
}

class CommandLineFuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("poems_cli_fuzz_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "a directory");
    spec_ = (dir_ / "m.psl").string();
    std::ofstream(spec_)
        << "model M {\n  param P = 2, n = 8, label = \"x\";\n  taskgraph g {\n"
           "    processes { [p] : 0 <= p < P };\n"
           "    if p == 0 { send to [1] size n; } else { recv from [0] size n; }\n"
           "    task work : Work(w = n);\n  }\n}\n"
           "component Work in application[M] {\n"
           "  accepts { profile { node_type = \"work\"; } transaction work(w: real); protocol dataflow; }\n"
           "  requests { selector domain == hardware[processor];\n"
           "             transaction execute_code_block(work = w); protocol call_return; }\n}\n"
           "component Net in hardware[network] {\n"
           "  param L = 2us, o = 1us, g = 1us, G = 0.5ns/B, O = 0ns/B, S = 64KiB;\n"
           "  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; "
           "S = S; }\n            transaction message(bytes: bytes) -> time; protocol call_return; }\n}\n"
           "component Cpu in hardware[processor] {\n  param Wg = 50ns;\n"
           "  accepts { profile { evaluation = processor[wg]; Wg = Wg; }\n"
           "            transaction execute_code_block(work: real) -> time; protocol call_return; }\n}\n"
           "study s {\n  model M on Net;\n  vary P in [2, 4];\n"
           "  compare analytic[LogGP], simulation[MPI-Sim];\n  report time;\n}\n";
    goal_ = (dir_ / "g.goal").string();
    std::ofstream(goal_) << "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\nrank 1 {\nl1: recv 8b from 0 tag 0\n}\n";
    fifo_ = (dir_ / "fifo").string();
    ::mkfifo(fifo_.c_str(), 0600);
    values_ = {"",
               "0",
               "-1",
               "1",
               "4",
               "1e300",
               "-1e300",
               "nan",
               "inf",
               "18446744073709551617",
               "2e19B",
               "32KiB",
               "5.3us",
               "1e-300ns",
               "M",
               "s",
               "Net",
               "Net.L=1e18us",
               "P=1e10",
               "label=\"y\"",
               "n=-8",
               "analytic[LogGP]",
               "simulation[MPI-Sim]",
               "processor[wg]",
               "allreduce",
               "bcast",
               "json",
               "csv",
               "table",
               std::string(20000, 'x'),  // five of them stay under the 128 KiB of one `sh -c` argument
               std::string(300, '9'),
               "\x1b[31mred\x1b]0;title\x07",
               "a;touch " + (dir_ / "PWNED").string(),
               "$(touch " + (dir_ / "PWNED").string() + ")",
               spec_,
               goal_,
               (dir_ / "a directory").string(),
               (dir_ / "missing.psl").string(),
               "/dev/zero",
               fifo_,
               (dir_ / "kb.db").string(),
               (dir_ / "out.png").string()};
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string spec_, goal_, fifo_;
  std::vector<std::string> values_;
};

bool has_escape(const std::string& text) {
  for (unsigned char c : text)
    if (c == 0x1b || c == 0x07 || c == 0x9b) return true;
  return false;
}

}  // namespace

TEST_F(CommandLineFuzz, EveryCommandEndsCleanly) {
  // The evaluating commands and those that read files. calibrate, measure,
  // direct and trace run real programs under mpirun: their options are
  // checked by their own tests, not fuzzed here (a valid draw would measure).
  const std::vector<std::string> commands = {"check",   "ast", "taskgraph", "compile", "simulate",
                                             "analyze", "run", "recommend", "db runs", "db show"};
  std::map<std::string, std::vector<std::string>> options;
  for (const std::string& c : commands) {
    options[c] = options_of(c);
    ASSERT_FALSE(options[c].empty()) << c << " --help lists no options";
  }
  const std::size_t inputs = env_count("POEMS_CLI_FUZZ_INPUTS", 150);
  const std::size_t seed = env_count("POEMS_CLI_FUZZ_SEED", 20261201);
  std::mt19937_64 random(seed);
  std::map<int, int> exits;
  for (std::size_t i = 0; i < inputs; ++i) {
    const std::string& command = commands[random() % commands.size()];
    std::string args = command;
    if (random() % 4 != 0) args += " " + quote(random() % 3 ? spec_ : values_[random() % values_.size()]);
    const std::size_t count = random() % 5;
    for (std::size_t k = 0; k < count; ++k) {
      const std::vector<std::string>& names = options[command];
      args += " " + names[random() % names.size()];
      if (random() % 8 != 0) args += " " + quote(values_[random() % values_.size()]);
    }
    if (command == "simulate" || command == "analyze" || command == "run" || command == "recommend")
      args += " --db " + quote((dir_ / "kb.db").string());
    // `timeout` ends a hang with 124; poems's own exits are 0..3.
    const CommandResult r =
        run_command("cd " + quote(dir_.string()) + " && timeout -s KILL 60 " + kPoems + " " + args + " </dev/null");
    ++exits[r.exit_code];
    const std::string shown = args.size() > 600 ? args.substr(0, 600) + "..." : args;
    EXPECT_GE(r.exit_code, 0) << "input " << i << ": poems " << shown;
    EXPECT_LE(r.exit_code, 3) << "input " << i << " (seed " << seed << "): poems " << shown << "\n"
                              << r.err.substr(0, 600);
    EXPECT_LE(r.out.size() + r.err.size(), 1u << 20) << "input " << i << ": poems " << shown;
    EXPECT_FALSE(has_escape(r.err)) << "input " << i << ": poems " << shown << "\n" << r.err.substr(0, 600);
    EXPECT_FALSE(fs::exists(dir_ / "PWNED")) << "input " << i << ": poems " << shown;
  }
  // The draw reaches every outcome but a crash: successes, input errors and usage errors.
  EXPECT_GT(exits[0], 0);
  EXPECT_GT(exits[2], 0);
}
