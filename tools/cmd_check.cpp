// `poems check FILE...` and `poems ast FILE`: the PSL front end and
// everything `poems run` would reject (core/check.h), on the command line.
#include <memory>
#include <ostream>

#include "options.h"
#include "poems/core/check.h"
#include "poems/psl/ast_json.h"

namespace poems::cli {

namespace {

nlohmann::json location_json(const psl::Frontend& fe, const psl::SourceLocation& at, nlohmann::json j) {
  if (at.file != psl::kNoFile) {
    j["file"] = fe.sources().path(at.file);
    j["line"] = at.line;
    j["column"] = at.column;
  }
  return j;
}

nlohmann::json diagnostics_json(const psl::Frontend& fe) {
  nlohmann::json out = nlohmann::json::array();
  for (const psl::Diagnostic& d : fe.diagnostics().all()) {
    const char* severity = d.severity == psl::Severity::Error     ? "error"
                           : d.severity == psl::Severity::Warning ? "warning"
                                                                  : "note";
    nlohmann::json j = location_json(fe, d.location, {{"severity", severity}, {"message", d.message}});
    nlohmann::json notes = nlohmann::json::array();
    for (const psl::Diagnostic& n : d.notes) notes.push_back(location_json(fe, n.location, {{"message", n.message}}));
    if (!notes.empty()) j["notes"] = notes;
    out.push_back(j);
  }
  return out;
}

}  // namespace

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
    bool all_ok = true;
    std::size_t models = 0, components = 0, studies = 0;
    nlohmann::json diagnostics = nlohmann::json::array();
    for (const std::string& file : o->files) {
      const core::CheckResult r = core::check_specification(file);
      all_ok = all_ok && r.ok;
      models += r.models;
      components += r.components;
      studies += r.studies;
      if (o->format == "json")
        for (auto& d : diagnostics_json(*r.frontend)) diagnostics.push_back(d);
      else
        r.frontend->diagnostics().print(ctx.err);
    }
    if (o->format == "json")
      ctx.out << nlohmann::json{{"ok", all_ok},
                                {"models", models},
                                {"components", components},
                                {"studies", studies},
                                {"diagnostics", diagnostics}}
                     .dump(2)
              << '\n';
    else if (all_ok)
      ctx.out << "OK: " << models << " models, " << components << " components, " << studies << " studies\n";
    ctx.result = all_ok ? kExitOk : kExitInputError;
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
