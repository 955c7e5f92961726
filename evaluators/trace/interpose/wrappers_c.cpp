// The C bindings `poems trace` records (PMPI interposition; C++ programs use
// them too). Each wrapper enters its region, records what the call does and
// calls the PMPI_ function; see recorder.h. The signatures and the PMPI_ calls
// are generated from the MPI surface's description (generated/wrappers_c.inc),
// so the arguments have the names of mpi-3.1-c.txt. Statuses the program
// ignores are asked for anyway, since a receive's source and tag are recorded.
#include <mpi.h>

#include <otf2/OTF2_Events.h>

#include <vector>

#include "collective_records.h"
#include "generated/wrappers_c.inc"
#include "recorder.h"

using namespace poems::trace::interpose;

namespace {

// Scratch arrays for the request functions (the recorded thread only).
thread_local std::vector<MPI_Request> saved_requests;
thread_local std::vector<MPI_Status> scratch_statuses;

MPI_Request* save(int count, const MPI_Request* requests) {
  saved_requests.assign(requests, requests + (count > 0 ? count : 0));
  return saved_requests.data();
}

MPI_Status* statuses_for(int count, MPI_Status* statuses) {
  if (statuses != MPI_STATUSES_IGNORE) return statuses;
  scratch_statuses.resize(static_cast<std::size_t>(count > 0 ? count : 0));
  return scratch_statuses.data();
}

}  // namespace

