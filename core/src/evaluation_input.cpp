#include "poems/core/evaluation_input.h"

#include <utility>
#include <vector>

#include "poems/core/error.h"
#include "poems/core/machine.h"

namespace poems::core {

InputKind input_kind(const InputRequest& r) {
  const bool model = !r.system.files.empty() && !r.system.files.front().empty();
  const int given = model + !r.goal.empty() + !r.collective.operation.empty() + !r.trace.archive.empty();
  if (given != 1)
    throw UsageError(r.command, "give exactly one of SPEC, --goal FILE, --collective NAME or --trace ARCHIVE");
  if (r.trace.archive.empty()) {
    const TraceRequest& t = r.trace;
    const std::pair<bool, const char*> replay_options[] = {{!t.machines.empty(), "--machines"},
                                                           {!t.traced_processor.empty(), "--traced-processor"},
                                                           {t.traced_wg.has_value(), "--traced-wg"},
                                                           {!t.compute_scale.empty(), "--compute-scale"},
                                                           {!t.algorithms.empty(), "--collective-algorithm"},
                                                           {!t.window.empty(), "--window"},
                                                           {t.cpu_time, "--computation"}};
    for (const auto& [given_option, option] : replay_options)
      if (given_option) throw UsageError(option, "applies to a trace replay only; give --trace ARCHIVE");
  }
  if (model) return InputKind::Model;
  if (!r.goal.empty()) return InputKind::Goal;
  return r.collective.operation.empty() ? InputKind::Trace : InputKind::Collective;
}

EvaluationInput::EvaluationInput(InputRequest request)
    : request_(std::move(request)), kind_(input_kind(request_)), store_(request_.store) {
  const SessionOptions& s = request_.session;
  // --import: more PSL files of the model, or a replay's machine files; a
  // GOAL file or a collective has no use for them.
  const std::vector<std::string>& files = request_.system.files;
  const std::vector<std::string> imports(files.empty() ? files.end() : files.begin() + 1, files.end());
  if (kind_ != InputKind::Model && (!request_.system.model.empty() || !request_.system.study.empty()))
    throw UsageError(request_.system.study.empty() ? "--model" : "--study",
                     "chooses within a PSL specification; give SPEC, or leave it out for a GOAL file, a collective "
                     "or a trace");
  if (kind_ == InputKind::Trace && !request_.system.sets.empty())
    throw UsageError("--set",
                     "sets a PSL model's values; a trace replay takes its machine from --machine and -L -o ... "
                     "(for a what-if study over a trace, write `model M from trace \"...\";` in PSL)");
  if (kind_ == InputKind::Trace) {
    request_.trace.machines.insert(request_.trace.machines.end(), imports.begin(), imports.end());
  } else if (kind_ != InputKind::Model && !imports.empty()) {
    throw UsageError("--import",
                     "names PSL files of a model (SPEC) or of a trace replay's machines (--trace); a GOAL file or a "
                     "collective runs on -L -o -g -G -O -S");
  }
  if (kind_ == InputKind::Trace) {
    if (s.method == "closed-form") throw UsageError("--method", "a trace has no closed form; use critical-path");
    replay_ = prepare_replay(request_.trace);
  } else if (kind_ == InputKind::Model) {
    system_ = load_system(request_.system);
  } else if (!s.choices.machine.empty() || !s.choices.processor.empty() || !request_.system.sets.empty()) {
    throw UsageError("--machine",
                     "--machine, --processor and --set choose a PSL model's components; "
                     "a GOAL file or a collective runs on -L -o -g -G -O -S");
  }
}

EvaluationInput::~EvaluationInput() = default;

std::string EvaluationInput::model() const {
  switch (kind_) {
    case InputKind::Model: return system_->graph()->model;
    case InputKind::Trace: return replay_->name;
    case InputKind::Goal: return "goal:" + request_.goal;
    case InputKind::Collective: break;
  }
  return "collective:" + request_.collective.operation;
}

Cell EvaluationInput::evaluate() {
  const CellRequest& cell = request_.cell;
  const SessionOptions& s = request_.session;
  if (kind_ == InputKind::Trace) {
    ReplayCell r = evaluate_replay(*replay_, cell.paradigm, s.method, store_, cell.per_rank, cell.timeline,
                                   cell.max_stuck_listed, cell.otf2_timeline);
    scope_ = r.scope;
    return std::move(r.cell);
  }
  if (kind_ == InputKind::Model) {
    SessionOptions options = s;
    options.choices.study = system_->settings().study;
    options.choices.overrides = system_->settings().overrides;
    Session session(*system_, options, store_);
    return session.evaluate(cell);
  }
  ScheduleRequest schedule;
  schedule.goal = request_.goal;
  schedule.collective = request_.collective;
  schedule.paradigm = cell.paradigm;
  schedule.method = s.method;
  schedule.machine = command_line_machine(s.machine);
  schedule.cpus_given = s.machine.cpus.has_value();
  schedule.nics_given = s.machine.nics.has_value();
  schedule.per_rank = cell.per_rank;
  schedule.timeline = cell.timeline;
  schedule.otf2_timeline = cell.otf2_timeline;
  schedule.max_stuck_listed = cell.max_stuck_listed;
  return evaluate_schedule(schedule, store_);
}

}  // namespace poems::core
