// How a simulator result is stored in the knowledge base. `poems simulate`,
// `poems direct` and the recommender's --confirm all store through this, so
// a run one of them stored reads the same to the others. (It lives here, the
// first library above both the simulator and the knowledge base.)
#pragma once

#include "poems/db/records.h"
#include "poems/sim/simulator.h"

namespace poems::recommender {

// time_ns: the latest finish; compute/comm/sync: per-rank means of compute,
// CPU overhead of communication and waiting; extra: ranks, max_finish_rank,
// messages, breakdown ("mean per rank") and events_per_second.
db::Result simulation_record(const sim::SimulationResult& result);

}  // namespace poems::recommender
