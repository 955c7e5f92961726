// The Fortran bindings `poems trace` records. Open MPI 4.1's Fortran entry
// points (mpif.h and `use mpi`: mpi_send_ and its other manglings; `use
// mpi_f08`: mpi_send_f08_, which calls ompi_send_f) are all aliases of, or
// calls to, one function per MPI routine, ompi_<name>_f, and that function
// calls PMPI_<Name> directly: a C PMPI wrapper never sees a Fortran call.
// So the tracer defines ompi_<name>_f and the mpif.h manglings itself,
// records around the real ompi_<name>_f (found with dlsym(RTLD_NEXT)), and
// nothing is recorded twice. Handles are converted with PMPI_*_f2c; indices
// Open MPI returns to Fortran are 1-based.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "collective_records.h"
#include "recorder.h"

using namespace poems::trace::interpose;

// Open MPI's sentinels for MPI_IN_PLACE and MPI_STATUS(ES)_IGNORE in Fortran.
extern "C" {
extern int mpi_fortran_in_place_ __attribute__((weak));
}

namespace {

using F = MPI_Fint;
using Logical = int;  // gfortran's default LOGICAL; Open MPI's .true. is 1

constexpr std::size_t kStatusInts = sizeof(MPI_Status) / sizeof(MPI_Fint);

template <typename Fn>
Fn real_function(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    std::fprintf(stderr, "poems trace: cannot find Open MPI's %s\n", name);
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

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

void isend_record(int dest, MPI_Comm comm, int tag, std::uint64_t bytes, MPI_Request request) {
  isend(dest, comm, tag, bytes, request);
}
void persistent_record(int dest, MPI_Comm comm, int tag, std::uint64_t bytes, MPI_Request request) {
  persistent_send(request, dest, comm, tag, bytes);
}
MPI_Datatype type_of(const F* type) { return PMPI_Type_f2c(*type); }

}  // namespace

// Every mpif.h spelling of a routine is the same function.
#define POEMS_FORTRAN_ALIASES(lower, upper)                                            \
  using lower##_type = decltype(ompi_##lower##_f);                                     \
  extern "C" lower##_type mpi_##lower __attribute__((alias("ompi_" #lower "_f")));     \
  extern "C" lower##_type mpi_##lower##_ __attribute__((alias("ompi_" #lower "_f")));  \
  extern "C" lower##_type mpi_##lower##__ __attribute__((alias("ompi_" #lower "_f"))); \
  extern "C" lower##_type MPI_##upper __attribute__((alias("ompi_" #lower "_f")));

#define POEMS_REAL(lower) static const auto real = real_function<decltype(&ompi_##lower##_f)>("ompi_" #lower "_f")

extern "C" {

// ---- environment ----------------------------------------------------------------------

void ompi_init_f(F* ierr) {
  POEMS_REAL(init);
  const Ticks entered = now();
  real(ierr);
  if (*ierr == MPI_SUCCESS) start(Region::MPI_Init, entered, MPI_THREAD_SINGLE);
}
POEMS_FORTRAN_ALIASES(init, INIT)

void ompi_init_thread_f(F* required, F* provided, F* ierr) {
  POEMS_REAL(init_thread);
  const Ticks entered = now();
  real(required, provided, ierr);
  if (*ierr == MPI_SUCCESS) start(Region::MPI_Init_thread, entered, *provided);
}
POEMS_FORTRAN_ALIASES(init_thread, INIT_THREAD)

void ompi_finalize_f(F* ierr) {
  POEMS_REAL(finalize);
  finish();
  real(ierr);
}
POEMS_FORTRAN_ALIASES(finalize, FINALIZE)

// ---- blocking point-to-point --------------------------------------------------------------

#define POEMS_FORTRAN_SEND(lower, upper, REGION)                                           \
  void ompi_##lower##_f(char* buf, F* count, F* type, F* dest, F* tag, F* comm, F* ierr) { \
    POEMS_REAL(lower);                                                                     \
    Call call(Region::REGION);                                                             \
    if (call.on()) send(*dest, comm_of(comm), *tag, type_bytes(type_of(type), *count));    \
    real(buf, count, type, dest, tag, comm, ierr);                                         \
  }                                                                                        \
  POEMS_FORTRAN_ALIASES(lower, upper)
POEMS_FORTRAN_SEND(send, SEND, MPI_Send)
POEMS_FORTRAN_SEND(ssend, SSEND, MPI_Ssend)
POEMS_FORTRAN_SEND(bsend, BSEND, MPI_Bsend)
POEMS_FORTRAN_SEND(rsend, RSEND, MPI_Rsend)
#undef POEMS_FORTRAN_SEND

void ompi_recv_f(char* buf, F* count, F* type, F* source, F* tag, F* comm, F* status, F* ierr) {
  POEMS_REAL(recv);
  Call call(Region::MPI_Recv);
  if (!call.on()) return real(buf, count, type, source, tag, comm, status, ierr);
  F local[kStatusInts];
  if (ignored(status)) status = local;
  real(buf, count, type, source, tag, comm, status, ierr);
  if (*ierr == MPI_SUCCESS) recv(c_status(status), comm_of(comm));
}
POEMS_FORTRAN_ALIASES(recv, RECV)

void ompi_sendrecv_f(char* sendbuf, F* sendcount, F* sendtype, F* dest, F* sendtag, char* recvbuf, F* recvcount,
                     F* recvtype, F* source, F* recvtag, F* comm, F* status, F* ierr) {
  POEMS_REAL(sendrecv);
  Call call(Region::MPI_Sendrecv);
  if (!call.on())
    return real(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                status, ierr);
  F local[kStatusInts];
  if (ignored(status)) status = local;
  send(*dest, comm_of(comm), *sendtag, type_bytes(type_of(sendtype), *sendcount));
  real(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status, ierr);
  if (*ierr == MPI_SUCCESS) recv(c_status(status), comm_of(comm));
}
POEMS_FORTRAN_ALIASES(sendrecv, SENDRECV)

void ompi_sendrecv_replace_f(char* buf, F* count, F* type, F* dest, F* sendtag, F* source, F* recvtag, F* comm,
                             F* status, F* ierr) {
  POEMS_REAL(sendrecv_replace);
  Call call(Region::MPI_Sendrecv_replace);
  if (!call.on()) return real(buf, count, type, dest, sendtag, source, recvtag, comm, status, ierr);
  F local[kStatusInts];
  if (ignored(status)) status = local;
  send(*dest, comm_of(comm), *sendtag, type_bytes(type_of(type), *count));
  real(buf, count, type, dest, sendtag, source, recvtag, comm, status, ierr);
  if (*ierr == MPI_SUCCESS) recv(c_status(status), comm_of(comm));
}
POEMS_FORTRAN_ALIASES(sendrecv_replace, SENDRECV_REPLACE)

void ompi_probe_f(F* source, F* tag, F* comm, F* status, F* ierr) {
  POEMS_REAL(probe);
  Call call(Region::MPI_Probe);
  real(source, tag, comm, status, ierr);
}
POEMS_FORTRAN_ALIASES(probe, PROBE)

void ompi_iprobe_f(F* source, F* tag, F* comm, Logical* flag, F* status, F* ierr) {
  POEMS_REAL(iprobe);
  Call call(Region::MPI_Iprobe);
  real(source, tag, comm, flag, status, ierr);
}
POEMS_FORTRAN_ALIASES(iprobe, IPROBE)

// ---- nonblocking and persistent point-to-point ------------------------------------------------

#define POEMS_FORTRAN_ISEND(lower, upper, REGION, RECORD)                                                \
  void ompi_##lower##_f(char* buf, F* count, F* type, F* dest, F* tag, F* comm, F* request, F* ierr) {   \
    POEMS_REAL(lower);                                                                                   \
    Call call(Region::REGION);                                                                           \
    real(buf, count, type, dest, tag, comm, request, ierr);                                              \
    if (call.on() && *ierr == MPI_SUCCESS)                                                               \
      RECORD(*dest, comm_of(comm), *tag, type_bytes(type_of(type), *count), PMPI_Request_f2c(*request)); \
  }                                                                                                      \
  POEMS_FORTRAN_ALIASES(lower, upper)

