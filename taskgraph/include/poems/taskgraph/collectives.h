// Collective operations lowered to point-to-point algorithms, as an MPI
// library does. The one place these algorithms live: the task-graph
// instantiation, the simulator's `--collective` mode and direct execution all
// call append_collective().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "poems/taskgraph/schedule.h"

namespace poems::taskgraph {

enum class CollectiveOp : std::uint8_t { Barrier, Bcast, Reduce, Allreduce, Gather, Scatter, Allgather, Alltoall };
enum class CollectiveAlgorithm : std::uint8_t { Binomial, Linear, Dissemination, RecursiveDoubling, Ring, Pairwise };

std::optional<CollectiveOp> parse_collective_op(std::string_view name);
std::optional<CollectiveAlgorithm> parse_collective_algorithm(std::string_view name);
const char* collective_op_name(CollectiveOp op);
const char* collective_algorithm_name(CollectiveAlgorithm a);
// Algorithms implemented for an operation; the first is the default.
std::vector<CollectiveAlgorithm> algorithms_for(CollectiveOp op);

struct CollectiveCall {
  CollectiveOp op = CollectiveOp::Barrier;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Dissemination;
  std::uint32_t procs = 1;  // size of the communicator
  std::uint32_t rank = 0;   // this rank within it (equal to the world rank for comm 0)
  std::uint64_t bytes = 0;  // per-rank payload (the whole buffer for bcast/reduce/allreduce)
  std::uint32_t root = 0;
  std::uint32_t comm = 0;  // the communicator's messages never match application messages
  std::int32_t tag = 0;    // distinguishes successive collectives on a communicator
  std::uint32_t node = 0;  // static node the operations report
};

// Communicator id used on the wire for collective traffic of `comm`.
inline constexpr std::uint32_t collective_comm(std::uint32_t comm) { return comm | 0x80000000u; }

// Appends this rank's operations of `call` to `out`. `first_index` is the
// rank-local index the first appended operation will have; every operation
// that starts the collective also carries the dependencies `entry` (e.g. on
// the operation before it in program order). Returns the rank-local indices
// of the operations whose completion completes the collective on this rank;
// the caller's next operation must require all of them. A rank with nothing
// to do appends nothing and returns `entry`'s operations.
std::vector<std::uint64_t> append_collective(const CollectiveCall& call, std::uint64_t first_index,
                                             const std::vector<Dependency>& entry, OpBuffer& out);

// Appends operations [from, from + max_ops) of what append_collective(call, 0,
// {}, out) appends, with the same fields and dependencies (rank-local indices
// counted from the rank's first operation), so a rank's collective can be
// handed over in chunks. Returns how many were appended; 0 once `from` is past
// the end. The round-based and linear algorithms generate only the requested
// operations; the binomial trees and recursive doubling (O(log P) operations
// per rank) generate the rank's part and copy the range.
std::size_t append_collective_range(const CollectiveCall& call, std::uint64_t from, std::size_t max_ops, OpBuffer& out);

}  // namespace poems::taskgraph
