// MPI_THREAD_MULTIPLE for ranks as processes: any thread of a rank may call
// MPI at any time; the rank's threads take turns at its MPI state through a
// gate in the rank's own process (docs/direct.md, "Threads that call MPI").
//
// One thread owns the gate at a time, and only while the rank has the
// engine's turn. A thread that blocks in a wait gives the gate up: to
// another thread whose wait is now satisfied, to a thread that wants to
// enter, or, when no thread can use the turn, back to the engine (it is the
// rank's "driver" until the turn comes back). The rank then wakes when any
// of its waiting threads' requests completes, or when another of its
// threads asks to enter (Rank::entries, which the controller reads): the
// rank's threads share its one stream of operations and one virtual CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "virtual_clock.h"

namespace poems::direct::detail {

class Runtime;
struct Rank;

// Whether this process's rank was granted MPI_THREAD_MULTIPLE (MPI_Init_thread).
bool multiple_threads();
// Grants it: from now on every MPI call of this process goes through the gate.
void grant_multiple(Rank& k);
// Before an MPI call touches the rank's state: waits until this thread owns
// the gate with the rank's turn (nested calls pass).
void gate_enter(Runtime& rt, Rank& k);
void gate_leave(Runtime& rt, Rank& k);
// Blocks the calling (owning) thread until `need` of `ids` are done, letting
// the rank's other threads in meanwhile; returns owning the gate again.
void gate_wait(Runtime& rt, Rank& k, std::span<const std::uint32_t> ids, std::size_t need, const char* call);
// Blocks the calling (owning) thread until a message arrives for its rank
// unmatched (a blocking probe then looks again), letting the others in.
void gate_wait_arrival(Runtime& rt, Rank& k, const char* call);
// The owner hands the turn back without giving the gate up (a pause): the
// rank's other threads wait for it.
void gate_pause(Runtime& rt, Rank& k);
// This thread's CPU clock mark (each thread's computation is its own).
CpuMark& gate_cpu_mark();

}  // namespace poems::direct::detail
