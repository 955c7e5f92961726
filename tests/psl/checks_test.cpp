// Semantic checks whose exact location, note or behaviour matters beyond the
// substring checks of the error corpus.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "poems/psl/frontend.h"

using namespace poems::psl;
namespace fs = std::filesystem;

namespace {
struct Checked {
  bool ok;
  std::vector<Diagnostic> diags;
  std::string text;
};

Checked check(const std::string& src) {
  Frontend fe;
  Checked c{fe.load_text("t.psl", src), fe.diagnostics().all(), ""};
  for (const auto& d : c.diags) c.text += fe.diagnostics().render(d);
  return c;
}

const char* kGraph = "taskgraph t { processes { [r] : 0 <= r < 4 }; }";

fs::path temp_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("poems_checks_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
}  // namespace

TEST(Checks, RedefinitionPointsAtBothDefinitions) {
  Checked c = check("model M {\n  param a = 1;\n  param a = 2;\n}\n");
  ASSERT_FALSE(c.ok);
  ASSERT_EQ(c.diags.size(), 1u);
  EXPECT_EQ(c.diags[0].location.line, 3u);
  EXPECT_EQ(c.diags[0].location.column, 9u);
  ASSERT_EQ(c.diags[0].notes.size(), 1u);
  EXPECT_EQ(c.diags[0].notes[0].location.line, 2u);
}

TEST(Checks, UndefinedNameSuggestsTheClosest) {
  Checked c = check(std::string("model M { param npe_i = 2; let it = 150 / npe_j; ") + kGraph + " }");
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.text.find("use of undefined name 'npe_j'; did you mean 'npe_i'?"), std::string::npos) << c.text;
}

TEST(Checks, NonIntegerLoopBoundWithDefaults) {
  Checked c = check(
      "model M { param mm = 6, mmi = 4;\n taskgraph t { processes { [r] : 0 <= r < 2 };\n"
      " for mo in 1 .. mm / mmi { barrier; } } }");
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.text.find("loop bound is 1.5, not an integer"), std::string::npos) << c.text;
}

TEST(Checks, UnboundedAndEmptyProcessSets) {
  Checked unbounded = check("model M { param P = 4; taskgraph t { processes { [r] : r >= 0 }; } }");
  EXPECT_FALSE(unbounded.ok);
  EXPECT_NE(unbounded.text.find("process set is unbounded"), std::string::npos) << unbounded.text;
  Checked empty = check("model M { param P = 0; taskgraph t { processes { [r] : 0 <= r < P }; } }");
  EXPECT_TRUE(empty.ok) << empty.text;
  EXPECT_NE(empty.text.find("warning: the process set is empty"), std::string::npos) << empty.text;
}

TEST(Checks, NonAffineConstraintLocatedAtTheProduct) {
  Checked c = check("model M { param P = 4;\ntaskgraph t { processes { [i, j] : 0 <= i * j < P }; } }");
  EXPECT_FALSE(c.ok);
  ASSERT_FALSE(c.diags.empty());
  EXPECT_NE(c.diags[0].message.find("must be affine"), std::string::npos);
  EXPECT_EQ(c.diags[0].location.line, 2u);
  EXPECT_EQ(c.diags[0].location.column, 43u);  // the '*'
}

TEST(Checks, IslMapsAreChecked) {
  Checked ok = check(
      "model M { param P = 4; taskgraph t { processes { [r] : 0 <= r < P };\n"
      " send to { [r] -> [r + 1] : r + 1 < P } size 8; } }");
  EXPECT_TRUE(ok.ok) << ok.text;
  Checked bad = check(
      "model M { param P = 4; taskgraph t { processes { [r] : 0 <= r < P };\n"
      " send to { [r, s] -> [r + 1] } size 8; } }");
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.text.find("peer map takes 2 coordinates, but the process set has 1"), std::string::npos) << bad.text;
}

