// Well-known MPI functions outside the supported subset: each stops the run
// with a message naming itself (declared in mpi.h, so programs that mention
// them compile and link; docs/direct.md lists the subset).
#include "api.h"

// The parameters are the standard's; none is used.
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace {

[[noreturn]] int unsupported(const char* call) {
  poems::direct::detail::Runtime& rt = poems::direct::detail::runtime_for(call);
  rt.enter(call, false);
  rt.fail(call, "is not supported by POEMS direct execution (docs/direct.md lists the supported subset)");
}

}  // namespace

extern "C" {

int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return unsupported("MPI_Ssend");
}
int MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return unsupported("MPI_Bsend");
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return unsupported("MPI_Rsend");
}
int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return unsupported("MPI_Issend");
}
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  return unsupported("MPI_Sendrecv_replace");
}
int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return unsupported("MPI_Waitany");
}
int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return unsupported("MPI_Waitsome");
}
int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return unsupported("MPI_Testall");
}
int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return unsupported("MPI_Testany");
}
int MPI_Request_free(MPI_Request* request) { return unsupported("MPI_Request_free"); }
int MPI_Cancel(MPI_Request* request) { return unsupported("MPI_Cancel"); }
int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return unsupported("MPI_Send_init");
}
int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return unsupported("MPI_Recv_init");
}
int MPI_Start(MPI_Request* request) { return unsupported("MPI_Start"); }
int MPI_Startall(int count, MPI_Request requests[]) { return unsupported("MPI_Startall"); }
int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return unsupported("MPI_Gatherv");
}
int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return unsupported("MPI_Scatterv");
}
int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return unsupported("MPI_Allgatherv");
}
int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return unsupported("MPI_Alltoallv");
}
int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm) {
  return unsupported("MPI_Reduce_scatter");
}
int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return unsupported("MPI_Scan");
}
int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return unsupported("MPI_Exscan");
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) { return unsupported("MPI_Ibarrier"); }
int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  return unsupported("MPI_Ibcast");
}
int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  return unsupported("MPI_Iallreduce");
}
int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return unsupported("MPI_Type_contiguous");
}
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return unsupported("MPI_Type_vector");
}
int MPI_Type_indexed(int count, const int blocklengths[], const int displacements[], MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  return unsupported("MPI_Type_indexed");
}
int MPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displacements[],
                           const MPI_Datatype types[], MPI_Datatype* newtype) {
  return unsupported("MPI_Type_create_struct");
}
int MPI_Type_commit(MPI_Datatype* datatype) { return unsupported("MPI_Type_commit"); }
int MPI_Type_free(MPI_Datatype* datatype) { return unsupported("MPI_Type_free"); }
int MPI_Op_create(void (*function)(void*, void*, int*, MPI_Datatype*), int commute, MPI_Op* op) {
  return unsupported("MPI_Op_create");
}
int MPI_Op_free(MPI_Op* op) { return unsupported("MPI_Op_free"); }
int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) { return unsupported("MPI_Comm_group"); }
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) { return unsupported("MPI_Comm_create"); }
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return unsupported("MPI_Group_incl");
}
int MPI_Group_free(MPI_Group* group) { return unsupported("MPI_Group_free"); }
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* comm_cart) {
  return unsupported("MPI_Cart_create");
}
int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) { return unsupported("MPI_Cart_coords"); }
int MPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) { return unsupported("MPI_Cart_rank"); }
int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  return unsupported("MPI_Cart_shift");
}
int MPI_Dims_create(int nnodes, int ndims, int dims[]) { return unsupported("MPI_Dims_create"); }
int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
             MPI_Comm comm) {
  return unsupported("MPI_Pack");
}
int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
               MPI_Comm comm) {
  return unsupported("MPI_Unpack");
}
int MPI_Buffer_attach(void* buffer, int size) { return unsupported("MPI_Buffer_attach"); }
int MPI_Buffer_detach(void* buffer_addr, int* size) { return unsupported("MPI_Buffer_detach"); }
int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, int* win) {
  return unsupported("MPI_Win_create");
}
int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, int win) {
  return unsupported("MPI_Put");
}
int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, int win) {
  return unsupported("MPI_Get");
}
int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, int* fh) {
  return unsupported("MPI_File_open");
}

}  // extern "C"
