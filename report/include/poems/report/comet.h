// What `poems comet` prints (docs/comet.md): one table per CoMet kernel
// (size, measured median, each prediction and its error against the
// measurement) as text, CSV or JSON, and one gnuplot plot per kernel.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "poems/core/comet.h"

namespace poems::report {

// The error of `predicted` against `measured`, in percent; nullopt without
// a measurement (or a zero one).
std::optional<double> comet_error_pct(const std::optional<double>& predicted, const std::optional<double>& measured);

// `format`: table, csv or json.
void write_comet_report(const core::CometReport& report, const std::string& format, std::ostream& out);

// One picture per kernel with figures, DIR/comet-KERNEL.png (or .svg with
// `svg`): time against message size on log axes, the measured median (its
// min..max as error bars) and each prediction; the legend outside the data.
// Kernels with one size only (barrier, transpose) are drawn as one point.
// Returns the files written; `error` receives the first failure ("" if none).
std::vector<std::string> write_comet_plots(const core::CometReport& report, const std::string& directory, bool svg,
                                           std::string& error);

}  // namespace poems::report
