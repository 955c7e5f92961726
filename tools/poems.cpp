// poems: the command-line front door to the POEMS framework.
#include <iostream>

#include "cli_common.h"
#include "trace_options.h"

int main(int argc, char** argv) {
  CLI::App app{
      "POEMS: end-to-end performance modeling of parallel MPI systems.\n"
      "Write a system in PSL, check it, and evaluate it with analytic, simulated and measured models."};
  app.set_version_flag("--version", std::string("poems ") + POEMS_VERSION);
  app.require_subcommand(1);
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
