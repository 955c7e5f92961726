// base::escaped: what the knowledge base (Whitespace::Hex) and the processor
// models (Whitespace::Named) quote from files and programs in messages.
#include <gtest/gtest.h>

#include <string>

#include "poems/base/escaped.h"

using poems::base::escaped;
using poems::base::Whitespace;

TEST(Escaped, KeepsPrintableAsciiAndValidUtf8) {
  EXPECT_EQ(escaped("plain text 123 {}"), "plain text 123 {}");
  EXPECT_EQ(escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(escaped(""), "");
}

TEST(Escaped, ControlCharactersAsHex) {
  EXPECT_EQ(escaped(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(escaped("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
  EXPECT_EQ(escaped("\x7f"), "\\x7f");
  EXPECT_EQ(escaped("\r"), "\\x0d");
  // C1 controls (U+0080..U+009F) are valid UTF-8 but reach the terminal: both bytes as hex.
  EXPECT_EQ(escaped("\xc2\x9bx"), "\\xc2\\x9bx");
  EXPECT_EQ(escaped("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is kept
}

TEST(Escaped, BytesThatAreNotUtf8AsHex) {
  EXPECT_EQ(escaped("\xff"), "\\xff");
  EXPECT_EQ(escaped("\xc3"), "\\xc3");           // truncated
  EXPECT_EQ(escaped("\xc3(x"), "\\xc3(x");       // bad continuation
  EXPECT_EQ(escaped("\xc0\xaf"), "\\xc0\\xaf");  // overlong
  EXPECT_EQ(escaped("\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80");
  EXPECT_EQ(escaped("\xe2\x82"), "\\xe2\\x82");
}

TEST(Escaped, NewlineAndTabNamedOrHex) {
  EXPECT_EQ(escaped("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(escaped("a\nb\tc", Whitespace::Named), "a\\nb\\tc");
  EXPECT_EQ(escaped("a\nb\tc", Whitespace::Hex), "a\\x0ab\\x09c");
}
