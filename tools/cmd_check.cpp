// `poems check FILE...` and `poems ast FILE`: the PSL front end and
// everything `poems run` would reject (core/check.h), on the command line.
#include <memory>
#include <ostream>

#include "options.h"
#include "poems/core/check.h"
#include "poems/psl/ast_json.h"
#include "poems/report/specification.h"

namespace poems::cli {

void register_check(CLI::App& app, Context& ctx) {
  struct Options {
    std::vector<std::string> files;
    std::string format;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Check PSL files (with what they import): everything `poems run` would reject before evaluating");
  cmd->add_option("files", o->files, "PSL files")->required()->check(CLI::ExistingFile);
  add_format_option(cmd, o->format, {"text", "json"});
  cmd->callback([o, &ctx] {
    // Each file is its own specification (with what it imports).
    report::CheckReport report(o->format);
    for (const std::string& file : o->files) report.add(core::check_specification(file), ctx.err);
    report.finish(ctx.out);
    ctx.result = report.ok() ? kExitOk : kExitInputError;
  });
}

void register_ast(CLI::App& app, Context& ctx) {
  struct Options {
    std::string file, format;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("ast", "Print the abstract syntax tree of a PSL file, with source locations");
  cmd->add_option("file", o->file, "PSL file")->required()->check(CLI::ExistingFile);
  add_format_option(cmd, o->format, {"json"});
  cmd->callback([o, &ctx] {
    psl::Frontend fe;
    const bool ok = fe.load_files({o->file});
    fe.diagnostics().print(ctx.err);
    if (!ok) {
      ctx.result = kExitInputError;
      return;
    }
    ctx.out << psl::to_json(fe.program(), fe.sources()).dump(2) << '\n';
  });
}

}  // namespace poems::cli
