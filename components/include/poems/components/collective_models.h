// Closed forms of collective operations in LogGOPS (the LogGOPSim
// paper, section 3), derived for the algorithms of taskgraph/collectives.h under the
// simulator's cost rules. Each form states where it is exact; outside that
// regime it returns nullopt rather than a wrong number.
#pragma once

#include <cstdint>
#include <optional>

#include "poems/components/loggops.h"
#include "poems/taskgraph/collectives.h"

namespace poems::components {

using taskgraph::Picoseconds;

// Eq. 1: linear scatter, root sends P-1 messages of s bytes;
// T = 2o + L + max{(P-2)o + (P-1)sO, (P-2)g + (P-1)sG}, plus (P-1)·sync above S.
// Exact when one resource dominates both terms (o >= g and O >= G, or the reverse).
std::optional<Picoseconds> linear_scatter_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                               Picoseconds rendezvous_sync);
// Eq. 2: linear gather, same form; above S every sender synchronizes at once: + sync.
std::optional<Picoseconds> linear_gather_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                              Picoseconds rendezvous_sync);
// Eq. 3: binomial broadcast, (2o + L + max{sO, sG} [+ sync]) per level, log2 P
// levels; exact for P a power of two when a send fits in a hop.
std::optional<Picoseconds> binomial_bcast_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                               Picoseconds rendezvous_sync);
// Binomial reduce (eq. 3 mirrored; taskgraph's binomial_up): every rank
// posts its receives at once and sends to its parent after the last one, so
// the child at offset 2^k of a node arrives k + 1 hops after the start and
// the root's last receive ends after log2 P hops of 2o + L + max{sO, sG}
// [+ sync]; exact for P a power of two when a receive's CPU and NIC time
// fit in a hop (the next child's message arrives one hop later).
std::optional<Picoseconds> binomial_reduce_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                                Picoseconds rendezvous_sync);
// Eqs. 4, 5: dissemination (barrier, allreduce), ceil(log2 P) rounds of
// delta + 2o + L + max{sO, sG} [+ sync], delta = max{0, sO - L}; exact for any P.
std::optional<Picoseconds> dissemination_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                              Picoseconds rendezvous_sync);
// Recursive-doubling allreduce (MPICH's, the library's default), every rank
// entering at once: log2 P rounds as in eqs. 4, 5; exact
// for P a power of two when a send's CPU and NIC time fit in a round.
std::optional<Picoseconds> recursive_doubling_allreduce_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                                             Picoseconds rendezvous_sync);
// The same allreduce when one rank that is not folded (e.g. rank P-1) enters
// long after all others, as after a wavefront sweep: from its entry,
// log2(p2) rounds plus one when P is not a power of two (p2 = bit_floor(P)).
Picoseconds recursive_doubling_allreduce_after_last(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                                    Picoseconds rendezvous_sync);

// The form for `call`'s operation and algorithm, if there is one (and its regime holds).
std::optional<Picoseconds> collective_time(const taskgraph::CollectiveCall& call, const LogGOPS& p,
                                           Picoseconds rendezvous_sync);

}  // namespace poems::components