POEMS_FORTRAN_ISEND(isend, ISEND, MPI_Isend, isend_record)
POEMS_FORTRAN_ISEND(issend, ISSEND, MPI_Issend, isend_record)
POEMS_FORTRAN_ISEND(ibsend, IBSEND, MPI_Ibsend, isend_record)
POEMS_FORTRAN_ISEND(irsend, IRSEND, MPI_Irsend, isend_record)
POEMS_FORTRAN_ISEND(send_init, SEND_INIT, MPI_Send_init, persistent_record)
POEMS_FORTRAN_ISEND(ssend_init, SSEND_INIT, MPI_Ssend_init, persistent_record)
POEMS_FORTRAN_ISEND(bsend_init, BSEND_INIT, MPI_Bsend_init, persistent_record)
POEMS_FORTRAN_ISEND(rsend_init, RSEND_INIT, MPI_Rsend_init, persistent_record)
#undef POEMS_FORTRAN_ISEND

void ompi_irecv_f(char* buf, F* count, F* type, F* source, F* tag, F* comm, F* request, F* ierr) {
  POEMS_REAL(irecv);
  Call call(Region::MPI_Irecv);
  real(buf, count, type, source, tag, comm, request, ierr);
  if (call.on() && *ierr == MPI_SUCCESS && *source != MPI_PROC_NULL) irecv(comm_of(comm), PMPI_Request_f2c(*request));
}
POEMS_FORTRAN_ALIASES(irecv, IRECV)

