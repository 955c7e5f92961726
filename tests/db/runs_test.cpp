// The run protocol: find or create, claim, complete, fail, and stale claims.
#include "db_test_util.h"

namespace poems::db {
namespace {

using testing::RawDb;
using testing::ScratchDir;
using testing::test_key;
using testing::test_result;

TEST(Runs, SecondBeginReturnsTheStoredResultWithoutANewRow) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  RunStart first = kb.begin_run(test_key(1));
  ASSERT_EQ(first.state, RunStart::State::kClaimed);
  EXPECT_EQ(first.run.status, RunStatus::kRunning);
  EXPECT_EQ(first.run.attempts, 1);
  EXPECT_EQ(first.run.pid, ::getpid());
  ASSERT_TRUE(kb.complete_run(first.handle, test_result(1)));

  RunStart second = kb.begin_run(test_key(1));
  ASSERT_EQ(second.state, RunStart::State::kAlreadyDone);
  EXPECT_EQ(second.run.id, first.handle.id);
  ASSERT_TRUE(second.run.result);
  EXPECT_EQ(second.run.result->time_ns, test_result(1).time_ns);
  EXPECT_EQ(second.run.result->events, 101);
  EXPECT_EQ(second.run.result->extra, nlohmann::json({{"i", 1}}));
  EXPECT_EQ(second.run.status, RunStatus::kDone);
  EXPECT_TRUE(second.run.wall_time_ns.has_value());
  EXPECT_EQ(kb.runs().size(), 1u);
  EXPECT_EQ(RawDb(dir.file()).scalar("SELECT count(*) FROM results"), 1);
}

TEST(Runs, SameBindingInAnotherKeyOrderIsTheSameRun) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  RunKey a = test_key(0), b = test_key(0);
  a.binding = nlohmann::json::parse(R"({"npe_i": 2, "npe_j": 3, "mk": 10.0})");
  b.binding = nlohmann::json::parse(R"({"mk": 10, "npe_j": 3, "npe_i": 2})");
  db::Run ra = kb.find_or_create_run(a), rb = kb.find_or_create_run(b);
  EXPECT_EQ(ra.id, rb.id);
  EXPECT_EQ(ra.status, RunStatus::kPending);
  EXPECT_EQ(kb.runs().size(), 1u);
}

TEST(Runs, NearlyEqualNumbersAreDifferentRuns) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  RunKey a = test_key(0), b = test_key(0);
  a.binding = {{"latency", 0.1 + 0.2}};
  b.binding = {{"latency", 0.3}};
  RowId id_a = kb.find_or_create_run(a).id;
  RowId id_b = kb.find_or_create_run(b).id;
  EXPECT_NE(id_a, id_b);
  std::vector<db::Run> runs = kb.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].binding["latency"].get<double>(), 0.1 + 0.2);
  EXPECT_EQ(runs[1].binding["latency"].get<double>(), 0.3);
}

TEST(Runs, FailedRunsAreRetried) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  RunStart first = kb.begin_run(test_key(1));
  kb.fail_run(first.handle, "deadlock");
  db::Run failed = *kb.run(first.handle.id);
  EXPECT_EQ(failed.status, RunStatus::kFailed);
  EXPECT_EQ(failed.error, "deadlock");
  RunStart retry = kb.begin_run(test_key(1));
  ASSERT_EQ(retry.state, RunStart::State::kClaimed);
  EXPECT_EQ(retry.run.attempts, 2);
  EXPECT_FALSE(retry.run.error);
  kb.complete_run(retry.handle, test_result(1));
  EXPECT_EQ(kb.run(first.handle.id)->status, RunStatus::kDone);
}

