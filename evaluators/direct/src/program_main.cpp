// The entry point of a program built with poems-mpicxx: the program's own
// main is linked as __real_main (-Wl,--wrap=main), and this one runs it as P
// simulated ranks with the options `poems direct` passes in the environment,
// writing the result where POEMS_DIRECT_RESULT says.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "poems/direct/protocol.h"

extern "C" int __real_main(int argc, char** argv, char** envp);
extern "C" [[noreturn]] void __real_exit(int code);

// exit() in the program (linked with -Wl,--wrap=exit) ends only the calling rank.
extern "C" [[noreturn]] void __wrap_exit(int code) {
  if (poems::direct::in_rank()) poems::direct::exit_rank(code);
  __real_exit(code);
}

extern "C" int __wrap_main(int argc, char** argv, char** envp) {
  using namespace poems::direct;
  const char* options_text = std::getenv(kOptionsVariable);
  const char* result_path = std::getenv(kResultVariable);
  const char* self = argc > 0 ? argv[0] : "program";
  if (!options_text || !result_path) {
    std::fprintf(stderr,
                 "%s: this MPI program was built for POEMS direct execution (poems-mpicxx); run it with\n"
                 "  poems direct %s -np P [--machine NAME] [-- ARGS...]\n",
                 self, self);
    return 2;
  }
  DirectOptions options;
  try {
    options = options_from_json(nlohmann::json::parse(options_text));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: bad %s: %s\n", self, kOptionsVariable, e.what());
    return 2;
  }
  std::vector<std::string> args(argv, argv + argc);
  DirectResult result;
  try {
    result = run([envp](int c, char** v) { return __real_main(c, v, envp); }, args, options);
  } catch (const std::exception& e) {
    result.error = e.what();
    result.sim.completed = false;
  }
  std::cout.flush();
  std::ofstream out(result_path);
  out << result_to_json(result).dump() << '\n';
  if (!out) {
    std::fprintf(stderr, "%s: cannot write the result to '%s'\n", self, result_path);
    return 3;
  }
  return result.completed() ? 0 : 3;
}
