#include "poems/db/knowledge_base.h"

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "internal.h"
#include "poems/db/schema.h"

namespace poems::db {

std::filesystem::path resolve_path(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  const char* env = std::getenv("POEMS_DB");
  if (env && *env) return env;
  return "poems.db";
}

std::string_view to_string(RunStatus status) {
  switch (status) {
    case RunStatus::kPending: return "pending";
    case RunStatus::kRunning: return "running";
    case RunStatus::kDone: return "done";
    case RunStatus::kFailed: return "failed";
  }
  return "pending";
}

std::optional<RunStatus> parse_run_status(std::string_view text) {
  for (RunStatus s : {RunStatus::kPending, RunStatus::kRunning, RunStatus::kDone, RunStatus::kFailed})
    if (to_string(s) == text) return s;
  return std::nullopt;
}

std::string_view to_string(ResultKind kind) { return kind == ResultKind::kMeasured ? "measured" : "predicted"; }

std::string_view to_string(Provenance provenance) {
  switch (provenance) {
    case Provenance::kPublished: return "published";
    case Provenance::kCalibrated: return "calibrated";
    case Provenance::kUser: return "user";
  }
  return "user";
}

namespace {

// What a file is before anything touches it.
enum class FileState { kMissing, kEmpty, kSqlite };

// Refuses (CorruptError) a file that SQLite would take for an empty database
// and overwrite: a truncated file, or one that is not SQLite at all.
FileState inspect_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return FileState::kMissing;
  if (!std::filesystem::is_regular_file(status))
    throw Error("knowledge base '" + path.string() + "' is not a regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size == 0) return FileState::kEmpty;
  static constexpr char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  char header[16] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(header, sizeof header);
  const auto got = static_cast<std::size_t>(in.gcount());
  if (!in && got == 0) throw Error("cannot read knowledge base '" + path.string() + "'");
  if (got < sizeof header || size < 512 || std::memcmp(header, kMagic, sizeof kMagic) != 0)
    throw CorruptError("knowledge base '" + path.string() + "' is not an SQLite database (" + std::to_string(size) +
                       " bytes, starting '" + detail::printable(std::string_view(header, got)) +
                       "'): it may be truncated or damaged. poems leaves it as it is: restore a backup, or move it " +
                       "aside and a new knowledge base is created");
  return FileState::kSqlite;
}

}  // namespace

KnowledgeBase::KnowledgeBase(const std::filesystem::path& path, const Options& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->options = options;
  const FileState state = inspect_file(path);
  if (state == FileState::kMissing && (!options.create_if_missing || options.read_only))
    throw Error("no knowledge base at '" + path.string() + "'");
  if (state == FileState::kEmpty && options.read_only)
    throw Error("knowledge base '" + path.string() + "' is an empty file: nothing has been stored there yet");
  if (state == FileState::kSqlite) {
    // Read-only first: a file of another program or a newer poems is refused
    // before anything (even the switch to WAL) changes it.
    int version = current_schema_version();
    try {
      sql::Connection probe(path, SQLITE_OPEN_READONLY, options.busy_timeout_ms, options.busy_retries);
      version = detail::inspect_schema(probe, path.string());
    } catch (const sql::ReadOnlyDatabaseError&) {
      // A hot journal left by a process that died mid-write: only a writer
      // may roll it back (and migrate() checks the schema again then).
      if (options.read_only)
        throw Error("knowledge base '" + path.string() + "' was left mid-write by a process that died; any " +
                    "command that stores results (or `poems db migrate --db " + path.string() + "`) recovers it");
    }
    if (options.read_only && version < oldest_readable_schema_version())
      throw Error("knowledge base '" + path.string() + "' has schema version " + std::to_string(version) +
                  " and this poems reads versions " + std::to_string(oldest_readable_schema_version()) + " to " +
                  std::to_string(current_schema_version()) + "; upgrade it once with `poems db migrate --db " +
                  path.string() + "` (or any command that stores results)");
  }
  if (options.read_only) {
    impl_->conn =
        std::make_unique<sql::Connection>(path, SQLITE_OPEN_READONLY, options.busy_timeout_ms, options.busy_retries);
    impl_->conn->run_script("PRAGMA query_only = ON");
    return;
  }
  int flags = SQLITE_OPEN_READWRITE | (options.create_if_missing ? SQLITE_OPEN_CREATE : 0);
  impl_->conn = std::make_unique<sql::Connection>(path, flags, options.busy_timeout_ms, options.busy_retries);
  detail::prepare_connection(*impl_->conn, path.string());
  detail::migrate(*impl_->conn, path.string(), current_schema_version());
}

KnowledgeBase::~KnowledgeBase() = default;

const std::filesystem::path& KnowledgeBase::path() const { return impl_->path; }

int KnowledgeBase::schema_version() const { return detail::user_version(*impl_->conn); }

void KnowledgeBase::transaction(const std::function<void()>& body) { impl_->conn->write_once(body); }

}  // namespace poems::db