TEST(Runs, AnAbandonedClaimLeavesTheRunAsBeforeIt) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  // A claim that created the run: the run is gone, as if never begun.
  RunStart fresh = kb.begin_run(test_key(1));
  ASSERT_TRUE(fresh.handle.created);
  kb.abandon_run(fresh.handle);
  EXPECT_FALSE(kb.run(fresh.handle.id));
  EXPECT_TRUE(kb.runs().empty());
  // A done run stays done.
  RunStart third = kb.begin_run(test_key(3));
  ASSERT_TRUE(kb.complete_run(third.handle, test_result(3)));
  kb.abandon_run(third.handle);
  EXPECT_EQ(kb.run(third.handle.id)->status, RunStatus::kDone);
  EXPECT_EQ(kb.runs().size(), 1u);
}

// Every column of a run's row, and how many rows hang off it.
std::vector<std::string> run_row(const RawDb& raw, RowId id) {
  const std::string at = " WHERE id = " + std::to_string(id);
  std::vector<std::string> row = raw.row("SELECT * FROM runs" + at);
  const std::string of = " WHERE run_id = " + std::to_string(id);
  for (const char* table : {"results", "study_runs", "teds"})
    row.push_back(std::string(table) + "=" +
                  std::to_string(raw.scalar("SELECT count(*) FROM " + std::string(table) + of)));
  return row;
}

// A claim of an earlier attempt's failed run, given back: every column as
// before the claim (status, error, times, claimant, attempts). The times are
// set apart from now, so that a claim's fresh timestamps cannot pass for them.
TEST(Runs, AGivenBackClaimRestoresAnEarlierFailedRun) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  RunStart first = kb.begin_run(test_key(2));
  kb.fail_run(first.handle, "deadlock");
  RawDb raw(dir.file());
  ASSERT_TRUE(
      raw.exec("UPDATE runs SET started_at = '2020-01-02T03:04:05.000Z', finished_at = "
               "'2020-01-02T03:04:06.000Z', wall_time_ns = 1000000000, host = 'elsewhere', pid = 4242, "
               "pid_start = 99 WHERE id = " +
               std::to_string(first.handle.id)));
  const std::vector<std::string> before = run_row(raw, first.handle.id);
  ASSERT_EQ(before.size(), 18u + 3u);  // every column of runs, and the three tables

  RunStart retry = kb.begin_run(test_key(2));
  ASSERT_EQ(retry.state, RunStart::State::kClaimed);
  EXPECT_FALSE(retry.handle.created);
  EXPECT_NE(run_row(raw, first.handle.id), before);  // the claim changed it
  kb.abandon_run(retry.handle);
  EXPECT_EQ(run_row(raw, first.handle.id), before);
  db::Run restored = *kb.run(first.handle.id);
  EXPECT_EQ(restored.status, RunStatus::kFailed);
  EXPECT_EQ(restored.error, "deadlock");
  EXPECT_EQ(restored.attempts, 1);

  // The next claim is the second attempt, as if the given-back one never was.
  RunStart again = kb.begin_run(test_key(2));
  ASSERT_EQ(again.state, RunStart::State::kClaimed);
  EXPECT_EQ(again.run.attempts, 2);
}

// A claim that took over an interrupted run (running, its process gone),
// given back: still running by the dead process, so stale for the next claim.
TEST(Runs, AGivenBackClaimRestoresAnInterruptedRun) {
  ScratchDir dir;
  pid_t child = testing::fork_child([&] {
    KnowledgeBase kb(dir.file());
    if (kb.begin_run(test_key(4)).state != RunStart::State::kClaimed) throw Error("not claimed");
  });  // exits with the run still running
  ASSERT_EQ(testing::wait_child(child), 0);
  RawDb raw(dir.file());
  const RowId id = raw.scalar("SELECT id FROM runs");
  ASSERT_EQ(raw.text("SELECT status FROM runs"), "running");
  ASSERT_EQ(raw.scalar("SELECT pid FROM runs"), child);
  ASSERT_TRUE(raw.exec("UPDATE runs SET started_at = '2020-01-02T03:04:05.000Z' WHERE id = " + std::to_string(id)));
  const std::vector<std::string> before = run_row(raw, id);

  KnowledgeBase kb(dir.file());
  RunStart resumed = kb.begin_run(test_key(4));
  ASSERT_EQ(resumed.state, RunStart::State::kClaimed);
  EXPECT_EQ(resumed.run.pid, ::getpid());
  EXPECT_EQ(resumed.run.attempts, 2);
  kb.abandon_run(resumed.handle);
  EXPECT_EQ(run_row(raw, id), before);
  EXPECT_EQ(kb.run(id)->pid, child);
  EXPECT_EQ(kb.begin_run(test_key(4)).state, RunStart::State::kClaimed);  // stale again
}