void ompi_recv_init_f(char* buf, F* count, F* type, F* source, F* tag, F* comm, F* request, F* ierr) {
  POEMS_REAL(recv_init);
  Call call(Region::MPI_Recv_init);
  real(buf, count, type, source, tag, comm, request, ierr);
  if (call.on() && *ierr == MPI_SUCCESS && *source != MPI_PROC_NULL)
    persistent_recv(PMPI_Request_f2c(*request), comm_of(comm));
}
POEMS_FORTRAN_ALIASES(recv_init, RECV_INIT)

void ompi_start_f(F* request, F* ierr) {
  POEMS_REAL(start);
  Call call(Region::MPI_Start);
  real(request, ierr);
  if (call.on() && *ierr == MPI_SUCCESS) started(PMPI_Request_f2c(*request));
}
POEMS_FORTRAN_ALIASES(start, START)

void ompi_startall_f(F* count, F* requests, F* ierr) {
  POEMS_REAL(startall);
  Call call(Region::MPI_Startall);
  real(count, requests, ierr);
  if (call.on() && *ierr == MPI_SUCCESS)
    for (F i = 0; i < *count; ++i) started(PMPI_Request_f2c(requests[i]));
}
POEMS_FORTRAN_ALIASES(startall, STARTALL)

void ompi_request_free_f(F* request, F* ierr) {
  POEMS_REAL(request_free);
  Call call(Region::MPI_Request_free);
  if (call.on()) freed(PMPI_Request_f2c(*request));
  real(request, ierr);
}
POEMS_FORTRAN_ALIASES(request_free, REQUEST_FREE)

void ompi_cancel_f(F* request, F* ierr) {
  POEMS_REAL(cancel);
  Call call(Region::MPI_Cancel);
  if (call.on()) cancel_requested(PMPI_Request_f2c(*request));
  real(request, ierr);
}
POEMS_FORTRAN_ALIASES(cancel, CANCEL)

// ---- completion ----------------------------------------------------------------------------

void ompi_wait_f(F* request, F* status, F* ierr) {
  POEMS_REAL(wait);
  Call call(Region::MPI_Wait);
  if (!call.on()) return real(request, status, ierr);
  const MPI_Request before = PMPI_Request_f2c(*request);
  F local[kStatusInts];
  if (ignored(status)) status = local;
  real(request, status, ierr);
  if (*ierr == MPI_SUCCESS) completed(before, c_status(status));
}
POEMS_FORTRAN_ALIASES(wait, WAIT)

