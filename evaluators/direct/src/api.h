// Shared by the MPI functions: finding the running rank, entering and leaving
// a call, and the argument checks that name the call and the bad argument.
#pragma once

#include <cstdint>
#include <string>

#include "datatypes.h"
#include "runtime_impl.h"

namespace poems::direct::detail {

// The runtime of the running rank; stops the process with a message naming
// `call` when an MPI function is called outside a simulated rank.
Runtime& runtime_for(const char* call);

// Runs `body(rt)` between entering and leaving `call`.
template <typename Body>
int mpi_call(const char* call, Body&& body, bool needs_init = true) {
  Runtime& rt = runtime_for(call);
  rt.enter(call, needs_init);
  const int rc = body(rt);
  rt.leave();
  return rc;
}

// Argument checks (each fails the run with the MPI error class in the text).
Comm& check_comm(Runtime& rt, const char* call, MPI_Comm comm);
std::size_t check_type(Runtime& rt, const char* call, MPI_Datatype type);
std::uint64_t check_bytes(Runtime& rt, const char* call, int count, MPI_Datatype type);
void check_buffer(Runtime& rt, const char* call, const void* buf, std::uint64_t bytes, const char* what);
// A destination or source rank of `comm` as a world rank; MPI_PROC_NULL
// gives -2, MPI_ANY_SOURCE (when allowed) -1.
std::int32_t check_peer(Runtime& rt, const char* call, const Comm& c, int rank, bool any_allowed);
int check_tag(Runtime& rt, const char* call, int tag, bool any_allowed);
int check_root(Runtime& rt, const char* call, const Comm& c, int root);
void check_op(Runtime& rt, const char* call, MPI_Op op, MPI_Datatype type);

void set_status(MPI_Status* status, int source, int tag, std::uint64_t bytes);

}  // namespace poems::direct::detail
