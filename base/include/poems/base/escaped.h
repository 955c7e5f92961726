// Text from outside (files, programs' output, other libraries' messages)
// made safe to quote in a message or a log line, every byte still told.
#pragma once

#include <string>
#include <string_view>

namespace poems::base {

// How escaped() writes a newline and a tab.
enum class Whitespace { Named, Hex };  // "\n" and "\t", or "\x0a" and "\x09"

// `text` with control characters (C0, DEL, C1) and bytes that are not UTF-8
// as \xNN; valid UTF-8 is kept. Unlike printable() (diagnostics.h), which
// keeps one column a character for the caret, nothing is lost.
std::string escaped(std::string_view text, Whitespace whitespace = Whitespace::Named);

}  // namespace poems::base
