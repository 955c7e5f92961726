// `poems direct --host-cores auto` (core::resolve_host_cores): the CPUs this
// process may use, at most one a rank; one core where ranks at once cannot
// serve the program.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <string>

#include "poems/core/direct_run.h"

namespace {

std::uint32_t cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  EXPECT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  return static_cast<std::uint32_t>(CPU_COUNT(&allowed));
}

// `executable`: a stand-in for an executable's bytes (resolve_host_cores reads only them).
std::uint32_t resolved(const poems::direct::DirectOptions& given, const std::string& executable) {
  poems::direct::DirectOptions o = given;
  poems::core::resolve_host_cores(o, executable);
  return o.host_cores;
}

const std::string kPlain(
    "\x7f"
    "ELF...MPI_Init\0MPI_Send\0",
    24);

TEST(HostCores, AutoIsTheCpusAtMostOneARank) {
  poems::direct::DirectOptions o;
  o.host_cores = 0;  // auto
  o.ranks = 64;
  EXPECT_EQ(resolved(o, kPlain), std::max(1u, cpus()));
  o.ranks = 2;
  EXPECT_EQ(resolved(o, kPlain), std::min(2u, std::max(1u, cpus())));
  o.ranks = 1;  // nothing to run at once
  EXPECT_EQ(resolved(o, kPlain), 1u);
  o.ranks = 8;
  o.isolation = poems::direct::Isolation::Threads;  // one host thread
  EXPECT_EQ(resolved(o, kPlain), 1u);
}

TEST(HostCores, AProgramThatMayAskForThreadMultipleGetsOneCore) {
  poems::direct::DirectOptions o;
  o.host_cores = 0;
  o.ranks = 8;
  for (const char* name : {"MPI_Init_thread", "mpi_init_thread_"}) {  // C and C++, Fortran
    SCOPED_TRACE(name);
    EXPECT_EQ(resolved(o, std::string("ELF...") + name + std::string(1, '\0') + "MPI_Send"), 1u);
  }
}

TEST(HostCores, AGivenNumberIsKept) {
  poems::direct::DirectOptions o;
  o.ranks = 8;
  for (std::uint32_t n : {1u, 2u, 5u, 1024u}) {
    o.host_cores = n;
    EXPECT_EQ(resolved(o, "ELF...MPI_Init_thread"), n);
  }
}

}  // namespace