// A handle whose run has since been failed, or claimed again, gives nothing
// back: the run is no longer its claim.
TEST(Runs, AGivenBackClaimLeavesALaterStateAlone) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  RunStart first = kb.begin_run(test_key(5));
  kb.fail_run(first.handle, "deadlock");
  RunStart second = kb.begin_run(test_key(5));
  kb.fail_run(second.handle, "out of memory");
  kb.abandon_run(second.handle);
  EXPECT_EQ(kb.run(first.handle.id)->error, "out of memory");
  EXPECT_EQ(kb.run(first.handle.id)->attempts, 2);

  RunStart third = kb.begin_run(test_key(5));
  RunStart fourth = kb.begin_run(test_key(5));  // this process's own earlier claim is stale
  ASSERT_EQ(fourth.state, RunStart::State::kClaimed);
  kb.abandon_run(third.handle);  // not its claim any more
  EXPECT_EQ(kb.run(first.handle.id)->status, RunStatus::kRunning);
  EXPECT_EQ(kb.run(first.handle.id)->attempts, 4);
  kb.abandon_run(fourth.handle);
  EXPECT_EQ(kb.run(first.handle.id)->status, RunStatus::kRunning);  // as third's claim left it
  EXPECT_EQ(kb.run(first.handle.id)->attempts, 3);
}

TEST(Runs, CompletingTwiceKeepsTheFirstResult) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  RunStart start = kb.begin_run(test_key(1));
  EXPECT_TRUE(kb.complete_run(start.handle, test_result(1)));
  EXPECT_FALSE(kb.complete_run(start.handle, test_result(2)));
  kb.fail_run(start.handle, "late failure");  // ignored: done is final
  db::Run run = *kb.run(start.handle.id);
  EXPECT_EQ(run.status, RunStatus::kDone);
  EXPECT_EQ(run.result->time_ns, test_result(1).time_ns);
}

TEST(Runs, EvaluateOnceEvaluatesOnlyWhatIsMissing) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  int evaluations = 0;
  auto evaluate = [&] {
    ++evaluations;
    return test_result(7);
  };
  EXPECT_EQ(kb.evaluate_once(test_key(7), evaluate)->time_ns, test_result(7).time_ns);
  EXPECT_EQ(kb.evaluate_once(test_key(7), evaluate)->time_ns, test_result(7).time_ns);
  EXPECT_EQ(evaluations, 1);
  EXPECT_THROW(kb.evaluate_once(test_key(8), []() -> Result { throw std::runtime_error("no such machine"); }),
               std::runtime_error);
  EXPECT_EQ(kb.runs({.status = RunStatus::kFailed}).at(0).error, "no such machine");
}

