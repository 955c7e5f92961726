// Runs a command line for the end-to-end tests: stdout captured, stderr
// through a temporary file, the exit code decoded.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

// A whole file's text ("" if it cannot be read: the test's own assertions then fail).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A new, empty directory for one test's files (fresh on every run).
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("poems_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

#ifdef POEMS_LSAN_SUPPRESSIONS
// Under AddressSanitizer, the leaks Open MPI leaves at exit are suppressed by
// tests/sweep3d/lsan_openmpi.supp (library names only), and they are only
// recognizable with full allocation stacks: its MCA components are unloaded
// before LeakSanitizer looks, and the fast unwinder stops in its
// frame-pointer-less code. Harmless for a normal build. Every test that runs
// Open MPI puts this before its command.
inline std::string sanitizer_environment() {
  const char* asan = std::getenv("ASAN_OPTIONS");
  return std::string("ASAN_OPTIONS='") + (asan && *asan ? std::string(asan) + ":" : "") +
         "fast_unwind_on_malloc=0' LSAN_OPTIONS='suppressions=" + POEMS_LSAN_SUPPRESSIONS + ":print_suppressions=0' ";
}
#endif

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

#ifdef POEMS_IN_PROCESS
#include <iostream>
#include <vector>

#include "cli.h"

// A command line split as a shell splits it (quotes group, no expansion).
inline std::vector<std::string> split_command_line(const std::string& line) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(word);
  return out;
}

// `poems ARGS` in this process (poems::cli::run): the commands that need no
// process of their own are tested without one.
inline CommandResult poems_in_process(const std::string& args) {
  std::ostringstream out, err;
  CommandResult r;
  // Commands print to the context's streams; std::cout and std::cerr are
  // captured too, so that a stray print cannot reach the test's output.
  struct Capture {
    std::streambuf *out, *err;
    Capture(std::ostream& o, std::ostream& e) : out(std::cout.rdbuf(o.rdbuf())), err(std::cerr.rdbuf(e.rdbuf())) {}
    ~Capture() {
      std::cout.rdbuf(out);
      std::cerr.rdbuf(err);
    }
  } capture(out, err);
  r.exit_code = poems::cli::run(split_command_line(args), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}
#endif
