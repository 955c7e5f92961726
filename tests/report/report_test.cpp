// The report library (poems_report) on its own: plain tables, the study
// table as text, CSV and JSON, gnuplot's strings, what a record prints.
// The commands' whole output is checked through `poems` in tests/cli.
#include <gtest/gtest.h>

#include <sstream>

#include "poems/report/evaluation.h"
#include "poems/report/study_table.h"
#include "poems/report/text_table.h"

namespace {

using poems::base::Value;
using poems::core::StudyCell;
using poems::core::StudyRow;
using poems::core::StudyTable;

TEST(TextTable, ColumnsTwoSpacesApartWithoutTrailingBlanks) {
  std::ostringstream out;
  poems::report::print_table({{"rank", "time", ""}, {"1", "2.5 ms", "<- knee"}, {"10", "3 ms", ""}}, out);
  EXPECT_EQ(out.str(), "rank  time\n1     2.5 ms  <- knee\n10    3 ms\n");
}

TEST(TextTable, ThousandsSeparated) {
  EXPECT_EQ(poems::report::with_commas(0), "0");
  EXPECT_EQ(poems::report::with_commas(999), "999");
  EXPECT_EQ(poems::report::with_commas(1000), "1,000");
  EXPECT_EQ(poems::report::with_commas(1234567), "1,234,567");
}

TEST(GnuplotString, QuotesCanNeverEndTheCommand) {
  EXPECT_EQ(poems::report::gnuplot_string("plain"), "'plain'");
  EXPECT_EQ(poems::report::gnuplot_string("it's"), "'it''s'");
  EXPECT_EQ(poems::report::gnuplot_string("a\nb\x7f"), "'a\\x0ab\\x7f'");
}

TEST(PlotAxis, OnlyVariedNamesOrProcesses) {
  EXPECT_NO_THROW(poems::report::check_plot_x("", {"mk"}));
  EXPECT_NO_THROW(poems::report::check_plot_x("processes", {"mk"}));
  EXPECT_NO_THROW(poems::report::check_plot_x("mk", {"mk"}));
  try {
    poems::report::check_plot_x("nx", {"mk"});
    FAIL() << "nx is not varied";
  } catch (const poems::core::UsageError& e) {
    EXPECT_EQ(e.option(), "--plot-x");
    EXPECT_NE(std::string(e.what()).find("choose one of mk, processes"), std::string::npos) << e.what();
  }
}

StudyCell cell(double seconds) {
  StudyCell c;
  c.time_ns = seconds * 1e9;
  c.compute_ns = c.time_ns / 2;
  c.comm_ns = c.time_ns / 4;
  c.sync_ns = c.time_ns / 4;
  return c;
}

// Two bindings of mk on 4 processes, analytic and simulated; the second
// simulation failed.
StudyTable two_rows() {
  StudyTable t;
  t.study = "blocking";
  t.model = "Model";
  t.paradigms = {"analytic[LogGP]", "simulation[MPI-Sim]"};
  t.targets = {"mk"};
  for (double mk : {1.0, 10.0}) {
    StudyRow r;
    r.binding = {{"mk", Value::of_number(mk)}};
    r.processes = 4;
    r.cells[t.paradigms[0]] = cell(mk);
    r.cells[t.paradigms[1]] = cell(mk * 1.5);
    t.rows.push_back(r);
  }
  t.rows[1].cells[t.paradigms[1]].error = "deadlock";
  t.failures = 1;
  return t;
}

TEST(StudyTable, TextHasAColumnPerParadigmAndNamesTheFailure) {
  StudyTable t = two_rows();
  poems::core::finish_study_table(t);
  const std::string text = poems::report::table_text(t, poems::psl::StudyDecl{});
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "study blocking (model Model): times in seconds; speedup relative to the fewest processes of each group; "
            "diff_% = simulation[MPI-Sim] vs analytic[LogGP]");
  EXPECT_NE(text.find("analytic[LogGP] time_s  analytic[LogGP] speedup"), std::string::npos) << text;
  EXPECT_NE(text.find("disagree"), std::string::npos) << text;  // 50% apart: a marked row
  EXPECT_NE(text.find("failed: mk=10 simulation[MPI-Sim]: deadlock\n"), std::string::npos) << text;
}

TEST(StudyTable, CsvAndJsonCarryEveryCell) {
  StudyTable t = two_rows();
  poems::core::finish_study_table(t);
  const std::string csv = poems::report::table_csv(t);
  EXPECT_EQ(csv.substr(0, csv.find(',')), "mk");
  EXPECT_NE(csv.find("\n1,4,1000000000,500000000,250000000,250000000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n10,4,10000000000,"), std::string::npos) << csv;
  const nlohmann::json j = poems::report::table_json(t);
  EXPECT_EQ(j["study"], "blocking");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["binding"]["mk"], 1.0);
  EXPECT_TRUE(j["rows"][1]["times_ns"]["simulation[MPI-Sim]"].is_null());
  EXPECT_EQ(j["rows"][1]["errors"]["simulation[MPI-Sim]"], "deadlock");
}

TEST(StudyTable, WriteSaysWhetherEverythingSucceeded) {
  StudyTable failed = two_rows();
  std::ostringstream out, err;
  EXPECT_FALSE(poems::report::write_study_table(failed, poems::psl::StudyDecl{}, "csv", {}, out, err));
  EXPECT_EQ(out.str(), poems::report::table_csv(failed));
  EXPECT_EQ(err.str(), "");
  StudyTable fine = two_rows();
  fine.rows.pop_back();
  fine.failures = 0;
  std::ostringstream out2;
  EXPECT_TRUE(poems::report::write_study_table(fine, poems::psl::StudyDecl{}, "json", {}, out2, err));
  EXPECT_EQ(nlohmann::json::parse(out2.str())["rows"].size(), 1u);
}

TEST(StudyTable, ValuesAsTheTableShowsThem) {
  EXPECT_EQ(poems::report::value_text(Value::of_number(0.1 + 0.2)), "0.3");
  EXPECT_EQ(poems::report::value_text(Value::of_number(123456789)), "123456789");
  EXPECT_EQ(poems::report::value_text(Value::of_string("fat-tree")), Value::of_string("fat-tree").str());
}

TEST(Record, WhatBecameOfTheRun) {
  poems::core::Cell c;
  c.record = poems::core::RunRecord::State::Stored;
  c.run_id = 3;
  c.store_path = "poems.db";
  std::ostringstream err;
  EXPECT_TRUE(poems::report::write_record(c, err));
  EXPECT_EQ(err.str(), "stored as run 3 in poems.db\n");
  std::ostringstream quiet;
  EXPECT_TRUE(poems::report::write_record(c, quiet, true));
  EXPECT_EQ(quiet.str(), "");
  c.store_error = "database is locked";
  std::ostringstream failed;
  EXPECT_FALSE(poems::report::write_record(c, failed, true));
  EXPECT_EQ(failed.str(), "poems: error: database is locked\n");
}

}  // namespace
