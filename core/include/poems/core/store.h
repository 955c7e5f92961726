// Results in the knowledge base (docs/knowledge-base.md): the run key of an
// evaluation, its record, and claiming, storing and reusing runs. Every
// evaluating command stores what it evaluates unless told not to
// (--no-store); a result that cannot be stored is an evaluation failure
// (StoreError): it would otherwise be lost.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/core/evaluators.h"
#include "poems/db/knowledge_base.h"
#include "poems/db/records.h"
#include "poems/db/run_key.h"

namespace poems::core {

struct StoreOptions {
  bool disabled = false;  // --no-store
  std::string path;       // --db; "" = $POEMS_DB, else ./poems.db
};

// The knowledge base of a command, opened once.
class Store {
 public:
  // Throws StoreError when the knowledge base cannot be opened (unless disabled).
  explicit Store(const StoreOptions& options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  bool enabled() const { return kb_ != nullptr; }
  db::KnowledgeBase* kb() { return kb_.get(); }
  std::string path() const;
  // Problems that lose nothing (a run not linked to its study), for the
  // caller to report; taken and cleared.
  std::vector<std::string> take_warnings();
  void warn(std::string warning) { warnings_.push_back(std::move(warning)); }

 private:
  std::unique_ptr<db::KnowledgeBase> kb_;
  std::vector<std::string> warnings_;
};

// The record of an outcome: time, compute, comm and sync, events; extra
// holds the evaluator's figures and processes, method and messages.
db::Result record_of(const Outcome& outcome, bool measured);
// The outcome a stored record says (a study re-run reads it back).
Outcome outcome_of(const db::Result& record);

// One evaluation's run: claimed before the evaluation (so its wall time and
// a failure are recorded), its result stored after it.
class RunRecord {
 public:
  enum class State {
    NotStored,      // no knowledge base (--no-store)
    Stored,         // stored as a new run
    AlreadyStored,  // an identical run was stored before
    Busy,           // another process is evaluating the same run; not stored twice
  };
  // Throws StoreError when the run cannot be claimed.
  RunRecord(Store& store, db::RunKey key);
  ~RunRecord();  // an unfinished claim is recorded as failed
  RunRecord(const RunRecord&) = delete;
  RunRecord& operator=(const RunRecord&) = delete;

  // The result of an identical run stored earlier, if there is one.
  const db::Result* stored() const;
  // Stores the result; throws StoreError when it cannot.
  State finish(const db::Result& result);
  // Records a failed evaluation (the next identical run retries it).
  void fail(const std::string& error) noexcept;
  // Gives the claim back unevaluated: the run is as before the claim
  // (db::KnowledgeBase::abandon_run).
  void abandon() noexcept;
  // Links the run to a study and records its TEDs; a failure is a warning of the store.
  void link(const std::string& study, const std::string& spec_hash, const std::vector<db::Ted>& teds);
  db::RowId id() const;
  const db::RunKey& key() const { return key_; }

 private:
  Store& store_;
  db::RunKey key_;
  db::RunStart start_;
  bool claimed_ = false, done_ = false;
};

}  // namespace poems::core