void ompi_test_f(F* request, Logical* flag, F* status, F* ierr) {
  POEMS_REAL(test);
  Call call(Region::MPI_Test);
  if (!call.on()) return real(request, flag, status, ierr);
  const MPI_Request before = PMPI_Request_f2c(*request);
  F local[kStatusInts];
  if (ignored(status)) status = local;
  real(request, flag, status, ierr);
  if (*ierr == MPI_SUCCESS && *flag) completed(before, c_status(status));
}
POEMS_FORTRAN_ALIASES(test, TEST)

void ompi_waitall_f(F* count, F* requests, F* statuses, F* ierr) {
  POEMS_REAL(waitall);
  Call call(Region::MPI_Waitall);
  if (!call.on()) return real(count, requests, statuses, ierr);
  const MPI_Request* before = save(*count, requests);
  statuses = statuses_for(*count, statuses);
  real(count, requests, statuses, ierr);
  if (*ierr == MPI_SUCCESS) all_completed(before, *count, statuses);
}
POEMS_FORTRAN_ALIASES(waitall, WAITALL)

void ompi_testall_f(F* count, F* requests, Logical* flag, F* statuses, F* ierr) {
  POEMS_REAL(testall);
  Call call(Region::MPI_Testall);
  if (!call.on()) return real(count, requests, flag, statuses, ierr);
  const MPI_Request* before = save(*count, requests);
  statuses = statuses_for(*count, statuses);
  real(count, requests, flag, statuses, ierr);
  if (*ierr == MPI_SUCCESS && *flag) all_completed(before, *count, statuses);
}
POEMS_FORTRAN_ALIASES(testall, TESTALL)

void ompi_waitany_f(F* count, F* requests, F* index, F* status, F* ierr) {
  POEMS_REAL(waitany);
  Call call(Region::MPI_Waitany);
  if (!call.on()) return real(count, requests, index, status, ierr);
  const MPI_Request* before = save(*count, requests);
  F local[kStatusInts];
  if (ignored(status)) status = local;
  real(count, requests, index, status, ierr);
  if (*ierr == MPI_SUCCESS) any_completed(before, *count, *index, status);
}
POEMS_FORTRAN_ALIASES(waitany, WAITANY)

void ompi_testany_f(F* count, F* requests, F* index, Logical* flag, F* status, F* ierr) {
  POEMS_REAL(testany);
  Call call(Region::MPI_Testany);
  if (!call.on()) return real(count, requests, index, flag, status, ierr);
  const MPI_Request* before = save(*count, requests);
  F local[kStatusInts];
  if (ignored(status)) status = local;
  real(count, requests, index, flag, status, ierr);
  if (*ierr == MPI_SUCCESS && *flag) any_completed(before, *count, *index, status);
}
POEMS_FORTRAN_ALIASES(testany, TESTANY)

#define POEMS_FORTRAN_SOME(lower, upper, REGION)                                                  \
  void ompi_##lower##_f(F* incount, F* requests, F* outcount, F* indices, F* statuses, F* ierr) { \
    POEMS_REAL(lower);                                                                            \
    Call call(Region::REGION);                                                                    \
    if (!call.on()) return real(incount, requests, outcount, indices, statuses, ierr);            \
    const MPI_Request* before = save(*incount, requests);                                         \
    statuses = statuses_for(*incount, statuses);                                                  \
    real(incount, requests, outcount, indices, statuses, ierr);                                   \
    if (*ierr == MPI_SUCCESS) some_completed(before, *incount, *outcount, indices, statuses);     \
  }                                                                                               \
  POEMS_FORTRAN_ALIASES(lower, upper)
POEMS_FORTRAN_SOME(waitsome, WAITSOME, MPI_Waitsome)
POEMS_FORTRAN_SOME(testsome, TESTSOME, MPI_Testsome)
#undef POEMS_FORTRAN_SOME

// ---- collectives -------------------------------------------------------------------------

