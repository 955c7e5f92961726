// `poems direct --host-cores auto` (core::resolve_host_cores): the CPUs this
// process may use, at most one a rank; one core where ranks at once cannot
// serve the program.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "poems/core/direct_run.h"

namespace {

namespace fs = std::filesystem;

std::uint32_t cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  EXPECT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  return static_cast<std::uint32_t>(CPU_COUNT(&allowed));
}

// A stand-in executable: the bytes given (resolve_host_cores reads only them).
std::string binary(const std::string& name, const std::string& bytes) {
  const fs::path p = fs::temp_directory_path() / ("poems_host_cores_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p, std::ios::binary) << bytes;
  return p.string();
}

std::uint32_t resolved(const poems::direct::DirectOptions& given, const std::string& path) {
  poems::direct::DirectOptions o = given;
  poems::core::resolve_host_cores(o, path);
  return o.host_cores;
}

TEST(HostCores, AutoIsTheCpusAtMostOneARank) {
  const std::string plain = binary("plain", std::string("\x7f"
                                                        "ELF...MPI_Init\0MPI_Send\0",
                                                        24));
  poems::direct::DirectOptions o;
  o.host_cores = 0;  // auto
  o.ranks = 64;
  EXPECT_EQ(resolved(o, plain), std::max(1u, cpus()));
  o.ranks = 2;
  EXPECT_EQ(resolved(o, plain), std::min(2u, std::max(1u, cpus())));
  o.ranks = 1;  // nothing to run at once
  EXPECT_EQ(resolved(o, plain), 1u);
  o.ranks = 8;
  o.isolation = poems::direct::Isolation::Threads;  // one host thread
  EXPECT_EQ(resolved(o, plain), 1u);
  fs::remove(plain);
}

TEST(HostCores, AProgramThatMayAskForThreadMultipleGetsOneCore) {
  poems::direct::DirectOptions o;
  o.host_cores = 0;
  o.ranks = 8;
  for (const char* name : {"MPI_Init_thread", "mpi_init_thread_"}) {  // C and C++, Fortran
    SCOPED_TRACE(name);
    const std::string path = binary(name, std::string("ELF...") + name + std::string(1, '\0') + "MPI_Send");
    EXPECT_EQ(resolved(o, path), 1u);
    fs::remove(path);
  }
}

TEST(HostCores, AGivenNumberIsKept) {
  const std::string path = binary("given", "ELF...MPI_Init_thread");
  poems::direct::DirectOptions o;
  o.ranks = 8;
  for (std::uint32_t n : {1u, 2u, 5u, 1024u}) {
    o.host_cores = n;
    EXPECT_EQ(resolved(o, path), n);
  }
  fs::remove(path);
}

}  // namespace
