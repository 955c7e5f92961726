// poems: the command-line front door to the POEMS framework.
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "poems/base/large_stack.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  int result = 0;
  // Every stage after parsing walks expressions recursively: on a large stack
  // the depth limits (docs/limits.md), not the 8 MiB of the main thread,
  // decide how deep a specification may go.
  poems::base::run_on_large_stack([&] { result = poems::cli::run(args, std::cout, std::cerr); });
  return result;
}
