// PSL fragments the mutating tests insert into specs (psl/mutation_test.cpp,
// support/fuzz/generators.h): each list is the shared punctuation, operators and
// model keywords followed by the test's own fragments. The order is part of
// each test: its seeded random draws index the list, so a fragment moved or
// added changes every mutation the test replays.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

namespace poems::test {

// The shared fragments, then `own`.
inline std::vector<std::string> psl_fragments(std::initializer_list<const char*> own) {
  std::vector<std::string> v = {"{",  "}",     "(",     ")",   "[",         "]",         ";",   ",", ":", "..",
                                "->", "?",     "=",     "==",  "<",         "<=",        "+",   "-", "*", "/",
                                "%",  "model", "param", "let", "taskgraph", "processes", "for", "in"};
  v.insert(v.end(), own.begin(), own.end());
  return v;
}

}  // namespace poems::test