#define POEMS_FORTRAN_COLLECTIVE(REGION, CALL, RECORD) \
  Call call(Region::REGION);                           \
  if (call.on()) collective_begin();                   \
  CALL;                                                \
  if (call.on() && *ierr == MPI_SUCCESS) RECORD;

void ompi_barrier_f(F* comm, F* ierr) {
  POEMS_REAL(barrier);
  POEMS_FORTRAN_COLLECTIVE(MPI_Barrier, real(comm, ierr), collective::barrier(comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(barrier, BARRIER)

void ompi_bcast_f(char* buf, F* count, F* type, F* root, F* comm, F* ierr) {
  POEMS_REAL(bcast);
  POEMS_FORTRAN_COLLECTIVE(MPI_Bcast, real(buf, count, type, root, comm, ierr),
                           collective::bcast(*count, type_of(type), *root, comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(bcast, BCAST)

void ompi_reduce_f(char* sendbuf, char* recvbuf, F* count, F* type, F* op, F* root, F* comm, F* ierr) {
  POEMS_REAL(reduce);
  POEMS_FORTRAN_COLLECTIVE(MPI_Reduce, real(sendbuf, recvbuf, count, type, op, root, comm, ierr),
                           collective::reduce(*count, type_of(type), *root, comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(reduce, REDUCE)

void ompi_allreduce_f(char* sendbuf, char* recvbuf, F* count, F* type, F* op, F* comm, F* ierr) {
  POEMS_REAL(allreduce);
  POEMS_FORTRAN_COLLECTIVE(MPI_Allreduce, real(sendbuf, recvbuf, count, type, op, comm, ierr),
                           collective::allreduce(*count, type_of(type), comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(allreduce, ALLREDUCE)

void ompi_gather_f(char* sendbuf, F* sendcount, F* sendtype, char* recvbuf, F* recvcount, F* recvtype, F* root, F* comm,
                   F* ierr) {
  POEMS_REAL(gather);
  POEMS_FORTRAN_COLLECTIVE(
      MPI_Gather, real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ierr),
      collective::gather(in_place(sendbuf), *sendcount, in_place(sendbuf) ? MPI_DATATYPE_NULL : type_of(sendtype),
                         *recvcount, type_of(recvtype), *root, comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(gather, GATHER)

void ompi_gatherv_f(char* sendbuf, F* sendcount, F* sendtype, char* recvbuf, F* recvcounts, F* displs, F* recvtype,
                    F* root, F* comm, F* ierr) {
  POEMS_REAL(gatherv);
  POEMS_FORTRAN_COLLECTIVE(
      MPI_Gatherv, real(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, ierr),
      collective::gatherv(in_place(sendbuf), *sendcount, in_place(sendbuf) ? MPI_DATATYPE_NULL : type_of(sendtype),
                          recvcounts, type_of(recvtype), *root, comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(gatherv, GATHERV)

void ompi_scatter_f(char* sendbuf, F* sendcount, F* sendtype, char* recvbuf, F* recvcount, F* recvtype, F* root,
                    F* comm, F* ierr) {
  POEMS_REAL(scatter);
  POEMS_FORTRAN_COLLECTIVE(
      MPI_Scatter, real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ierr),
      collective::scatter(in_place(recvbuf), *sendcount, type_of(sendtype), *recvcount,
                          in_place(recvbuf) ? MPI_DATATYPE_NULL : type_of(recvtype), *root, comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(scatter, SCATTER)

void ompi_scatterv_f(char* sendbuf, F* sendcounts, F* displs, F* sendtype, char* recvbuf, F* recvcount, F* recvtype,
                     F* root, F* comm, F* ierr) {
  POEMS_REAL(scatterv);
  POEMS_FORTRAN_COLLECTIVE(
      MPI_Scatterv, real(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, ierr),
      collective::scatterv(in_place(recvbuf), sendcounts, type_of(sendtype), *recvcount,
                           in_place(recvbuf) ? MPI_DATATYPE_NULL : type_of(recvtype), *root, comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(scatterv, SCATTERV)

void ompi_allgather_f(char* sendbuf, F* sendcount, F* sendtype, char* recvbuf, F* recvcount, F* recvtype, F* comm,
                      F* ierr) {
  POEMS_REAL(allgather);
  POEMS_FORTRAN_COLLECTIVE(
      MPI_Allgather, real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr),
      collective::allgather(in_place(sendbuf), *sendcount, in_place(sendbuf) ? MPI_DATATYPE_NULL : type_of(sendtype),
                            *recvcount, type_of(recvtype), comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(allgather, ALLGATHER)

void ompi_allgatherv_f(char* sendbuf, F* sendcount, F* sendtype, char* recvbuf, F* recvcounts, F* displs, F* recvtype,
                       F* comm, F* ierr) {
  POEMS_REAL(allgatherv);
  POEMS_FORTRAN_COLLECTIVE(
      MPI_Allgatherv, real(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, ierr),
      collective::allgatherv(in_place(sendbuf), *sendcount, in_place(sendbuf) ? MPI_DATATYPE_NULL : type_of(sendtype),
                             recvcounts, type_of(recvtype), comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(allgatherv, ALLGATHERV)

void ompi_alltoall_f(char* sendbuf, F* sendcount, F* sendtype, char* recvbuf, F* recvcount, F* recvtype, F* comm,
                     F* ierr) {
  POEMS_REAL(alltoall);
  POEMS_FORTRAN_COLLECTIVE(
      MPI_Alltoall, real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr),
      collective::alltoall(in_place(sendbuf), *sendcount, in_place(sendbuf) ? MPI_DATATYPE_NULL : type_of(sendtype),
                           *recvcount, type_of(recvtype), comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(alltoall, ALLTOALL)

void ompi_alltoallv_f(char* sendbuf, F* sendcounts, F* sdispls, F* sendtype, char* recvbuf, F* recvcounts, F* rdispls,
                      F* recvtype, F* comm, F* ierr) {
  POEMS_REAL(alltoallv);
  POEMS_FORTRAN_COLLECTIVE(
      MPI_Alltoallv, real(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, ierr),
      collective::alltoallv(in_place(sendbuf), sendcounts, in_place(sendbuf) ? MPI_DATATYPE_NULL : type_of(sendtype),
                            recvcounts, type_of(recvtype), comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(alltoallv, ALLTOALLV)

void ompi_reduce_scatter_f(char* sendbuf, char* recvbuf, F* recvcounts, F* type, F* op, F* comm, F* ierr) {
  POEMS_REAL(reduce_scatter);
  POEMS_FORTRAN_COLLECTIVE(MPI_Reduce_scatter, real(sendbuf, recvbuf, recvcounts, type, op, comm, ierr),
                           collective::reduce_scatter(recvcounts, type_of(type), comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(reduce_scatter, REDUCE_SCATTER)

void ompi_reduce_scatter_block_f(char* sendbuf, char* recvbuf, F* recvcount, F* type, F* op, F* comm, F* ierr) {
  POEMS_REAL(reduce_scatter_block);
  POEMS_FORTRAN_COLLECTIVE(MPI_Reduce_scatter_block, real(sendbuf, recvbuf, recvcount, type, op, comm, ierr),
                           collective::reduce_scatter_block(*recvcount, type_of(type), comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(reduce_scatter_block, REDUCE_SCATTER_BLOCK)

void ompi_scan_f(char* sendbuf, char* recvbuf, F* count, F* type, F* op, F* comm, F* ierr) {
  POEMS_REAL(scan);
  POEMS_FORTRAN_COLLECTIVE(MPI_Scan, real(sendbuf, recvbuf, count, type, op, comm, ierr),
                           collective::scan(false, *count, type_of(type), comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(scan, SCAN)

void ompi_exscan_f(char* sendbuf, char* recvbuf, F* count, F* type, F* op, F* comm, F* ierr) {
  POEMS_REAL(exscan);
  POEMS_FORTRAN_COLLECTIVE(MPI_Exscan, real(sendbuf, recvbuf, count, type, op, comm, ierr),
                           collective::scan(true, *count, type_of(type), comm_of(comm)))
}
POEMS_FORTRAN_ALIASES(exscan, EXSCAN)

// ---- communicators -------------------------------------------------------------------------

void ompi_comm_dup_f(F* comm, F* newcomm, F* ierr) {
  POEMS_REAL(comm_dup);
  POEMS_FORTRAN_COLLECTIVE(MPI_Comm_dup, real(comm, newcomm, ierr),
                           collective::created(comm_of(comm), comm_of(newcomm)))
}
POEMS_FORTRAN_ALIASES(comm_dup, COMM_DUP)

void ompi_comm_dup_with_info_f(F* comm, F* info, F* newcomm, F* ierr) {
  POEMS_REAL(comm_dup_with_info);
  POEMS_FORTRAN_COLLECTIVE(MPI_Comm_dup_with_info, real(comm, info, newcomm, ierr),
                           collective::created(comm_of(comm), comm_of(newcomm)))
}
POEMS_FORTRAN_ALIASES(comm_dup_with_info, COMM_DUP_WITH_INFO)

void ompi_comm_split_f(F* comm, F* color, F* key, F* newcomm, F* ierr) {
  POEMS_REAL(comm_split);
  POEMS_FORTRAN_COLLECTIVE(MPI_Comm_split, real(comm, color, key, newcomm, ierr),
                           collective::created(comm_of(comm), comm_of(newcomm)))
}
POEMS_FORTRAN_ALIASES(comm_split, COMM_SPLIT)

void ompi_comm_split_type_f(F* comm, F* split_type, F* key, F* info, F* newcomm, F* ierr) {
  POEMS_REAL(comm_split_type);
  POEMS_FORTRAN_COLLECTIVE(MPI_Comm_split_type, real(comm, split_type, key, info, newcomm, ierr),
                           collective::created(comm_of(comm), comm_of(newcomm)))
}
POEMS_FORTRAN_ALIASES(comm_split_type, COMM_SPLIT_TYPE)

void ompi_comm_create_f(F* comm, F* group, F* newcomm, F* ierr) {
  POEMS_REAL(comm_create);
  POEMS_FORTRAN_COLLECTIVE(MPI_Comm_create, real(comm, group, newcomm, ierr),
                           collective::created(comm_of(comm), comm_of(newcomm)))
}
POEMS_FORTRAN_ALIASES(comm_create, COMM_CREATE)

void ompi_comm_create_group_f(F* comm, F* group, F* tag, F* newcomm, F* ierr) {
  POEMS_REAL(comm_create_group);
  Call call(Region::MPI_Comm_create_group);
  real(comm, group, tag, newcomm, ierr);
  if (call.on() && *ierr == MPI_SUCCESS) communicator_created(comm_of(comm), comm_of(newcomm));
}
POEMS_FORTRAN_ALIASES(comm_create_group, COMM_CREATE_GROUP)

void ompi_cart_create_f(F* comm, F* ndims, F* dims, Logical* periods, Logical* reorder, F* newcomm, F* ierr) {
  POEMS_REAL(cart_create);
  POEMS_FORTRAN_COLLECTIVE(MPI_Cart_create, real(comm, ndims, dims, periods, reorder, newcomm, ierr),
                           collective::created(comm_of(comm), comm_of(newcomm)))
}
POEMS_FORTRAN_ALIASES(cart_create, CART_CREATE)

void ompi_cart_sub_f(F* comm, Logical* remain_dims, F* newcomm, F* ierr) {
  POEMS_REAL(cart_sub);
  POEMS_FORTRAN_COLLECTIVE(MPI_Cart_sub, real(comm, remain_dims, newcomm, ierr),
                           collective::created(comm_of(comm), comm_of(newcomm)))
}
POEMS_FORTRAN_ALIASES(cart_sub, CART_SUB)

void ompi_comm_free_f(F* comm, F* ierr) {
  POEMS_REAL(comm_free);
  Call call(Region::MPI_Comm_free);
  if (call.on()) communicator_freed(comm_of(comm));
  real(comm, ierr);
}
POEMS_FORTRAN_ALIASES(comm_free, COMM_FREE)

#undef POEMS_FORTRAN_COLLECTIVE

}  // extern "C"