TEST(Checks, SelectorReadingUnknownAttributeWarns) {
  Checked c = check(
      "component A in hardware[network] { accepts { profile { speed = 1; } transaction m(b: bytes); protocol "
      "call_return; } }\n"
      "component B in application[X] { accepts { profile { k = 1; } transaction t(); protocol dataflow; }\n"
      "  requests r { selector sped == 1; transaction m(b = 8B); protocol call_return; } }");
  EXPECT_TRUE(c.ok) << c.text;
  EXPECT_NE(c.text.find("warning: selector references attribute 'sped', which no profile in scope defines; did you "
                        "mean 'speed'?"),
            std::string::npos)
      << c.text;
}

TEST(Checks, SemanticChecksWaitForACleanParse) {
  // The undefined name would be reported, but the syntax error comes first.
  Checked c = check("model M { param a = nosuch; param b = ; }");
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.text.find("undefined name"), std::string::npos) << c.text;
}

TEST(Checks, DeepNestingIsRejectedNotCrashed) {
  std::string deep = "model M { param a = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "; }";
  Checked c = check(deep);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.text.find("brackets nested more than 200 deep"), std::string::npos);
  std::string negations = "model M { param a = " + std::string(100000, '-') + "1; }";
  EXPECT_FALSE(check(negations).ok);
}

TEST(Checks, InvalidUtf8IsLocated) {
  Checked c = check("model M {\n  param a = 1; \xff\xfe\n}\n");
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.text.find("t.psl:2:16: error: invalid UTF-8 byte"), std::string::npos) << c.text;
}

TEST(Imports, DiamondImportLoadsEachFileOnce) {
  fs::path dir = temp_dir("diamond");
  write(dir / "base.psl",
        "component Net in hardware[network] { accepts { profile { L = 1us; } transaction m(b: bytes); protocol "
        "call_return; } }\n");
  write(dir / "left.psl", "import \"base.psl\";\n");
  write(dir / "right.psl", "import \"base.psl\";\n");
  write(dir / "top.psl", "import \"left.psl\";\nimport \"right.psl\";\n");
  Frontend fe;
  EXPECT_TRUE(fe.load_files({(dir / "top.psl").string()}));
  EXPECT_EQ(fe.program().modules.size(), 4u);
  EXPECT_EQ(fe.program().component_count(), 1u);
  fs::remove_all(dir);
}

TEST(Imports, CycleAndMissingFileAreLocatedAtTheImport) {
  fs::path dir = temp_dir("cycle");
  write(dir / "a.psl", "import \"b.psl\";\n");
  write(dir / "b.psl", "// b\nimport \"a.psl\";\nimport \"nowhere.psl\";\n");
  Frontend fe;
  EXPECT_FALSE(fe.load_files({(dir / "a.psl").string()}));
  std::string text;
  for (const auto& d : fe.diagnostics().all()) text += fe.diagnostics().render(d);
  EXPECT_NE(text.find("b.psl:2:8: error: import cycle: a.psl -> b.psl -> a.psl"), std::string::npos) << text;
  EXPECT_NE(text.find("b.psl:3:8: error: cannot open"), std::string::npos) << text;
  fs::remove_all(dir);
}

TEST(Checks, IslKeywordsAreOrdinaryPslNames) {
  Checked c = check(
      "model M { param exists = 4, mod = 2, infty = 3;\n"
      " taskgraph t { processes { [r, NaN] : 0 <= r < exists and 0 <= NaN < mod + infty }; } }");
  EXPECT_TRUE(c.ok) << c.text;
  EXPECT_EQ(c.text, "");
}

TEST(Checks, ReceiveFromAnySourceAndAnyTag) {
  Checked c = check("model M { taskgraph t { processes { [r] : 0 <= r < 4 };\n recv from any size 8B tag any; } }");
  EXPECT_TRUE(c.ok) << c.text;
}

TEST(Checks, LargeParametersGiveNoSpuriousWarning) {
  Checked c = check("model M { param n = 2147483647; taskgraph t { processes { [r] : 0 <= r < n }; } }");
  EXPECT_TRUE(c.ok) << c.text;
  EXPECT_EQ(c.text, "");
}

