// Shared by the MPI functions: finding the running rank, entering and leaving
// a call, the argument checks that name the call and the bad argument, and
// moving data in and out of the program's buffers by datatype.
#pragma once

#include <cstdint>
#include <string>

#include "datatypes.h"
#include "runtime_impl.h"
#include "thread_gate.h"

namespace poems::direct::detail {

// The runtime of the running rank; stops the process with a message naming
// `call` when an MPI function is called outside a simulated rank.
Runtime& runtime_for(const char* call);

// `body(rt)` between entering and leaving `call` in the running rank. A full
// shared region fails the call (its message names the region's size and the option).
template <typename Body>
int call_in_rank(Runtime& rt, const char* call, Body& body, bool needs_init) {
  rt.enter(call, needs_init);
  int rc = 0;
  try {
    rc = body(rt);
  } catch (const SharedRegionFull& e) {
    rt.fail(call, e.what());
  }
  rt.leave(call);
  return rc;
}

// Runs an MPI function's `body(rt)` as `call`. Under MPI_THREAD_MULTIPLE the
// calling thread owns its rank's gate meanwhile (thread_gate.h).
template <typename Body>
int mpi_call(const char* call, Body&& body, bool needs_init = true) {
  if (!multiple_threads()) [[likely]]
    return call_in_rank(runtime_for(call), call, body, needs_init);
  Runtime* active = Runtime::active();
  if (!active || forked_from_rank() >= 0) {
    runtime_for(call);  // reports it
    return MPI_ERR_OTHER;
  }
  Rank& k = active->own_rank();
  gate_enter(*active, k);
  Runtime& rt = runtime_for(call);
  const int rc = call_in_rank(rt, call, body, needs_init);
  gate_leave(rt, k);
  return rc;
}

// Argument checks (each fails the run with the MPI error class in the text).
Comm& check_comm(Runtime& rt, const char* call, MPI_Comm comm);
// A datatype usable for communication (committed, or predefined).
const TypeInfo& check_type(Runtime& rt, const char* call, MPI_Datatype type);
// A datatype handle that exists (committed or not).
TypeInfo& check_type_handle(Runtime& rt, const char* call, MPI_Datatype type);
int check_count(Runtime& rt, const char* call, int count);
// count x size of the datatype, checked.
std::uint64_t check_bytes(Runtime& rt, const char* call, int count, MPI_Datatype type);
void check_buffer(Runtime& rt, const char* call, const void* buf, std::uint64_t bytes, MPI_Datatype type,
                  const char* what);
// A destination or source rank of `comm` as a world rank; MPI_PROC_NULL
// gives -2, MPI_ANY_SOURCE (when allowed) -1.
std::int32_t check_peer(Runtime& rt, const char* call, const Comm& c, int rank, bool any_allowed);
int check_tag(Runtime& rt, const char* call, int tag, bool any_allowed);
int check_root(Runtime& rt, const char* call, const Comm& c, int root);
// A reduction operator that applies to the datatype (predefined operators
// need one predefined element type; user-defined ones take any).
void check_op(Runtime& rt, const char* call, MPI_Op op, MPI_Datatype type);
Group& check_group(Runtime& rt, const char* call, MPI_Group group);

// Data: `count` items of `type` at `buf`, packed (what a message carries).
svector<std::byte> pack_data(Runtime& rt, const void* buf, int count, MPI_Datatype type);
void pack_into(Runtime& rt, const void* buf, std::uint64_t count, MPI_Datatype type, std::byte* out);
// Unpacks `bytes` packed bytes into `count` items of `type` at `buf`.
void unpack_into(Runtime& rt, const std::byte* in, std::uint64_t bytes, void* buf, std::uint64_t count,
                 MPI_Datatype type);
// Where a receive of `count` items of `type` at `buf` puts its data.
RecvTarget recv_target(Runtime& rt, void* buf, int count, MPI_Datatype type);
// acc = acc op in, both packed `count` items of `type` (acc holds the later ranks' part:
// user-defined operators see (in, inout) in rank order).
void reduce_packed(Runtime& rt, MPI_Op op, MPI_Datatype type, std::uint64_t count, std::byte* acc, const std::byte* in,
                   bool in_is_earlier);

void set_status(MPI_Status* status, int source, int tag, std::uint64_t bytes);
std::uint64_t status_bytes(const MPI_Status* status);

}  // namespace poems::direct::detail