extern "C" {

// ---- environment ----------------------------------------------------------------

POEMS_C_WRAPPER(MPI_Init) {
  const Ticks entered = now();
  const int rc = POEMS_C_FORWARD(MPI_Init);
  if (rc == MPI_SUCCESS) start(Region::MPI_Init, entered, MPI_THREAD_SINGLE);
  return rc;
}

POEMS_C_WRAPPER(MPI_Init_thread) {
  const Ticks entered = now();
  const int rc = POEMS_C_FORWARD(MPI_Init_thread);
  if (rc == MPI_SUCCESS) start(Region::MPI_Init_thread, entered, *provided);
  return rc;
}

POEMS_C_WRAPPER(MPI_Finalize) {
  finish();
  return POEMS_C_FORWARD(MPI_Finalize);
}

// ---- blocking point-to-point -----------------------------------------------------

#define POEMS_BLOCKING_SEND(NAME)                                      \
  POEMS_C_WRAPPER(NAME) {                                              \
    Call call(Region::NAME);                                           \
    if (call.on()) send(dest, comm, tag, type_bytes(datatype, count)); \
    return POEMS_C_FORWARD(NAME);                                      \
  }
POEMS_BLOCKING_SEND(MPI_Send)
POEMS_BLOCKING_SEND(MPI_Ssend)
POEMS_BLOCKING_SEND(MPI_Bsend)
POEMS_BLOCKING_SEND(MPI_Rsend)
#undef POEMS_BLOCKING_SEND

// A receive of `NAME` (after SEND, if any), with the status asked for even if
// the program ignores it.
#define POEMS_RECEIVE(NAME, SEND)                     \
  POEMS_C_WRAPPER(NAME) {                             \
    Call call(Region::NAME);                          \
    if (!call.on()) return POEMS_C_FORWARD(NAME);     \
    MPI_Status local;                                 \
    if (status == MPI_STATUS_IGNORE) status = &local; \
    SEND;                                             \
    const int rc = POEMS_C_FORWARD(NAME);             \
    if (rc == MPI_SUCCESS) recv(*status, comm);       \
    return rc;                                        \
  }
POEMS_RECEIVE(MPI_Recv, (void)0)
POEMS_RECEIVE(MPI_Sendrecv, send(dest, comm, sendtag, type_bytes(sendtype, sendcount)))
POEMS_RECEIVE(MPI_Sendrecv_replace, send(dest, comm, sendtag, type_bytes(datatype, count)))
#undef POEMS_RECEIVE

POEMS_C_WRAPPER(MPI_Probe) {
  Call call(Region::MPI_Probe);
  return POEMS_C_FORWARD(MPI_Probe);
}

POEMS_C_WRAPPER(MPI_Iprobe) {
  Call call(Region::MPI_Iprobe);
  return POEMS_C_FORWARD(MPI_Iprobe);
}

// ---- nonblocking and persistent point-to-point ---------------------------------------

// The calls that create a request: RECORD once it exists.
#define POEMS_REQUEST(NAME, RECORD)             \
  POEMS_C_WRAPPER(NAME) {                       \
    Call call(Region::NAME);                    \
    const int rc = POEMS_C_FORWARD(NAME);       \
    if (call.on() && rc == MPI_SUCCESS) RECORD; \
    return rc;                                  \
  }
#define POEMS_ISEND(NAME) POEMS_REQUEST(NAME, isend(dest, comm, tag, type_bytes(datatype, count), *request))
#define POEMS_SEND_INIT(NAME) \
  POEMS_REQUEST(NAME, persistent_send(*request, dest, comm, tag, type_bytes(datatype, count)))
POEMS_ISEND(MPI_Isend)
POEMS_ISEND(MPI_Issend)
POEMS_ISEND(MPI_Ibsend)
POEMS_ISEND(MPI_Irsend)
POEMS_SEND_INIT(MPI_Send_init)
POEMS_SEND_INIT(MPI_Ssend_init)
POEMS_SEND_INIT(MPI_Bsend_init)
POEMS_SEND_INIT(MPI_Rsend_init)
#undef POEMS_SEND_INIT
#undef POEMS_ISEND

POEMS_REQUEST(MPI_Irecv, if (source != MPI_PROC_NULL) irecv(comm, *request))
POEMS_REQUEST(MPI_Recv_init, if (source != MPI_PROC_NULL) persistent_recv(*request, comm))
POEMS_REQUEST(MPI_Start, started(*request))
POEMS_REQUEST(MPI_Startall, for (int i = 0; i < count; ++i) started(array_of_requests[i]))
#undef POEMS_REQUEST

POEMS_C_WRAPPER(MPI_Request_free) {
  Call call(Region::MPI_Request_free);
  if (call.on()) freed(*request);
  return POEMS_C_FORWARD(MPI_Request_free);
}

POEMS_C_WRAPPER(MPI_Cancel) {
  Call call(Region::MPI_Cancel);
  if (call.on()) cancel_requested(*request);
  return POEMS_C_FORWARD(MPI_Cancel);
}

// ---- completion ----------------------------------------------------------------------

// The completion of one request (BEFORE: what it was before the call, which
// may free it) when the call succeeded and DONE says it completed.
#define POEMS_COMPLETION(NAME, BEFORE, DONE, REQUEST)           \
  POEMS_C_WRAPPER(NAME) {                                       \
    Call call(Region::NAME);                                    \
    if (!call.on()) return POEMS_C_FORWARD(NAME);               \
    const auto before = BEFORE;                                 \
    MPI_Status local;                                           \
    if (status == MPI_STATUS_IGNORE) status = &local;           \
    const int rc = POEMS_C_FORWARD(NAME);                       \
    if (rc == MPI_SUCCESS && DONE) completed(REQUEST, *status); \
    return rc;                                                  \
  }
POEMS_COMPLETION(MPI_Wait, *request, true, before)
POEMS_COMPLETION(MPI_Test, *request, *flag, before)
POEMS_COMPLETION(MPI_Waitany, save(count, array_of_requests), *index != MPI_UNDEFINED, before[*index])
POEMS_COMPLETION(MPI_Testany, save(count, array_of_requests), (*flag && *index != MPI_UNDEFINED), before[*index])
#undef POEMS_COMPLETION

// The completions of a call on COUNT requests when it succeeded and DONE says
// so: N of them, the k-th of request INDEX.
#define POEMS_MANY(NAME, COUNT, DONE, N, INDEX)                                   \
  POEMS_C_WRAPPER(NAME) {                                                         \
    Call call(Region::NAME);                                                      \
    if (!call.on()) return POEMS_C_FORWARD(NAME);                                 \
    const MPI_Request* before = save(COUNT, array_of_requests);                   \
    array_of_statuses = statuses_for(COUNT, array_of_statuses);                   \
    const int rc = POEMS_C_FORWARD(NAME);                                         \
    if (rc == MPI_SUCCESS && DONE)                                                \
      for (int k = 0; k < N; ++k) completed(before[INDEX], array_of_statuses[k]); \
    return rc;                                                                    \
  }
POEMS_MANY(MPI_Waitall, count, true, count, k)
POEMS_MANY(MPI_Testall, count, *flag, count, k)
POEMS_MANY(MPI_Waitsome, incount, *outcount != MPI_UNDEFINED, *outcount, array_of_indices[k])
POEMS_MANY(MPI_Testsome, incount, *outcount != MPI_UNDEFINED, *outcount, array_of_indices[k])
#undef POEMS_MANY

// ---- collectives -----------------------------------------------------------------------

// A collective call of `NAME`, recorded by RECORD once it returned.
#define POEMS_COLLECTIVE(NAME, RECORD)          \
  POEMS_C_WRAPPER(NAME) {                       \
    Call call(Region::NAME);                    \
    if (call.on()) collective_begin();          \
    const int rc = POEMS_C_FORWARD(NAME);       \
    if (call.on() && rc == MPI_SUCCESS) RECORD; \
    return rc;                                  \
  }

POEMS_COLLECTIVE(MPI_Barrier, collective::barrier(comm))
POEMS_COLLECTIVE(MPI_Bcast, collective::bcast(count, datatype, root, comm))
POEMS_COLLECTIVE(MPI_Reduce, collective::reduce(count, datatype, root, comm))
POEMS_COLLECTIVE(MPI_Allreduce, collective::allreduce(count, datatype, comm))
POEMS_COLLECTIVE(MPI_Gather,
                 collective::gather(sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype, root, comm))
POEMS_COLLECTIVE(MPI_Gatherv,
                 collective::gatherv(sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcounts, recvtype, root, comm))
POEMS_COLLECTIVE(MPI_Scatter,
                 collective::scatter(recvbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype, root, comm))
POEMS_COLLECTIVE(MPI_Scatterv,
                 collective::scatterv(recvbuf == MPI_IN_PLACE, sendcounts, sendtype, recvcount, recvtype, root, comm))
POEMS_COLLECTIVE(MPI_Allgather,
                 collective::allgather(sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype, comm))
POEMS_COLLECTIVE(MPI_Allgatherv,
                 collective::allgatherv(sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcounts, recvtype, comm))
POEMS_COLLECTIVE(MPI_Alltoall,
                 collective::alltoall(sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype, comm))
POEMS_COLLECTIVE(MPI_Alltoallv,
                 collective::alltoallv(sendbuf == MPI_IN_PLACE, sendcounts, sendtype, recvcounts, recvtype, comm))
POEMS_COLLECTIVE(MPI_Reduce_scatter, collective::reduce_scatter(recvcounts, datatype, comm))
POEMS_COLLECTIVE(MPI_Reduce_scatter_block, collective::reduce_scatter_block(recvcount, datatype, comm))
POEMS_COLLECTIVE(MPI_Scan, collective::scan(false, count, datatype, comm))
POEMS_COLLECTIVE(MPI_Exscan, collective::scan(true, count, datatype, comm))

// ---- communicators ----------------------------------------------------------------------

POEMS_COLLECTIVE(MPI_Comm_dup, collective::created(comm, *newcomm))
POEMS_COLLECTIVE(MPI_Comm_dup_with_info, collective::created(comm, *newcomm))
POEMS_COLLECTIVE(MPI_Comm_split, collective::created(comm, *newcomm))
POEMS_COLLECTIVE(MPI_Comm_split_type, collective::created(comm, *newcomm))
POEMS_COLLECTIVE(MPI_Comm_create, collective::created(comm, *newcomm))
POEMS_COLLECTIVE(MPI_Cart_create, collective::created(old_comm, *comm_cart))
POEMS_COLLECTIVE(MPI_Cart_sub, collective::created(comm, *new_comm))

POEMS_C_WRAPPER(MPI_Comm_create_group) {
  // Collective over the group's members only: no record on the parent.
  Call call(Region::MPI_Comm_create_group);
  const int rc = POEMS_C_FORWARD(MPI_Comm_create_group);
  if (call.on() && rc == MPI_SUCCESS) communicator_created(comm, *newcomm);
  return rc;
}

POEMS_C_WRAPPER(MPI_Comm_free) {
  Call call(Region::MPI_Comm_free);
  if (call.on()) communicator_freed(*comm);
  return POEMS_C_FORWARD(MPI_Comm_free);
}

#undef POEMS_COLLECTIVE

}  // extern "C"
