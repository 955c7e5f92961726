#include "poems/core/store.h"

#include "poems/core/cachesim_calibration.h"
#include "poems/core/error.h"

namespace poems::core {

Store::Store(const StoreOptions& options) {
  if (options.disabled) return;
  std::filesystem::path path;
  try {
    path = db::resolve_path(options.path);
    kb_ = std::make_unique<db::KnowledgeBase>(path);
  } catch (const std::exception& e) {
    throw StoreError("the knowledge base " + (path.empty() ? options.path : path.string()) +
                     " cannot store results: " + e.what() + " (--no-store evaluates without storing)");
  }
  keep_cachesim_counts_in(path.string());  // processor[cachesim]'s simulations, reused across commands
}

Store::~Store() {
  if (kb_) keep_cachesim_counts_in("");
}

std::string Store::path() const { return kb_ ? kb_->path().string() : ""; }

std::vector<std::string> Store::take_warnings() {
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

db::Result record_of(const Outcome& o, bool measured) {
  db::Result r;
  r.kind = measured ? db::ResultKind::kMeasured : db::ResultKind::kPredicted;
  r.time_ns = o.breakdown.time_ns;
  r.compute_ns = o.breakdown.compute_ns;
  r.comm_ns = o.breakdown.comm_ns;
  r.sync_ns = o.breakdown.sync_ns;
  if (o.events) r.events = static_cast<std::int64_t>(o.events);
  r.extra = o.extra;
  r.extra["processes"] = o.processes;
  r.extra["method"] = o.method;
  r.extra["messages"] = o.messages;
  return r;
}

Outcome outcome_of(const db::Result& r) {
  Outcome o;
  o.breakdown = {r.time_ns, r.compute_ns.value_or(0), r.comm_ns.value_or(0), r.sync_ns.value_or(0)};
  o.events = static_cast<std::uint64_t>(r.events.value_or(0));
  o.extra = r.extra;
  if (const auto it = r.extra.find("processes"); it != r.extra.end() && it->is_number())
    o.processes = it->get<std::uint32_t>();
  if (const auto it = r.extra.find("messages"); it != r.extra.end() && it->is_number())
    o.messages = it->get<std::uint64_t>();
  if (const auto it = r.extra.find("method"); it != r.extra.end() && it->is_string()) o.method = it->get<std::string>();
  return o;
}

RunRecord::RunRecord(Store& store, db::RunKey key) : store_(store), key_(std::move(key)) {
  if (!store_.enabled()) return;
  try {
    start_ = store_.kb()->begin_run(key_);
  } catch (const std::exception& e) {
    throw StoreError("the run cannot be recorded in " + store_.path() + ": " + e.what() +
                     " (--no-store evaluates without storing)");
  }
  claimed_ = start_.state == db::RunStart::State::kClaimed;
}

RunRecord::~RunRecord() {
  if (claimed_ && !done_) fail("the evaluation did not finish");
}

const db::Result* RunRecord::stored() const {
  if (!store_.enabled() || start_.state != db::RunStart::State::kAlreadyDone || !start_.run.result) return nullptr;
  return &*start_.run.result;
}

RunRecord::State RunRecord::finish(const db::Result& result) {
  done_ = true;
  if (!store_.enabled()) return State::NotStored;
  switch (start_.state) {
    case db::RunStart::State::kClaimed: try { store_.kb()->complete_run(start_.handle, result);
      } catch (const std::exception& e) {
        throw StoreError("the result was not stored in " + store_.path() + ": " + e.what());
      }
      return State::Stored;
    case db::RunStart::State::kAlreadyDone: return State::AlreadyStored;
    case db::RunStart::State::kBusy: return State::Busy;
  }
  return State::NotStored;
}

void RunRecord::fail(const std::string& error) noexcept {
  done_ = true;
  if (!store_.enabled() || !claimed_) return;
  try {
    store_.kb()->fail_run(start_.handle, error);
  } catch (...) {
    // The run stays claimed by a finished process: the resume rule takes it over.
  }
}

void RunRecord::abandon() noexcept {
  if (done_) return;
  done_ = true;
  if (!store_.enabled() || !claimed_) return;
  try {
    store_.kb()->abandon_run(start_.handle);
  } catch (...) {
    // As in fail(): the run stays claimed by a finished process.
  }
}

void RunRecord::link(const std::string& study, const std::string& spec_hash, const std::vector<db::Ted>& teds) {
  if (!store_.enabled() || start_.run.id == 0) return;
  try {
    store_.kb()->transaction([&] {
      store_.kb()->add_run_to_study(store_.kb()->put_study(study, spec_hash), start_.run.id);
      if (claimed_) store_.kb()->store_teds(start_.run.id, teds);
    });
  } catch (const std::exception& e) {
    store_.warn("run " + std::to_string(start_.run.id) + " was not linked to study " + study + ": " + e.what());
  }
}

db::RowId RunRecord::id() const { return start_.run.id; }

}  // namespace poems::core
