// Runs a command line for the end-to-end tests: stdout captured, stderr
// through a temporary file, the exit code decoded.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

inline CommandResult run_command(const std::string& command) {
  static int counter = 0;
  const std::filesystem::path err = std::filesystem::temp_directory_path() /
                                    ("poems_cli_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>" + err.string()).c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(err);
  std::stringstream s;
  s << in.rdbuf();
  r.err = s.str();
  std::filesystem::remove(err);
  return r;
}
