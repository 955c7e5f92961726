// Evaluator commands store their results in the knowledge base by default
// (`--db PATH`, `--no-store`); see docs/knowledge-base.md.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "poems/base/source.h"
#include "poems/db/records.h"

namespace poems::cli {

struct StoreOptions {
  bool disabled = false;
  bool quiet = false;   // no "stored as run N" line per evaluation (studies)
  std::string db_path;  // "" = $POEMS_DB or ./poems.db
};

void add_store_options(CLI::App* cmd, StoreOptions& options);

// SHA-256 over every file the specification read (paths and texts).
std::string specification_hash(const psl::SourceManager& sources);

// What identifies one evaluation (tool version is added).
struct EvaluationKey {
  std::string model, evaluator, spec_hash;
  nlohmann::json binding;  // everything the result depends on
};

// One evaluation's record: claims the run before the evaluation (so its wall
// time and a failure are recorded), stores the result after it.
class StoredEvaluation {
 public:
  StoredEvaluation(const StoreOptions& options, const EvaluationKey& key);
  ~StoredEvaluation();
  StoredEvaluation(const StoredEvaluation&) = delete;
  StoredEvaluation& operator=(const StoredEvaluation&) = delete;

  // Stores the result; reports on stderr. Returns false if it could not be
  // stored (the result was already printed: nothing is lost).
  bool finish(const db::Result& result);
  // Records a failed evaluation (the next identical run retries it).
  void fail(const std::string& error);
  // The result stored by an earlier identical run, if there is one: a study
  // re-run evaluates only what is missing.
  const db::Result* stored() const;
  // Links the run to a study and records its TEDs (warns, never throws).
  void link(const std::string& study, const std::string& spec_hash, const std::vector<db::Ted>& teds);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace poems::cli
