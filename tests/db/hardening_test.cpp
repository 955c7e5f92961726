// The knowledge base against damaged, foreign and hostile input (issue 25):
// files that are not knowledge bases are refused and left untouched, reading
// never changes a file, damaged rows are named, read-only queries stay within
// a budget and may only call functions that compute.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>

#include "db_test_util.h"
#include "poems/db/schema.h"

using namespace poems::db;
using namespace poems::db::testing;

namespace {

std::string bytes_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Options reading() {
  Options o;
  o.read_only = true;
  return o;
}

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

// A knowledge base with `n` done runs.
void fill(const std::filesystem::path& path, int n) {
  KnowledgeBase kb(path);
  kb.transaction([&] {
    std::vector<CompletedRun> runs;
    for (int i = 0; i < n; ++i) runs.push_back({test_key(i), test_result(i), 1000});
    kb.record_runs(runs);
  });
}

}  // namespace

// ---------------------------------------------------------------- files

TEST(KnowledgeBaseFiles, ATruncatedFileIsRefusedNotRecreated) {
  // Issue 25: a knowledge base truncated to 1 byte was silently recreated empty.
  ScratchDir dir;
  for (const std::string& content : {std::string("x"), std::string(100, 'x'), std::string("SQLite format 3\0", 16)}) {
    std::ofstream(dir.file(), std::ios::binary) << content;
    for (const Options& options : {Options{}, reading()}) {
      const std::string msg = message_of<CorruptError>([&] { KnowledgeBase kb(dir.file(), options); });
      EXPECT_NE(msg.find("knowledge base '" + dir.file().string() + "' is not an SQLite database (" +
                         std::to_string(content.size()) + " bytes"),
                std::string::npos)
          << msg;
      EXPECT_NE(msg.find("restore a backup, or move it aside"), std::string::npos) << msg;
      EXPECT_EQ(bytes_of(dir.file()), content);
    }
  }
}

TEST(KnowledgeBaseFiles, AForeignSqliteFileIsNotTouched) {
  // Issue 25: `db runs --db foreign.sqlite` switched the file to WAL mode before refusing it.
  ScratchDir dir;
  {
    RawDb raw(dir.file("foreign.sqlite"));
    raw.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
  }
  const std::string before = bytes_of(dir.file("foreign.sqlite"));
  for (const Options& options : {Options{}, reading()}) {
    const std::string msg = message_of<Error>([&] { KnowledgeBase kb(dir.file("foreign.sqlite"), options); });
    EXPECT_NE(msg.find("is an SQLite file but not a POEMS knowledge base"), std::string::npos) << msg;
  }
  EXPECT_EQ(bytes_of(dir.file("foreign.sqlite")), before);
  EXPECT_EQ(RawDb(dir.file("foreign.sqlite")).text("PRAGMA journal_mode"), "delete");
  EXPECT_FALSE(std::filesystem::exists(dir.file("foreign.sqlite-wal")));
}

TEST(KnowledgeBaseFiles, ReadingNeverChangesTheFile) {
  ScratchDir dir;
  fill(dir.file(), 3);
  { RawDb(dir.file()).exec("PRAGMA journal_mode = DELETE"); }  // as a copied file may be
  const std::string before = bytes_of(dir.file());
  {
    KnowledgeBase kb(dir.file(), reading());
    EXPECT_EQ(kb.runs().size(), 3u);
    EXPECT_EQ(kb.query_readonly("SELECT count(*) FROM runs").rows[0][0], Cell(std::int64_t{3}));
    const std::string msg = message_of<StoreError>([&] { kb.begin_run(test_key(9)); });
    EXPECT_NE(msg.find("cannot write '" + dir.file().string() + "'"), std::string::npos) << msg;
  }
  EXPECT_EQ(bytes_of(dir.file()), before);
  EXPECT_EQ(RawDb(dir.file()).text("PRAGMA journal_mode"), "delete");
}

TEST(KnowledgeBaseFiles, ReadingAnOlderSchemaSaysHowToUpgrade) {
  ScratchDir dir;
  migrate_file_to(dir.file(), 1);
  const std::string before = bytes_of(dir.file());
  const std::string msg = message_of<Error>([&] { KnowledgeBase kb(dir.file(), reading()); });
  EXPECT_NE(
      msg.find("has schema version 1 and this poems reads versions 2 to " + std::to_string(current_schema_version())),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("poems db migrate --db " + dir.file().string()), std::string::npos) << msg;
  EXPECT_EQ(bytes_of(dir.file()), before);
  { KnowledgeBase writer(dir.file()); }  // a writer migrates it
  EXPECT_NO_THROW(KnowledgeBase(dir.file(), reading()));
  // Version 2 files (before the indexes of version 3) are read as they are.
  ScratchDir other;
  migrate_file_to(other.file(), 2);
  const std::string v2 = bytes_of(other.file());
  {
    KnowledgeBase kb(other.file(), reading());
    EXPECT_EQ(kb.schema_version(), 2);
    EXPECT_TRUE(kb.runs({.since = "2000-01-01", .limit = 5, .newest_first = true}).empty());
  }
  EXPECT_EQ(bytes_of(other.file()), v2);
}

TEST(KnowledgeBaseFiles, ReadingMissingOrEmptyFilesCreatesNothing) {
  ScratchDir dir;
  EXPECT_NE(message_of<Error>([&] { KnowledgeBase kb(dir.file(), reading()); }).find("no knowledge base at"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.file()));
  std::ofstream(dir.file()).close();
  EXPECT_NE(message_of<Error>([&] { KnowledgeBase kb(dir.file(), reading()); }).find("is an empty file"),
            std::string::npos);
  EXPECT_EQ(std::filesystem::file_size(dir.file()), 0u);
}

