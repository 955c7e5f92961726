#include "poems/base/units.h"

#include <gtest/gtest.h>

using namespace poems::psl;

TEST(Units, TimeSuffixesScaleToNanoseconds) {
  EXPECT_DOUBLE_EQ(parse_quantity("5.3us")->value, 5300.0);
  EXPECT_DOUBLE_EQ(parse_quantity("2ms")->value, 2e6);
  EXPECT_DOUBLE_EQ(parse_quantity("1s")->value, 1e9);
  EXPECT_DOUBLE_EQ(parse_quantity("250ps")->value, 0.25);
  EXPECT_EQ(parse_quantity("7ns")->dimension, kTime);
}

TEST(Units, SizesAreDecimalAndBinary) {
  EXPECT_DOUBLE_EQ(parse_quantity("8KB")->value, 8000.0);
  EXPECT_DOUBLE_EQ(parse_quantity("8KiB")->value, 8192.0);
  EXPECT_DOUBLE_EQ(parse_quantity("1GiB")->value, 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_quantity("32768B")->value, 32768.0);
  EXPECT_EQ(parse_quantity("2MB")->dimension, kBytes);
}

TEST(Units, PerByteAndRates) {
  // G = 0.04 ns/B is a 200 Gb/s link: 25 GB/s.
  auto g = parse_quantity("0.04ns/B");
  ASSERT_TRUE(g);
  EXPECT_DOUBLE_EQ(g->value, 0.04);
  EXPECT_EQ(g->dimension, kTimePerByte);
  auto bw = parse_quantity("25GB/s");
  ASSERT_TRUE(bw);
  EXPECT_DOUBLE_EQ(bw->value, 25.0);  // bytes per ns
  EXPECT_EQ(bw->dimension, kBytesPerTime);
  EXPECT_DOUBLE_EQ(parse_quantity("2.5ns/B")->value * parse_quantity("1KB")->value, 2500.0);
}

TEST(Units, BareNumbersAreDimensionless) {
  auto q = parse_quantity("1e3");
  ASSERT_TRUE(q);
  EXPECT_DOUBLE_EQ(q->value, 1000.0);
  EXPECT_TRUE(q->dimension.dimensionless());
}

TEST(Units, RejectsUnknownUnitsAndGarbage) {
  std::string error;
  EXPECT_FALSE(parse_quantity("5parsecs", &error));
  EXPECT_NE(error.find("unknown unit 'parsecs'"), std::string::npos);
  EXPECT_FALSE(parse_quantity("", &error));
  EXPECT_FALSE(parse_quantity("us", &error));
  EXPECT_NE(error.find("not a number"), std::string::npos);
  EXPECT_FALSE(parse_quantity("1e999", &error));
  EXPECT_NE(error.find("out of range"), std::string::npos);
}

TEST(Units, DimensionArithmeticAndNames) {
  EXPECT_EQ(kTimePerByte * kBytes, kTime);
  EXPECT_EQ(kTime / kBytes, kTimePerByte);
  EXPECT_EQ(dimension_name(kTime), "time");
  EXPECT_EQ(dimension_name(kBytes), "size");
  EXPECT_EQ(dimension_name(kDimensionless), "number");
  EXPECT_EQ(dimension_name(Dimension{2, -1}), "ns^2*B^-1");
}
