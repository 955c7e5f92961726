// Ad-hoc read-only SQL. Three independent guards: the connection is opened
// with SQLITE_OPEN_READONLY (the file cannot change through it), an
// authorizer admits only reads (it also refuses ATTACH and setting pragmas,
// which sqlite3_stmt_readonly would let through), and sqlite3_stmt_readonly
// must agree.
#include <cctype>
#include <set>
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

int authorize(void*, int action, const char* arg1, const char* arg2, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE: return SQLITE_OK;
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

QueryResult KnowledgeBase::query_readonly(const std::string& text, const std::vector<Cell>& params) const {
  if (!impl_->readonly) {
    auto conn = std::make_unique<sql::Connection>(impl_->path, SQLITE_OPEN_READONLY, impl_->options.busy_timeout_ms,
                                                  impl_->options.busy_retries);
    conn->run_script("PRAGMA query_only = ON");
    sqlite3_set_authorizer(conn->handle(), authorize, nullptr);
    impl_->readonly = std::move(conn);
  }
  sqlite3* db = impl_->readonly->handle();
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db, text.c_str(), static_cast<int>(text.size()) + 1, &raw, &tail);
  if (rc == SQLITE_AUTH)
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
  try {
    while (stmt.step()) {
      std::vector<Cell> row;
      for (int c = 0; c < stmt.columns(); ++c) {
        switch (stmt.type(c)) {
          case SQLITE_INTEGER: row.emplace_back(stmt.int64(c)); break;
          case SQLITE_FLOAT: row.emplace_back(stmt.real(c)); break;
          case SQLITE_TEXT: row.emplace_back(stmt.text(c)); break;
          case SQLITE_BLOB: row.emplace_back(hex(sqlite3_column_blob(raw, c), sqlite3_column_bytes(raw, c))); break;
          default: row.emplace_back(std::monostate{});
        }
      }
      result.rows.push_back(std::move(row));
    }
  } catch (const sql::BusyError&) {
    throw;
  } catch (const Error& e) {
    throw Error(std::string("bad query: ") + e.what());
  }
  return result;
}

}  // namespace poems::db
