// Ad-hoc read-only SQL. Three independent guards: the connection is opened
// with SQLITE_OPEN_READONLY (the file cannot change through it), an
// authorizer admits only reads (it also refuses ATTACH and setting pragmas,
// which sqlite3_stmt_readonly would let through), and sqlite3_stmt_readonly
// must agree.
#include <cctype>
#include <chrono>
#include <set>
#include <string_view>
#include <type_traits>
#include <variant>

#include "internal.h"

namespace poems::db {

namespace {

// Pragmas whose argument names a table or index: reading only.
const std::set<std::string, std::less<>> kQueryPragmas = {
    "table_info",  "table_xinfo",      "table_list",        "index_list",      "index_info",
    "index_xinfo", "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check"};
// Pragmas that are settings: readable without an argument, never set.
const std::set<std::string, std::less<>> kSettingPragmas = {
    "user_version",  "schema_version", "application_id", "journal_mode",    "foreign_keys",  "page_count",
    "page_size",     "freelist_count", "encoding",       "compile_options", "database_list", "data_version",
    "function_list", "collation_list", "pragma_list",    "module_list"};

// Functions that only compute (SQLite 3.40's core, date, math, JSON,
// aggregate and window functions). Anything else is refused: fts3_tokenizer
// (reads and writes raw pointers), load_extension, and any function an
// extension or a future SQLite may add.
const std::set<std::string, std::less<>> kReadingFunctions = {
    // core scalar
    "abs", "changes", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull", "iif", "instr",
    "last_insert_rowid", "length", "like", "likelihood", "likely", "lower", "ltrim", "max", "min", "nullif",
    "octet_length", "printf", "quote", "random", "randomblob", "replace", "round", "rtrim", "sign", "soundex",
    "sqlite_source_id", "sqlite_version", "substr", "substring", "total_changes", "trim", "typeof", "unhex", "unicode",
    "unlikely", "upper", "zeroblob",
    // date and time
    "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff", "current_date", "current_time",
    "current_timestamp",
    // aggregate and window
    "avg", "count", "group_concat", "string_agg", "sum", "total", "row_number", "rank", "dense_rank", "percent_rank",
    "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
    // math
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos", "cosh", "degrees", "exp",
    "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow", "power", "radians", "sin", "sinh", "sqrt", "tan", "tanh",
    "trunc",
    // JSON (functions of values: json_set and friends return a new text, they change nothing stored)
    "json", "json_array", "json_array_length", "json_error_position", "json_extract", "json_insert", "json_object",
    "json_patch", "json_remove", "json_replace", "json_set", "json_type", "json_valid", "json_quote",
    "json_group_array", "json_group_object", "json_each", "json_tree", "->", "->>"};

int authorize(void*, int action, const char* arg1, const char* arg2, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE: return SQLITE_OK;
    case SQLITE_FUNCTION: {
      std::string name = arg2 ? arg2 : "";
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return kReadingFunctions.count(name) ? SQLITE_OK : SQLITE_DENY;
    }
    case SQLITE_PRAGMA: {
      std::string name = arg1 ? arg1 : "";
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (kQueryPragmas.count(name) || (kSettingPragmas.count(name) && arg2 == nullptr)) return SQLITE_OK;
      return SQLITE_DENY;
    }
    default: return SQLITE_DENY;
  }
}

bool only_blank(const char* p) {
  // Comments after the statement are fine; anything prepared from the tail is a second statement.
  while (*p && std::isspace(static_cast<unsigned char>(*p))) ++p;
  return *p == '\0';
}

std::string hex(const void* data, int size) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::string out;
  for (int i = 0; i < size; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
}

}  // namespace

QueryResult KnowledgeBase::query_readonly(const std::string& text) const { return query_readonly(text, {}); }

namespace {

// Interrupts a query past its deadline or step budget (SQLite's progress
// handler runs every kCheckEvery virtual-machine instructions).
struct QueryBudget {
  static constexpr int kCheckEvery = 10000;
  std::chrono::steady_clock::time_point deadline;
  std::int64_t steps_left = 0;
  bool out_of_time = false, out_of_steps = false;
  static int check(void* self) {
    auto* b = static_cast<QueryBudget*>(self);
    b->steps_left -= kCheckEvery;
    if (b->steps_left < 0) b->out_of_steps = true;
    if (std::chrono::steady_clock::now() > b->deadline) b->out_of_time = true;
    return b->out_of_steps || b->out_of_time ? 1 : 0;
  }
};

}  // namespace

