// End-to-end: `poems db ...` on a knowledge base built by poems_db_fixture.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include "run_command.h"

#include <algorithm>
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
  static Output poems(const std::string& args) {
    return run("env -u POEMS_DB " + std::string(POEMS_BINARY) + " " + args);
  }
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
  EXPECT_NE(r.out.find("1.235 s"), std::string::npos) << r.out;  // 1234567800 ns in human units
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
  EXPECT_EQ(all["schema_version"], 3);
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
  EXPECT_NE(f.err.find("schema version 99, but this poems supports up to version 3"), std::string::npos) << f.err;
}

TEST_F(DbCli, RunsFiltersLimitAndHumanUnits) {
  // Issue 24: a limit by default, filters for study, model, evaluator and age.
  Output latest = poems("db runs --limit 2 --db " + quote(db()));
  ASSERT_EQ(latest.exit_code, 0) << latest.err;
  EXPECT_EQ(std::count(latest.out.begin(), latest.out.end(), '\n'), 3);  // header + runs 4 and 5
  EXPECT_NE(latest.out.find("\n4   failed"), std::string::npos) << latest.out;
  EXPECT_NE(latest.out.find("\n5   pending"), std::string::npos) << latest.out;
  EXPECT_NE(latest.err.find("the latest 2 of 5 runs"), std::string::npos) << latest.err;
  Output study = poems("db runs --study blocking --format json --db " + quote(db()));
  ASSERT_EQ(study.exit_code, 0) << study.err;
  EXPECT_EQ(nlohmann::json::parse(study.out).size(), 3u);
  Output sim = poems("db runs --model Sweep3D --evaluator 'simulation[MPI-Sim]' --format json --db " + quote(db()));
  EXPECT_EQ(nlohmann::json::parse(sim.out).size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(poems("db runs --since 1d --format json --db " + quote(db())).out).size(), 5u);
  EXPECT_EQ(nlohmann::json::parse(poems("db runs --since 2999-01-01 --format json --db " + quote(db())).out).size(),
            0u);
  EXPECT_EQ(poems("db runs --since yesterday --db " + quote(db())).exit_code, 2);
  // Bindings in the table read "mk=10", times "1.235 s".
  Output table = poems("db runs --db " + quote(db()));
  EXPECT_NE(table.out.find("it_g=150 jt_g=150 kt=150 mk=10 mmi=3 npe_i=2 npe_j=3"), std::string::npos) << table.out;
}

TEST_F(DbCli, AStudyIsOneTable) {
  Output csv = poems("db study blocking --format csv --db " + quote(db()));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out,
            "run,model,evaluator,status,it_g,jt_g,kt,mk,mmi,npe_i,npe_j,time_ns,compute_ns,comm_ns,sync_ns,events\n"
            "1,Sweep3D,analytic[LogGP],done,150,150,150,10,3,2,3,1234567800.0,925925850.0,308641950.0,0.0,\n"
            "2,Sweep3D,analytic[LogGP],done,150,150,150,20,3,2,3,1100000000.0,825000000.0,275000000.0,0.0,\n"
            "3,Sweep3D,analytic[LogGP],done,150,150,150,30,3,2,3,0.30000000000000004,0.22500000000000003,"
            "0.07500000000000001,0.0,\n");
  Output table = poems("db study blocking --db " + quote(db()));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("study blocking: 3 runs; every run: it_g=150 jt_g=150 kt=150 mmi=3 npe_i=2 npe_j=3"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("1    analytic[LogGP]  done    10  1.235 s"), std::string::npos) << table.out;
  nlohmann::json j = nlohmann::json::parse(poems("db study blocking --format json --db " + quote(db())).out);
  EXPECT_EQ(j["runs"][1]["mk"], 20);
  EXPECT_EQ(j["runs"][1]["time_ns"], 1.1e9);
  Output none = poems("db study nosuch --db " + quote(db()));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no runs of a study named 'nosuch'"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("(studies: 'blocking')"), std::string::npos) << none.err;
}

TEST_F(DbCli, StatsGiveTheSizePerRun) {
  Output r = poems("db stats --db " + quote(db()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("runs            5\n"), std::string::npos) << r.out;
  const auto bytes = fs::file_size(db());
  EXPECT_NE(r.out.find("bytes_per_run   " + std::to_string((bytes + 2) / 5)), std::string::npos) << r.out << bytes;
}

TEST_F(DbCli, ReadingNeverChangesAFile) {
  // Issue 25: `db runs --db foreign.sqlite` switched it to WAL mode before refusing it;
  // a knowledge base truncated to one byte was recreated empty.
  fs::path foreign = *dir_ / "foreign.sqlite";
  ASSERT_EQ(run("python3 -c \"import sqlite3; c = sqlite3.connect('" + foreign.string() +
                "'); c.execute('CREATE TABLE t (x)'); c.commit()\"")
                .exit_code,
            0);
  const auto size = fs::file_size(foreign);
  for (const char* command : {"runs", "stats", "export --format json", "query \"SELECT 1\""}) {
    Output r = poems(std::string("db ") + command + " --db " + quote(foreign.string()));
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_NE(r.err.find("is an SQLite file but not a POEMS knowledge base"), std::string::npos) << r.err;
  }
  EXPECT_EQ(fs::file_size(foreign), size);
  EXPECT_EQ(run("python3 -c \"import sqlite3; print(sqlite3.connect('" + foreign.string() +
                "').execute('PRAGMA journal_mode').fetchone()[0])\"")
                .out,
            "delete\n");
  fs::path truncated = *dir_ / "truncated.db";
  std::ofstream(truncated) << "x";
  Output t = poems("db runs --db " + quote(truncated.string()));
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.err.find("is not an SQLite database (1 bytes"), std::string::npos) << t.err;
  EXPECT_EQ(fs::file_size(truncated), 1u);
  Output m = poems("db migrate --db " + quote(truncated.string()));
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_EQ(fs::file_size(truncated), 1u);
}

TEST_F(DbCli, QueryBudgetAndFunctions) {
  // Issue 25: fts3_tokenizer was allowed; a recursive CTE never returned.
  Output f = poems("db query \"SELECT fts3_tokenizer('simple')\" --db " + quote(db()));
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_NE(f.err.find("only reading statements are allowed"), std::string::npos) << f.err;
  Output r = poems(
      "db query \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c\" "
      "--timeout 0.3 --db " +
      quote(db()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the query was stopped after 0.3 s"), std::string::npos) << r.err;
}

}  // namespace
