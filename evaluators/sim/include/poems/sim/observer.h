// What the simulator tells a source whose operations come from running
// programs (direct execution, evaluators/direct): a program blocked in
// MPI_Recv, MPI_Wait or MPI_Wtime may continue once the engine has simulated
// the completion it waits for, and a receive's data must go to the buffer
// the engine matched it with. The engine calls an observer only when
// SimulationOptions::observer is set; task-graph sources never see these calls.
//
// Calls come from inside the event loop: an observer records what happened
// and answers whether the rank has new operations to read. It must not call
// back into the simulator. The engine then pulls that rank again (after the
// event, before retiring its finished operations), so the new operations may
// depend on the one that just completed. An operation read by an observed
// source while the engine is at time t is issued at t: its ready time is at
// least t (a program cannot act in the simulated past).
#pragma once

#include <cstdint>
#include <span>

#include "poems/taskgraph/schedule.h"

namespace poems::sim {

class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  // `rank`'s operation `op` (rank-local index) completes at `time` (the engine
  // is at or before `time`: completions are known when they are decided).
  // Return true if the rank now has operations to read (its program may go on).
  virtual bool completed(std::uint32_t rank, std::uint64_t op, taskgraph::Picoseconds time) = 0;
  // `rank`'s receive `recv_op` was matched with `sender`'s send `send_op`;
  // the message is processed from `time` on. Called in the same event as the
  // receive's completed() (before the rank is read again).
  virtual void matched(std::uint32_t rank, std::uint64_t recv_op, std::uint32_t sender, std::uint64_t send_op,
                       taskgraph::Picoseconds time) = 0;
  // `sender`'s send `send_op` reached `rank` at `time` and no posted receive
  // matched it: it waits in the unexpected queue (what MPI_Probe sees).
  // Return true if the rank now has operations to read.
  virtual bool arrived_unexpected(std::uint32_t rank, std::uint32_t sender, std::uint64_t send_op,
                                  taskgraph::Picoseconds time) = 0;
  // Ranks that now have operations to read although no call above named them
  // (a program issued operations for a companion rank, or a completion on a
  // companion lets a program go on). Asked after the initial reads and after
  // every event; the engine reads each rank named, as if an observer call
  // had answered true for it. The span stays valid until the next call.
  virtual std::span<const std::uint32_t> take_woken() { return {}; }
  // The event queue ran dry at `now`: ranks named here are read (they may
  // end, or add events, and the run goes on); the run ends when none is named.
  virtual std::span<const std::uint32_t> drained(taskgraph::Picoseconds /*now*/) { return {}; }
};

}  // namespace poems::sim
