// What `poems direct` prints of a direct execution (docs/direct.md): the
// program, the machine and the simulated run as `poems simulate` prints it,
// with the host's figures.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "poems/core/direct_run.h"

namespace poems::report {

// The completed run `r` of `program` as `format` (json, else text), at most
// `max_ranks_listed` per-rank lines.
void write_direct_run(const std::string& program, const direct::DirectOptions& options,
                      const core::DirectMachine& machine, const direct::DirectResult& r, const std::string& format,
                      std::size_t max_ranks_listed, std::ostream& out);
// "wrote PATH (OTF2, 4 ranks)" (or "Chrome trace"), with its newline.
std::string timeline_written(const std::string& path, std::uint32_t ranks);
// The processes the ranks left running, for a warning ("" = none).
std::string left_behind(const direct::DirectResult& r);

}  // namespace poems::report
