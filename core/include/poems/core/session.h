// The one path from a specification to a result. `poems simulate`,
// `analyze`, `run`, `measure` and `recommend`, and studies comparing
// simulation[direct], evaluate through a Session: the model composed by the
// PSL compiler for the paradigm, the compute rates from the processor TEDs,
// the evaluator, the run key, the knowledge base. So the same binding
// evaluated by two commands is the same stored run, with the same numbers.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/core/composition.h"
#include "poems/core/error.h"
#include "poems/core/evaluators.h"
#include "poems/core/store.h"
#include "poems/core/system.h"

namespace poems::core {

// The command line's part of every evaluation of a session.
struct SessionOptions {
  Choices choices;           // --machine, --processor, --set study attributes and overrides
  MachineOverrides machine;  // -L -o -g -G -O -S --rendezvous-handshake --cpus --nics
  // --wg: the compute time per unit of work of every compute node (units
  // allowed, e.g. 60ns), over what the processor components say.
  std::optional<std::string> wg;
  std::string method;  // --method of analytic[LogGP]; "" = its default
  MeasureOptions measure;
};

// One binding for one paradigm.
struct CellRequest {
  std::string paradigm;
  taskgraph::ParameterBinding parameters;              // model parameters (over the study's set and --set)
  std::map<std::string, std::string> text_parameters;  // model parameters whose value is text, as PSL writes it
  std::map<std::string, base::Value> overrides;        // Component.param values of this binding
  std::map<std::string, base::Value> study;            // study attributes of this binding (a varied `compute`)
  bool reuse = true;  // false: evaluate even when the run is stored (a command asked for this evaluation)
  // Beside the record (poems simulate): per-rank results, a timeline.
  bool per_rank = false, timeline = false;
  std::string otf2_timeline;  // simulation[MPI-Sim]: the run as this OTF2 archive
  std::size_t max_stuck_listed = 16;
};

struct Cell {
  std::string paradigm;
  Outcome outcome;
  bool reused = false;   // read from the knowledge base, not evaluated
  bool skipped = false;  // not evaluated here by choice (`error` says why)
  std::string error;     // the evaluation failed (or why it was skipped)
  ErrorKind error_kind = ErrorKind::Evaluation;
  std::string store_error;  // evaluated, but the result could not be stored
  double wall_seconds = 0;
  RunRecord::State record = RunRecord::State::NotStored;
  db::RowId run_id = 0;
  std::string store_path;
  Evaluation evaluation;                             // what was evaluated: binding, machine, rates
  nlohmann::json compute = nlohmann::json::array();  // per compute node: evaluator, ns_per_work (as keyed)
  std::vector<std::string> processors;               // the components that time the compute nodes
  std::string warnings;                              // rendered warnings of the input (a GOAL file's)
  bool ok() const { return error.empty(); }
};

class Session {
 public:
  Session(System& system, SessionOptions options, Store& store);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Evaluates one binding with one paradigm, or reads its stored run, and
  // links the run to `study` if one is named. Throws for what is wrong with
  // the request itself (an unknown paradigm or method, a composition that
  // fails, a machine the communication cannot reach); a failure of this
  // evaluation is the cell's error.
  Cell evaluate(const CellRequest& request, const std::string& study = "");
  // Everything an evaluation of `request` needs and how its run is keyed,
  // without evaluating: what `evaluate` does first. Throws as `evaluate`
  // does for a bad request; a binding that cannot be evaluated (an
  // instantiation error, a processor model that fails) is the cell's error.
  struct Prepared {
    Cell cell;  // evaluation, compute rates, processors; error if it cannot be evaluated
    db::RunKey key;
    const EvaluatorEntry* evaluator = nullptr;
    const Composition* composition = nullptr;
    std::map<std::uint32_t, double> rates;  // compute time per unit of work by node
  };
  Prepared prepare(const CellRequest& request);

  // evaluate() in three steps, so that the evaluation itself can run in
  // another process (core/parallel_study.h) while this one stays the one
  // writer of the knowledge base: begin (prepare, claim the run or read it
  // back), compute (the evaluator alone; no knowledge base), finish (store,
  // link to the study).
  struct Pending {
    Prepared prepared;
    std::unique_ptr<RunRecord> record;  // claimed, or holding the stored result
    std::string study;
    bool done = false;  // the cell is final: reused, skipped, or not evaluable
  };
  // What an evaluation gives, without the knowledge base; serializable
  // (to_json/from_json below), the simulator's whole result aside.
  struct Computed {
    Outcome outcome;
    std::string error;
    ErrorKind error_kind = ErrorKind::Evaluation;
    double wall_seconds = 0;
    bool usage = false;        // a UsageError: the request is wrong as a whole
    std::string usage_option;  // its option; `error` is its message
  };
  Pending begin(const CellRequest& request, const std::string& study = "");
  Computed compute(const Prepared& prepared);
  // Throws what evaluate throws for a request wrong as a whole.
  Cell finish(Pending pending, Computed computed);
  // Why `request` would be skipped rather than evaluated here ("" = it would
  // not): a measurement that does not fit this machine.
  std::string obstacle(const CellRequest& request);
  // The composition of `paradigm` with a binding's overrides and study
  // attributes (composed once, then reused).
  const Composition& composition(const std::string& paradigm, const std::map<std::string, base::Value>& overrides = {},
                                 const std::map<std::string, base::Value>& study = {});
  // The binding of a cell: the study's `set` parameters, then --set, then `parameters`.
  taskgraph::ParameterBinding binding(const taskgraph::ParameterBinding& parameters) const;
  std::map<std::string, std::string> text_parameters(const CellRequest& request) const;

  System& system() { return system_; }
  Store& store() { return store_; }
  const SessionOptions& options() const { return options_; }

 private:
  struct State;
  System& system_;
  SessionOptions options_;
  Store& store_;
  std::unique_ptr<State> state_;
};

// The durations of a model's calc nodes where its task graph is drawn or
// exported (poems taskgraph --goal, --dot --dynamic): `wg` per unit of work
// if given (UsageError("--wg") unless a time in 0..1e9 ns), else the rates
// a simulation[MPI-Sim] evaluation with `options` would use when the
// specification declares a processor, else 1 ns per unit of work.
taskgraph::InstantiateOptions calc_rates(System& system, const SessionOptions& options, const std::string& wg);

// The wire form of a computed cell (nlohmann msgpack keeps doubles exact, NaN and infinities too).
std::vector<std::uint8_t> computed_bytes(const Session::Computed& computed);
// Throws std::runtime_error for bytes that are not a computed cell.
Session::Computed computed_of_bytes(const std::vector<std::uint8_t>& bytes);

}  // namespace poems::core
