#include "unsupported.h"

#include <cstdio>
#include <cstdlib>

#include "api.h"

extern "C" int poems_unsupported(const char* function) {
  using poems::direct::detail::Runtime;
  Runtime* rt = Runtime::active();
  if (rt && poems::direct::detail::forked_from_rank() >= 0) rt->forked_call(function);
  if (!rt || !rt->running()) {
    std::fprintf(stderr, "poems: %s is not supported by POEMS direct execution (docs/direct.md lists what is)\n",
                 function);
    std::abort();
  }
  rt->enter(function, false);
  rt->fail(function, "is not supported by POEMS direct execution (docs/direct.md lists what is)");
}