TEST(Runs, ARunHeldByALiveProcessIsBusyUntilItDies) {
  ScratchDir dir;
  int claimed[2], release[2];
  ASSERT_EQ(::pipe(claimed), 0);
  ASSERT_EQ(::pipe(release), 0);
  pid_t child = testing::fork_child([&] {
    KnowledgeBase kb(dir.file());
    kb.begin_run(test_key(1));
    char c = 1;
    if (::write(claimed[1], &c, 1) != 1) throw std::runtime_error("pipe");
    if (::read(release[0], &c, 1) < 0) throw std::runtime_error("pipe");  // holds the claim until killed
  });
  ::close(claimed[1]);  // a child that dies early gives EOF, not a hang
  ::close(release[0]);
  char c;
  ASSERT_EQ(::read(claimed[0], &c, 1), 1) << "the child could not claim the run";
  {
    KnowledgeBase kb(dir.file());
    RunStart busy = kb.begin_run(test_key(1));
    EXPECT_EQ(busy.state, RunStart::State::kBusy);
    EXPECT_EQ(busy.run.pid, child);
    EXPECT_FALSE(kb.evaluate_once(test_key(1), [] { return test_result(1); }));
    ::kill(child, SIGKILL);
    EXPECT_EQ(testing::wait_child(child), 128 + SIGKILL);
    RunStart resumed = kb.begin_run(test_key(1));
    ASSERT_EQ(resumed.state, RunStart::State::kClaimed);
    EXPECT_EQ(resumed.run.attempts, 2);
    EXPECT_EQ(resumed.run.pid, ::getpid());
  }
  for (int fd : {claimed[0], release[1]}) ::close(fd);
}

TEST(Runs, ClaimsFromAnotherHostOrARecycledPidAreStale) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  RunStart a = kb.begin_run(test_key(1)), b = kb.begin_run(test_key(2));
  RawDb raw(dir.file());
  ASSERT_TRUE(raw.exec("UPDATE runs SET host = 'another-host', pid = 1 WHERE id = " + std::to_string(a.handle.id)));
  // pid 1 is alive here, but it started at another time than the claimant did.
  ASSERT_TRUE(raw.exec("UPDATE runs SET pid = 1, pid_start = -5 WHERE id = " + std::to_string(b.handle.id)));
  EXPECT_EQ(kb.begin_run(test_key(1)).state, RunStart::State::kClaimed);
  EXPECT_EQ(kb.begin_run(test_key(2)).state, RunStart::State::kClaimed);
}

TEST(Runs, FiltersAndTeds) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  for (int i = 0; i < 4; ++i) {
    RunStart s = kb.begin_run(test_key(i, i % 2 ? "simulation[MPI-Sim]" : "analytic[LogGP]"));
    if (i < 3) kb.complete_run(s.handle, test_result(i));
  }
  EXPECT_EQ(kb.runs({.status = RunStatus::kDone}).size(), 3u);
  EXPECT_EQ(kb.runs({.status = RunStatus::kRunning}).size(), 1u);
  EXPECT_EQ(kb.runs({.evaluator = "simulation[MPI-Sim]"}).size(), 2u);
  EXPECT_EQ(kb.runs({.model = "Nope"}).size(), 0u);
  EXPECT_FALSE(kb.run(99));

  kb.store_teds(1, {{"kblock", "processor[wg]", {{"Wg", 11.5}}}, {"send", "analytic[LogGP]", {}}});
  kb.store_teds(1, {{"kblock", "processor[measured]", {{"kernel", "sweep"}}}});  // replaces
  std::vector<Ted> teds = kb.teds(1);
  ASSERT_EQ(teds.size(), 1u);
  EXPECT_EQ(teds[0].evaluator, "processor[measured]");
  EXPECT_THROW(kb.store_teds(99, {}), Error);

  RowId study = kb.put_study("blocking", "spec-hash");
  EXPECT_EQ(kb.put_study("blocking", "spec-hash"), study);
  kb.add_run_to_study(study, 2);
  kb.add_run_to_study(study, 2);
  kb.add_run_to_study(study, 3);
  EXPECT_EQ(kb.runs({.study = study}).size(), 2u);
}

TEST(Runs, BatchedWritesShareOneTransactionAndRollBackTogether) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  kb.transaction([&] {
    for (int i = 0; i < 50; ++i) kb.complete_run(kb.begin_run(test_key(i)).handle, test_result(i));
  });
  EXPECT_EQ(kb.runs({.status = RunStatus::kDone}).size(), 50u);
  EXPECT_THROW(kb.transaction([&] {
    kb.begin_run(test_key(100));
    throw std::runtime_error("interrupted");
  }),
               std::runtime_error);
  EXPECT_EQ(kb.runs().size(), 50u);
}

}  // namespace
}  // namespace poems::db
