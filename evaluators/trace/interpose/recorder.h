// The recording side of `poems trace` (docs/trace.md): one OTF2 location per
// MPI process, events written through OTF2's buffered event writer, the
// definitions unified at MPI_Finalize. The C and Fortran wrappers call these
// functions around the PMPI calls they make; nothing here calls an MPI_
// function, only PMPI_ ones, so nothing is recorded twice.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "regions.h"

namespace poems::trace::interpose {

// Clock ticks: nanoseconds of CLOCK_MONOTONIC, shifted by the offset found at
// MPI_Init when the processes run on more than one host.
using Ticks = std::uint64_t;
Ticks now();

// True when the calling thread's MPI calls are recorded: POEMS_TRACE_DIR was
// set, MPI_Init succeeded, MPI_Finalize has not begun, and this is the thread
// that initialized MPI (other threads' calls pass through unrecorded).
bool recording();

// MPI_Init/MPI_Init_thread returned successfully; `entered` is when the call
// began. Opens the archive (collective over MPI_COMM_WORLD) if tracing is on.
void start(Region init_region, Ticks entered, int thread_level);
// MPI_Finalize was called: writes the definitions and closes the archive
// (collective), before the real PMPI_Finalize.
void finish();

// A region of an MPI call, entered at construction and left at destruction.
class Call {
 public:
  explicit Call(Region region);
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  bool on() const { return on_; }

 private:
  Region region_;
  bool on_;
};

// Point-to-point records. Ranks are ranks in `comm`, as the program passed
// them; MPI_PROC_NULL records nothing.
void send(int dest, MPI_Comm comm, int tag, std::uint64_t bytes);
void isend(int dest, MPI_Comm comm, int tag, std::uint64_t bytes, MPI_Request request);
void irecv(MPI_Comm comm, MPI_Request request);
void recv(const MPI_Status& status, MPI_Comm comm);
// Persistent requests: created by MPI_*_init, each MPI_Start begins one
// operation on them.
void persistent_send(MPI_Request request, int dest, MPI_Comm comm, int tag, std::uint64_t bytes);
void persistent_recv(MPI_Request request, MPI_Comm comm);
void started(MPI_Request request);
// `request` (its handle before the completing call) completed with `status`.
void completed(MPI_Request request, const MPI_Status& status);
void freed(MPI_Request request);
// MPI_Cancel on `request`: its completion tells whether it was cancelled.
void cancel_requested(MPI_Request request);

// Collectives: sizes follow Score-P's byte counting (docs/trace.md).
void collective_begin();
void collective_end(std::uint32_t otf2_op, MPI_Comm comm, int root, std::uint64_t sent, std::uint64_t received);
// A communicator creation on `parent` (collective over it); `created` is the
// new communicator or MPI_COMM_NULL. Agrees on the new communicator's
// identity with its other members.
void communicator_created(MPI_Comm parent, MPI_Comm created);
void communicator_freed(MPI_Comm comm);

// Bytes of `count` elements of `type` (0 for MPI_DATATYPE_NULL).
std::uint64_t type_bytes(MPI_Datatype type, std::int64_t count);

}  // namespace poems::trace::interpose
