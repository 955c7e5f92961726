// run(): the whole `poems` tool; main.cpp calls it, and so do the tests.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <iostream>
#include <optional>
#include <ostream>
#include <sstream>

#include "cli.h"
#include "options.h"
#include "poems/base/diagnostics.h"
#include "poems/base/escaped.h"
#include "poems/base/progress.h"
#include "poems/base/suggest.h"
#include "poems/core/error.h"
#include "poems/core/limits.h"
#include "poems/core/progress.h"
#include "poems/examples/examples.h"

namespace poems::cli {

namespace {

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* s : app.get_subcommands({})) names.push_back(s->get_name());
  return names;
}

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// CLI11's "The following arguments were not expected: --sett 4" as
// "unknown option '--sett' of poems run; did you mean '--set'?".
std::string extras_message(const CLI::App& app, const CLI::ExtrasError& e) {
  const std::string what = e.what();
  const std::size_t colon = what.find(": ");
  const CLI::App* sub = app.get_subcommands().empty() ? &app : app.get_subcommands().front();
  std::istringstream words(colon == std::string::npos ? what : what.substr(colon + 2));
  std::string message;
  for (std::string extra; words >> extra;) {
    const std::string name = extra.substr(0, extra.find('='));
    if (!name.starts_with("-")) continue;
    message += std::string("poems: error: unknown option '") + name + "' of poems " + sub->get_name() +
               base::did_you_mean(name, option_names(*sub)) + "\n";
  }
  if (message.empty()) message = "poems: error: " + what + "\n";
  return message + "Run with --help for more information.\n";
}

// Every option name of `cmd` and its subcommands.
void collect_options(const CLI::App& cmd, std::vector<std::string>& names) {
  for (const std::string& n : option_names(cmd)) names.push_back(n);
  for (const CLI::App* sub : cmd.get_subcommands({})) collect_options(*sub, names);
}

// An option the subcommand does not have, named before CLI11 complains of
// something else (a missing required option): "did you mean".
std::string unknown_option(const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty()) return "";
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands({}))
    if (s->get_name() == args.front()) sub = s;
  if (!sub) return "";
  std::vector<std::string> names = option_names(app);  // the global options, given after the command
  names.insert(names.end(), {"--help", "-h"});
  collect_options(*sub, names);
  for (std::size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-' || std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.') continue;
    const std::string name = a.substr(0, a.find('='));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    return "poems: error: unknown option '" + name + "' of poems " + sub->get_name() + base::did_you_mean(name, names) +
           "\nRun with --help for more information.\n";
  }
  return "";
}

// --max-errors, --memory-limit, --limit NAME=N: before or after the command.
void add_global_options(CLI::App& app) {
  app.fallthrough();
  app.add_option("--max-errors", base::default_diagnostic_limits().max_errors,
                 "Print at most N errors and N warnings (0: all)")
      ->capture_default_str();
  app.add_option_function<std::string>(
      "--memory-limit", [](const std::string& text) { core::set_memory_limit("--memory-limit", text); },
      "Memory a model may plan to use (e.g. 64GiB; default: what is available now)");
  app.add_option_function<std::vector<std::string>>(
         "--limit",
         [](const std::vector<std::string>& settings) {
           for (const std::string& s : settings) core::set_limit(s);
         },
         "Raise or lower a limit of docs/limits.md: NAME=N (repeatable)")
      ->take_all();
}

// A command's output stream: the progress line (on the terminal both share)
// is erased before anything is written, so no text lands after it.
class ClearingBuffer : public std::streambuf {
 public:
  ClearingBuffer(std::streambuf* target, base::ProgressLine& progress) : target_(target), progress_(progress) {}

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    progress_.clear();
    return target_->sputc(static_cast<char>(c));
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    progress_.clear();
    return target_->sputn(s, n);
  }
  int sync() override { return target_->pubsync(); }

 private:
  std::streambuf* target_;
  base::ProgressLine& progress_;
};

