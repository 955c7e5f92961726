// Two processes writing one knowledge base at once both succeed.
#include "db_test_util.h"

namespace poems::db {
namespace {

using testing::ScratchDir;

TEST(Concurrency, TwoProcessesWriting200RunsEachBothSucceed) {
  ScratchDir dir;
  constexpr int kRunsEach = 200;
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  std::vector<pid_t> children;
  for (int writer = 0; writer < 2; ++writer) {
    children.push_back(testing::fork_child([&, writer] {
      ::close(start[1]);
      char c;
      if (::read(start[0], &c, 1) != 0) throw std::runtime_error("start pipe");  // EOF: go
      // Both open (and so create and migrate) the file at the same moment.
      KnowledgeBase kb(dir.file());
      for (int i = 0; i < kRunsEach; ++i) {
        int n = writer * kRunsEach + i;
        RunStart s = kb.begin_run(testing::test_key(n));  // one transaction
        if (s.state != RunStart::State::kClaimed) throw std::runtime_error("run " + std::to_string(n) + " not claimed");
        kb.complete_run(s.handle, testing::test_result(n));  // and another
      }
    }));
  }
  ::close(start[0]);
  ::close(start[1]);  // releases both writers together
  for (pid_t child : children) EXPECT_EQ(testing::wait_child(child), 0);

  KnowledgeBase kb(dir.file());
  std::vector<db::Run> runs = kb.runs();
  ASSERT_EQ(runs.size(), 2u * kRunsEach);
  std::set<std::string> keys;
  for (const db::Run& run : runs) {
    EXPECT_EQ(run.status, RunStatus::kDone);
    keys.insert(run.run_key);
    int n = run.binding["i"].get<int>();
    ASSERT_TRUE(run.result);
    EXPECT_EQ(run.result->time_ns, testing::test_result(n).time_ns);
  }
  EXPECT_EQ(keys.size(), 2u * kRunsEach);
  // Both really wrote: each writer's pid appears on its runs.
  std::set<std::int64_t> pids;
  for (const db::Run& run : runs) pids.insert(*run.pid);
  EXPECT_EQ(pids.size(), 2u);
}

}  // namespace
}  // namespace poems::db
