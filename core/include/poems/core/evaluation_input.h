// What `poems simulate` and `poems analyze` evaluate: exactly one of a PSL
// model (through a Session, as a study's cell), a GOAL file or one
// collective (core/schedules.h), or a trace's replay (core/trace_replay.h),
// by one paradigm, stored in the knowledge base. The one place that chooses
// between them.
#pragma once

#include <memory>
#include <string>

#include "poems/core/schedules.h"
#include "poems/core/session.h"
#include "poems/core/store.h"
#include "poems/core/system.h"
#include "poems/core/trace_replay.h"

namespace poems::core {

struct InputRequest {
  std::string command;           // names the usage error when not exactly one input is given
  SystemRequest system;          // a PSL model: its first file is SPEC ("" = none)
  std::string goal;              // a GOAL file ("" = none)
  CollectiveRequest collective;  // one collective (operation "" = none)
  TraceRequest trace;            // a trace's replay (archive "" = none), on the command's machine
  // The command line's part of the evaluation: --machine, --processor,
  // -L ..., --wg, --method (a model's --set values are added when it loads).
  SessionOptions session;
  // The paradigm, and what a simulation keeps beside the record (per-rank
  // results, a timeline); for a model, the whole request of its one cell.
  CellRequest cell;
  StoreOptions store;
};

enum class InputKind { Model, Goal, Collective, Trace };

// Which input the request gives. Throws UsageError(request.command) unless
// exactly one, UsageError naming a trace replay's option given without a trace.
InputKind input_kind(const InputRequest& request);

class EvaluationInput {
 public:
  // Checks the request (input_kind), opens the knowledge base, then loads
  // the model (load_system) or reads the trace with its machine
  // (prepare_replay); a GOAL file is read when it is evaluated. Throws what
  // those throw, UsageError for --machine, --processor or --set without a
  // model and for the closed form of a trace.
  explicit EvaluationInput(InputRequest request);
  ~EvaluationInput();
  EvaluationInput(const EvaluationInput&) = delete;
  EvaluationInput& operator=(const EvaluationInput&) = delete;

  InputKind kind() const { return kind_; }
  // The model's system, or nullptr (its warnings are the caller's to show).
  const System* system() const { return system_.get(); }
  // The trace's replay, or nullptr (its trace's warnings are the caller's to show).
  const Replay* replay() const { return replay_.get(); }
  // The model's name: its task graph's, the replay's ("trace:<hex>"),
  // "goal:FILE" or "collective:OPERATION".
  std::string model() const;

  // Evaluates the input by the request's paradigm and stores the run (a
  // GOAL file's warnings are the cell's). Throws what Session::evaluate,
  // evaluate_schedule and evaluate_replay throw.
  Cell evaluate();
  // What the replay covered (after evaluate, for a trace).
  const trace::ReplayScope& scope() const { return scope_; }

 private:
  InputRequest request_;
  InputKind kind_;
  Store store_;
  std::unique_ptr<System> system_;
  std::unique_ptr<Replay> replay_;
  trace::ReplayScope scope_;
};

}  // namespace poems::core