TEST(Checks, ProcessSetsBeyondThirtyTwoBitRanksAreErrors) {
  // Ranks are MPI ints everywhere: 2^31 processes (or 3e9) cannot be instantiated.
  for (const char* n : {"2147483648", "3000000000", "65536 * 65536"}) {
    Checked c = check(std::string("model M { param n = ") + n +
                      "; taskgraph t { processes { [r, s] : 0 <= r < n and 0 <= s < 1 }; } }");
    EXPECT_FALSE(c.ok) << n;
    EXPECT_NE(c.text.find("error: the process set spans"), std::string::npos) << c.text;
    EXPECT_NE(c.text.find("at most 2^31 - 1 processes are supported"), std::string::npos) << c.text;
  }
}

TEST(Checks, IntegralityFlowsThroughFloorCeilAndLoops) {
  Checked ok = check(
      "model M { param P = 8; taskgraph t { processes { [r] : 0 <= r < P };\n"
      " for k in 0 .. 3 { let half = floor(r / 2); send to [half + k] size 8 * ceil(r / 3); } } }");
  EXPECT_TRUE(ok.ok) << ok.text;
  Checked bad = check(
      "model M { param P = 8; taskgraph t { processes { [r] : 0 <= r < P };\n"
      " send to [r + 1] size 8 * r / 3; } }");
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.text.find("send size may not be a whole number of bytes"), std::string::npos) << bad.text;
}

TEST(Checks, UnreadableInputsAreErrorsNotCrashes) {
  Frontend fe;
  EXPECT_FALSE(fe.load_files({"/dev/zero"}));
  EXPECT_NE(fe.diagnostics().all().at(0).message.find("not a regular file"), std::string::npos);
  Frontend dir;
  EXPECT_FALSE(dir.load_files({"/tmp"}));
  EXPECT_NE(dir.diagnostics().all().at(0).message.find("is a directory"), std::string::npos);
}

TEST(Checks, UnclosedBraceIsPointedAt) {
  Checked c = check("model M {\n  param a = 1;\n");
  EXPECT_FALSE(c.ok);
  ASSERT_EQ(c.diags.size(), 1u);
  ASSERT_EQ(c.diags[0].notes.size(), 1u);
  EXPECT_EQ(c.diags[0].notes[0].message, "to match this '{'");
  EXPECT_EQ(c.diags[0].notes[0].location.line, 1u);
  EXPECT_EQ(c.diags[0].notes[0].location.column, 9u);
}

// `where` in a study: a boolean over the study's varied and set names and the
// model's parameters, with located errors.
TEST(Checks, StudyWhereReadsVariedNamesAndModelParameters) {
  const std::string model = std::string("model M { param px = 1, py = 1, n = 2; ") + kGraph + " }\n";
  Checked ok = check(model +
                     "study s {\n  model M;\n  vary px in [1, 2, 4];\n  set n = 3;\n"
                     "  where px * py <= n and px != 2;\n}\n");
  EXPECT_TRUE(ok.ok) << ok.text;
  Checked unknown = check(model + "study s {\n  model M;\n  vary px in [1, 2, 4];\n  where px * pz == 16;\n}\n");
  EXPECT_FALSE(unknown.ok);
  ASSERT_EQ(unknown.diags.size(), 1u) << unknown.text;
  EXPECT_EQ(unknown.diags[0].location.line, 5u);
  EXPECT_EQ(unknown.diags[0].location.column, 14u);
  EXPECT_NE(unknown.text.find("use of undefined name 'pz'; did you mean 'px'?"), std::string::npos) << unknown.text;
  Checked number = check(model + "study s {\n  model M;\n  vary px in [1, 2, 4];\n  where px * py;\n}\n");
  EXPECT_FALSE(number.ok);
  ASSERT_EQ(number.diags.size(), 1u) << number.text;
  EXPECT_EQ(number.diags[0].location.line, 5u);
  EXPECT_EQ(number.diags[0].location.column, 12u);  // a binary expression is located at its operator
  EXPECT_NE(number.text.find("a study's 'where' constraint must be a boolean, not a number"), std::string::npos)
      << number.text;
}

TEST(Checks, WhereIsStillAName) {
  Checked c = check(std::string("model M { param where = 2; let w = where * 2; ") + kGraph + " }\n");
  EXPECT_TRUE(c.ok) << c.text;
}
