// Empirical scaling models from recorded runs (docs/scaling.md): the same
// program traced (or run under direct execution with --timeline) at several
// rank counts, repeated or not; for every code region its computation (the
// slowest rank's, or the ranks' mean; the median of a count's repetitions)
// at each count, Extra-P's normal form fitted to it and
// chosen by cross-validation (poems/scaling/pmnf.h), predictions at the
// rank counts asked for, and the whole stored in the knowledge base as one
// run of `scaling[PMNF]`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/core/store.h"
#include "poems/scaling/pmnf.h"
#include "poems/scaling/pmnf2.h"

namespace poems::core {

struct ScalingRequest {
  std::vector<std::string> archives;  // anchor files or their directories
  std::string window;                 // FROM[#N]..TO[#M]; "" the run
  bool cpu_time = false;              // computation as CPU time (archives recorded with --cpu-time)
  bool mean = false;                  // the ranks' mean instead of the slowest rank's
  std::vector<double> predict;        // rank counts to predict at
  std::size_t regions = 5;            // regions reported (largest first); 0: all
  std::string variable = "P";         // the parameter's name in formulas and PSL
  // The problem size of each archive, in the order given (empty: models in
  // the ranks only); with sizes, models in both (pmnf2.h) and every
  // prediction needs its size (`predict_sizes`, parallel to `predict`).
  std::vector<double> sizes;
  std::vector<double> predict_sizes;
  std::string size_variable = "N";  // the problem size's name in formulas and PSL
};

struct RegionModel {
  std::string name;                     // "MPI_Recv..MPI_Send", or "all computation"
  std::vector<scaling::Point> points;   // (ranks, seconds): per rank count, the median of its runs
  std::optional<scaling::Model> model;  // none: see why_not
  std::string why_not;
  std::vector<std::pair<double, double>> predictions;  // (ranks, seconds)
  // With problem sizes: the same per (ranks, size), and the model in both.
  std::vector<scaling::Point2> points2;
  std::optional<scaling::Model2> model2;
  std::vector<scaling::Point2> predictions2;  // value: seconds
  double share = 0;                           // of the largest run's computation
};

struct ScalingReport {
  std::vector<std::pair<std::string, std::uint32_t>> archives;  // path, ranks; by ranks
  RegionModel total;
  std::vector<RegionModel> regions;
  std::size_t regions_found = 0;  // in the largest run
  std::size_t rank_counts = 0;    // distinct (with three, models of one coefficient only)
  std::optional<std::int64_t> run_id;
  bool already_stored = false;
  nlohmann::json to_json(const ScalingRequest& request) const;
};

// Throws UsageError for bad options (fewer than 3 rank counts, a bad
// window, a rank count to predict that is not positive, sizes that are not
// one positive number per archive, a prediction without its size) and InputError for
// an archive that cannot be read; StoreError when the result cannot be stored.
ScalingReport fit_scaling_models(const ScalingRequest& request, Store& store);

}  // namespace poems::core
