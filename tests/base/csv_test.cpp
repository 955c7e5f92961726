// base::csv_field and csv_row: the one CSV writer (RFC 4180 quoting).
#include <gtest/gtest.h>

#include <string>

#include "poems/base/csv.h"

using poems::base::append_csv_row;
using poems::base::csv_field;
using poems::base::csv_row;

TEST(Csv, PlainFieldsAreUnchanged) {
  EXPECT_EQ(csv_field("analytic[LogGP]"), "analytic[LogGP]");
  EXPECT_EQ(csv_field("1234567800.0"), "1234567800.0");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("caf\xc3\xa9 it's; tab\there"), "caf\xc3\xa9 it's; tab\there");
}

TEST(Csv, SeparatorsQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("\""), "\"\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  // A lone carriage return ends a record for many readers: quoted too.
  EXPECT_EQ(csv_field("a\rb"), "\"a\rb\"");
  EXPECT_EQ(csv_field("a\r\nb"), "\"a\r\nb\"");
  EXPECT_EQ(csv_field(R"({"note":"x, \"y\""})"), R"("{""note"":""x, \""y\""""}")");
}

TEST(Csv, RowsAreFieldsCommaSeparatedEndingWithALineFeed) {
  EXPECT_EQ(csv_row({"id", "error"}), "id,error\n");
  EXPECT_EQ(csv_row({"4", "deadlock: rank 0, rank 1", ""}), "4,\"deadlock: rank 0, rank 1\",\n");
  EXPECT_EQ(csv_row({}), "\n");
  EXPECT_EQ(csv_row({""}), "\n");
  std::string out = "run\n";
  append_csv_row(out, {"1", "a\rb"});
  EXPECT_EQ(out, "run\n1,\"a\rb\"\n");
}
