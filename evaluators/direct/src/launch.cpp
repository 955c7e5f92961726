// How a program built with the poems-mpi* wrappers starts (libpoems_mpi.so):
//
// - Ranks as processes (the default): this library's constructor runs before
//   the program's own constructors. It becomes the controller: it forks one
//   process per rank, each of which goes on to the program's constructors
//   and main as under mpirun, while the controller runs the engine, writes
//   the result and exits without ever running program code.
// - Ranks as threads (--isolation threads): the program's main is linked as
//   __real_main (-Wl,--wrap=main; stub in main_stub.c); __wrap_main runs it
//   as P threads.
// - Started alone (no POEMS_DIRECT_OPTIONS): one rank with the default
//   machine, exiting with the program's status, so configure scripts and
//   try-runs that execute the program work.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <ios>
#include <string>
#include <vector>

#include "poems/direct/protocol.h"
#include "runtime_impl.h"

namespace poems::direct::detail {

namespace {

struct Launch {
  DirectOptions options;
  std::string result_path;   // empty: started alone
  std::string program_name;  // argv[0]
  bool threads_pending = false;
};
Launch* g_launch = nullptr;  // the controller's (and, copied, each rank's) launch record

// The exit status of a run: `poems direct` reads the result file (0 or 3);
// a program started alone exits as its rank did.
int exit_status(const Launch& l, const DirectResult& r) {
  if (!l.result_path.empty()) {
    std::ofstream out(l.result_path);
    out << result_to_json(r).dump() << '\n';
    if (!out) {
      std::fprintf(stderr, "%s: cannot write the result to '%s'\n", l.program_name.c_str(), l.result_path.c_str());
      return 3;
    }
    return r.completed() ? 0 : 3;
  }
  int code = r.exit_codes.empty() ? 0 : r.exit_codes.front();
  if (r.completed()) return code;
  const bool plain_exit = r.error.find(" exited with status ") != std::string::npos &&
                          r.error.find("before MPI_Finalize") == std::string::npos;
  if (!plain_exit) std::fprintf(stderr, "%s: %s\n", l.program_name.c_str(), r.error.c_str());
  if (code > 0) return code;
  if (r.abort_code != 0) return r.abort_code;
  return 1;
}

bool read_options(Launch& l, const char* self) {
  const char* options_text = std::getenv(kOptionsVariable);
  const char* result_path = std::getenv(kResultVariable);
  l.program_name = self;
  if (options_text) {
    try {
      l.options = options_from_json(nlohmann::json::parse(options_text));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: bad %s: %s\n", self, kOptionsVariable, e.what());
      return false;
    }
    if (result_path) l.result_path = result_path;
  } else {
    l.options = DirectOptions{};  // one rank, the default machine, measured computation
  }
  // Programs the ranks start (system(), a shell) are not part of this run.
  ::unsetenv(kOptionsVariable);
  ::unsetenv(kResultVariable);
  return true;
}

}  // namespace

}  // namespace poems::direct::detail

using namespace poems::direct;
using namespace poems::direct::detail;

namespace {

// Processes: the ranks' own exit path (exit(), return from main) reports
// their status and their last computation.
void rank_exit_handler(int status, void*) {
  Runtime* rt = Runtime::active();
  if (rt && self_rank_process() >= 0) rt->rank_exiting(status);
}

__attribute__((constructor)) void poems_direct_launch(int argc, char** argv, char**) {
  // The controller never leaves this constructor, so the static initializers
  // of the objects linked after this one (<iostream>'s among them) never run
  // in it: the standard streams the engine's progress line writes to are
  // made here (an ASan build's controller crashed drawing it otherwise).
  static const std::ios_base::Init streams;
  auto* l = new Launch();
  g_launch = l;
  if (!read_options(*l, argc > 0 ? argv[0] : "program")) std::_Exit(2);
  if (l->options.isolation == Isolation::Threads) {
    l->threads_pending = true;  // __wrap_main runs the ranks
    return;
  }
  DirectResult result;
  Runtime* rt = nullptr;
  try {
    create_shared_region(l->options);
    rt = shared_new<Runtime>(Program{}, std::vector<std::string>(argv, argv + argc), l->options);
    if (rt->start_processes() >= 0) {
      ::on_exit(rank_exit_handler, nullptr);
      return;  // a rank: on to the program's constructors and main
    }
    result = rt->run();
  } catch (const std::exception& e) {
    result.error = e.what();
    result.sim.completed = false;
  }
  finish_processes(rt, &result);
  std::fflush(nullptr);
  std::_Exit(exit_status(*l, result));
}

}  // namespace

// Called by __wrap_main (main_stub.c): threads run the program here; a rank
// process (or a program not run by the launcher) calls its main.
extern "C" __attribute__((visibility("default"))) int poems_direct_main(int argc, char** argv, char** envp,
                                                                        int (*real_main)(int, char**, char**)) {
  Launch* l = g_launch;
  if (!l || !l->threads_pending) return real_main(argc, argv, envp);
  l->threads_pending = false;
  DirectResult result;
  try {
    result = run([real_main, envp](int c, char** v) { return real_main(c, v, envp); },
                 std::vector<std::string>(argv, argv + argc), l->options);
  } catch (const std::exception& e) {
    result.error = e.what();
    result.sim.completed = false;
  }
  std::fflush(nullptr);
  return exit_status(*l, result);
}

// Called by __wrap_exit: exit() in a rank that is a thread ends the rank only.
extern "C" __attribute__((visibility("default"))) void poems_direct_exit(int code) {
  if (in_rank()) exit_rank(code);  // threads; processes exit for real
  std::exit(code);
}
