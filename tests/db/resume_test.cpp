// kill -9 at a random moment, then resume: nothing lost, nothing duplicated.
#include <fcntl.h>
#include <signal.h>

#include <chrono>
#include <random>
#include <thread>

#include "db_test_util.h"

namespace poems::db {
namespace {

using testing::ScratchDir;
constexpr int kSweepSize = 40;

constexpr int kStalled = -1;  // reported on the pipe by a sweep that stalls holding a claim

// The sweep a study would run. Reports each completion on `done_fd` (4-byte
// writes to a pipe are atomic) after complete_run has committed. With
// `stall_at` >= 0 it claims run `stall_at`, reports kStalled and waits to be
// killed: a death mid-evaluation at a known point, whatever the load.
int sweep(const std::filesystem::path& file, int done_fd, int stall_at = -1) {
  KnowledgeBase kb(file);
  int evaluated = 0;
  for (int i = 0; i < kSweepSize; ++i) {
    RunStart s = kb.begin_run(testing::test_key(i));
    if (s.state != RunStart::State::kClaimed) continue;
    if (i == stall_at) {
      if (::write(done_fd, &kStalled, sizeof kStalled) != sizeof kStalled) throw std::runtime_error("pipe");
      for (;;) ::pause();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(300));  // the "evaluation"
    if (kb.complete_run(s.handle, testing::test_result(i))) ++evaluated;
    if (done_fd >= 0 && ::write(done_fd, &i, sizeof i) != sizeof i) throw std::runtime_error("pipe");
  }
  return evaluated;
}

// Runs the sweep in a child and SIGKILLs it after `delay`. Returns the indexes
// the child reported as committed before it died.
std::set<int> interrupted_sweep(const std::filesystem::path& file, std::chrono::microseconds delay, int stall_at = -1) {
  int done[2];
  if (::pipe(done) != 0) throw std::runtime_error("pipe");
  pid_t child = testing::fork_child([&] {
    ::close(done[0]);
    sweep(file, done[1], stall_at);
  });
  ::close(done[1]);
  std::set<int> committed;
  if (stall_at >= 0) {  // kill it once it holds the claim
    for (int i; ::read(done[0], &i, sizeof i) == sizeof i && i != kStalled;) committed.insert(i);
  } else {
    std::this_thread::sleep_for(delay);
  }
  ::kill(child, SIGKILL);
  testing::wait_child(child);
  int i;
  while (::read(done[0], &i, sizeof i) == sizeof i) committed.insert(i);
  ::close(done[0]);
  return committed;
}

TEST(Resume, KillNineAtRandomMomentsThenResume) {
  // Kill delays are drawn over the time an uninterrupted sweep takes here
  // (Release or sanitizers alike): some land before the file exists, some
  // during migration, most mid-sweep.
  long full_us = 0;
  {
    ScratchDir dir;
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(testing::wait_child(testing::fork_child([&] { sweep(dir.file(), -1); })), 0);
    full_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  }
  std::mt19937 random(20240501);
  // Two kills per trial, each within the first 40% of a sweep: together they
  // may or may not finish it.
  std::uniform_int_distribution<long> delay_us(0, full_us * 4 / 10);
  int trials_with_partial_progress = 0, trials_with_stale_claim = 0;
  for (int trial = 0; trial < 8; ++trial) {
    ScratchDir dir;
    std::set<int> committed;
    for (int kill = 0; kill < 2; ++kill) {
      std::set<int> more = interrupted_sweep(dir.file(), std::chrono::microseconds(delay_us(random)));
      committed.insert(more.begin(), more.end());
    }
    int already_done = 0, left_running = 0;
    if (std::filesystem::exists(dir.file())) {
      KnowledgeBase kb(dir.file());
      already_done = static_cast<int>(kb.runs({.status = RunStatus::kDone}).size());
      left_running = static_cast<int>(kb.runs({.status = RunStatus::kRunning}).size());
      // Nothing a dead process committed is lost.
      for (int i : committed) EXPECT_EQ(kb.begin_run(testing::test_key(i)).state, RunStart::State::kAlreadyDone);
    }
    if (already_done > 0 && already_done < kSweepSize) ++trials_with_partial_progress;
    if (left_running > 0) ++trials_with_stale_claim;
    std::fprintf(stderr, "trial %d: %zu reported committed, %d done, %d left running by the dead child\n", trial,
                 committed.size(), already_done, left_running);

    int evaluated = sweep(dir.file(), -1);  // the resume: re-running evaluates only what is missing
    EXPECT_EQ(evaluated, kSweepSize - already_done) << "trial " << trial;

    KnowledgeBase kb(dir.file());
    std::vector<db::Run> runs = kb.runs();
    ASSERT_EQ(runs.size(), static_cast<std::size_t>(kSweepSize)) << "trial " << trial;
    std::set<int> seen;
    for (const db::Run& run : runs) {
      int i = run.binding["i"].get<int>();
      EXPECT_TRUE(seen.insert(i).second) << "run " << i << " stored twice";
      EXPECT_EQ(run.status, RunStatus::kDone);
      ASSERT_TRUE(run.result);
      EXPECT_EQ(run.result->time_ns, testing::test_result(i).time_ns);
      EXPECT_EQ(run.result->events, testing::test_result(i).events);
    }
    testing::RawDb raw(dir.file());
    EXPECT_EQ(raw.scalar("SELECT count(*) FROM results"), kSweepSize);
    EXPECT_EQ(raw.scalar("SELECT count(*) FROM runs WHERE status <> 'done'"), 0);
  }
  // How many random kills landed mid-sweep or mid-evaluation depends on the
  // machine's load; KilledHoldingAClaimThenResume covers both cases for sure.
  std::fprintf(stderr, "%d trials cut mid-sweep, %d left a claim behind\n", trials_with_partial_progress,
               trials_with_stale_claim);
}

// Killed mid-evaluation at a known point: the runs before it are done, its
// claim is left 'running' by a dead process, and the resume takes it over and
// evaluates exactly what is missing.
TEST(Resume, KilledHoldingAClaimThenResume) {
  for (int stall_at : {0, 17, kSweepSize - 1}) {
    ScratchDir dir;
    std::set<int> committed = interrupted_sweep(dir.file(), {}, stall_at);
    EXPECT_EQ(committed.size(), static_cast<std::size_t>(stall_at));
    {
      KnowledgeBase kb(dir.file());
      EXPECT_EQ(kb.runs({.status = RunStatus::kDone}).size(), static_cast<std::size_t>(stall_at));
      std::vector<db::Run> running = kb.runs({.status = RunStatus::kRunning});
      ASSERT_EQ(running.size(), 1u);
      EXPECT_EQ(running[0].binding["i"].get<int>(), stall_at);
    }
    EXPECT_EQ(sweep(dir.file(), -1), kSweepSize - stall_at);
    testing::RawDb raw(dir.file());
    EXPECT_EQ(raw.scalar("SELECT count(*) FROM results"), kSweepSize);
    EXPECT_EQ(raw.scalar("SELECT count(*) FROM runs WHERE status <> 'done'"), 0);
  }
}

}  // namespace
}  // namespace poems::db