QueryResult KnowledgeBase::query_readonly(const std::string& text, const std::vector<Cell>& params) const {
  const Options& options = impl_->options;
  if (!impl_->readonly) {
    auto conn = std::make_unique<sql::Connection>(impl_->path, SQLITE_OPEN_READONLY, options.busy_timeout_ms,
                                                  options.busy_retries);
    conn->run_script("PRAGMA query_only = ON");
    sqlite3* h = conn->handle();
    sqlite3_set_authorizer(h, authorize, nullptr);
    // Bounds on what one statement may build (zeroblob, printf widths, deep expressions).
    sqlite3_limit(h, SQLITE_LIMIT_LENGTH, 64 << 20);
    sqlite3_limit(h, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
    sqlite3_limit(h, SQLITE_LIMIT_EXPR_DEPTH, 200);
    sqlite3_limit(h, SQLITE_LIMIT_COMPOUND_SELECT, 100);
    sqlite3_limit(h, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(h, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000);
    impl_->readonly = std::move(conn);
  }
  sqlite3* db = impl_->readonly->handle();
  QueryBudget budget{std::chrono::steady_clock::now() + std::chrono::milliseconds(options.query_time_limit_ms),
                     options.query_step_limit};
  sqlite3_progress_handler(db, QueryBudget::kCheckEvery, &QueryBudget::check, &budget);
  struct Unhook {
    sqlite3* db;
    ~Unhook() { sqlite3_progress_handler(db, 0, nullptr, nullptr); }
  } unhook{db};
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db, text.c_str(), static_cast<int>(text.size()) + 1, &raw, &tail);
  if (rc == SQLITE_AUTH ||
      (rc != SQLITE_OK && std::string_view(sqlite3_errmsg(db)).find("not authorized") != std::string_view::npos))
    throw ReadOnlyError("only reading statements are allowed (" + std::string(sqlite3_errmsg(db)) + ")");
  if (rc != SQLITE_OK) throw Error(std::string("bad query: ") + sqlite3_errmsg(db));
  if (!raw) throw Error("empty query");
  sql::Statement stmt(raw, nullptr, true);
  if (!sqlite3_stmt_readonly(raw)) throw ReadOnlyError("only reading statements are allowed");
  if (tail && !only_blank(tail)) {
    sqlite3_stmt* next = nullptr;
    const char* rest = nullptr;
    int tail_rc = sqlite3_prepare_v2(db, tail, -1, &next, &rest);
    bool second = tail_rc != SQLITE_OK || next != nullptr;  // a refused second statement is still one
    sqlite3_finalize(next);
    if (second) throw Error("bad query: one statement at a time");
  }
  if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(raw))
    throw Error("bad query: " + std::to_string(sqlite3_bind_parameter_count(raw)) + " parameters, " +
                std::to_string(params.size()) + " values");
  for (std::size_t i = 0; i < params.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::monostate>)
            stmt.bind(index, std::nullopt);
          else
            stmt.bind(index, v);
        },
        params[i]);
  }
  QueryResult result;
  for (int c = 0; c < stmt.columns(); ++c) result.columns.push_back(stmt.column_name(c));
  std::size_t bytes = 0;
  try {
    while (stmt.step()) {
      std::vector<Cell> row;
      for (int c = 0; c < stmt.columns(); ++c) {
        bytes += 16 + static_cast<std::size_t>(sqlite3_column_bytes(raw, c));
        switch (stmt.type(c)) {
          case SQLITE_INTEGER: row.emplace_back(stmt.int64(c)); break;
          case SQLITE_FLOAT: row.emplace_back(stmt.real(c)); break;
          case SQLITE_TEXT: row.emplace_back(stmt.text(c)); break;
          case SQLITE_BLOB: row.emplace_back(hex(sqlite3_column_blob(raw, c), sqlite3_column_bytes(raw, c))); break;
          default: row.emplace_back(std::monostate{});
        }
      }
      result.rows.push_back(std::move(row));
      if (result.rows.size() > options.query_max_rows || bytes > options.query_max_bytes)
        throw QueryBudgetError("the query's answer has more than " +
                               (result.rows.size() > options.query_max_rows
                                    ? std::to_string(options.query_max_rows) + " rows"
                                    : std::to_string(options.query_max_bytes >> 20) + " MiB") +
                               "; add a LIMIT or a WHERE");
    }
  } catch (const sql::BusyError&) {
    throw;
  } catch (const QueryBudgetError&) {
    throw;
  } catch (const Error& e) {
    if (budget.out_of_time)
      throw QueryBudgetError(
          "the query was stopped after " + detail::format_double(options.query_time_limit_ms / 1000.0) +
          " s, its time budget (a recursive query without end?); add a LIMIT or raise it with " + "--timeout SECONDS");
    if (budget.out_of_steps)
      throw QueryBudgetError("the query was stopped after " + std::to_string(options.query_step_limit) +
                             " SQLite steps, its budget; add a LIMIT or a WHERE");
    throw Error(std::string("bad query: ") + e.what());
  }
  return result;
}

}  // namespace poems::db
