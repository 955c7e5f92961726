#include "poems/psl/value.h"

#include <gtest/gtest.h>

#include "poems/psl/frontend.h"

using namespace poems::psl;

namespace {
// Parses `param x = <text>;` and evaluates x with the given names bound.
EvalResult eval(const std::string& text, const std::map<std::string, Value>& names = {}) {
  Frontend fe;
  fe.load_text("expr.psl", "model M { param x = " + text + "; }");
  const ModelDecl* m = fe.program().find_model("M");
  if (!m || m->params.empty()) return {std::nullopt, "parse failed", {}};
  return evaluate(*m->params[0].value, [&](std::string_view n) -> const Value* {
    auto it = names.find(std::string(n));
    return it == names.end() ? nullptr : &it->second;
  });
}
double num(const std::string& text, const std::map<std::string, Value>& names = {}) {
  EvalResult r = eval(text, names);
  EXPECT_TRUE(r.value) << text << ": " << r.error;
  return r.value ? r.value->number : -1;
}
}  // namespace

TEST(Evaluate, ArithmeticPrecedence) {
  EXPECT_DOUBLE_EQ(num("1 + 2 * 3"), 7);
  EXPECT_DOUBLE_EQ(num("(1 + 2) * 3"), 9);
  EXPECT_DOUBLE_EQ(num("-2 * -3"), 6);
  EXPECT_DOUBLE_EQ(num("7 / 2"), 3.5);  // exact division
  EXPECT_DOUBLE_EQ(num("floor(7 / 2)"), 3);
  EXPECT_DOUBLE_EQ(num("-7 % 3"), 2);  // floor modulo
}

TEST(Evaluate, SweepLocalSizes) {
  // it = ceil(it_g / npe_i): 150 cells on 4 processors -> 38 on the largest.
  std::map<std::string, Value> names{{"it_g", Value::of_number(150)}, {"npe_i", Value::of_number(4)}};
  EXPECT_DOUBLE_EQ(num("ceil(it_g / npe_i)", names), 38);
  // kb = ceil(kt / mk) with kt = 150, mk = 20 -> 8 k-blocks.
  EXPECT_DOUBLE_EQ(num("ceil(150 / 20)"), 8);
}

TEST(Evaluate, OctantDirectionsFollowSweep3DOrder) {
  // (i, j) = (-,-) (-,-) (-,+) (-,+) (+,-) (+,-) (+,+) (+,+)
  const int want_di[8] = {-1, -1, -1, -1, 1, 1, 1, 1};
  const int want_dj[8] = {-1, -1, 1, 1, -1, -1, 1, 1};
  for (int iq = 0; iq < 8; ++iq) {
    std::map<std::string, Value> names{{"iq", Value::of_number(iq)}};
    EXPECT_EQ(num("iq < 4 ? -1 : 1", names), want_di[iq]) << iq;
    EXPECT_EQ(num("floor(iq / 2) % 2 == 0 ? -1 : 1", names), want_dj[iq]) << iq;
  }
}

TEST(Evaluate, UnitsCombine) {
  EvalResult r = eval("1KB * 2.5ns/B + 5.3us");
  ASSERT_TRUE(r.value) << r.error;
  EXPECT_DOUBLE_EQ(r.value->number, 2500 + 5300);
  EXPECT_EQ(r.value->dimension, kTime);
  EXPECT_EQ(eval("8KB / 2us").value->dimension, kBytesPerTime);
}

TEST(Evaluate, UnitErrors) {
  EvalResult r = eval("5us + 8KB");
  EXPECT_FALSE(r.value);
  EXPECT_EQ(r.error, "cannot add time and size");
  EXPECT_EQ(eval("5us < 3").error, "cannot compare time with number");
  EXPECT_NE(eval("ceil(5us)").error.find("needs a plain number"), std::string::npos);
}

TEST(Evaluate, ChainedComparisonIsConjunction) {
  std::map<std::string, Value> names{{"i", Value::of_number(3)}, {"n", Value::of_number(4)}};
  EXPECT_TRUE(eval("0 <= i < n", names).value->boolean);
  names["i"] = Value::of_number(4);
  EXPECT_FALSE(eval("0 <= i < n", names).value->boolean);
}

TEST(Evaluate, LogicShortCircuits) {
  // The right operand would fail on an unbound name; `or` never evaluates it.
  EvalResult r = eval("true or missing > 1");
  ASSERT_TRUE(r.value) << r.error;
  EXPECT_TRUE(r.value->boolean);
  EXPECT_FALSE(eval("false or missing > 1").value);
}

TEST(Evaluate, FunctionsAndErrors) {
  EXPECT_DOUBLE_EQ(num("max(1, 7, 3)"), 7);
  EXPECT_DOUBLE_EQ(num("min(2us, 3us)"), 2000);
  EXPECT_DOUBLE_EQ(num("log2(1024)"), 10);
  EXPECT_DOUBLE_EQ(num("sqrt(16)"), 4);
  EXPECT_DOUBLE_EQ(num("pow(2, 10)"), 1024);
  EXPECT_EQ(eval("1 / 0").error, "division by zero");
  EXPECT_EQ(eval("ceil(1, 2)").error, "function 'ceil' takes 1 argument, not 2");
  EXPECT_NE(eval("nosuch(1)").error.find("unknown function 'nosuch'"), std::string::npos);
  EXPECT_NE(eval("missing + 1").error.find("'missing' has no value"), std::string::npos);
}

TEST(Evaluate, RefsAndStringsCompareByText) {
  EXPECT_TRUE(eval("hardware[processor] == hardware[processor]").value->boolean);
  EXPECT_FALSE(eval("simulation[MPI-Sim] == analytic[LogGP]").value->boolean);
  EXPECT_TRUE(eval("\"k-block\" != \"send\"").value->boolean);
  EXPECT_NE(eval("\"a\" < \"b\"").error.find("orders numbers only"), std::string::npos);
}
