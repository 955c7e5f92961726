#include "poems/core/direct_program.h"
#include "poems/base/file_bytes.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "poems/base/child_process.h"
#include "poems/base/executable_path.h"
#include "poems/base/temporary_directory.h"
#include "poems/direct/protocol.h"
#include "poems/taskgraph/limits.h"

namespace poems::core {

namespace fs = std::filesystem;

namespace {

fs::path self_directory() {
  const fs::path exe = base::executable_path();
  return exe.empty() ? fs::current_path() : exe.parent_path();
}

}  // namespace

std::string bin_path(const std::string& name) { return (self_directory() / name).string(); }

std::string mpicxx_path() { return bin_path("poems-mpicxx"); }

SourceLanguage source_language(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".c") return SourceLanguage::C;
  if (ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".C" || ext == ".c++") return SourceLanguage::Cxx;
  if (ext == ".f" || ext == ".F" || ext == ".f90" || ext == ".F90" || ext == ".f95" || ext == ".f03" || ext == ".f08" ||
      ext == ".for" || ext == ".f77")
    return SourceLanguage::Fortran;
  return SourceLanguage::Unknown;
}

std::string wrapper_for(const std::string& source) {
  switch (source_language(source)) {
    case SourceLanguage::C: return bin_path("poems-mpicc");
    case SourceLanguage::Fortran: return bin_path("poems-mpif90");
    case SourceLanguage::Cxx:
    case SourceLanguage::Unknown: break;
  }
  return mpicxx_path();
}

bool is_source_file(const std::string& path) { return source_language(path) != SourceLanguage::Unknown; }

std::optional<std::string> compile_direct_program(const std::string& source, const fs::path& dir, std::string& log,
                                                  std::vector<std::string>& shared) {
  const fs::path object = dir / (fs::path(source).stem().string() + ".o");
  const fs::path binary = dir / fs::path(source).stem();
  const fs::path output = dir / "compiler.log";
  // poems-mpicxx is a shell script; the paths are quoted for the shell.
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  auto read = [](const fs::path& p) { return base::read_file_bytes(p).value_or(""); };
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
                             const direct::DirectOptions& options, ProgramOutput output, double timeout_seconds,
                             const std::string& working_directory) {
  DirectRun run;
  // The program's result and captured output, in a directory of the run's own.
  const base::TemporaryDirectory files("poems_direct_run_");
  if (!files.created()) {
    run.failure = "cannot run '" + binary + "': " + files.error();
    return run;
  }
  const fs::path result_file = files.path() / "result.json";
  const fs::path output_file = files.path() / "stdout.txt";
  // The shared region of ranks as processes: --memory-limit's size if given.
  direct::DirectOptions effective = options;
  if (effective.shared_bytes == 0 && effective.isolation == direct::Isolation::Processes)
    effective.shared_bytes = static_cast<std::size_t>(taskgraph::default_instantiation_limits().memory_limit_bytes);

  // The program runs under a keeper (poems/base/child_process.h): when it
  // exits, at the timeout, or when poems dies, every process left below it
  // is killed and reaped: nothing the program started outlives the run,
  // whatever becomes of poems or of the program's controller. (The
  // program's own controller is a subreaper too and ends what its ranks
  // leave behind, so normally the keeper finds nothing left.) It stays in
  // our process group: rank 0 reads the terminal and Ctrl-C reaches the
  // program as under mpirun. It keeps poems's signal mask.
  base::ChildOptions child;
  child.argv = {binary};
  child.argv.insert(child.argv.end(), args.begin(), args.end());
  child.search_path = false;
  child.working_directory = working_directory;
  child.environment = {std::string(direct::kOptionsVariable) + "=" + direct::options_to_json(effective).dump(),
                       std::string(direct::kResultVariable) + "=" + result_file.string()};
  child.timeout_seconds = timeout_seconds;
  child.keeper = true;
  child.own_process_group = false;
  child.reset_signals = false;
  child.input = base::ChildInput::inherit;
  child.out = output == ProgramOutput::Capture    ? base::ChildStream::file(output_file.string())
              : output == ProgramOutput::ToStderr ? base::ChildStream::to_stderr()
                                                  : base::ChildStream::inherit();
  child.err = base::ChildStream::inherit();
  std::fflush(stdout);
  std::fflush(stderr);
  const base::ChildResult report = base::run_child(child);
  const bool timed_out = report.timed_out;
  if (!report.started && report.start_errno != 0) {
    run.failure = "cannot run '" + binary + "': " + std::strerror(report.start_errno);
    return run;
  }
  if ((!report.started || report.keeper_lost) && !timed_out) {
    run.failure = "cannot run '" + binary + "': its keeper process failed";
    return run;
  }
  const bool exited = report.exit_code >= 0 || report.signal != 0;  // by itself, not at the timeout
  if (output == ProgramOutput::Capture) {
    run.output = base::read_file_bytes(output_file).value_or("");
    std::error_code ec;
    fs::remove(output_file, ec);
  }
  if (const std::optional<std::string> text = base::read_file_bytes(result_file)) {
    std::error_code ec;
    fs::remove(result_file, ec);
    try {
      run.result = direct::result_from_json(nlohmann::json::parse(*text));
      // What the program's controller could not end itself (it died first).
      if (exited && report.killed.count > 0) {
        run.result->left_behind += static_cast<std::uint32_t>(report.killed.count);
        for (int i = 0; i < report.killed.stored; ++i)
          run.result->left_behind_names.push_back(std::string(report.killed.first[i].name) + " (pid " +
                                                  std::to_string(report.killed.first[i].pid) + ")");
      }
      return run;
    } catch (const std::exception& e) {
      run.failure = "'" + binary + "' wrote a malformed result: " + e.what();
      return run;
    }
  }
  if (timed_out)
    run.failure = "'" + binary + "' did not finish within " + std::to_string(timeout_seconds) + " s (killed)";
  else if (report.signal != 0)
    run.failure = "'" + binary + "' died of signal " + std::to_string(report.signal) + " (" + strsignal(report.signal) +
                  ") without a result";
  else if (report.exit_code == 2)
    run.failure = "'" + binary + "' is not a POEMS direct-execution program, or rejected its options (see above)";
  else
    run.failure = "'" + binary + "' exited with status " + std::to_string(report.exit_code) +
                  " without a result; build it with poems-mpicc, poems-mpicxx or poems-mpif90";
  return run;
}

}  // namespace poems::core
