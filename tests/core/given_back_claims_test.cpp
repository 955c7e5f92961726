// A parallel study that claims cells ahead of a failure ending it gives the
// claims of cells it never started back (core/src/parallel_study.cpp): the
// knowledge base then holds no run a serial study would not have made, no
// run recorded as failed that was never evaluated, and an earlier attempt's
// run exactly as that attempt left it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <set>

#include "poems/core/error.h"
#include "poems/core/parallel_study.h"
#include "poems/core/session.h"
#include "poems/core/study.h"
#include "poems/db/knowledge_base.h"
#include "poems/examples/examples.h"

using namespace poems;
using namespace poems::core;

namespace {

// In-process workers: a cell is computed when it starts and comes back in
// start order; cell `bad` comes back as a bad request, which ends a study,
// and the `failing` cells as failed evaluations, which do not.
class ScriptedWorkers final : public CellWorkers {
 public:
  ScriptedWorkers(Session& session, const StudyPlan& plan, std::size_t bad, std::set<std::size_t> failing = {})
      : session_(session), plan_(plan), bad_(bad), failing_(std::move(failing)) {}
  std::size_t slots() const override { return 2; }
  void start(std::size_t index, const std::string& key) override {
    started.push_back(index);
    Session::Computed c;
    if (index == bad_) {
      c.usage = true;
      c.usage_option = "--set";
      c.error = "--set: a value this cell cannot take";
    } else if (failing_.contains(index)) {
      c.error = "an earlier attempt's failure";
    } else {
      c = compute_cell(session_, plan_, index, key);
    }
    done_.emplace_back(index, std::move(c));
  }
  std::size_t busy() const override { return done_.size(); }
  std::optional<std::pair<std::size_t, Session::Computed>> next_within(int) override {
    auto out = std::move(done_.front());
    done_.pop_front();
    return out;
  }
  std::vector<std::size_t> started;

 private:
  Session& session_;
  const StudyPlan& plan_;
  std::size_t bad_;
  std::set<std::size_t> failing_;
  std::deque<std::pair<std::size_t, Session::Computed>> done_;
};

// The 8-cell study both tests run: (1,1) (2,2) (3,4) (4,4) x analytic, simulation.
std::unique_ptr<System> small_study() {
  examples::register_examples();
  SystemRequest r;
  r.files = {std::string(POEMS_SOURCE_DIR) + "/tests/compiler/studies/sweep3d_small.psl"};
  r.study = "small";
  r.study_bindings = true;
  return load_system(r);
}

// A knowledge base of this test's own, not there yet.
std::filesystem::path fresh_db(const std::string& name) {
  const std::filesystem::path db =
      std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(db);
  return db;
}

TEST(GivenBackClaims, CellsClaimedAheadOfAFailureLeaveNoRun) {
  const std::unique_ptr<System> system = small_study();
  const StudyPlan plan = plan_study(*system);
  ASSERT_EQ(plan.bindings.size() * plan.paradigms.size(), 8u);  // (1,1) (2,2) (3,4) (4,4) x analytic, simulation

  const std::filesystem::path db = fresh_db("poems_given_back");
  {
    Store store({false, db.string()});
    Session session(*system, {}, store);
    // Cell 1, the (1,1) simulation, is a bad request.
    ScriptedWorkers workers(session, plan, 1);
    EXPECT_THROW(run_study(session, plan, workers, nullptr), UsageError);
    // The heavier simulations, cells 7, 5 and 3, went out first, so every
    // cell up to 7 was claimed; 0 started before cell 1 came back.
    ASSERT_EQ(workers.started, (std::vector<std::size_t>{7, 5, 3, 1, 0}));
  }
  db::KnowledgeBase kb(db);
  std::vector<std::string> status;
  for (const db::Run& run : kb.runs()) {
    status.push_back(db::to_json(run)["status"].get<std::string>());
    // The one failure is the bad request's, not a claim left unfinished.
    if (status.back() == "failed") {
      EXPECT_EQ(run.error.value_or(""), "a bad request");
    }
  }
  // The five started cells only: four stored, the bad request failed. Cells
  // 2, 4 and 6 were claimed and given back.
  std::sort(status.begin(), status.end());
  EXPECT_EQ(status, (std::vector<std::string>{"done", "done", "done", "done", "failed"}));

  // A rerun evaluates the rest and reuses the four stored results.
  {
    Store store({false, db.string()});
    Session session(*system, {}, store);
    ScriptedWorkers workers(session, plan, plan.bindings.size() * plan.paradigms.size());  // none bad
    const StudyTable table = run_study(session, plan, workers, nullptr);
    std::size_t reused = 0, cells = 0;
    for (const auto& row : table.rows)
      for (const auto& [paradigm, cell] : row.cells) {
        ++cells;
        reused += cell.reused;
      }
    EXPECT_EQ(cells, 8u);
    EXPECT_EQ(reused, 4u);
  }
  EXPECT_EQ(kb.runs().size(), 8u);
  std::filesystem::remove(db);
}

// Cells claimed ahead of a failure whose runs an earlier study left failed
// get them back exactly as they were: status, error, times, attempts.
TEST(GivenBackClaims, AnEarlierAttemptsRunIsLeftAsItWas) {
  const std::unique_ptr<System> system = small_study();
  const StudyPlan plan = plan_study(*system);
  const std::size_t none = plan.bindings.size() * plan.paradigms.size();
  ASSERT_EQ(none, 8u);

  const std::filesystem::path db = fresh_db("poems_given_back_earlier");
  {  // The first study: cells 1, 2, 4 and 6 fail, the others are stored.
    Store store({false, db.string()});
    Session session(*system, {}, store);
    ScriptedWorkers workers(session, plan, none, {1, 2, 4, 6});
    run_study(session, plan, workers, nullptr);
    ASSERT_EQ(workers.started.size(), 8u);
  }
  auto rows = [&] {
    db::KnowledgeBase kb(db);
    std::map<db::RowId, nlohmann::json> out;
    for (const db::Run& run : kb.runs()) out[run.id] = db::to_json(run);
    return out;
  };
  const std::map<db::RowId, nlohmann::json> before = rows();
  std::size_t failed = 0;
  for (const auto& [id, run] : before) failed += run["status"] == "failed";
  ASSERT_EQ(failed, 4u);

  std::vector<std::size_t> started;
  {  // The second: cell 1 is a bad request and ends it; cells 4 and 6 were claimed ahead of it.
    Store store({false, db.string()});
    Session session(*system, {}, store);
    ScriptedWorkers workers(session, plan, 1);
    EXPECT_THROW(run_study(session, plan, workers, nullptr), UsageError);
    started = workers.started;
  }
  ASSERT_EQ(started, (std::vector<std::size_t>{1, 2})) << "the hand-out changed: cells 4 and 6 not claimed ahead";
  const std::map<db::RowId, nlohmann::json> after = rows();
  ASSERT_EQ(after.size(), before.size());
  // The started cells ran again: 1 failed again (the bad request), 2 is
  // stored. Every other run is as the first study left it, the two given
  // back included.
  std::size_t reran = 0, given_back = 0;
  for (const auto& [id, run] : after) {
    if (run["error"] == "a bad request" || (run["status"] == "done" && before.at(id)["status"] == "failed")) {
      ++reran;
      EXPECT_EQ(run["attempts"], 2);
      continue;
    }
    EXPECT_EQ(run, before.at(id));  // every field: status, error, times, claimant, attempts
    given_back += run["status"] == "failed";
  }
  EXPECT_EQ(reran, 2u);
  EXPECT_EQ(given_back, 2u);
  std::filesystem::remove(db);
}

}  // namespace
