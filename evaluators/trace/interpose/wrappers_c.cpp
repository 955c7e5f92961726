// The C bindings `poems trace` records (PMPI interposition; C++ programs use
// them too). Each wrapper enters its region, records what the call does and
// calls the PMPI_ function; see recorder.h. Statuses the program ignores are
// asked for anyway, since a receive's source and tag are recorded.
#include <mpi.h>

#include <otf2/OTF2_Events.h>

#include <vector>

#include "collective_records.h"
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

int MPI_Init(int* argc, char*** argv) {
  const Ticks entered = now();
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start(Region::MPI_Init, entered, MPI_THREAD_SINGLE);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const Ticks entered = now();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start(Region::MPI_Init_thread, entered, *provided);
  return rc;
}

int MPI_Finalize() {
  finish();
  return PMPI_Finalize();
}

// ---- blocking point-to-point -----------------------------------------------------

#define POEMS_BLOCKING_SEND(NAME)                                                             \
  int NAME(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) { \
    Call call(Region::NAME);                                                                  \
    if (call.on()) send(dest, comm, tag, type_bytes(type, count));                            \
    return P##NAME(buf, count, type, dest, tag, comm);                                        \
  }
POEMS_BLOCKING_SEND(MPI_Send)
POEMS_BLOCKING_SEND(MPI_Ssend)
POEMS_BLOCKING_SEND(MPI_Bsend)
POEMS_BLOCKING_SEND(MPI_Rsend)
#undef POEMS_BLOCKING_SEND

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Call call(Region::MPI_Recv);
  if (!call.on()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  const int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
  if (rc == MPI_SUCCESS) recv(*status, comm);
  return rc;
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  Call call(Region::MPI_Sendrecv);
  if (!call.on())
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  send(dest, comm, sendtag, type_bytes(sendtype, sendcount));
  const int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                               recvtag, comm, status);
  if (rc == MPI_SUCCESS) recv(*status, comm);
  return rc;
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  Call call(Region::MPI_Sendrecv_replace);
  if (!call.on()) return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  send(dest, comm, sendtag, type_bytes(type, count));
  const int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  if (rc == MPI_SUCCESS) recv(*status, comm);
  return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Call call(Region::MPI_Probe);
  return PMPI_Probe(source, tag, comm, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  Call call(Region::MPI_Iprobe);
  return PMPI_Iprobe(source, tag, comm, flag, status);
}

// ---- nonblocking and persistent point-to-point ---------------------------------------

// The nonblocking and persistent sends: RECORD once the request exists.
#define POEMS_SEND_REQUEST(NAME, RECORD)                                                                        \
  int NAME(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) { \
    Call call(Region::NAME);                                                                                    \
    const int rc = P##NAME(buf, count, type, dest, tag, comm, req);                                             \
    if (call.on() && rc == MPI_SUCCESS) RECORD;                                                                 \
    return rc;                                                                                                  \
  }
#define POEMS_ISEND(NAME) POEMS_SEND_REQUEST(NAME, isend(dest, comm, tag, type_bytes(type, count), *req))
#define POEMS_SEND_INIT(NAME) POEMS_SEND_REQUEST(NAME, persistent_send(*req, dest, comm, tag, type_bytes(type, count)))
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
#undef POEMS_SEND_REQUEST

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  Call call(Region::MPI_Irecv);
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
  if (call.on() && rc == MPI_SUCCESS && source != MPI_PROC_NULL) irecv(comm, *request);
  return rc;
}

int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  Call call(Region::MPI_Recv_init);
  const int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, request);
  if (call.on() && rc == MPI_SUCCESS && source != MPI_PROC_NULL) persistent_recv(*request, comm);
  return rc;
}

int MPI_Start(MPI_Request* request) {
  Call call(Region::MPI_Start);
  const int rc = PMPI_Start(request);
  if (call.on() && rc == MPI_SUCCESS) started(*request);
  return rc;
}

