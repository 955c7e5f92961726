// What `poems scaling` prints (docs/scaling.md): per code region, the
// measured points, the chosen model with its fit, its PSL and predictions.
#pragma once

#include <iosfwd>
#include <string>

#include "poems/core/scaling_models.h"

namespace poems::report {

// `report` of `request` as `format` (json, else text); `store_path` is
// where a stored report went.
void write_scaling_report(const core::ScalingReport& report, const core::ScalingRequest& request,
                          const std::string& format, const std::string& store_path, std::ostream& out);

}  // namespace poems::report
