// core's reports of the knowledge base (what `poems db` prints), its --since
// dates and ages, and the one StoreError of the knowledge base and the core.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <type_traits>

#include "poems/core/error.h"
#include "poems/core/store.h"
#include "poems/core/store_report.h"
#include "poems/db/knowledge_base.h"

namespace fs = std::filesystem;
using namespace poems;

namespace {

class StoreReport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("poems_store_report_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A knowledge base with two runs of study "sizes": a done one whose model
  // and binding hold control characters, and a failed one.
  std::string sample() {
    const std::string path = (dir_ / "kb.db").string();
    db::KnowledgeBase kb(path);
    const db::RowId study = kb.put_study("sizes", "hash");
    db::RunKey done{"Ring\x1b[2J",
                    "analytic[LogGP]",
                    "hash",
                    "1.0",
                    {{"L_ps", 5300000}, {"S_bytes", 32768}, {"note", "a,\rb"}, {"n", 4}}};
    db::RunStart s = kb.begin_run(done);
    db::Result result;
    result.time_ns = 1234567800;
    result.compute_ns = 5300;
    kb.complete_run(s.handle, result);
    kb.add_run_to_study(study, s.run.id);
    db::RunKey failed = done;
    failed.model = "Ring";
    failed.binding["n"] = 8;
    db::RunStart f = kb.begin_run(failed);
    kb.fail_run(f.handle, "dead\nlock");
    kb.add_run_to_study(study, f.run.id);
    return path;
  }
  fs::path dir_;
};

TEST(SinceTime, DatesTimesAndAges) {
  const std::time_t now = 1795321388;  // 2026-11-22T04:23:08Z
  EXPECT_EQ(core::since_time("2026-11-22", now), "2026-11-22");
  EXPECT_EQ(core::since_time("2026-11-22T04:00", now), "2026-11-22T04:00");
  EXPECT_EQ(core::since_time("2026-11-22 04:00:30", now), "2026-11-22T04:00:30");
  EXPECT_EQ(core::since_time("90s", now), "2026-11-22T04:21:38");
  EXPECT_EQ(core::since_time("30m", now), "2026-11-22T03:53:08");
  EXPECT_EQ(core::since_time("12h", now), "2026-11-21T16:23:08");
  EXPECT_EQ(core::since_time("7d", now), "2026-11-15T04:23:08");
  for (const char* bad :
       {"", "yesterday", "7w", "2026-1-1", "2026-11-22T", "2026-11-22X04", "2026-11-22T04:00:30Z", "d", "1234567890d"})
    EXPECT_EQ(core::since_time(bad, now), std::nullopt) << bad;
}

TEST(HumanUnits, TimesAndSizes) {
  EXPECT_EQ(core::human_time_ns(0), "0 s");
  EXPECT_EQ(core::human_time_ns(0.3), "0.3 ns");
  EXPECT_EQ(core::human_time_ns(5300), "5.3 µs");
  EXPECT_EQ(core::human_time_ns(825000000), "825 ms");
  EXPECT_EQ(core::human_time_ns(1234567800), "1.235 s");
  EXPECT_EQ(core::human_bytes(1000), "1000 B");
  EXPECT_EQ(core::human_bytes(32768), "32 KiB");
  EXPECT_EQ(core::human_bytes(3000000), "2.861 MiB");
}

TEST_F(StoreReport, TablesEscapeStoredTextAndCsvQuotesIt) {
  const core::StoreReader reader(sample());
  const core::RunsReport runs = reader.runs({.limit = 1});
  EXPECT_EQ(runs.selected, 2);  // the table was cut at the limit
  EXPECT_NE(runs.text.find("2   failed  Ring"), std::string::npos) << runs.text;
  const std::string all = reader.runs({}).text;
  EXPECT_NE(all.find("Ring\\x1b[2J"), std::string::npos) << all;
  EXPECT_EQ(all.find('\x1b'), std::string::npos) << all;
  EXPECT_NE(all.find("L=5.3 µs S=32 KiB n=4 note=a,\\x0db"), std::string::npos) << all;
  EXPECT_NE(reader.run(2, core::ReportFormat::Table).find("error         dead\\x0alock\n"), std::string::npos);
  EXPECT_EQ(reader.study("sizes", core::ReportFormat::Csv),
            "run,model,evaluator,status,L_ps,S_bytes,n,note,time_ns,compute_ns,comm_ns,sync_ns,events\n"
            "1,Ring\x1b[2J,analytic[LogGP],done,5300000,32768,4,\"a,\rb\",1234567800.0,5300.0,,,\n"
            "2,Ring,analytic[LogGP],failed,5300000,32768,8,\"a,\rb\",,,,,\n");
  const std::string table = reader.study("sizes", core::ReportFormat::Table);
  EXPECT_EQ(table.rfind("study sizes: 2 runs; every run: L=5.3 µs S=32 KiB note=a,\\x0db\nrun  evaluator", 0), 0u)
      << table;
}

TEST_F(StoreReport, UnknownRunsAndStudiesAreInputErrors) {
  const std::string path = sample();
  const core::StoreReader reader(path);
  try {
    reader.run(9, core::ReportFormat::Table);
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "no run 9 in '" + path + "'");
  }
  try {
    reader.study("nosuch", core::ReportFormat::Csv);
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "no runs of a study named 'nosuch' in '" + path + "' (studies: 'sizes')");
  }
  // Reading never creates a file.
  EXPECT_THROW(core::StoreReader((dir_ / "missing.db").string()), db::Error);
  EXPECT_FALSE(fs::exists(dir_ / "missing.db"));
}

// One StoreError: what the knowledge base throws is what the core throws
// and catches (an evaluation failure, exit 3, for the tools).
TEST_F(StoreReport, OneStoreError) {
  static_assert(std::is_same_v<core::StoreError, db::StoreError>);
  try {
    core::Store store({.disabled = false, .path = (dir_ / "no" / "such" / "dir" / "kb.db").string()});
    FAIL() << "no error";
  } catch (const db::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot store results"), std::string::npos) << e.what();
  }
}

}  // namespace