int MPI_Startall(int count, MPI_Request* requests) {
  Call call(Region::MPI_Startall);
  const int rc = PMPI_Startall(count, requests);
  if (call.on() && rc == MPI_SUCCESS)
    for (int i = 0; i < count; ++i) started(requests[i]);
  return rc;
}

int MPI_Request_free(MPI_Request* request) {
  Call call(Region::MPI_Request_free);
  if (call.on()) freed(*request);
  return PMPI_Request_free(request);
}

int MPI_Cancel(MPI_Request* request) {
  Call call(Region::MPI_Cancel);
  if (call.on()) cancel_requested(*request);
  return PMPI_Cancel(request);
}

// ---- completion ----------------------------------------------------------------------

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  Call call(Region::MPI_Wait);
  if (!call.on()) return PMPI_Wait(request, status);
  const MPI_Request before = *request;
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  const int rc = PMPI_Wait(request, status);
  if (rc == MPI_SUCCESS) completed(before, *status);
  return rc;
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  Call call(Region::MPI_Test);
  if (!call.on()) return PMPI_Test(request, flag, status);
  const MPI_Request before = *request;
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  const int rc = PMPI_Test(request, flag, status);
  if (rc == MPI_SUCCESS && *flag) completed(before, *status);
  return rc;
}

int MPI_Waitall(int count, MPI_Request* requests, MPI_Status* statuses) {
  Call call(Region::MPI_Waitall);
  if (!call.on()) return PMPI_Waitall(count, requests, statuses);
  const MPI_Request* before = save(count, requests);
  statuses = statuses_for(count, statuses);
  const int rc = PMPI_Waitall(count, requests, statuses);
  if (rc == MPI_SUCCESS)
    for (int i = 0; i < count; ++i) completed(before[i], statuses[i]);
  return rc;
}

int MPI_Testall(int count, MPI_Request* requests, int* flag, MPI_Status* statuses) {
  Call call(Region::MPI_Testall);
  if (!call.on()) return PMPI_Testall(count, requests, flag, statuses);
  const MPI_Request* before = save(count, requests);
  statuses = statuses_for(count, statuses);
  const int rc = PMPI_Testall(count, requests, flag, statuses);
  if (rc == MPI_SUCCESS && *flag)
    for (int i = 0; i < count; ++i) completed(before[i], statuses[i]);
  return rc;
}

int MPI_Waitany(int count, MPI_Request* requests, int* index, MPI_Status* status) {
  Call call(Region::MPI_Waitany);
  if (!call.on()) return PMPI_Waitany(count, requests, index, status);
  const MPI_Request* before = save(count, requests);
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  const int rc = PMPI_Waitany(count, requests, index, status);
  if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED) completed(before[*index], *status);
  return rc;
}

int MPI_Testany(int count, MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  Call call(Region::MPI_Testany);
  if (!call.on()) return PMPI_Testany(count, requests, index, flag, status);
  const MPI_Request* before = save(count, requests);
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  const int rc = PMPI_Testany(count, requests, index, flag, status);
  if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED) completed(before[*index], *status);
  return rc;
}

#define POEMS_SOME(Name)                                                                                  \
  int MPI_##Name(int incount, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) { \
    Call call(Region::MPI_##Name);                                                                        \
    if (!call.on()) return PMPI_##Name(incount, requests, outcount, indices, statuses);                   \
    const MPI_Request* before = save(incount, requests);                                                  \
    statuses = statuses_for(incount, statuses);                                                           \
    const int rc = PMPI_##Name(incount, requests, outcount, indices, statuses);                           \
    if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)                                                  \
      for (int k = 0; k < *outcount; ++k) completed(before[indices[k]], statuses[k]);                     \
    return rc;                                                                                            \
  }
POEMS_SOME(Waitsome)
POEMS_SOME(Testsome)
#undef POEMS_SOME

