// Schema versions: creation, forward migration, refusal of newer files.
#include <cstdlib>
#include <fstream>

#include "db_test_util.h"
#include "poems/db/schema.h"

namespace poems::db {
namespace {

using testing::RawDb;
using testing::ScratchDir;

TEST(Schema, MigrationsAreNumberedOneByOne) {
  const auto& list = migrations();
  ASSERT_GE(list.size(), 2u);
  for (std::size_t i = 0; i < list.size(); ++i) EXPECT_EQ(list[i].version, static_cast<int>(i) + 1);
  EXPECT_EQ(current_schema_version(), list.back().version);
}

TEST(Schema, NewFileGetsTheCurrentSchemaInWalMode) {
  ScratchDir dir;
  {
    KnowledgeBase kb(dir.file());
    EXPECT_EQ(kb.schema_version(), current_schema_version());
  }
  RawDb raw(dir.file());
  EXPECT_EQ(raw.scalar("PRAGMA user_version"), current_schema_version());
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
  for (const char* table : {"machines", "calibrations", "components", "task_graphs", "studies", "study_runs", "runs",
                            "results", "teds", "recommender_rules"})
    EXPECT_EQ(
        raw.scalar(std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '") + table + "'"),
        1)
        << table;
}

TEST(Schema, ZeroByteFileIsMigratedFromScratch) {
  ScratchDir dir;
  std::ofstream(dir.file()).close();
  ASSERT_EQ(std::filesystem::file_size(dir.file()), 0u);
  KnowledgeBase kb(dir.file());
  EXPECT_EQ(kb.schema_version(), current_schema_version());
  EXPECT_TRUE(kb.runs().empty());
}

TEST(Schema, VersionOneFileIsMigratedKeepingItsRows) {
  ScratchDir dir;
  migrate_file_to(dir.file(), 1);
  RunKey done_key = testing::test_key(1), pending_key = testing::test_key(2);
  {
    RawDb raw(dir.file());
    ASSERT_EQ(raw.scalar("PRAGMA user_version"), 1);
    ASSERT_EQ(raw.scalar("SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'attempts'"), 0);
    // Rows as a version-1 poems wrote them.
    auto insert = [&](const RunKey& key, const char* status) {
      return raw.exec(
          "INSERT INTO runs (run_key, key_text, model, evaluator, spec_hash, tool_version, binding, status,"
          " created_at) VALUES ('" +
          key.digest() + "', '" + key.canonical_text() +
          "', 'Sweep3D',"
          " 'analytic[LogGP]', 'spec-hash', '0.1.0', '" +
          canonical_json(key.binding) + "', '" + status + "', '2024-01-01T00:00:00.000Z')");
    };
    ASSERT_TRUE(insert(done_key, "done"));
    ASSERT_TRUE(insert(pending_key, "pending"));
    ASSERT_TRUE(raw.exec("INSERT INTO results (run_id, kind, time_ns) VALUES (1, 'predicted', 42.5)"));
  }
  KnowledgeBase kb(dir.file());
  EXPECT_EQ(kb.schema_version(), current_schema_version());
  std::vector<db::Run> runs = kb.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].attempts, 1);  // finished before version 2 counted attempts
  EXPECT_EQ(runs[1].attempts, 0);
  RawDb raw(dir.file());
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'runs_by_status'"), 1);
  // The migrated rows take part in the run protocol as if written today.
  RunStart again = kb.begin_run(done_key);
  ASSERT_EQ(again.state, RunStart::State::kAlreadyDone);
  EXPECT_EQ(again.run.result->time_ns, 42.5);
  RunStart resumed = kb.begin_run(pending_key);
  EXPECT_EQ(resumed.state, RunStart::State::kClaimed);
  EXPECT_EQ(resumed.handle.id, 2);
  EXPECT_EQ(resumed.run.attempts, 1);
}

TEST(Schema, MigratingTwiceChangesNothing) {
  ScratchDir dir;
  { KnowledgeBase kb(dir.file()); }
  KnowledgeBase again(dir.file());
  EXPECT_EQ(again.schema_version(), current_schema_version());
}

TEST(Schema, NewerFileIsRefusedNamingBothVersions) {
  ScratchDir dir;
  { KnowledgeBase kb(dir.file()); }
  { RawDb(dir.file()).exec("PRAGMA user_version = 99"); }
  try {
    KnowledgeBase kb(dir.file());
    FAIL() << "opened a version-99 file";
  } catch (const SchemaTooNewError& e) {
    EXPECT_EQ(e.file_version(), 99);
    EXPECT_EQ(e.supported_version(), current_schema_version());
    std::string message = e.what();
    EXPECT_NE(message.find("schema version 99"), std::string::npos) << message;
    EXPECT_NE(message.find("up to version " + std::to_string(current_schema_version())), std::string::npos) << message;
  }
  EXPECT_EQ(RawDb(dir.file()).scalar("PRAGMA user_version"), 99);
}

TEST(Schema, OtherSqliteFilesAndNonDatabasesAreRefused) {
  ScratchDir dir;
  { RawDb(dir.file("other.db")).exec("CREATE TABLE notes (text TEXT)"); }
  EXPECT_THROW(KnowledgeBase(dir.file("other.db")), Error);
  std::ofstream(dir.file("text.db")) << "this is not a database, but a long enough text file to have a header\n";
  EXPECT_THROW(KnowledgeBase(dir.file("text.db")), Error);
}

TEST(Schema, MissingFileIsAnErrorWhenCreationIsOff) {
  ScratchDir dir;
  Options options;
  options.create_if_missing = false;
  EXPECT_THROW(KnowledgeBase(dir.file("absent.db"), options), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("absent.db")));
}

TEST(Schema, PathResolution) {
  const char* saved = std::getenv("POEMS_DB");
  std::string saved_value = saved ? saved : "";
  ::unsetenv("POEMS_DB");
  EXPECT_EQ(resolve_path(""), std::filesystem::path("poems.db"));
  ::setenv("POEMS_DB", "/tmp/from-env.db", 1);
  EXPECT_EQ(resolve_path(""), std::filesystem::path("/tmp/from-env.db"));
  EXPECT_EQ(resolve_path("explicit.db"), std::filesystem::path("explicit.db"));
  if (saved)
    ::setenv("POEMS_DB", saved_value.c_str(), 1);
  else
    ::unsetenv("POEMS_DB");
}

}  // namespace
}  // namespace poems::db
