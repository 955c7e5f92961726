// The Fortran bindings `poems trace` records. Open MPI 4.1's Fortran entry
// points (mpif.h and `use mpi`: mpi_send_ and its other manglings; `use
// mpi_f08`: mpi_send_f08_, which calls ompi_send_f) are all aliases of, or
// calls to, one function per MPI routine, ompi_<name>_f, and that function
// calls PMPI_<Name> directly: a C PMPI wrapper never sees a Fortran call.
// So the tracer defines ompi_<name>_f and the mpif.h manglings itself,
// records around the real ompi_<name>_f (found with dlsym(RTLD_NEXT)), and
// nothing is recorded twice. Handles are converted with PMPI_*_f2c; indices
// Open MPI returns to Fortran are 1-based. The signatures, the calls of the
// real functions, the mpif.h aliases and the sentinels are generated from the
// MPI surface's description (generated/wrappers_fortran.inc), so the
// arguments have the names of mpi-3.1-c.txt.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "collective_records.h"
#include "recorder.h"

using namespace poems::trace::interpose;

namespace {

using F = MPI_Fint;
using Logical = int;  // gfortran's default LOGICAL; Open MPI's .true. is 1

template <typename Fn>
Fn real_function(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    std::fprintf(stderr, "poems trace: cannot find Open MPI's %s\n", name);
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

}  // namespace

#include "generated/wrappers_fortran.inc"

namespace {

constexpr std::size_t kStatusInts = sizeof(MPI_Status) / sizeof(MPI_Fint);

bool in_place(const void* buffer) { return &mpi_fortran_in_place_ != nullptr && buffer == &mpi_fortran_in_place_; }

bool ignored(const F* status) { return status == MPI_F_STATUS_IGNORE; }
bool all_ignored(const F* statuses) { return statuses == MPI_F_STATUSES_IGNORE; }

MPI_Status c_status(const F* status) {
  MPI_Status s;
  PMPI_Status_f2c(status, &s);
  return s;
}

thread_local std::vector<MPI_Request> saved_requests;
thread_local std::vector<F> scratch_statuses;

const MPI_Request* save(F count, const F* requests) {
  saved_requests.clear();
  for (F i = 0; i < count; ++i) saved_requests.push_back(PMPI_Request_f2c(requests[i]));
  return saved_requests.data();
}

F* statuses_for(F count, F* statuses) {
  if (!all_ignored(statuses)) return statuses;
  scratch_statuses.resize(kStatusInts * static_cast<std::size_t>(count > 0 ? count : 0));
  return scratch_statuses.data();
}

// The completions a wait or test call reports, for the requests `before`
// held when it was called (the call may free them).
const F* status_at(const F* statuses, F i) { return statuses + kStatusInts * static_cast<std::size_t>(i); }
void all_completed(const MPI_Request* before, F count, const F* statuses) {
  for (F i = 0; i < count; ++i) completed(before[i], c_status(status_at(statuses, i)));
}
void any_completed(const MPI_Request* before, F count, F index, const F* status) {
  if (index != MPI_UNDEFINED && index >= 1 && index <= count) completed(before[index - 1], c_status(status));
}
void some_completed(const MPI_Request* before, F incount, F outcount, const F* indices, const F* statuses) {
  if (outcount == MPI_UNDEFINED) return;
  for (F k = 0; k < outcount; ++k)
    if (indices[k] >= 1 && indices[k] <= incount) completed(before[indices[k] - 1], c_status(status_at(statuses, k)));
}

MPI_Comm comm_of(const F* comm) { return PMPI_Comm_f2c(*comm); }
MPI_Datatype type_of(const F* type) { return PMPI_Type_f2c(*type); }

// The datatype of a buffer argument, none for MPI_IN_PLACE (whose type argument is ignored).
MPI_Datatype type_unless_in_place(const void* buffer, const F* type) {
  return in_place(buffer) ? MPI_DATATYPE_NULL : type_of(type);
}

}  // namespace

extern "C" {

// ---- environment ----------------------------------------------------------------------

POEMS_FORTRAN_WRAPPER(MPI_Init) {
  const Ticks entered = now();
  POEMS_FORTRAN_FORWARD(MPI_Init);
  if (*ierr == MPI_SUCCESS) start(Region::MPI_Init, entered, MPI_THREAD_SINGLE);
}

POEMS_FORTRAN_WRAPPER(MPI_Init_thread) {
  const Ticks entered = now();
  POEMS_FORTRAN_FORWARD(MPI_Init_thread);
  if (*ierr == MPI_SUCCESS) start(Region::MPI_Init_thread, entered, *provided);
}

POEMS_FORTRAN_WRAPPER(MPI_Finalize) {
  finish();
  POEMS_FORTRAN_FORWARD(MPI_Finalize);
}

// ---- blocking point-to-point --------------------------------------------------------------

#define POEMS_FORTRAN_SEND(NAME)                                                            \
  POEMS_FORTRAN_WRAPPER(NAME) {                                                             \
    Call call(Region::NAME);                                                                \
    if (call.on()) send(*dest, comm_of(comm), *tag, type_bytes(type_of(datatype), *count)); \
    POEMS_FORTRAN_FORWARD(NAME);                                                            \
  }
POEMS_FORTRAN_SEND(MPI_Send)
POEMS_FORTRAN_SEND(MPI_Ssend)
POEMS_FORTRAN_SEND(MPI_Bsend)
POEMS_FORTRAN_SEND(MPI_Rsend)
#undef POEMS_FORTRAN_SEND

// A receive of `NAME` (after SEND, if any), with the status asked for even if
// the program ignores it.
#define POEMS_FORTRAN_RECEIVE(NAME, SEND)                            \
  POEMS_FORTRAN_WRAPPER(NAME) {                                      \
    Call call(Region::NAME);                                         \
    if (!call.on()) return POEMS_FORTRAN_FORWARD(NAME);              \
    F local[kStatusInts];                                            \
    if (ignored(status)) status = local;                             \
    SEND;                                                            \
    POEMS_FORTRAN_FORWARD(NAME);                                     \
    if (*ierr == MPI_SUCCESS) recv(c_status(status), comm_of(comm)); \
  }
POEMS_FORTRAN_RECEIVE(MPI_Recv, (void)0)
POEMS_FORTRAN_RECEIVE(MPI_Sendrecv, send(*dest, comm_of(comm), *sendtag, type_bytes(type_of(sendtype), *sendcount)))
POEMS_FORTRAN_RECEIVE(MPI_Sendrecv_replace, send(*dest, comm_of(comm), *sendtag, type_bytes(type_of(datatype), *count)))
#undef POEMS_FORTRAN_RECEIVE

POEMS_FORTRAN_WRAPPER(MPI_Probe) {
  Call call(Region::MPI_Probe);
  POEMS_FORTRAN_FORWARD(MPI_Probe);
}

POEMS_FORTRAN_WRAPPER(MPI_Iprobe) {
  Call call(Region::MPI_Iprobe);
  POEMS_FORTRAN_FORWARD(MPI_Iprobe);
}

// ---- nonblocking and persistent point-to-point ------------------------------------------------

// The calls that create a request: RECORD once it exists.
#define POEMS_FORTRAN_REQUEST(NAME, RECORD)        \
  POEMS_FORTRAN_WRAPPER(NAME) {                    \
    Call call(Region::NAME);                       \
    POEMS_FORTRAN_FORWARD(NAME);                   \
    if (call.on() && *ierr == MPI_SUCCESS) RECORD; \
  }
#define POEMS_FORTRAN_ISEND(NAME) \
  POEMS_FORTRAN_REQUEST(          \
      NAME, isend(*dest, comm_of(comm), *tag, type_bytes(type_of(datatype), *count), PMPI_Request_f2c(*request)))
#define POEMS_FORTRAN_SEND_INIT(NAME)                                                                 \
  POEMS_FORTRAN_REQUEST(NAME, persistent_send(PMPI_Request_f2c(*request), *dest, comm_of(comm), *tag, \
                                              type_bytes(type_of(datatype), *count)))
POEMS_FORTRAN_ISEND(MPI_Isend)
POEMS_FORTRAN_ISEND(MPI_Issend)
POEMS_FORTRAN_ISEND(MPI_Ibsend)
POEMS_FORTRAN_ISEND(MPI_Irsend)
POEMS_FORTRAN_SEND_INIT(MPI_Send_init)
POEMS_FORTRAN_SEND_INIT(MPI_Ssend_init)
POEMS_FORTRAN_SEND_INIT(MPI_Bsend_init)
POEMS_FORTRAN_SEND_INIT(MPI_Rsend_init)
#undef POEMS_FORTRAN_SEND_INIT
#undef POEMS_FORTRAN_ISEND

POEMS_FORTRAN_REQUEST(MPI_Irecv, if (*source != MPI_PROC_NULL) irecv(comm_of(comm), PMPI_Request_f2c(*request)))
POEMS_FORTRAN_REQUEST(MPI_Recv_init,
                      if (*source != MPI_PROC_NULL) persistent_recv(PMPI_Request_f2c(*request), comm_of(comm)))
POEMS_FORTRAN_REQUEST(MPI_Start, started(PMPI_Request_f2c(*request)))
POEMS_FORTRAN_REQUEST(MPI_Startall, for (F i = 0; i < *count; ++i) started(PMPI_Request_f2c(array_of_requests[i])))
#undef POEMS_FORTRAN_REQUEST

POEMS_FORTRAN_WRAPPER(MPI_Request_free) {
  Call call(Region::MPI_Request_free);
  if (call.on()) freed(PMPI_Request_f2c(*request));
  POEMS_FORTRAN_FORWARD(MPI_Request_free);
}

POEMS_FORTRAN_WRAPPER(MPI_Cancel) {
  Call call(Region::MPI_Cancel);
  if (call.on()) cancel_requested(PMPI_Request_f2c(*request));
  POEMS_FORTRAN_FORWARD(MPI_Cancel);
}

// ---- completion ----------------------------------------------------------------------------

// The completion of one request (BEFORE: what it was before the call, which
// may free it) when the call succeeded and DONE says it completed.
#define POEMS_FORTRAN_COMPLETION(NAME, BEFORE, DONE, RECORD) \
  POEMS_FORTRAN_WRAPPER(NAME) {                              \
    Call call(Region::NAME);                                 \
    if (!call.on()) return POEMS_FORTRAN_FORWARD(NAME);      \
    const auto before = BEFORE;                              \
    F local[kStatusInts];                                    \
    if (ignored(status)) status = local;                     \
    POEMS_FORTRAN_FORWARD(NAME);                             \
    if (*ierr == MPI_SUCCESS && DONE) RECORD;                \
  }
POEMS_FORTRAN_COMPLETION(MPI_Wait, PMPI_Request_f2c(*request), true, completed(before, c_status(status)))
POEMS_FORTRAN_COMPLETION(MPI_Test, PMPI_Request_f2c(*request), *flag, completed(before, c_status(status)))
POEMS_FORTRAN_COMPLETION(MPI_Waitany, save(*count, array_of_requests), true,
                         any_completed(before, *count, *index, status))
POEMS_FORTRAN_COMPLETION(MPI_Testany, save(*count, array_of_requests), *flag,
                         any_completed(before, *count, *index, status))
#undef POEMS_FORTRAN_COMPLETION

// The completions of a call on COUNT requests, RECORD when it succeeded and
// DONE says so.
#define POEMS_FORTRAN_MANY(NAME, COUNT, DONE, RECORD)            \
  POEMS_FORTRAN_WRAPPER(NAME) {                                  \
    Call call(Region::NAME);                                     \
    if (!call.on()) return POEMS_FORTRAN_FORWARD(NAME);          \
    const MPI_Request* before = save(*COUNT, array_of_requests); \
    array_of_statuses = statuses_for(*COUNT, array_of_statuses); \
    POEMS_FORTRAN_FORWARD(NAME);                                 \
    if (*ierr == MPI_SUCCESS && DONE) RECORD;                    \
  }
POEMS_FORTRAN_MANY(MPI_Waitall, count, true, all_completed(before, *count, array_of_statuses))
POEMS_FORTRAN_MANY(MPI_Testall, count, *flag, all_completed(before, *count, array_of_statuses))
POEMS_FORTRAN_MANY(MPI_Waitsome, incount, true,
                   some_completed(before, *incount, *outcount, array_of_indices, array_of_statuses))
POEMS_FORTRAN_MANY(MPI_Testsome, incount, true,
                   some_completed(before, *incount, *outcount, array_of_indices, array_of_statuses))
#undef POEMS_FORTRAN_MANY

// ---- collectives -------------------------------------------------------------------------

// A collective call of `NAME`, recorded by RECORD once it returned.
#define POEMS_FORTRAN_COLLECTIVE(NAME, RECORD)     \
  POEMS_FORTRAN_WRAPPER(NAME) {                    \
    Call call(Region::NAME);                       \
    if (call.on()) collective_begin();             \
    POEMS_FORTRAN_FORWARD(NAME);                   \
    if (call.on() && *ierr == MPI_SUCCESS) RECORD; \
  }

POEMS_FORTRAN_COLLECTIVE(MPI_Barrier, collective::barrier(comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Bcast, collective::bcast(*count, type_of(datatype), *root, comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Reduce, collective::reduce(*count, type_of(datatype), *root, comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Allreduce, collective::allreduce(*count, type_of(datatype), comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Gather,
                         collective::gather(in_place(sendbuf), *sendcount, type_unless_in_place(sendbuf, sendtype),
                                            *recvcount, type_of(recvtype), *root, comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Gatherv,
                         collective::gatherv(in_place(sendbuf), *sendcount, type_unless_in_place(sendbuf, sendtype),
                                             recvcounts, type_of(recvtype), *root, comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Scatter,
                         collective::scatter(in_place(recvbuf), *sendcount, type_of(sendtype), *recvcount,
                                             type_unless_in_place(recvbuf, recvtype), *root, comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Scatterv,
                         collective::scatterv(in_place(recvbuf), sendcounts, type_of(sendtype), *recvcount,
                                              type_unless_in_place(recvbuf, recvtype), *root, comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Allgather,
                         collective::allgather(in_place(sendbuf), *sendcount, type_unless_in_place(sendbuf, sendtype),
                                               *recvcount, type_of(recvtype), comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Allgatherv,
                         collective::allgatherv(in_place(sendbuf), *sendcount, type_unless_in_place(sendbuf, sendtype),
                                                recvcounts, type_of(recvtype), comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Alltoall,
                         collective::alltoall(in_place(sendbuf), *sendcount, type_unless_in_place(sendbuf, sendtype),
                                              *recvcount, type_of(recvtype), comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Alltoallv,
                         collective::alltoallv(in_place(sendbuf), sendcounts, type_unless_in_place(sendbuf, sendtype),
                                               recvcounts, type_of(recvtype), comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Reduce_scatter, collective::reduce_scatter(recvcounts, type_of(datatype), comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Reduce_scatter_block,
                         collective::reduce_scatter_block(*recvcount, type_of(datatype), comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Scan, collective::scan(false, *count, type_of(datatype), comm_of(comm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Exscan, collective::scan(true, *count, type_of(datatype), comm_of(comm)))

// ---- communicators -------------------------------------------------------------------------

POEMS_FORTRAN_COLLECTIVE(MPI_Comm_dup, collective::created(comm_of(comm), comm_of(newcomm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Comm_dup_with_info, collective::created(comm_of(comm), comm_of(newcomm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Comm_split, collective::created(comm_of(comm), comm_of(newcomm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Comm_split_type, collective::created(comm_of(comm), comm_of(newcomm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Comm_create, collective::created(comm_of(comm), comm_of(newcomm)))
POEMS_FORTRAN_COLLECTIVE(MPI_Cart_create, collective::created(comm_of(old_comm), comm_of(comm_cart)))
POEMS_FORTRAN_COLLECTIVE(MPI_Cart_sub, collective::created(comm_of(comm), comm_of(new_comm)))

POEMS_FORTRAN_WRAPPER(MPI_Comm_create_group) {
  Call call(Region::MPI_Comm_create_group);
  POEMS_FORTRAN_FORWARD(MPI_Comm_create_group);
  if (call.on() && *ierr == MPI_SUCCESS) communicator_created(comm_of(comm), comm_of(newcomm));
}

POEMS_FORTRAN_WRAPPER(MPI_Comm_free) {
  Call call(Region::MPI_Comm_free);
  if (call.on()) communicator_freed(comm_of(comm));
  POEMS_FORTRAN_FORWARD(MPI_Comm_free);
}

#undef POEMS_FORTRAN_COLLECTIVE

}  // extern "C"