TEST(KnowledgeBaseFiles, DamagedPagesAreACorruptErrorNamingTheFile) {
  ScratchDir dir;
  fill(dir.file(), 3000);
  { RawDb(dir.file()).exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE"); }
  const auto size = std::filesystem::file_size(dir.file());
  ASSERT_GT(size, 100'000u);
  std::filesystem::resize_file(dir.file(), size / 2);
  const std::string msg = message_of<CorruptError>([&] {
    KnowledgeBase kb(dir.file(), reading());
    kb.runs();
  });
  EXPECT_NE(msg.find("knowledge base '" + dir.file().string() + "' is damaged"), std::string::npos) << msg;
  EXPECT_NE(msg.find(".recover"), std::string::npos) << msg;
}

// ---------------------------------------------------------------- rows

TEST(KnowledgeBaseRows, DamagedJsonIsReportedByRunId) {
  // Issue 25: a damaged binding surfaced a raw JSON-library exception.
  ScratchDir dir;
  fill(dir.file(), 3);
  {
    RawDb raw(dir.file());
    // json_valid accepts both; the JSON reader does not (overflow, bytes that are not UTF-8).
    ASSERT_TRUE(raw.exec("UPDATE runs SET binding = '{\"a\": 1e999}' WHERE id = 2"));
    // A damaged row may hold anything, an escape sequence included.
    ASSERT_TRUE(
        raw.exec("PRAGMA ignore_check_constraints = ON; UPDATE results SET extra = "
                 "CAST(X'7B2261223A221B5B3332306D80FF227D' AS TEXT) WHERE run_id = 3"));
  }
  KnowledgeBase kb(dir.file(), reading());
  EXPECT_TRUE(kb.run(1).has_value());
  try {
    kb.run(2);
    FAIL();
  } catch (const DamagedRowError& e) {
    EXPECT_EQ(e.row(), 2);
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("run 2: its binding is not valid JSON (", 0), 0u) << msg;
    EXPECT_EQ(msg.find("[json.exception"), std::string::npos) << msg;
  }
  const std::string msg = message_of<DamagedRowError>([&] { kb.run(3); });
  EXPECT_NE(msg.find("run 3: its result's extra is not valid JSON"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\x1b'), std::string::npos) << msg;  // the escape in the row stays out of the terminal
  EXPECT_EQ(msg.find('\x80'), std::string::npos) << msg;
  EXPECT_NE(message_of<DamagedRowError>([&] { kb.runs(); }).find("run 2: its binding"), std::string::npos);
}

// ---------------------------------------------------------------- queries

TEST(KnowledgeBaseQueries, OnlyFunctionsThatComputeMayBeCalled) {
  // Issue 25: SELECT fts3_tokenizer(...) was allowed in the read-only query.
  ScratchDir dir;
  fill(dir.file(), 2);
  KnowledgeBase kb(dir.file(), reading());
  for (const char* sql : {"SELECT fts3_tokenizer('simple')", "SELECT load_extension('/tmp/x.so')",
                          "SELECT FTS3_Tokenizer('porter')", "SELECT sqlite_compileoption_get(0)"}) {
    const std::string msg = message_of<ReadOnlyError>([&] { kb.query_readonly(sql); });
    EXPECT_NE(msg.find("only reading statements are allowed"), std::string::npos) << sql << ": " << msg;
  }
  const QueryResult r = kb.query_readonly(
      "SELECT count(*), max(json_extract(binding, '$.i')), round(avg(id), 1), upper('x'), "
      "binding ->> '$.mk', row_number() OVER () FROM runs");
  EXPECT_EQ(r.rows[0][0], Cell(std::int64_t{2}));
  EXPECT_EQ(r.rows[0][3], Cell(std::string("X")));
}

TEST(KnowledgeBaseQueries, AnEndlessRecursiveQueryIsStopped) {
  // Issue 25: `poems db query` with a recursive CTE never returned.
  ScratchDir dir;
  fill(dir.file(), 1);
  Options options = reading();
  options.query_time_limit_ms = 300;
  KnowledgeBase kb(dir.file(), options);
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = message_of<QueryBudgetError>([&] {
    kb.query_readonly("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c");
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(msg.find("the query was stopped after 0.3 s, its time budget"), std::string::npos) << msg;
  EXPECT_LT(seconds, 5.0);
  // The connection is usable afterwards.
  EXPECT_EQ(kb.query_readonly("SELECT 41 + 1").rows[0][0], Cell(std::int64_t{42}));
}

TEST(KnowledgeBaseQueries, StepsAndAnswerSizeAreBudgetedToo) {
  ScratchDir dir;
  fill(dir.file(), 1);
  Options options = reading();
  options.query_step_limit = 1'000'000;
  options.query_max_rows = 1000;
  KnowledgeBase kb(dir.file(), options);
  EXPECT_NE(message_of<QueryBudgetError>([&] {
              kb.query_readonly(
                  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) "
                  "SELECT count(*) FROM c");
            }).find("stopped after 1000000 SQLite steps"),
            std::string::npos);
  EXPECT_NE(message_of<QueryBudgetError>([&] {
              kb.query_readonly(
                  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000) "
                  "SELECT x FROM c");
            }).find("more than 1000 rows; add a LIMIT"),
            std::string::npos);
  EXPECT_EQ(kb.query_readonly("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) "
                              "SELECT x FROM c")
                .rows.size(),
            1000u);
  // A 1 GB blob is beyond SQLite's length limit on this connection.
  EXPECT_NE(message_of<Error>([&] { kb.query_readonly("SELECT length(zeroblob(1000000000))"); }).find("too big"),
            std::string::npos);
}
