// `poems trace` (docs/trace.md): a run recorded as an OTF2 archive and read
// back, and what an archive holds, with the error class of each failure.
// The recording itself is the trace library's (poems/trace/record.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "poems/trace/record.h"
#include "poems/trace/trace.h"

namespace poems::core {

// Reads an archive (its anchor file or directory); InputError when it cannot.
trace::Trace read_trace_archive(const std::string& path);

// What an archive holds beside its records.
struct TraceSummary {
  std::map<std::string, std::uint64_t> calls_by_function;
  std::uint64_t calls = 0;
  std::uint64_t message_bytes = 0;
  std::uint64_t collective_calls = 0;  // collectives the replay keeps
  std::uint64_t archive_bytes = 0;
};
TraceSummary summarize_trace(const trace::Trace& trace);

// A recorded run, read back.
struct RecordedTrace {
  std::string anchor;  // OUTPUT/traces.otf2
  trace::Trace trace;
  std::uint64_t archive_bytes = 0, calls = 0;
};

// Records the run and reads its archive back. Throws InputError when the
// run cannot start (a program, mpirun or output directory that will not
// do), EvaluationError when it started and failed, timed out, wrote no
// archive or one that cannot be read back.
RecordedTrace record_trace(const trace::RecordOptions& options);

struct SystemRequest;
// Records the program a PSL model attaches (`program { }`, docs/psl.md) for
// the request's binding (the study's and --set's values): its mpicc build,
// its arguments and process count; `options` gives the rest (output, ...).
// UsageError/InputError when the model has no program for mpirun.
RecordedTrace record_model_program(const SystemRequest& request, trace::RecordOptions options);

}  // namespace poems::core
