// db::Run keys: canonical text and its SHA-256.
#include "db_test_util.h"

namespace poems::db {
namespace {

TEST(RunKey, KeyOrderDoesNotMatter) {
  nlohmann::json a = nlohmann::json::parse(R"({"npe_i": 4, "mk": 10, "nested": {"b": 1, "a": [3, 2]}})");
  nlohmann::json b = nlohmann::json::parse(R"({"nested": {"a": [3, 2], "b": 1}, "mk": 10, "npe_i": 4})");
  EXPECT_EQ(canonical_json(a), canonical_json(b));
  EXPECT_EQ(canonical_json(a), R"({"mk":10,"nested":{"a":[3,2],"b":1},"npe_i":4})");
}

TEST(RunKey, NumbersKeepTheirExactValue) {
  EXPECT_EQ(canonical_json(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(canonical_json(0.3), "0.3");
  EXPECT_NE(canonical_json(0.1 + 0.2), canonical_json(0.3));
  EXPECT_EQ(canonical_json(3.0), "3");  // an integral double is the integer
  EXPECT_EQ(canonical_json(3), "3");
  EXPECT_EQ(canonical_json(-0.0), "0");
  EXPECT_EQ(canonical_json(5.3e-6), "5.3e-06");
  EXPECT_EQ(canonical_json(1e300), "1e+300");
  for (double d : {0.1, 1.0 / 3, 2.5e-9, 6.02214076e23, 4.9e-324, 1.7976931348623157e308})
    EXPECT_EQ(std::strtod(canonical_json(d).c_str(), nullptr), d) << canonical_json(d);
}

TEST(RunKey, NonFiniteNumbersAreRefused) {
  EXPECT_THROW(canonical_json(std::nan("")), Error);
  EXPECT_THROW(canonical_json(nlohmann::json{{"L", HUGE_VAL}}), Error);
}

TEST(RunKey, StringsAreEscapedOnce) {
  EXPECT_EQ(canonical_json(nlohmann::json{{"name", "a\"b\\c\nd é"}}), "{\"name\":\"a\\\"b\\\\c\\nd é\"}");
}

TEST(RunKey, EveryFieldTakesPart) {
  RunKey base = testing::test_key(1);
  RunKey other = base;
  EXPECT_EQ(base.digest(), other.digest());
  for (auto change : std::vector<std::function<void(RunKey&)>>{
           [](RunKey& k) { k.model = "Other"; }, [](RunKey& k) { k.evaluator = "simulation[MPI-Sim]"; },
           [](RunKey& k) { k.spec_hash = "other"; }, [](RunKey& k) { k.tool_version = "0.2.0"; },
           [](RunKey& k) { k.binding["mk"] = 11; }}) {
    RunKey changed = base;
    change(changed);
    EXPECT_NE(changed.digest(), base.digest()) << changed.canonical_text();
  }
}

TEST(RunKey, DigestIsSha256OfTheCanonicalText) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  RunKey key = testing::test_key(2);
  EXPECT_EQ(key.digest(), sha256_hex(key.canonical_text()));
  EXPECT_EQ(key.canonical_text(),
            R"({"binding":{"i":2,"mk":10,"x":0.5},"evaluator":"analytic[LogGP]","model":"Sweep3D",)"
            R"("spec_hash":"spec-hash","tool_version":"0.1.0"})");
}

TEST(RunKey, BindingMustBeAnObject) {
  RunKey key = testing::test_key(1);
  key.binding = nlohmann::json::array({1, 2});
  EXPECT_THROW(key.canonical_text(), Error);
}

}  // namespace
}  // namespace poems::db
