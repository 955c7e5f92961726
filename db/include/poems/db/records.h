// Rows of the knowledge base as plain structs (docs/knowledge-base.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace poems::db {

using RowId = std::int64_t;

enum class RunStatus { kPending, kRunning, kDone, kFailed };
std::string_view to_string(RunStatus status);
std::optional<RunStatus> parse_run_status(std::string_view text);

enum class ResultKind { kPredicted, kMeasured };
std::string_view to_string(ResultKind kind);

// What an evaluator produced for one run. Times are nanoseconds.
struct Result {
  ResultKind kind = ResultKind::kPredicted;
  double time_ns = 0;
  std::optional<double> compute_ns, comm_ns, sync_ns;  // breakdown, when the evaluator gives one
  std::optional<std::int64_t> events;                  // simulator events
  nlohmann::json extra = nlohmann::json::object();     // anything else (per-rank times, ...)
};

struct Run {
  RowId id = 0;
  std::string run_key;   // SHA-256 of key_text
  std::string key_text;  // RunKey::canonical_text()
  std::string model, evaluator, spec_hash, tool_version;
  nlohmann::json binding;
  RunStatus status = RunStatus::kPending;
  std::string host;                 // last claimant
  std::optional<std::int64_t> pid;  // last claimant
  std::int64_t attempts = 0;        // times an evaluation was started
  std::string created_at;           // ISO 8601 UTC
  std::optional<std::string> started_at, finished_at;
  std::optional<std::int64_t> wall_time_ns;  // evaluation wall time of the attempt that finished
  std::optional<std::string> error;          // failed runs
  std::optional<Result> result;              // done runs
};

// Which evaluator a static task-graph node is dispatched to, with its parameters.
struct Ted {
  std::string node;       // static node name, e.g. "kblock"
  std::string evaluator;  // e.g. "processor[wg]"
  nlohmann::json parameters = nlohmann::json::object();
};

enum class Provenance { kPublished, kCalibrated, kUser };
std::string_view to_string(Provenance provenance);

struct Machine {
  std::string name;
  nlohmann::json parameters = nlohmann::json::object();  // e.g. {"L": 5300, "o": 2300, ...} in ns and bytes
  Provenance provenance = Provenance::kUser;
  std::string source;  // where the values come from: a paper, a calibration command, a file
  std::string updated_at;
};

struct Calibration {
  RowId id = 0;
  std::string machine, parameter, method;
  double value = 0;
  std::string measured_at;  // ISO 8601 UTC; empty = now
};

struct Component {
  RowId id = 0;
  std::string name, source_text, content_hash;  // content_hash = SHA-256 of source_text
};

struct TaskGraphRecord {
  RowId id = 0;
  std::string model, spec_hash;
  nlohmann::json summary = nlohmann::json::object();  // counts, parameters, ...
};

struct Study {
  RowId id = 0;
  std::string name, spec_hash;
};

// A rule mined by the recommender, e.g. "it*jt <= 64 => mk >= 10".
struct Rule {
  RowId id = 0;
  std::string problem_class, rule_text;
  std::int64_t support = 0;
  double confidence = 0;
  nlohmann::json data = nlohmann::json::object();
};

}  // namespace poems::db
