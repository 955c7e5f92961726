// What `poems trace` prints of an OTF2 archive (docs/trace.md): the summary
// of --info, and the line that says what a recording wrote.
#pragma once

#include <iosfwd>
#include <string>

#include "poems/core/trace_record.h"

namespace poems::report {

// The archive's ranks, events, calls (also by function), messages, size per
// call, as `format` (json, else a text table).
void write_trace_summary(const trace::Trace& trace, const core::TraceSummary& summary, const std::string& format,
                         std::ostream& out);
// "poems trace: 4 processes recorded in OUT/traces.otf2: ... MPI calls, ...".
std::string recorded_trace_line(const core::RecordedTrace& recorded);

}  // namespace poems::report
