// `poems check FILE...` and `poems ast FILE`: the PSL front end on the command line.
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "poems/psl/ast_json.h"
#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/taskgraph/comm_check.h"

namespace poems::cli {

namespace {

nlohmann::json diagnostics_json(const psl::Frontend& fe) {
  nlohmann::json out = nlohmann::json::array();
  for (const psl::Diagnostic& d : fe.diagnostics().all()) {
    nlohmann::json j = {{"severity", d.severity == psl::Severity::Error     ? "error"
                                     : d.severity == psl::Severity::Warning ? "warning"
                                                                            : "note"},
                        {"message", d.message}};
    if (d.location.file != psl::kNoFile) {
      j["file"] = fe.sources().path(d.location.file);
      j["line"] = d.location.line;
      j["column"] = d.location.column;
    }
    nlohmann::json notes = nlohmann::json::array();
    for (const psl::Diagnostic& n : d.notes) {
      nlohmann::json jn = {{"message", n.message}};
      if (n.location.file != psl::kNoFile) {
        jn["file"] = fe.sources().path(n.location.file);
        jn["line"] = n.location.line;
        jn["column"] = n.location.column;
      }
      notes.push_back(jn);
    }
    if (!notes.empty()) j["notes"] = notes;
    out.push_back(j);
  }
  return out;
}

}  // namespace

void register_check(CLI::App& app, int& result) {
  struct Options {
    std::vector<std::string> files;
    std::string format = "text";
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("check", "Parse and check PSL files (and what they import)");
  cmd->add_option("files", opts->files, "PSL files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([opts, &result] {
    // Each file is its own specification (with what it imports).
    bool all_ok = true;
    std::size_t models = 0, components = 0, studies = 0;
    nlohmann::json diagnostics = nlohmann::json::array();
    for (const std::string& file : opts->files) {
      psl::Frontend fe;
      bool ok = fe.load_files({file});
      // Communication is checked statically once the front end accepts the file.
      if (ok) ok = psl::check_program_communication(fe.program(), fe.sources(), fe.mutable_diagnostics()) == 0;
      all_ok = all_ok && ok;
      models += fe.program().model_count();
      components += fe.program().component_count();
      studies += fe.program().study_count();
      if (opts->format == "json") {
        for (auto& d : diagnostics_json(fe)) diagnostics.push_back(d);
      } else {
        fe.diagnostics().print(std::cerr);
      }
    }
    if (opts->format == "json") {
      nlohmann::json j = {{"ok", all_ok},
                          {"models", models},
                          {"components", components},
                          {"studies", studies},
                          {"diagnostics", diagnostics}};
      std::cout << j.dump(2) << '\n';
    } else if (all_ok) {
      std::cout << "OK: " << models << " models, " << components << " components, " << studies << " studies\n";
    }
    result = all_ok ? kExitOk : kExitInputError;
  });
}

void register_ast(CLI::App& app, int& result) {
  struct Options {
    std::string file;
    std::string format = "json";
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("ast", "Print the abstract syntax tree of a PSL file, with source locations");
  cmd->add_option("file", opts->file, "PSL file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"json"}));
  cmd->callback([opts, &result] {
    psl::Frontend fe;
    bool ok = fe.load_files({opts->file});
    fe.diagnostics().print(std::cerr);
    if (!ok) {
      result = kExitInputError;
      return;
    }
    std::cout << psl::to_json(fe.program(), fe.sources()).dump(2) << '\n';
    result = kExitOk;
  });
}

}  // namespace poems::cli
