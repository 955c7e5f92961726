#include "result_store.h"

#include <iostream>

#include "poems/db/knowledge_base.h"
#include "poems/db/run_key.h"

namespace poems::cli {

void add_store_options(CLI::App* cmd, StoreOptions& options) {
  cmd->add_option("--db", options.db_path, "Knowledge base file (default: $POEMS_DB, else ./poems.db)");
  cmd->add_flag("--no-store", options.disabled, "Do not store the result in the knowledge base");
}

// The texts of the file and its imports in load order, not their paths: the
// same specification reached as `spec.psl`, `./spec.psl` or an absolute path,
// or copied elsewhere, finds the same stored runs.
std::string specification_hash(const psl::SourceManager& sources) {
  std::string all;
  for (psl::FileId f = 0; f < sources.size(); ++f) {
    all += sources.text(f);
    all += '\0';
  }
  return db::sha256_hex(all);
}

struct StoredEvaluation::State {
  std::unique_ptr<db::KnowledgeBase> kb;
  db::RunStart start;
  bool claimed = false, done = false, quiet = false;
};

StoredEvaluation::StoredEvaluation(const StoreOptions& options, const EvaluationKey& key)
    : state_(std::make_unique<State>()) {
  state_->quiet = options.quiet;
  if (options.disabled) return;
  try {
    state_->kb = std::make_unique<db::KnowledgeBase>(db::resolve_path(options.db_path));
    db::RunKey rk;
    rk.model = key.model;
    rk.evaluator = key.evaluator;
    rk.spec_hash = key.spec_hash;
    rk.tool_version = POEMS_VERSION;
    rk.binding = key.binding;
    state_->start = state_->kb->begin_run(rk);
    state_->claimed = state_->start.state == db::RunStart::State::kClaimed;
  } catch (const std::exception& e) {
    std::cerr << "poems: warning: the knowledge base is not usable, the result will not be stored: " << e.what()
              << '\n';
    state_->kb.reset();
  }
}

StoredEvaluation::~StoredEvaluation() {
  // An evaluation that ended without a result (an exception) is recorded as failed.
  if (state_->claimed && !state_->done) fail("the evaluation did not finish");
}

bool StoredEvaluation::finish(const db::Result& result) {
  State& s = *state_;
  s.done = true;
  if (!s.kb) return true;
  const std::string where = s.kb->path().string();
  try {
    switch (s.start.state) {
      case db::RunStart::State::kClaimed:
        s.kb->complete_run(s.start.handle, result);
        if (!s.quiet) std::cerr << "stored as run " << s.start.run.id << " in " << where << '\n';
        break;
      case db::RunStart::State::kAlreadyDone:
        if (!s.quiet)
          std::cerr << "the same run is already stored as run " << s.start.run.id << " in " << where << '\n';
        break;
      case db::RunStart::State::kBusy:
        std::cerr << "another process is evaluating the same run (" << s.start.run.id << "); not stored twice\n";
        break;
    }
    return true;
  } catch (const std::exception& e) {
    std::cerr << "poems: error: the result was not stored in the knowledge base: " << e.what() << '\n';
    return false;
  }
}

void StoredEvaluation::fail(const std::string& error) {
  State& s = *state_;
  s.done = true;
  if (!s.kb || !s.claimed) return;
  try {
    s.kb->fail_run(s.start.handle, error);
  } catch (const std::exception&) {
    // The run stays claimed by a finished process: the resume rule takes it over.
  }
}

const db::Result* StoredEvaluation::stored() const {
  const State& s = *state_;
  if (!s.kb || s.start.state != db::RunStart::State::kAlreadyDone || !s.start.run.result) return nullptr;
  return &*s.start.run.result;
}

void StoredEvaluation::link(const std::string& study, const std::string& spec_hash, const std::vector<db::Ted>& teds) {
  State& s = *state_;
  if (!s.kb || s.start.run.id == 0) return;
  try {
    s.kb->transaction([&] {
      s.kb->add_run_to_study(s.kb->put_study(study, spec_hash), s.start.run.id);
      if (s.claimed) s.kb->store_teds(s.start.run.id, teds);
    });
  } catch (const std::exception& e) {
    std::cerr << "poems: warning: run " << s.start.run.id << " was not linked to study " << study << ": " << e.what()
              << '\n';
  }
}

}  // namespace poems::cli
