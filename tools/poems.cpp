// poems: the command-line front door to the POEMS framework.
#include <cstdlib>
#include <iostream>

#include "cli_common.h"
#include "poems/psl/diagnostics.h"
#include "poems/psl/frontend.h"
#include "poems/psl/units.h"
#include "poems/taskgraph/limits.h"
#include "trace_options.h"

namespace {
// A limit of docs/limits.md by name, in whichever library owns it.
bool set_limit(const std::string& name, unsigned long value) {
  return poems::psl::set_frontend_limit(name, value) || poems::taskgraph::set_instantiation_limit(name, value);
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "POEMS: end-to-end performance modeling of parallel MPI systems.\n"
      "Write a system in PSL, check it, and evaluate it with analytic, simulated and measured models."};
  app.set_version_flag("--version", std::string("poems ") + POEMS_VERSION);
  app.require_subcommand(1);
  // Global limits (docs/limits.md), given before or after the subcommand.
  app.fallthrough();
  app.add_option("--max-errors", poems::psl::default_diagnostic_limits().max_errors,
                 "Print at most N errors and N warnings (0: all)")
      ->capture_default_str();
  app.add_option_function<std::string>(
      "--memory-limit",
      [](const std::string& text) {
        std::string error;
        const auto q = poems::psl::parse_quantity(text, &error);
        if (!q || !(q->dimension == poems::psl::kBytes || q->dimension.dimensionless()) || !(q->value >= 1) ||
            q->value > 1.8e19)
          throw CLI::ValidationError("--memory-limit", "'" + text + "' is not a size such as 64GiB");
        poems::taskgraph::default_instantiation_limits().memory_limit_bytes = static_cast<std::uint64_t>(q->value);
      },
      "Memory a model may plan to use (e.g. 64GiB; default: what is available now)");
  app.add_option_function<std::vector<std::string>>(
         "--limit",
         [](const std::vector<std::string>& settings) {
           for (const std::string& s : settings) {
             const auto eq = s.find('=');
             char* end = nullptr;
             const unsigned long value = eq == std::string::npos ? 0 : std::strtoul(s.c_str() + eq + 1, &end, 10);
             if (eq == std::string::npos || end == s.c_str() + eq + 1 || *end != '\0' ||
                 !set_limit(s.substr(0, eq), value))
               throw CLI::ValidationError("--limit", "'" + s + "' is not NAME=N with a NAME of docs/limits.md");
           }
         },
         "Raise or lower a limit of docs/limits.md: NAME=N (repeatable)")
      ->take_all();
  int result = poems::cli::kExitOk;
  poems::cli::register_check(app, result);
  poems::cli::register_ast(app, result);
  poems::cli::register_db(app, result);
  poems::cli::register_simulate(app, result);
  poems::cli::register_analyze(app, result);
  poems::cli::register_taskgraph(app, result);
  poems::cli::register_compile(app, result);
  poems::cli::register_run(app, result);
  poems::cli::register_direct(app, result);
  poems::cli::normalize_direct_arguments(argc, argv);
  poems::cli::register_recommend(app, result);
  poems::cli::register_measure(app, result);
  poems::cli::register_calibrate(app, result);
  poems::cli::register_trace(app, result);
  poems::cli::normalize_trace_arguments(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? poems::cli::kExitOk : poems::cli::kExitUsage;
  }
  return result;
}