// A message that may quote the command line (a name, a value): control
// characters as \xNN, line by line, so no argument can send an escape
// sequence to the terminal through an error.
std::string shown(const std::string& message) {
  std::string out;
  for (std::size_t start = 0; start < message.size();) {
    // Newlines and tabs (a diagnostic's caret line) stay as they are.
    const std::size_t end = std::min(message.find_first_of("\n\t", start), message.size());
    out += base::escaped(std::string_view(message).substr(start, end - start));
    if (end < message.size()) out += message[end];
    start = end + 1;
  }
  return out;
}

}  // namespace

void Context::warn(const std::string& message) const { err << "poems: warning: " << shown(message) << '\n'; }

int run(const std::vector<std::string>& raw_args, std::ostream& out, std::ostream& err) {
  examples::register_examples();
  CLI::App app{
      "POEMS: end-to-end performance modeling of parallel MPI systems.\n"
      "Write a system in PSL, check it, and evaluate it with analytic, simulated and measured models."};
  app.set_version_flag("--version", std::string("poems ") + POEMS_VERSION);
  app.require_subcommand(1);
  const core::LimitsScope limits;  // restored when the command is done
  add_global_options(app);
  // Progress of long evaluations on stderr, if it is this process's terminal
  // (not with --quiet): enabled once the options are parsed, before the
  // command's callback runs.
  bool quiet = false;
  app.add_flag("--quiet", quiet, "Show no progress of long evaluations (shown on a terminal after 2 s)");
  base::ProgressLine progress(err, base::progress_delay_seconds());
  std::optional<core::ProgressScope> progress_scope;
  app.parse_complete_callback([&] {
    if (quiet || &err != &std::cerr || !base::stderr_is_terminal()) return;
    progress.enable();
    progress_scope.emplace(core::progress_hook(progress));
  });
  ClearingBuffer out_buffer(out.rdbuf(), progress), err_buffer(err.rdbuf(), progress);
  std::ostream command_out(&out_buffer), command_err(&err_buffer);
  Context ctx{command_out, command_err};
  register_check(app, ctx);
  register_ast(app, ctx);
  register_db(app, ctx);
  register_taskgraph(app, ctx);
  register_compile(app, ctx);
  register_simulate(app, ctx);
  register_analyze(app, ctx);
  register_run(app, ctx);
  register_measure(app, ctx);
  register_direct(app, ctx);
  register_recommend(app, ctx);
  register_calibrate(app, ctx);
  register_trace(app, ctx);
  register_scaling(app, ctx);
  register_comet(app, ctx);

  const std::vector<std::string> args = rewrite_deprecated(raw_args);
  // A mistyped subcommand: name it and the closest one.
  if (!args.empty() && !args.front().starts_with("-")) {
    const std::vector<std::string> names = subcommand_names(app);
    if (std::find(names.begin(), names.end(), args.front()) == names.end()) {
      err << shown("poems: error: unknown command '" + args.front() + "'" + base::did_you_mean(args.front(), names) +
                   " (commands: " + base::name_list(names) + ")\nRun with --help for more information.\n");
      return kExitUsage;
    }
  }
  if (const std::string unknown = unknown_option(app, args); !unknown.empty()) {
    err << shown(unknown);
    return kExitUsage;
  }
  std::vector<const char*> argv{"poems"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ExtrasError& e) {
    err << shown(extras_message(app, e));
    return kExitUsage;
  } catch (const CLI::ArgumentMismatch& e) {
    std::string text = e.what();
    if (const auto at = text.find("At Most 1 required but received"); at != std::string::npos)
      text = text.substr(0, at) + "given more than once; it takes one value";
    err << "poems: error: " << shown(text) << "\nRun with --help for more information.\n";
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    std::ostringstream said_out, said_err;
    const int rc = app.exit(e, said_out, said_err);
    out << said_out.str();  // --help and --version
    err << shown(said_err.str());
    return rc == 0 ? kExitOk : kExitUsage;
  } catch (const core::Error& e) {
    progress.clear();
    err << shown(e.diagnostics());
    if (*e.what() || e.diagnostics().empty()) err << "poems: error: " << shown(e.what()) << '\n';
    return e.exit_code();
  } catch (const std::exception& e) {
    progress.clear();
    err << "poems: error: " << shown(e.what()) << '\n';
    return kExitEvaluation;
  }
  return ctx.result;
}

}  // namespace poems::cli
