#include "poems/core/direct_program.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "poems/direct/protocol.h"

extern char** environ;

namespace poems::core {

namespace fs = std::filesystem;

namespace {

fs::path self_directory() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

fs::path unique_temp(const std::string& stem) {
  static int counter = 0;
  return fs::temp_directory_path() /
         ("poems_direct_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + stem);
}

// Waits for `pid`; kills it (and only it) after the timeout.
int wait_for_child(pid_t pid, double timeout_seconds, bool& timed_out) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid, &status, timeout_seconds > 0 ? WNOHANG : 0);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return -1;
    if (timeout_seconds > 0 && std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      timed_out = true;
      return status;
    }
    if (timeout_seconds > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::string bin_path(const std::string& name) { return (self_directory() / name).string(); }

std::string mpicxx_path() { return bin_path("poems-mpicxx"); }

std::string wrapper_for(const std::string& source) {
  const std::string ext = fs::path(source).extension().string();
  if (ext == ".c") return bin_path("poems-mpicc");
  if (ext == ".f" || ext == ".F" || ext == ".f90" || ext == ".F90" || ext == ".f95" || ext == ".f03" || ext == ".f08" ||
      ext == ".for" || ext == ".f77")
    return bin_path("poems-mpif90");
  return mpicxx_path();
}

bool is_source_file(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".c" || ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".C" || ext == ".c++" ||
         wrapper_for(path) != mpicxx_path();
}

std::optional<std::string> compile_direct_program(const std::string& source, std::string& log,
                                                  std::vector<std::string>& shared) {
  const fs::path dir = unique_temp("build");
  fs::create_directories(dir);
  const fs::path object = dir / (fs::path(source).stem().string() + ".o");
  const fs::path binary = dir / fs::path(source).stem();
  const fs::path output = dir / "compiler.log";
  // poems-mpicxx is a shell script; the paths are quoted for the shell.
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string mpicxx = quote(wrapper_for(source));
  // Compile and link in two steps: the object holds the source's own symbols.
  int status = std::system(
      (mpicxx + " -O2 -c " + quote(source) + " -o " + quote(object.string()) + " > " + quote(output.string()) + " 2>&1")
          .c_str());
  log = read(output);
  if (status != 0 || !fs::exists(object)) return std::nullopt;
  const fs::path symbols = dir / "symbols.txt";
  if (std::system(("nm -C --defined-only " + quote(object.string()) + " > " + quote(symbols.string()) + " 2>/dev/null")
                      .c_str()) == 0) {
    std::istringstream lines(read(symbols));
    for (std::string line; std::getline(lines, line);) {
      // "ADDRESS TYPE NAME": B/b (bss) and D/d (data) are writable.
      std::istringstream fields(line);
      std::string address, type, name;
      if (!(fields >> address >> type) || type.size() != 1 || std::string("BbDd").find(type[0]) == std::string::npos)
        continue;
      std::getline(fields >> std::ws, name);
      if (name.empty() || name.rfind("guard variable", 0) == 0 || name.rfind("__", 0) == 0 || name[0] == '.') continue;
      shared.push_back(name);
    }
  }
  status = std::system((mpicxx + " -O2 " + quote(object.string()) + " -o " + quote(binary.string()) + " > " +
                        quote(output.string()) + " 2>&1")
                           .c_str());
  log += read(output);
  if (status != 0 || !fs::exists(binary)) return std::nullopt;
  return binary.string();
}

DirectRun run_direct_program(const std::string& binary, const std::vector<std::string>& args,
                             const direct::DirectOptions& options, ProgramOutput output, double timeout_seconds) {
  DirectRun run;
  const fs::path result_file = unique_temp("result.json");
  const fs::path output_file = unique_temp("stdout.txt");
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, direct::kOptionsVariable, std::strlen(direct::kOptionsVariable)) != 0 &&
        std::strncmp(*e, direct::kResultVariable, std::strlen(direct::kResultVariable)) != 0)
      env_strings.emplace_back(*e);
  env_strings.push_back(std::string(direct::kOptionsVariable) + "=" + direct::options_to_json(options).dump());
  env_strings.push_back(std::string(direct::kResultVariable) + "=" + result_file.string());
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (output == ProgramOutput::ToStderr) posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  if (output == ProgramOutput::Capture)
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::fflush(stdout);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    run.failure = "cannot run '" + binary + "': " + std::strerror(rc);
    return run;
  }
  bool timed_out = false;
  const int status = wait_for_child(pid, timeout_seconds, timed_out);
  if (output == ProgramOutput::Capture) {
    std::ifstream captured(output_file);
    std::stringstream text;
    text << captured.rdbuf();
    run.output = text.str();
    std::error_code ec;
    fs::remove(output_file, ec);
  }
  std::ifstream in(result_file);
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    in.close();
    std::error_code ec;
    fs::remove(result_file, ec);
    try {
      run.result = direct::result_from_json(nlohmann::json::parse(text.str()));
      return run;
    } catch (const std::exception& e) {
      run.failure = "'" + binary + "' wrote a malformed result: " + e.what();
      return run;
    }
  }
  if (timed_out)
    run.failure = "'" + binary + "' did not finish within " + std::to_string(timeout_seconds) + " s (killed)";
  else if (status >= 0 && WIFSIGNALED(status))
    run.failure = "'" + binary + "' died of signal " + std::to_string(WTERMSIG(status)) + " (" +
                  strsignal(WTERMSIG(status)) + ") without a result";
  else if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2)
    run.failure = "'" + binary + "' is not a POEMS direct-execution program, or rejected its options (see above)";
  else
    run.failure = "'" + binary + "' exited with status " +
                  std::to_string(status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                  " without a result; build it with poems-mpicc, poems-mpicxx or poems-mpif90";
  return run;
}

}  // namespace poems::core
