// Launching MPI programs with mpirun (see mpirun.h).
#include "poems/measure/mpirun.h"

#include <cstdlib>

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fstream>
#include <thread>

namespace poems::measure {

int host_cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

std::string host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

bool running_as_root() { return ::geteuid() == 0; }

std::vector<std::string> mpirun_command(const Launch& launch) {
  std::vector<std::string> argv{launch.mpirun};
  if (running_as_root()) argv.push_back("--allow-run-as-root");
  if (launch.ranks > host_cores()) argv.push_back("--oversubscribe");
  argv.push_back("-np");
  argv.push_back(std::to_string(launch.ranks));
  argv.push_back(launch.program);
  argv.insert(argv.end(), launch.args.begin(), launch.args.end());
  return argv;
}

MpiSessionBase::MpiSessionBase() {
  if (std::getenv("OMPI_MCA_orte_tmpdir_base")) return;
  base::TemporaryDirectory d("poems-mpirun-");
  if (!d.created()) return;  // mpirun's own default, as before
  environment_.push_back("OMPI_MCA_orte_tmpdir_base=" + d.path().string());
  directory_.emplace(std::move(d));
}

ProcessResult run_mpi(const Launch& launch) {
  const MpiSessionBase session;
  return run_process(mpirun_command(launch), launch.timeout_seconds, session.environment(), launch.working_directory);
}

std::string mpi_version(const std::string& mpirun) {
  const ProcessResult r = run_process({mpirun, "--version"}, 20);
  if (!r.ok()) return "";
  return r.out.substr(0, r.out.find('\n'));
}

namespace {

constexpr const char* kAutogroup = "/proc/self/autogroup";  // "/autogroup-6 nice 0"

bool autogroups_enabled() {
  std::ifstream in("/proc/sys/kernel/sched_autogroup_enabled");
  int on = 0;
  return in >> on && on == 1;
}

bool read_group_nice(int& nice) {
  std::ifstream in(kAutogroup);
  std::string name, word;
  return static_cast<bool>(in >> name >> word >> nice) && word == "nice";
}

bool write_group_nice(int nice) {
  std::ofstream out(kAutogroup);
  out << nice;
  out.close();
  return static_cast<bool>(out);
}

}  // namespace

PriorityGuard::PriorityGuard(int nice) {
  if (nice == 0) return;
  if (::setpriority(PRIO_PROCESS, 0, nice) != 0)
    warning = "cannot set the nice value to " + std::to_string(nice) + ": " + std::strerror(errno);
  if (!autogroups_enabled()) return;
  if (!read_group_nice(group_nice_) || !write_group_nice(nice)) {
    if (warning.empty())
      warning = std::string("cannot set the nice value of this session's scheduling group (") + kAutogroup +
                "): other sessions' work still competes";
    return;
  }
  restore_group_ = true;
}

PriorityGuard::~PriorityGuard() {
  if (restore_group_) write_group_nice(group_nice_);
}

std::string result_line(const std::string& out, const std::string& prefix) {
  std::size_t at = 0;
  while ((at = out.find(prefix, at)) != std::string::npos) {
    if (at == 0 || out[at - 1] == '\n') {
      const std::size_t end = out.find('\n', at);
      return out.substr(at + prefix.size(), end == std::string::npos ? std::string::npos : end - at - prefix.size());
    }
    at += prefix.size();
  }
  return "";
}

}  // namespace poems::measure
