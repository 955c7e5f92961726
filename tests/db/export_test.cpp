// Export: CSV and JSON give back exactly the stored values.
#include <cstring>

#include "db_test_util.h"

namespace poems::db {
namespace {

using testing::ScratchDir;

// RFC 4180 reader for the round trip.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
    } else {
      field += c;
    }
  }
  return rows;
}

// strtod, not stod: stod throws on subnormals such as 4.9e-324.
double parse_double(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class Export : public ::testing::Test {
 protected:
  void SetUp() override {
    kb_ = std::make_unique<KnowledgeBase>(dir_.file());
    const double awkward[] = {0.1 + 0.2, 1.0 / 3, 4.9e-324, 1.7976931348623157e308, 123456789.123456789};
    for (int i = 0; i < 5; ++i) {
      RunKey key = testing::test_key(i);
      key.binding["name"] = "comma, \"quote\"\nnewline é";
      key.binding["latency"] = awkward[i];
      RunStart s = kb_->begin_run(key);
      Result r = testing::test_result(i);
      r.time_ns = awkward[i];
      r.kind = i % 2 ? ResultKind::kMeasured : ResultKind::kPredicted;
      if (i == 3) r.compute_ns.reset();
      kb_->complete_run(s.handle, r);
    }
    RunStart failed = kb_->begin_run(testing::test_key(10));
    kb_->fail_run(failed.handle, "deadlock, rank \"0\"\nwaits");
    kb_->put_machine({"Odin", {{"L", 5300}, {"G", 2.5}}, Provenance::kPublished, "the LogGOPSim paper", ""});
    kb_->add_calibration({0, "Odin", "Wg", "measured", 0.1 + 0.2, ""});
    kb_->add_rule({0, "Sweep3D", "mk >= 10", 4, 0.75, {{"threshold", 64}}});
    kb_->put_component("KBlock", "component KBlock {}");
    kb_->put_task_graph("Sweep3D", "spec-hash", {{"nodes", 5}});
    kb_->store_teds(1, {{"kblock", "processor[wg]", {{"Wg", 11.5}}}});
  }
  ScratchDir dir_;
  std::unique_ptr<KnowledgeBase> kb_;
};

TEST_F(Export, CsvRoundTripsEveryValue) {
  std::vector<db::Run> runs = kb_->runs();
  auto rows = parse_csv(kb_->export_csv());
  ASSERT_EQ(rows.size(), runs.size() + 1);
  const auto& header = rows[0];
  auto col = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<std::size_t>(it - header.begin());
  };
  for (std::size_t n = 0; n < runs.size(); ++n) {
    const db::Run& run = runs[n];
    const auto& row = rows[n + 1];
    ASSERT_EQ(row.size(), header.size());
    EXPECT_EQ(std::stoll(row[col("id")]), run.id);
    EXPECT_EQ(row[col("run_key")], run.run_key);
    EXPECT_EQ(nlohmann::json::parse(row[col("binding")]), run.binding);
    EXPECT_EQ(row[col("status")], to_string(run.status));
    EXPECT_EQ(row[col("error")], run.error.value_or(""));
    EXPECT_EQ(row[col("finished_at")], run.finished_at.value_or(""));
    if (!run.result) {
      EXPECT_EQ(row[col("time_ns")], "");
      continue;
    }
    EXPECT_TRUE(same_bits(parse_double(row[col("time_ns")]), run.result->time_ns)) << row[col("time_ns")];
    EXPECT_EQ(row[col("kind")], to_string(run.result->kind));
    if (run.result->compute_ns)
      EXPECT_TRUE(same_bits(parse_double(row[col("compute_ns")]), *run.result->compute_ns));
    else
      EXPECT_EQ(row[col("compute_ns")], "");
    EXPECT_EQ(std::stoll(row[col("events")]), *run.result->events);
    EXPECT_EQ(nlohmann::json::parse(row[col("extra")]), run.result->extra);
  }
}

TEST_F(Export, JsonRoundTripsEveryValue) {
  nlohmann::json j = nlohmann::json::parse(kb_->export_json().dump(2));  // through text, as the CLI prints it
  EXPECT_EQ(j["schema_version"], 3);
  std::vector<db::Run> runs = kb_->runs();
  ASSERT_EQ(j["runs"].size(), runs.size());
  for (std::size_t n = 0; n < runs.size(); ++n) {
    const nlohmann::json& r = j["runs"][n];
    EXPECT_EQ(r["id"], runs[n].id);
    EXPECT_EQ(r["binding"], runs[n].binding);
    EXPECT_EQ(r["status"], to_string(runs[n].status));
    if (runs[n].result) {
      EXPECT_TRUE(same_bits(r["result"]["time_ns"].get<double>(), runs[n].result->time_ns));
      EXPECT_EQ(r["result"]["extra"], runs[n].result->extra);
    } else {
      EXPECT_TRUE(r["result"].is_null());
      EXPECT_EQ(r["error"], *runs[n].error);
    }
  }
  EXPECT_EQ(j["runs"][0]["teds"][0]["parameters"]["Wg"], 11.5);
  EXPECT_EQ(j["machines"][0]["parameters"]["G"], 2.5);
  EXPECT_EQ(j["machines"][0]["provenance"], "published");
  EXPECT_TRUE(same_bits(j["calibrations"][0]["value"].get<double>(), 0.1 + 0.2));
  EXPECT_EQ(j["rules"][0]["support"], 4);
  EXPECT_EQ(j["components"][0]["content_hash"], sha256_hex("component KBlock {}"));
  EXPECT_EQ(j["task_graphs"][0]["summary"]["nodes"], 5);
}

TEST_F(Export, CatalogUpsertsKeepIdentities) {
  RowId odin = kb_->put_machine({"Odin", {{"L", 6000}}, Provenance::kCalibrated, "poems calibrate", ""});
  EXPECT_EQ(kb_->machines().size(), 1u);
  EXPECT_EQ(kb_->machine("Odin")->parameters["L"], 6000);
  EXPECT_EQ(kb_->machine("Odin")->provenance, Provenance::kCalibrated);
  EXPECT_EQ(kb_->calibrations("Odin").size(), 1u);  // still attached after the update
  EXPECT_EQ(kb_->put_machine({"Odin", {}, Provenance::kUser, "", ""}), odin);
  EXPECT_FALSE(kb_->machine("BigRed"));
  EXPECT_THROW(kb_->add_calibration({0, "BigRed", "L", "pingpong", 1, ""}), Error);
  RowId component = kb_->put_component("KBlock", "component KBlock {}");
  EXPECT_EQ(kb_->put_component("KBlock", "component KBlock {}"), component);
  EXPECT_NE(kb_->put_component("KBlock", "component KBlock { }"), component);
  EXPECT_EQ(kb_->components().size(), 2u);
  EXPECT_EQ(kb_->rules("Sweep3D").size(), 1u);
  EXPECT_EQ(kb_->rules("Other").size(), 0u);
}

}  // namespace
}  // namespace poems::db
