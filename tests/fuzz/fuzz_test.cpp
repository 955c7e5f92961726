// The project's own fuzzing harness (issue 25), run in CI: PSL and GOAL
// inputs from grammars and from byte- and token-level mutations of the
// repository's specifications, seeded and deterministic, each pushed through
// the whole pipeline (fuzz_targets.h). Asserted for every input: no crash (the
// sanitizer build runs it too), no hang past a per-input budget, every error
// located, output bounded and free of terminal control characters.
//
//   POEMS_FUZZ_INPUTS=N   inputs per target (default 1500, in both builds)
//   POEMS_FUZZ_SEED=S     another deterministic sequence (default 20261125)
//   POEMS_FUZZ_BUDGET=S   seconds one input may take before it counts as a hang (default 60)
//   POEMS_FUZZ_ONLY=I     run only input I of the sequence and write it to a file
//
// A longer run for release checks is in docs/limits.md ("Fuzzing").
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <tuple>

#include "../support/fuzz/fuzz_targets.h"
#include "../support/fuzz/generators.h"

namespace fs = std::filesystem;
using namespace poems::fuzz;

namespace {

#ifndef POEMS_FUZZ_DEFAULT
#define POEMS_FUZZ_DEFAULT 1500
#endif

long env_or(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atol(v) : fallback;
}

struct Seed {
  std::string path, text;
};

std::vector<Seed> seeds(const std::vector<std::string>& dirs, const std::string& extension) {
  std::vector<Seed> out;
  for (const std::string& d : dirs) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(std::string(POEMS_SOURCE_DIR) + "/" + d))
      if (e.path().extension() == extension) files.push_back(e.path());
    std::sort(files.begin(), files.end());  // a deterministic order
    for (const fs::path& p : files) {
      std::ifstream in(p, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      out.push_back({p.string(), text.str()});
    }
  }
  return out;
}

std::string now_ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  return buf;
}

// Runs `count` inputs made by `make` through `check`, with a watchdog.
void run_campaign(const char* target, long count, const std::function<std::pair<std::string, std::string>(long)>& make,
                  const std::function<Outcome(const std::string&, const std::string&)>& check) {
  const long budget_s = env_or("POEMS_FUZZ_BUDGET", 60);
  std::atomic<long> current{-1};
  std::atomic<bool> done{false};
  std::atomic<long long> started_ms{0};
  std::string current_input;  // written before `current` changes; read only by the watchdog on a hang
  auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  auto save = [&](long index, const std::string& input) {
    const fs::path file =
        fs::temp_directory_path() / ("poems-fuzz-" + std::string(target) + "-" + std::to_string(index) + ".txt");
    std::ofstream(file, std::ios::binary) << input;
    return file.string();
  };
  std::thread watchdog([&] {
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const long i = current;
      if (!done && i >= 0 && now_ms() - started_ms > budget_s * 1000) {
        std::fprintf(stderr, "%s input %ld did not finish within %ld s (a hang); it is in %s\n", target, i, budget_s,
                     save(i, current_input).c_str());
        std::abort();
      }
    }
  });
  long accepted = 0, rejected = 0, skipped = 0, slowest = -1;
  double slowest_ms = 0;
  const long only = env_or("POEMS_FUZZ_ONLY", -1);  // one input of the sequence, saved to a file
  for (long i = 0; i < count; ++i) {
    if (only >= 0 && i != only) continue;
    std::string path, input;
    Outcome o;
    try {
      std::tie(path, input) = make(i);
      if (only >= 0) std::printf("%s input %ld is in %s\n", target, i, save(i, input).c_str());
      current_input = input;
      started_ms = now_ms();
      current = i;
      o = check(input, path);
    } catch (const std::exception& e) {
      o.problem = std::string("an exception escaped the harness: ") + e.what();
    } catch (...) {
      o.problem = "an exception that is not a std::exception escaped";
    }
    const double ms = static_cast<double>(now_ms() - started_ms);
    current = -1;
    if (ms > slowest_ms) slowest_ms = ms, slowest = i;
    (o.skipped ? skipped : o.accepted ? accepted : rejected)++;
    if (!o.problem.empty())
      ADD_FAILURE() << target << " input " << i << ": " << o.problem << "\n  the input is in " << save(i, input)
                    << "\n  it starts: " << input.substr(0, 300);
  }
  done = true;
  watchdog.join();
  std::printf("%s: %ld inputs, %ld accepted, %ld rejected, %ld skipped; slowest #%ld (%s)\n", target, count, accepted,
              rejected, skipped, slowest, now_ms_text(slowest_ms).c_str());
  // A generator that yields only one kind is broken.
  if (only < 0) {
    EXPECT_GT(accepted, 0) << target;
    EXPECT_GT(rejected, 0) << target;
  }
}

class FuzzTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { set_fuzz_limits(); }
};

}  // namespace

TEST_F(FuzzTest, PslFromTheGrammarAndMutations) {
  const std::vector<Seed> corpus = seeds({"examples/sweep3d", "tests/compiler/studies", "tests/psl/errors"}, ".psl");
  ASSERT_GT(corpus.size(), 10u);
  std::vector<std::string> texts;
  for (const Seed& s : corpus) texts.push_back(s.text);
  const long count = env_or("POEMS_FUZZ_INPUTS", POEMS_FUZZ_DEFAULT);
  const unsigned long seed = static_cast<unsigned long>(env_or("POEMS_FUZZ_SEED", 20261125));
  // Imports of generated text resolve next to a scratch path (none exist).
  const std::string scratch = (fs::temp_directory_path() / "poems-fuzz.psl").string();
  run_campaign(
      "psl", count,
      [&](long i) -> std::pair<std::string, std::string> {
        Rng rng(seed * 1000003 + static_cast<unsigned long>(i));  // each input reproducible on its own
        switch (i % 5) {
          case 0:
          case 1: return {scratch, generate_psl(rng)};
          case 2: {
            Rng g(rng());
            return {scratch, mutate_tokens(generate_psl(g), psl_vocabulary(), rng)};
          }
          case 3: {
            const Seed& s = corpus[rng() % corpus.size()];
            return {s.path, mutate_bytes(s.text, texts, psl_vocabulary(), rng)};
          }
          default: {
            const Seed& s = corpus[rng() % corpus.size()];
            return {s.path, mutate_tokens(s.text, psl_vocabulary(), rng)};
          }
        }
      },
      [](const std::string& input, const std::string& path) { return check_psl(input, path); });
}

TEST_F(FuzzTest, GoalFromTheGrammarAndMutations) {
  const std::vector<Seed> corpus = seeds({"examples/goal", "tests/goal/errors"}, ".goal");
  ASSERT_GT(corpus.size(), 5u);
  std::vector<std::string> texts;
  for (const Seed& s : corpus) texts.push_back(s.text);
  const long count = env_or("POEMS_FUZZ_INPUTS", POEMS_FUZZ_DEFAULT);
  const unsigned long seed = static_cast<unsigned long>(env_or("POEMS_FUZZ_SEED", 20261125));
  run_campaign(
      "goal", count,
      [&](long i) -> std::pair<std::string, std::string> {
        Rng rng(seed * 1000033 + static_cast<unsigned long>(i));
        switch (i % 4) {
          case 0: return {"", generate_goal(rng)};
          case 1: {
            Rng g(rng());
            return {"", mutate_tokens(generate_goal(g), goal_vocabulary(), rng)};
          }
          case 2: return {"", mutate_bytes(corpus[rng() % corpus.size()].text, texts, goal_vocabulary(), rng)};
          default: return {"", mutate_tokens(corpus[rng() % corpus.size()].text, goal_vocabulary(), rng)};
        }
      },
      [](const std::string& input, const std::string&) { return check_goal(input); });
}

// The harness itself: a broken property is reported, not swallowed.
TEST_F(FuzzTest, TheTargetsSeeWhatTheyCheck) {
  EXPECT_TRUE(check_psl("model M { taskgraph g { processes { [r] : 0 <= r < 2 }; barrier; } }").accepted);
  const Outcome bad = check_psl("model M { param P = 1 +; }");
  EXPECT_FALSE(bad.accepted);
  EXPECT_EQ(bad.problem, "");
  EXPECT_TRUE(check_goal("num_ranks 2\nrank 0 { l1: send 8b to 1 }\nrank 1 { l1: recv 8b from 0 }\n").accepted);
  EXPECT_FALSE(check_goal("num_ranks 2\nrank 0 { l1: bogus }\n").accepted);
  // Issue 25 (GOAL): `num_ranks 100000000` aborted on bad_alloc; the reader now refuses it.
  const Outcome huge = check_goal("num_ranks 100000000\nrank 0 { l: calc 1 }\n");
  EXPECT_FALSE(huge.accepted);
  EXPECT_EQ(huge.problem, "");
}

// Inputs the harness found, minimized: each a regression test.
TEST_F(FuzzTest, FoundByFuzzing) {
  // A character the GOAL lexer refuses before the first token was reported,
  // but the schedule was still returned (and simulated, exit 0): the reader
  // counted errors only from the first token on (goal.cpp, seed 7, input 12707).
  const Outcome stray = check_goal("*/ // a stray comment end\nnum_ranks 1\nrank 0 { l: calc 1 }\n");
  EXPECT_FALSE(stray.accepted);
  EXPECT_EQ(stray.problem, "");
}
