// Reading an OTF2 archive with MPI records into a Trace (docs/trace.md,
// "Reading archives"): ours and Score-P's, through OTF2's own reader and
// the standard definitions (the MPI ranks' locations group, communicator
// groups, mapping tables).
#pragma once

#include <string>

#include "poems/trace/trace.h"

namespace poems::trace {

// The anchor file of an archive: `path` itself if it is a file, else the
// only *.otf2 file in the directory `path`. Throws TraceError otherwise.
std::string anchor_file(const std::string& path);

// Reads and links the archive (link() in trace.h). Throws TraceError if it
// cannot be read or has no MPI ranks; what it leaves out is listed in
// Trace::warnings.
Trace read_trace(const std::string& path);

}  // namespace poems::trace
