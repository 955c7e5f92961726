// `poems db runs|show|export|query`: read the knowledge base (docs/knowledge-base.md).
#include <iostream>
#include <memory>

#include "cli.h"
#include "poems/db/knowledge_base.h"

namespace poems::cli {

namespace {

using Table = TextTable;  // first row: header

std::string number(double value) { return nlohmann::json(value).dump(); }
std::string or_dash(const std::optional<std::string>& text) { return text ? *text : "-"; }
template <class T>
std::string or_dash(const std::optional<T>& value) {
  return value ? nlohmann::json(*value).dump() : "-";
}

void print_runs_table(const std::vector<db::Run>& runs, std::ostream& out) {
  Table table = {{"id", "status", "model", "evaluator", "time_ns", "attempts", "finished_at", "binding"}};
  for (const db::Run& r : runs)
    table.push_back({std::to_string(r.id), std::string(db::to_string(r.status)), r.model, r.evaluator,
                     r.result ? number(r.result->time_ns) : "-", std::to_string(r.attempts), or_dash(r.finished_at),
                     db::canonical_json(r.binding)});
  print_table(table, out);
}

void print_run_details(const db::Run& r, const std::vector<db::Ted>& teds, std::ostream& out) {
  Table fields = {{"run", std::to_string(r.id)},
                  {"status", std::string(db::to_string(r.status))},
                  {"model", r.model},
                  {"evaluator", r.evaluator},
                  {"binding", db::canonical_json(r.binding)},
                  {"spec_hash", r.spec_hash},
                  {"tool_version", r.tool_version},
                  {"run_key", r.run_key},
                  {"host", r.host.empty() ? "-" : r.host},
                  {"pid", or_dash(r.pid)},
                  {"attempts", std::to_string(r.attempts)},
                  {"created_at", r.created_at},
                  {"started_at", or_dash(r.started_at)},
                  {"finished_at", or_dash(r.finished_at)},
                  {"wall_time_ns", or_dash(r.wall_time_ns)},
                  {"error", or_dash(r.error)}};
  if (r.result) {
    const db::Result& res = *r.result;
    fields.push_back({"result", std::string(db::to_string(res.kind))});
    fields.push_back({"time_ns", number(res.time_ns)});
    fields.push_back({"compute_ns", or_dash(res.compute_ns)});
    fields.push_back({"comm_ns", or_dash(res.comm_ns)});
    fields.push_back({"sync_ns", or_dash(res.sync_ns)});
    fields.push_back({"events", or_dash(res.events)});
    fields.push_back({"extra", res.extra.dump()});
  } else {
    fields.push_back({"result", "-"});
  }
  for (const db::Ted& t : teds) fields.push_back({"ted " + t.node, t.evaluator + " " + t.parameters.dump()});
  print_table(fields, out);
}

std::string cell_text(const db::Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) return number(*d);
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return "NULL";
}

// Opens the knowledge base for a command and runs `body`; errors are exit 1.
template <class F>
void with_kb(const std::string& db_option, int& result, F&& body) {
  try {
    db::Options options;
    options.create_if_missing = false;  // reading commands never create an empty file
    db::KnowledgeBase kb(db::resolve_path(db_option), options);
    body(kb);
  } catch (const std::exception& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
  }
}

CLI::Option* add_db_option(CLI::App* cmd, std::string& db) {
  return cmd->add_option("--db", db, "Knowledge base file (default: $POEMS_DB, else ./poems.db)");
}

}  // namespace

void register_db(CLI::App& app, Context& ctx) {
  int& result = ctx.result;  // db prints to std::cout and std::cerr
  struct Options {
    std::string db, format = "table", status, model, evaluator, sql;
    db::RowId id = 0;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* group = app.add_subcommand("db", "Inspect the knowledge base: runs, results, export, read-only SQL");
  group->require_subcommand(1);

  CLI::App* runs = group->add_subcommand("runs", "List stored runs with their status and predicted time");
  add_db_option(runs, opts->db);
  runs->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  runs->add_option("--status", opts->status, "Only runs with this status")
      ->check(CLI::IsMember({"pending", "running", "done", "failed"}));
  runs->add_option("--model", opts->model, "Only runs of this model");
  runs->add_option("--evaluator", opts->evaluator, "Only runs of this evaluator, e.g. analytic[LogGP]");
  runs->callback([opts, &result] {
    with_kb(opts->db, result, [&](db::KnowledgeBase& kb) {
      db::RunFilter filter;
      if (!opts->status.empty()) filter.status = db::parse_run_status(opts->status);
      if (!opts->model.empty()) filter.model = opts->model;
      if (!opts->evaluator.empty()) filter.evaluator = opts->evaluator;
      std::vector<db::Run> list = kb.runs(filter);
      if (opts->format == "json") {
        nlohmann::json array = nlohmann::json::array();
        for (const db::Run& r : list) array.push_back(db::to_json(r));
        std::cout << array.dump(2) << '\n';
      } else if (opts->format == "csv") {
        std::cout << db::runs_to_csv(list);
      } else {
        print_runs_table(list, std::cout);
      }
    });
  });

  CLI::App* show = group->add_subcommand("show", "Show one run: key, status, result, TEDs");
  show->add_option("id", opts->id, "Run id")->required();
  add_db_option(show, opts->db);
  show->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  show->callback([opts, &result] {
    with_kb(opts->db, result, [&](db::KnowledgeBase& kb) {
      std::optional<db::Run> run = kb.run(opts->id);
      if (!run) throw db::Error("no run " + std::to_string(opts->id) + " in '" + kb.path().string() + "'");
      std::vector<db::Ted> teds = kb.teds(run->id);
      if (opts->format == "json") {
        nlohmann::json j = db::to_json(*run);
        j["teds"] = nlohmann::json::array();
        for (const db::Ted& t : teds)
          j["teds"].push_back({{"node", t.node}, {"evaluator", t.evaluator}, {"parameters", t.parameters}});
        std::cout << j.dump(2) << '\n';
      } else if (opts->format == "csv") {
        std::cout << db::runs_to_csv({*run});
      } else {
        print_run_details(*run, teds, std::cout);
      }
    });
  });

  CLI::App* exp = group->add_subcommand("export", "Export everything (json) or every run with its result (csv)");
  add_db_option(exp, opts->db);
  exp->add_option("--format", opts->format, "Output format")->required()->check(CLI::IsMember({"json", "csv"}));
  exp->callback([opts, &result] {
    with_kb(opts->db, result, [&](db::KnowledgeBase& kb) {
      if (opts->format == "json")
        std::cout << kb.export_json().dump(2) << '\n';
      else
        std::cout << kb.export_csv();
    });
  });

  CLI::App* query = group->add_subcommand("query", "Run one read-only SQL statement (SELECT, WITH, read pragmas)");
  query->add_option("sql", opts->sql, "The statement")->required();
  add_db_option(query, opts->db);
  query->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  query->callback([opts, &result] {
    with_kb(opts->db, result, [&](db::KnowledgeBase& kb) {
      db::QueryResult rows = kb.query_readonly(opts->sql);
      if (opts->format == "json") {
        std::cout << db::query_to_json(rows).dump(2) << '\n';
      } else if (opts->format == "csv") {
        std::cout << db::query_to_csv(rows);
      } else {
        Table table = {rows.columns};
        for (const auto& row : rows.rows) {
          std::vector<std::string> line;
          for (const db::Cell& c : row) line.push_back(cell_text(c));
          table.push_back(std::move(line));
        }
        print_table(table, std::cout);
      }
    });
  });
}

}  // namespace poems::cli