// ---- collectives -----------------------------------------------------------------------

#define POEMS_COLLECTIVE(REGION, CALL, RECORD) \
  Call call(Region::REGION);                   \
  if (call.on()) collective_begin();           \
  const int rc = CALL;                         \
  if (call.on() && rc == MPI_SUCCESS) RECORD;  \
  return rc;

int MPI_Barrier(MPI_Comm comm) { POEMS_COLLECTIVE(MPI_Barrier, PMPI_Barrier(comm), collective::barrier(comm)) }

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Bcast, PMPI_Bcast(buf, count, type, root, comm), collective::bcast(count, type, root, comm))
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Reduce, PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm),
                   collective::reduce(count, type, root, comm))
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Allreduce, PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm),
                   collective::allreduce(count, type, comm))
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Gather, PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                   collective::gather(sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype, root, comm))
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Gatherv,
                   PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),
                   collective::gatherv(sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcounts, recvtype, root, comm))
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Scatter, PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                   collective::scatter(recvbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype, root, comm))
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Scatterv,
                   PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),
                   collective::scatterv(recvbuf == MPI_IN_PLACE, sendcounts, sendtype, recvcount, recvtype, root, comm))
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Allgather, PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                   collective::allgather(sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype, comm))
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Allgatherv,
                   PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
                   collective::allgatherv(sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcounts, recvtype, comm))
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Alltoall, PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                   collective::alltoall(sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype, comm))
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Alltoallv,
                   PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),
                   collective::alltoallv(sendbuf == MPI_IN_PLACE, sendcounts, sendtype, recvcounts, recvtype, comm))
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Reduce_scatter, PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm),
                   collective::reduce_scatter(recvcounts, type, comm))
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Reduce_scatter_block, PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm),
                   collective::reduce_scatter_block(recvcount, type, comm))
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Scan, PMPI_Scan(sendbuf, recvbuf, count, type, op, comm),
                   collective::scan(false, count, type, comm))
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  POEMS_COLLECTIVE(MPI_Exscan, PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm),
                   collective::scan(true, count, type, comm))
}

// ---- communicators ----------------------------------------------------------------------

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  POEMS_COLLECTIVE(MPI_Comm_dup, PMPI_Comm_dup(comm, newcomm), collective::created(comm, *newcomm))
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  POEMS_COLLECTIVE(MPI_Comm_dup_with_info, PMPI_Comm_dup_with_info(comm, info, newcomm),
                   collective::created(comm, *newcomm))
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  POEMS_COLLECTIVE(MPI_Comm_split, PMPI_Comm_split(comm, color, key, newcomm), collective::created(comm, *newcomm))
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  POEMS_COLLECTIVE(MPI_Comm_split_type, PMPI_Comm_split_type(comm, split_type, key, info, newcomm),
                   collective::created(comm, *newcomm))
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  POEMS_COLLECTIVE(MPI_Comm_create, PMPI_Comm_create(comm, group, newcomm), collective::created(comm, *newcomm))
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  // Collective over the group's members only: no record on the parent.
  Call call(Region::MPI_Comm_create_group);
  const int rc = PMPI_Comm_create_group(comm, group, tag, newcomm);
  if (call.on() && rc == MPI_SUCCESS) communicator_created(comm, *newcomm);
  return rc;
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* newcomm) {
  POEMS_COLLECTIVE(MPI_Cart_create, PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm),
                   collective::created(comm, *newcomm))
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  POEMS_COLLECTIVE(MPI_Cart_sub, PMPI_Cart_sub(comm, remain_dims, newcomm), collective::created(comm, *newcomm))
}

int MPI_Comm_free(MPI_Comm* comm) {
  Call call(Region::MPI_Comm_free);
  if (call.on()) communicator_freed(*comm);
  return PMPI_Comm_free(comm);
}

#undef POEMS_COLLECTIVE

}  // extern "C"
