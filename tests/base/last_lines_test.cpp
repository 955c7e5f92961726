// base::last_lines: what error messages quote from a failed child's output.
#include "poems/base/last_lines.h"

#include <gtest/gtest.h>

using poems::base::last_lines;

TEST(LastLines, TheLastLinesWithoutTheEndingNewlines) {
  EXPECT_EQ(last_lines("a\nb\nc\n", 2), "b\nc");
  EXPECT_EQ(last_lines("a\nb\nc", 2), "b\nc");
  EXPECT_EQ(last_lines("a\nb\nc\n\n\n", 1), "c");
  EXPECT_EQ(last_lines("a\nb\nc\n", 3), "a\nb\nc");
  EXPECT_EQ(last_lines("a\nb\nc\n", 10), "a\nb\nc");
  EXPECT_EQ(last_lines("\nx", 1), "x");
  EXPECT_EQ(last_lines("only", 1), "only");
  EXPECT_EQ(last_lines("", 4), "");
  EXPECT_EQ(last_lines("\n\n", 4), "");
  EXPECT_EQ(last_lines("a\nb", 0), "");
}
