// `poems db runs|show|study|stats|export|query|migrate`: read the knowledge
// base (docs/knowledge-base.md) through core's reports (poems/core/store_report.h).
// Every command but `migrate` opens the file read-only: it never changes (or
// creates) a file.
#include <CLI/CLI.hpp>
#include <ctime>
#include <memory>
#include <optional>

#include "cli.h"
#include "poems/base/escaped.h"
#include "poems/core/store_report.h"

namespace poems::cli {

namespace {

// Runs `body`; a failure of the knowledge base (missing, not one, too new, a
// bad query, no such run) is an input error: exit 1, its message with every
// control character as \xNN (stored text may hold any).
template <class F>
void using_store(Context& ctx, F&& body) {
  try {
    body();
  } catch (const CLI::Error&) {
    throw;
  } catch (const std::exception& e) {
    ctx.err << "poems: error: " << base::escaped(e.what(), base::Whitespace::Hex) << '\n';
    ctx.result = kExitInputError;
  }
}

CLI::Option* add_db_option(CLI::App* cmd, std::string& db) {
  return cmd->add_option("--db", db, "Knowledge base file (default: $POEMS_DB, else ./poems.db)");
}

CLI::Option* add_format_option(CLI::App* cmd, std::string& format) {
  return cmd->add_option("--format", format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
}

}  // namespace

void register_db(CLI::App& app, Context& ctx) {
  struct Options {
    std::string db, format = "table", status, model, evaluator, study, since, sql, name;
    std::optional<std::size_t> limit;
    double timeout = 10;
    core::RunId id = 0;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* group = app.add_subcommand("db", "Inspect the knowledge base: runs, studies, size, export, read-only SQL");
  group->require_subcommand(1);

  CLI::App* runs = group->add_subcommand("runs", "List stored runs (the latest 50 in a table; --limit 0 for all)");
  add_db_option(runs, opts->db);
  add_format_option(runs, opts->format);
  runs->add_option("--status", opts->status, "Only runs with this status")
      ->check(CLI::IsMember({"pending", "running", "done", "failed"}));
  runs->add_option("--model", opts->model, "Only runs of this model");
  runs->add_option("--evaluator", opts->evaluator, "Only runs of this evaluator, e.g. analytic[LogGP]");
  runs->add_option("--study", opts->study, "Only runs of this study");
  runs->add_option("--since", opts->since, "Only runs created since a date (2026-11-22T04:00) or an age (12h, 7d)");
  runs->add_option("--limit", opts->limit,
                   "At most N runs, the latest (default: 50 in a table, all in json and csv; 0: all)");
  runs->callback([opts, &ctx] {
    core::RunsRequest request{.status = opts->status,
                              .model = opts->model,
                              .evaluator = opts->evaluator,
                              .study = opts->study,
                              .since = {},
                              .limit = opts->limit.value_or(opts->format == "table" ? 50 : 0),
                              .format = core::report_format(opts->format)};
    if (!opts->since.empty()) {
      const std::optional<std::string> since = core::since_time(opts->since, std::time(nullptr));
      if (!since)
        throw CLI::ValidationError("--since", "'" + opts->since +
                                                  "' is not a date (2026-11-22, 2026-11-22T04:00) or an age "
                                                  "(90s, 30m, 12h, 7d)");
      request.since = *since;
    }
    using_store(ctx, [&] {
      const core::RunsReport report = core::StoreReader(opts->db).runs(request);
      ctx.out << report.text;
      if (report.selected)
        ctx.err << "the latest " << request.limit << " of " << *report.selected
                << " runs; --limit N for more (0: all)\n";
    });
  });

  CLI::App* show = group->add_subcommand("show", "Show one run: key, status, result, TEDs");
  show->add_option("id", opts->id, "Run id")->required();
  add_db_option(show, opts->db);
  add_format_option(show, opts->format);
  show->callback([opts, &ctx] {
    using_store(ctx, [&] { ctx.out << core::StoreReader(opts->db).run(opts->id, core::report_format(opts->format)); });
  });

  CLI::App* study = group->add_subcommand("study", "A study's runs as one table: binding, evaluator, result");
  study->add_option("name", opts->name, "Study name")->required();
  add_db_option(study, opts->db);
  add_format_option(study, opts->format);
  study->callback([opts, &ctx] {
    using_store(ctx,
                [&] { ctx.out << core::StoreReader(opts->db).study(opts->name, core::report_format(opts->format)); });
  });

  CLI::App* stats = group->add_subcommand("stats", "Size of the knowledge base: file, rows, bytes per run");
  add_db_option(stats, opts->db);
  stats->callback([opts, &ctx] { using_store(ctx, [&] { ctx.out << core::StoreReader(opts->db).stats(); }); });

  CLI::App* exp = group->add_subcommand("export", "Export everything (json) or every run with its result (csv)");
  add_db_option(exp, opts->db);
  exp->add_option("--format", opts->format, "Output format")->required()->check(CLI::IsMember({"json", "csv"}));
  exp->callback([opts, &ctx] {
    using_store(ctx, [&] { ctx.out << core::StoreReader(opts->db).export_all(core::report_format(opts->format)); });
  });

  CLI::App* query = group->add_subcommand("query", "Run one read-only SQL statement (SELECT, WITH, read pragmas)");
  query->add_option("sql", opts->sql, "The statement")->required();
  add_db_option(query, opts->db);
  add_format_option(query, opts->format);
  query->add_option("--timeout", opts->timeout, "Seconds the statement may run before it is stopped")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  query->callback([opts, &ctx] {
    using_store(ctx, [&] {
      ctx.out << core::StoreReader(opts->db, opts->timeout).query(opts->sql, core::report_format(opts->format));
    });
  });

  CLI::App* migrate = group->add_subcommand("migrate", "Upgrade a knowledge base to this poems' schema (writes)");
  add_db_option(migrate, opts->db);
  migrate->callback([opts, &ctx] { using_store(ctx, [&] { ctx.out << core::migrate_store(opts->db); }); });
}

}  // namespace poems::cli
