#include "poems/db/knowledge_base.h"

#include <cstdlib>

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

KnowledgeBase::KnowledgeBase(const std::filesystem::path& path, const Options& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->options = options;
  if (!options.create_if_missing && !std::filesystem::exists(path))
    throw Error("no knowledge base at '" + path.string() + "'");
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
