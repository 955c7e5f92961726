// `poems db ...` (in process) on a knowledge base built by poems_db_fixture.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include "run_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fs = std::filesystem;

namespace {

using Output = CommandResult;

Output run(const std::string& command) { return run_command(command); }

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class DbCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("poems_db_cli_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    Output made = run(std::string(POEMS_DB_FIXTURE) + " sample " + quote(db()));
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string db() { return (*dir_ / "kb.db").string(); }
  // In process; every command names its knowledge base with --db.
  static Output poems(const std::string& args) { return poems_in_process(args); }
  static fs::path* dir_;
};
fs::path* DbCli::dir_ = nullptr;

TEST_F(DbCli, RunsTable) {
  Output r = poems("db runs --db " + quote(db()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, line;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("id  status   model    evaluator", 0), 0u) << header;
  int rows = 0;
  while (std::getline(lines, line)) ++rows;
  EXPECT_EQ(rows, 5);
  EXPECT_NE(r.out.find("1234567800"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed"), std::string::npos);
  EXPECT_NE(r.out.find("pending"), std::string::npos);
}

TEST_F(DbCli, RunsJsonIsAnArrayWithOneObjectPerRun) {
  Output r = poems("db runs --format json --db " + quote(db()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 5u);
  EXPECT_EQ(j[0]["id"], 1);
  EXPECT_EQ(j[0]["status"], "done");
  EXPECT_EQ(j[0]["model"], "Sweep3D");
  EXPECT_EQ(j[0]["binding"]["mk"], 10);
  EXPECT_EQ(j[0]["result"]["time_ns"], 1.2345678e9);
  EXPECT_EQ(j[2]["result"]["time_ns"].get<double>(), 0.1 + 0.2);  // exact through the text
  EXPECT_EQ(j[3]["status"], "failed");
  EXPECT_EQ(j[3]["error"], "deadlock: rank 0 waits on a receive from rank 1");
  EXPECT_TRUE(j[4]["result"].is_null());
}

TEST_F(DbCli, RunsFilterAndCsv) {
  Output r = poems("db runs --status done --format csv --db " + quote(db()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("id,run_key,model,evaluator,", 0), 0u);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4);  // header + 3 done runs
  EXPECT_NE(r.out.find("\"{\"\"note\"\":\"\"fixture, \\\"\"quoted\\\"\", with commas\"\"}\""), std::string::npos)
      << r.out;
  Output bad = poems("db runs --status finished --db " + quote(db()));
  EXPECT_EQ(bad.exit_code, 2);
}

TEST_F(DbCli, ShowOneRun) {
  Output r = poems("db show 1 --db " + quote(db()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("evaluator     analytic[LogGP]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ted kblock"), std::string::npos) << r.out;
  Output j = poems("db show 4 --format json --db " + quote(db()));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  nlohmann::json run = nlohmann::json::parse(j.out);
  EXPECT_EQ(run["id"], 4);
  EXPECT_EQ(run["evaluator"], "simulation[MPI-Sim]");
  EXPECT_EQ(run["status"], "failed");
  nlohmann::json first = nlohmann::json::parse(poems("db show 1 --format json --db " + quote(db())).out);
  EXPECT_EQ(first["teds"].size(), 2u);
  EXPECT_EQ(first["teds"][0]["parameters"]["Wg"], 11.5);
}

TEST_F(DbCli, UnknownRunIsAnInputErrorAndBadIdAUsageError) {
  Output r = poems("db show 999 --db " + quote(db()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("poems: error: no run 999"), std::string::npos) << r.err;
  EXPECT_EQ(poems("db show abc --db " + quote(db())).exit_code, 2);
  EXPECT_EQ(poems("db show --db " + quote(db())).exit_code, 2);
  EXPECT_EQ(poems("db").exit_code, 2);
  EXPECT_EQ(poems("db frobnicate").exit_code, 2);
}

TEST_F(DbCli, ExportJsonAndCsv) {
  Output j = poems("db export --format json --db " + quote(db()));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  nlohmann::json all = nlohmann::json::parse(j.out);
  EXPECT_EQ(all["format"], "poems-knowledge-base");
  EXPECT_EQ(all["schema_version"], 2);
  EXPECT_EQ(all["runs"].size(), 5u);
  EXPECT_EQ(all["machines"][0]["name"], "Odin");
  EXPECT_EQ(all["machines"][0]["parameters"]["L"], 5300);
  EXPECT_EQ(all["calibrations"][0]["value"], 11.5);
  EXPECT_EQ(all["studies"][0]["runs"], nlohmann::json::array({1, 2, 3}));
  EXPECT_EQ(all["rules"][0]["rule_text"], "it*jt <= 64 => mk >= 10");
  Output c = poems("db export --format csv --db " + quote(db()));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, poems("db runs --format csv --db " + quote(db())).out);
  EXPECT_EQ(poems("db export --db " + quote(db())).exit_code, 2);  // --format is required
  EXPECT_EQ(poems("db export --format table --db " + quote(db())).exit_code, 2);
}

TEST_F(DbCli, QueryReads) {
  Output r =
      poems("db query \"SELECT status, count(*) AS n FROM runs GROUP BY status ORDER BY status\" --db " + quote(db()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "status   n\ndone     3\nfailed   1\npending  1\n");
  Output j = poems("db query \"SELECT name, json_extract(parameters, '$.L') AS L FROM machines\" --format json --db " +
                   quote(db()));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out), nlohmann::json::parse(R"([{"name": "Odin", "L": 5300}])"));
  Output c = poems("db query \"SELECT id, error FROM runs WHERE error IS NOT NULL\" --format csv --db " + quote(db()));
  EXPECT_EQ(c.out, "id,error\n4,deadlock: rank 0 waits on a receive from rank 1\n");
}

TEST_F(DbCli, QueryRefusesWritesAndBadSql) {
  for (const char* sql : {"DELETE FROM runs", "UPDATE runs SET status = 'done'", "DROP TABLE runs",
                          "INSERT INTO recommender_rules (problem_class, rule_text, support, confidence, created_at) "
                          "VALUES ('a', 'b', 1, 1, 'x')",
                          "PRAGMA user_version = 1", "ATTACH DATABASE 'x.db' AS x"}) {
    Output r = poems(std::string("db query \"") + sql + "\" --db " + quote(db()));
    EXPECT_EQ(r.exit_code, 1) << sql;
    EXPECT_NE(r.err.find("only reading statements are allowed"), std::string::npos) << sql << ": " << r.err;
  }
  Output bad = poems("db query \"SELEC 1\" --db " + quote(db()));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("bad query"), std::string::npos) << bad.err;
  EXPECT_EQ(nlohmann::json::parse(poems("db runs --format json --db " + quote(db())).out).size(), 5u);
}

TEST_F(DbCli, DatabaseFromEnvironmentOrWorkingDirectory) {
  Output env = run("POEMS_DB=" + quote(db()) + " " + POEMS_BINARY + " db runs --format json");
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(nlohmann::json::parse(env.out).size(), 5u);
  fs::path work = *dir_ / "work";
  fs::create_directories(work);
  fs::copy_file(db(), work / "poems.db", fs::copy_options::overwrite_existing);
  Output cwd = run("cd " + quote(work.string()) + " && env -u POEMS_DB " + POEMS_BINARY + " db runs --format json");
  ASSERT_EQ(cwd.exit_code, 0) << cwd.err;
  EXPECT_EQ(nlohmann::json::parse(cwd.out).size(), 5u);
}

TEST_F(DbCli, MissingOrNewerDatabaseIsAnInputError) {
  fs::path missing = *dir_ / "missing.db";
  Output r = poems("db runs --db " + quote(missing.string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no knowledge base at"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(missing));
  fs::path future = *dir_ / "future.db";
  ASSERT_EQ(run(std::string(POEMS_DB_FIXTURE) + " future " + quote(future.string())).exit_code, 0);
  Output f = poems("db runs --db " + quote(future.string()));
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_NE(f.err.find("schema version 99, but this poems supports up to version 2"), std::string::npos) << f.err;
}

}  // namespace
