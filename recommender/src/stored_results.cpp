#include "poems/recommender/stored_results.h"

namespace poems::recommender {

db::Result simulation_record(const sim::SimulationResult& r) {
  db::Result out;
  out.time_ns = static_cast<double>(r.max_finish) / 1000.0;
  const double per_rank = r.ranks > 0 ? 1000.0 * r.ranks : 1.0;
  out.compute_ns = static_cast<double>(r.total_compute) / per_rank;
  out.comm_ns = static_cast<double>(r.total_overhead) / per_rank;
  out.sync_ns = static_cast<double>(r.total_wait) / per_rank;
  out.events = static_cast<std::int64_t>(r.events);
  out.extra = {{"ranks", r.ranks},
               {"max_finish_rank", r.max_finish_rank},
               {"messages", r.messages},
               {"breakdown", "mean per rank"},
               {"events_per_second", r.events_per_second()}};
  return out;
}

}  // namespace poems::recommender
