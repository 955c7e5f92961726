// What `poems calibrate` prints (docs/processor.md, docs/tutorial.md): the
// LogGOPS fit with its samples, the kernel's Wg per task and its working-set
// curve; with --cachesim, processor[cachesim]'s rates and their fit per task.
#pragma once

#include <iosfwd>
#include <string>

#include "poems/core/cachesim_calibration.h"
#include "poems/core/calibration.h"

namespace poems::report {

// The calibration as text, ending with the PSL file `psl` it was written to.
void write_calibration(const core::Calibration& calibration, const std::string& psl, std::ostream& out);
// processor[cachesim]'s calibration as `format` (json, else text); `psl`
// is the file its component was written to.
void write_cachesim_calibration(const core::CachesimCalibration& calibration, const std::string& psl,
                                const std::string& format, std::ostream& out);

}  // namespace poems::report
