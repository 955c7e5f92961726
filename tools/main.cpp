// poems: the command-line front door to the POEMS framework.
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return poems::cli::run(args, std::cout, std::cerr);
}
