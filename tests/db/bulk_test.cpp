// What the recommender needs from the knowledge base: recording evaluations
// that already happened in batches, finding done runs, read-only queries with
// bound values, and replacing mined rules.
#include "db_test_util.h"

namespace poems::db {
namespace {

using testing::RawDb;
using testing::ScratchDir;
using testing::test_key;
using testing::test_result;

TEST(Bulk, RecordRunsStoresDoneRunsOnceAndKeepsEarlierResults) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  // Run 1 done before, run 2 pending (an interrupted claim), run 3 failed.
  ASSERT_TRUE(kb.evaluate_once(test_key(1), [] { return test_result(1); }));
  kb.find_or_create_run(test_key(2));
  RunStart failing = kb.begin_run(test_key(3));
  kb.fail_run(failing.handle, "boom");

  std::vector<CompletedRun> batch;
  for (int i = 1; i <= 5; ++i) {
    Result r = test_result(i);
    r.time_ns += 1000;  // different from what run 1 holds
    batch.push_back({test_key(i), r, 42});
  }
  const std::vector<RecordedRun> recorded = kb.record_runs(batch);
  ASSERT_EQ(recorded.size(), 5u);
  EXPECT_EQ(recorded[0].state, RecordedRun::State::kAlreadyDone);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(recorded[i].state, RecordedRun::State::kStored) << i;
  EXPECT_EQ(kb.runs().size(), 5u);
  EXPECT_EQ(RawDb(dir.file()).scalar("SELECT count(*) FROM results"), 5);
  EXPECT_EQ(kb.run(recorded[0].id)->result->time_ns, test_result(1).time_ns);  // the first result stays
  for (int i = 1; i < 5; ++i) {
    const db::Run run = *kb.run(recorded[i].id);
    EXPECT_EQ(run.status, RunStatus::kDone);
    EXPECT_EQ(run.result->time_ns, test_result(i + 1).time_ns + 1000);
    EXPECT_EQ(run.result->events, test_result(i + 1).events);
    EXPECT_EQ(run.wall_time_ns, 42);
    EXPECT_EQ(run.pid, ::getpid());
    EXPECT_EQ(run.key_text, test_key(i + 1).canonical_text());
    EXPECT_FALSE(run.error);
  }
  EXPECT_EQ(kb.run(recorded[2].id)->attempts, 2);  // the failed one was claimed again
  // Recording the same batch again changes nothing.
  for (const RecordedRun& r : kb.record_runs(batch)) EXPECT_EQ(r.state, RecordedRun::State::kAlreadyDone);
  EXPECT_EQ(kb.runs().size(), 5u);
}

TEST(Bulk, RecordRunsLeavesARunAliveProcessHolds) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  RunStart held = kb.begin_run(test_key(1));
  RawDb raw(dir.file());
  // pid 1 (init) is alive: as if it held the claim.
  ASSERT_TRUE(raw.exec("UPDATE runs SET pid = 1, pid_start = NULL WHERE id = " + std::to_string(held.handle.id)));
  const auto recorded = kb.record_runs({{test_key(1), test_result(1)}});
  EXPECT_EQ(recorded[0].state, RecordedRun::State::kBusy);
  EXPECT_EQ(kb.run(held.handle.id)->status, RunStatus::kRunning);
}

TEST(Bulk, RecordRunsInACallersTransactionRollsBackWithIt) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  EXPECT_THROW(kb.transaction([&] {
    kb.record_runs({{test_key(1), test_result(1)}, {test_key(2), test_result(2)}});
    throw std::runtime_error("interrupted");
  }),
               std::runtime_error);
  EXPECT_TRUE(kb.runs().empty());
}

TEST(Bulk, FindDoneRun) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  EXPECT_FALSE(kb.find_done_run(test_key(1)));
  kb.find_or_create_run(test_key(1));
  EXPECT_FALSE(kb.find_done_run(test_key(1)));  // pending is not done
  kb.record_runs({{test_key(1), test_result(1)}});
  const auto run = kb.find_done_run(test_key(1));
  ASSERT_TRUE(run);
  EXPECT_EQ(run->result->time_ns, test_result(1).time_ns);
  EXPECT_EQ(kb.runs().size(), 1u);
}

TEST(Bulk, ReadOnlyQueriesBindValues) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  kb.record_runs({{test_key(1), test_result(1)}, {test_key(2), test_result(2)}});
  const QueryResult r = kb.query_readonly(
      "SELECT json_extract(binding, '$.i'), ?2 FROM runs WHERE model = ?1 AND json_extract(binding, '$.x') > ?3",
      {std::string("Sweep3D"), std::monostate{}, 0.3});
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(r.rows[0][0]), 2);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][1]));
  EXPECT_THROW(kb.query_readonly("SELECT ?1, ?2", {std::int64_t{1}}), Error);  // two parameters, one value
  // A bound value is a value, never SQL.
  EXPECT_TRUE(kb.query_readonly("SELECT * FROM runs WHERE model = ?1", {std::string("x' OR 1=1 --")}).rows.empty());
  EXPECT_THROW(kb.query_readonly("DELETE FROM runs WHERE id = ?1", {std::int64_t{1}}), ReadOnlyError);
}

TEST(Bulk, ReplaceRulesReplacesOnlyItsClass) {
  ScratchDir dir;
  KnowledgeBase kb(dir.file());
  kb.add_rule({0, "Other", "x > 1 => y", 3, 1.0, {}});
  kb.replace_rules("Sweep3D", {{0, "", "it*jt <= 64 => best mk = 10", 5, 0.8, {{"target", "mk"}}},
                               {0, "", "always => best mmi = 3", 9, 1.0, {}}});
  kb.replace_rules("Sweep3D", {{0, "", "it*jt <= 81 => best mk = 10", 6, 1.0, {}}});
  const std::vector<Rule> rules = kb.rules("Sweep3D");
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].rule_text, "it*jt <= 81 => best mk = 10");
  EXPECT_EQ(rules[0].problem_class, "Sweep3D");
  EXPECT_EQ(rules[0].support, 6);
  EXPECT_EQ(kb.rules("Other").size(), 1u);
}

}  // namespace
}  // namespace poems::db
