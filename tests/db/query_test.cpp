// Read-only ad-hoc SQL.
#include "db_test_util.h"
#include "poems/db/schema.h"

namespace poems::db {
namespace {

using testing::ScratchDir;

class Query : public ::testing::Test {
 protected:
  void SetUp() override {
    kb_ = std::make_unique<KnowledgeBase>(dir_.file());
    for (int i = 0; i < 3; ++i) kb_->complete_run(kb_->begin_run(testing::test_key(i)).handle, testing::test_result(i));
    kb_->put_machine({"Odin", {{"L", 5300}}, Provenance::kPublished, "the LogGOPSim paper", ""});
  }
  ScratchDir dir_;
  std::unique_ptr<KnowledgeBase> kb_;
};

TEST_F(Query, SelectReturnsTypedCells) {
  QueryResult r = kb_->query_readonly(
      "SELECT r.id, r.status, res.time_ns, NULL AS empty, x'00ff' AS bytes FROM runs r JOIN results res "
      "ON res.run_id = r.id ORDER BY r.id");
  EXPECT_EQ(r.columns, (std::vector<std::string>{"id", "status", "time_ns", "empty", "bytes"}));
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(std::get<std::int64_t>(r.rows[0][0]), 1);
  EXPECT_EQ(std::get<std::string>(r.rows[0][1]), "done");
  EXPECT_EQ(std::get<double>(r.rows[2][2]), testing::test_result(2).time_ns);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][3]));
  EXPECT_EQ(std::get<std::string>(r.rows[0][4]), "00ff");
}

TEST_F(Query, ReadsWithCtesJsonAndReadPragmas) {
  EXPECT_EQ(
      kb_->query_readonly("WITH t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT sum(n) FROM t")
          .rows[0][0],
      Cell(std::int64_t{15}));
  EXPECT_EQ(kb_->query_readonly("SELECT json_extract(binding, '$.i') FROM runs WHERE id = 3").rows[0][0],
            Cell(std::int64_t{2}));
  EXPECT_FALSE(kb_->query_readonly("PRAGMA table_info(runs)").rows.empty());
  EXPECT_EQ(kb_->query_readonly("PRAGMA user_version").rows[0][0], Cell(std::int64_t{current_schema_version()}));
  EXPECT_EQ(kb_->query_readonly("SELECT count(*) FROM runs; -- trailing comment").rows[0][0], Cell(std::int64_t{3}));
}

TEST_F(Query, EveryKindOfWriteIsRefused) {
  std::string attach = "ATTACH DATABASE '" + dir_.file("other.db").string() + "' AS other";
  std::string vacuum_into = "VACUUM INTO '" + dir_.file("copy.db").string() + "'";
  for (const std::string& sql :
       {std::string("INSERT INTO machines (name, parameters, provenance, updated_at) "
                    "VALUES ('x', '{}', 'user', 'now')"),
        std::string("UPDATE runs SET status = 'pending'"), std::string("DELETE FROM runs"),
        std::string("DROP TABLE results"), std::string("CREATE TABLE t (x)"),
        std::string("ALTER TABLE runs ADD COLUMN y"), attach, std::string("DETACH main"),
        std::string("PRAGMA user_version = 7"), std::string("PRAGMA journal_mode = DELETE"),
        std::string("PRAGMA query_only = OFF"), std::string("PRAGMA foreign_keys = OFF"), std::string("VACUUM"),
        vacuum_into, std::string("REINDEX"), std::string("BEGIN IMMEDIATE"), std::string("ANALYZE"),
        std::string("REPLACE INTO recommender_rules (problem_class, rule_text, support, "
                    "confidence, created_at) VALUES ('a', 'b', 1, 1, 'now')")}) {
    EXPECT_THROW(kb_->query_readonly(sql), ReadOnlyError) << sql;
  }
  EXPECT_THROW(kb_->query_readonly("SELECT 1; DELETE FROM runs"), Error);
  EXPECT_EQ(kb_->runs().size(), 3u);
  EXPECT_EQ(kb_->schema_version(), current_schema_version());
  EXPECT_FALSE(std::filesystem::exists(dir_.file("other.db")));
  EXPECT_FALSE(std::filesystem::exists(dir_.file("copy.db")));
  // The read-only connection did not disturb the read-write one.
  EXPECT_EQ(kb_->begin_run(testing::test_key(9)).state, RunStart::State::kClaimed);
}

TEST_F(Query, BadSqlIsAnErrorButNotAWrite) {
  try {
    kb_->query_readonly("SELEC * FROM runs");
    FAIL();
  } catch (const ReadOnlyError&) {
    FAIL() << "a syntax error is not a write";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("syntax error"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kb_->query_readonly("SELECT * FROM no_such_table"), Error);
  EXPECT_THROW(kb_->query_readonly("   "), Error);
}

}  // namespace
}  // namespace poems::db
