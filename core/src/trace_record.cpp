#include "poems/core/trace_record.h"

#include <stdlib.h>

#include <filesystem>

#include "poems/base/temporary_directory.h"
#include "poems/core/error.h"
#include "poems/core/programs.h"
#include "poems/core/system.h"
#include "poems/trace/archive.h"
#include "poems/trace/otf2_read.h"

namespace poems::core {

trace::Trace read_trace_archive(const std::string& path) {
  try {
    return trace::read_trace(path);
  } catch (const trace::TraceError& e) {
    throw InputError(e.what());
  }
}

TraceSummary summarize_trace(const trace::Trace& t) {
  TraceSummary s;
  for (const trace::Rank& r : t.ranks)
    for (const trace::CallRecord& c : r.calls) ++s.calls_by_function[t.regions[c.region]];
  for (const trace::Message& m : t.messages) s.message_bytes += t.ranks[m.sender].steps[m.send_step].value;
  for (const trace::Rank& r : t.ranks)
    for (const trace::Step& step : r.steps)
      s.collective_calls += step.kind == trace::StepKind::Collective && !step.dropped;
  s.archive_bytes = trace::archive_bytes(t.path);
  s.calls = t.calls();
  return s;
}

RecordedTrace record_trace(const trace::RecordOptions& options) {
  const trace::RecordResult rec = trace::record(options);
  // Before the run started, the command was wrong (the input's); after, the run failed.
  if (!rec.error.empty()) {
    if (rec.started) throw EvaluationError(rec.error);
    throw InputError(rec.error);
  }
  if (!rec.ok())
    throw EvaluationError("the traced run failed (" +
                          (rec.timed_out ? std::string("timed out")
                           : rec.signal  ? "signal " + std::to_string(rec.signal)
                                         : "exit code " + std::to_string(rec.exit_code)) +
                          ")" + (rec.anchor.empty() ? "; no archive was written" : "; the archive may be incomplete"));
  if (rec.anchor.empty())
    throw EvaluationError("the run wrote no archive in '" + options.output +
                          "' (is it an MPI program, and does it call MPI_Finalize?)");
  RecordedTrace out;
  out.anchor = rec.anchor;
  try {
    out.trace = trace::read_trace(rec.anchor);
  } catch (const trace::TraceError& e) {
    throw EvaluationError(std::string("the archive cannot be read back: ") + e.what());
  }
  out.archive_bytes = trace::archive_bytes(rec.anchor);
  out.calls = out.trace.calls();
  return out;
}

RecordedTrace record_model_program(const SystemRequest& request, trace::RecordOptions options) {
  const std::unique_ptr<System> system = load_system(request);
  const std::shared_ptr<const ModelProgram>& program = system->attached_program();
  const std::string model = system->model().name.name;
  if (!program)
    throw InputError("model " + model +
                     " attaches no program to record (give it `program { sources = \"...\"; ... }`, "
                     "docs/psl.md, \"Programs and kernels\"), or record one: poems trace --procs N -- PROGRAM ARGS");
  if (program->measured.empty())
    throw InputError("model " + model + "'s program gives no 'sources' or 'executable' to run under mpirun");
  Evaluation e;
  e.graph = system->graph();
  e.program = program;
  e.binding = system->binding();
  try {
    e.values = taskgraph::evaluate_model_values(*e.graph, e.binding);
  } catch (const std::exception& x) {
    throw InputError(x.what());
  }
  if (program->refuses)
    if (const std::string why = program->refuses(e); !why.empty()) throw InputError(why);
  // The run's directory holds the program's inputs; the archive goes where asked.
  const base::TemporaryDirectory run_directory("poems_trace_run_");
  if (!run_directory.created())
    throw EvaluationError("cannot create a directory for the program's run: " + run_directory.error());
  const ProgramInput input = program->input(e, run_directory.path());
  options.program = program->executable(false);
  options.args = input.args;
  options.ranks = static_cast<int>(input.ranks);
  options.working_directory = input.working_directory;
  options.output = std::filesystem::absolute(options.output).string();
  return record_trace(options);
}

}  // namespace poems::core
