// poems-kernel: runs a registered native kernel for given params N times and
// nothing else, so that a tool such as cachegrind sees only the kernel (and a
// start-up that processor[cachesim] subtracts: docs/processor.md).
//
//   poems-kernel KERNEL [--calls N] [NAME=VALUE ...]
//   poems-kernel --list
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <string>

#include "poems/examples/examples.h"
#include "poems/processor/processor_model.h"

namespace {

int usage(const std::string& problem) {
  std::cerr << "poems-kernel: " << problem << "\nusage: poems-kernel KERNEL [--calls N] [NAME=VALUE ...]"
            << "\n       poems-kernel --list\n";
  return 2;
}

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(value);
}

}  // namespace

int main(int argc, char** argv) {
  poems::examples::register_examples();
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const std::string& name : poems::processor::kernels())
      if (poems::processor::find_kernel(name)) std::cout << name << '\n';
    return 0;
  }
  if (argc < 2) return usage("no kernel given");
  const std::string kernel_name = argv[1];
  const poems::processor::Kernel kernel = poems::processor::find_kernel(kernel_name);
  if (!kernel) return usage("unknown native kernel '" + kernel_name + "' (poems-kernel --list shows them)");
  long calls = 1;
  std::map<std::string, double> params;
  for (int a = 2; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--calls") {
      double n = 0;
      if (a + 1 >= argc || !parse_number(argv[a + 1], n) || n != std::floor(n) || n < 0 || n > 1e9)
        return usage("--calls needs a whole number from 0 to 1000000000");
      calls = static_cast<long>(n);
      ++a;
      continue;
    }
    const auto eq = arg.find('=');
    double value = 0;
    if (eq == std::string::npos || eq == 0 || !parse_number(arg.substr(eq + 1), value))
      return usage("'" + arg + "' is not NAME=VALUE with a finite number");
    params[arg.substr(0, eq)] = value;
  }
  try {
    for (long c = 0; c < calls; ++c) kernel(params);
  } catch (const std::exception& e) {
    std::cerr << "poems-kernel: kernel '" << kernel_name << "' failed: " << e.what() << '\n';
    return 3;
  }
  return 0;
}
