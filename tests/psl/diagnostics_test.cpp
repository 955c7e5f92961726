#include "poems/base/diagnostics.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace poems::psl;

TEST(Diagnostics, RendersLocationLineAndCaret) {
  SourceManager sources;
  FileId f = sources.add("spec.psl", "model M {\n  param a = 5us + 8KB;\n}\n");
  DiagnosticEngine diags(sources);
  diags.error({f, 2, 17, 1}, "cannot add time and size");
  EXPECT_EQ(diags.render(diags.all()[0]),
            "spec.psl:2:17: error: cannot add time and size\n"
            "    param a = 5us + 8KB;\n"
            "                  ^\n");
}

TEST(Diagnostics, CaretSpansTokenAndKeepsTabs) {
  SourceManager sources;
  FileId f = sources.add("t.psl", "\tparam abc = 1;");
  DiagnosticEngine diags(sources);
  diags.error({f, 1, 8, 3}, "x");
  EXPECT_EQ(diags.render(diags.all()[0]), "t.psl:1:8: error: x\n  \tparam abc = 1;\n  \t      ^~~\n");
}

TEST(Diagnostics, NotesFollowTheirError) {
  SourceManager sources;
  FileId f = sources.add("n.psl", "param a = 1;\nparam a = 2;\n");
  DiagnosticEngine diags(sources);
  auto& d = diags.error({f, 2, 7, 1}, "redefinition of 'a'");
  DiagnosticEngine::note(d, {f, 1, 7, 1}, "previous definition is here");
  std::string text = diags.render(diags.all()[0]);
  EXPECT_NE(text.find("n.psl:2:7: error: redefinition of 'a'"), std::string::npos);
  EXPECT_NE(text.find("n.psl:1:7: note: previous definition is here"), std::string::npos);
  EXPECT_LT(text.find("error:"), text.find("note:"));
}

TEST(Diagnostics, CountsAndSummary) {
  SourceManager sources;
  FileId f = sources.add("c.psl", "x\n");
  DiagnosticEngine diags(sources);
  diags.error({f, 1, 1, 1}, "one");
  diags.warning({f, 1, 1, 1}, "two");
  diags.error({f, 1, 1, 1}, "three");
  EXPECT_EQ(diags.error_count(), 2u);
  EXPECT_EQ(diags.warning_count(), 1u);
  std::ostringstream out;
  diags.print(out);
  EXPECT_NE(out.str().find("2 errors, 1 warning generated."), std::string::npos);
}

TEST(Diagnostics, UnlocatedErrorsNameTheTool) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  diags.error({}, "cannot open 'x.psl'");
  EXPECT_EQ(diags.render(diags.all()[0]), "poems: error: cannot open 'x.psl'\n");
}

TEST(SourceManager, LinesWithoutNewlinesOrCarriageReturns) {
  SourceManager sources;
  FileId f = sources.add("l.psl", "a\r\nbb\n\nccc");
  EXPECT_EQ(sources.line(f, 1), "a");
  EXPECT_EQ(sources.line(f, 2), "bb");
  EXPECT_EQ(sources.line(f, 3), "");
  EXPECT_EQ(sources.line(f, 4), "ccc");
  EXPECT_EQ(sources.line(f, 5), "");
}
