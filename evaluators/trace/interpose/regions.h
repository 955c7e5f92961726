// The MPI functions `poems trace` records, each an OTF2 region (X-macro:
// name, OTF2 region role). Region ids are the positions in this list on every
// rank, so no unification is needed for them.
#pragma once

#define POEMS_TRACE_REGIONS(X)              \
  X(MPI_Init, FUNCTION)                     \
  X(MPI_Init_thread, FUNCTION)              \
  X(MPI_Finalize, FUNCTION)                 \
  X(MPI_Send, POINT2POINT)                  \
  X(MPI_Ssend, POINT2POINT)                 \
  X(MPI_Bsend, POINT2POINT)                 \
  X(MPI_Rsend, POINT2POINT)                 \
  X(MPI_Isend, POINT2POINT)                 \
  X(MPI_Issend, POINT2POINT)                \
  X(MPI_Ibsend, POINT2POINT)                \
  X(MPI_Irsend, POINT2POINT)                \
  X(MPI_Recv, POINT2POINT)                  \
  X(MPI_Irecv, POINT2POINT)                 \
  X(MPI_Sendrecv, POINT2POINT)              \
  X(MPI_Sendrecv_replace, POINT2POINT)      \
  X(MPI_Probe, POINT2POINT)                 \
  X(MPI_Iprobe, POINT2POINT)                \
  X(MPI_Send_init, POINT2POINT)             \
  X(MPI_Ssend_init, POINT2POINT)            \
  X(MPI_Bsend_init, POINT2POINT)            \
  X(MPI_Rsend_init, POINT2POINT)            \
  X(MPI_Recv_init, POINT2POINT)             \
  X(MPI_Start, POINT2POINT)                 \
  X(MPI_Startall, POINT2POINT)              \
  X(MPI_Wait, POINT2POINT)                  \
  X(MPI_Waitall, POINT2POINT)               \
  X(MPI_Waitany, POINT2POINT)               \
  X(MPI_Waitsome, POINT2POINT)              \
  X(MPI_Test, POINT2POINT)                  \
  X(MPI_Testall, POINT2POINT)               \
  X(MPI_Testany, POINT2POINT)               \
  X(MPI_Testsome, POINT2POINT)              \
  X(MPI_Request_free, POINT2POINT)          \
  X(MPI_Cancel, POINT2POINT)                \
  X(MPI_Barrier, BARRIER)                   \
  X(MPI_Bcast, COLL_ONE2ALL)                \
  X(MPI_Scatter, COLL_ONE2ALL)              \
  X(MPI_Scatterv, COLL_ONE2ALL)             \
  X(MPI_Reduce, COLL_ALL2ONE)               \
  X(MPI_Gather, COLL_ALL2ONE)               \
  X(MPI_Gatherv, COLL_ALL2ONE)              \
  X(MPI_Allreduce, COLL_ALL2ALL)            \
  X(MPI_Allgather, COLL_ALL2ALL)            \
  X(MPI_Allgatherv, COLL_ALL2ALL)           \
  X(MPI_Alltoall, COLL_ALL2ALL)             \
  X(MPI_Alltoallv, COLL_ALL2ALL)            \
  X(MPI_Reduce_scatter, COLL_ALL2ALL)       \
  X(MPI_Reduce_scatter_block, COLL_ALL2ALL) \
  X(MPI_Scan, COLL_OTHER)                   \
  X(MPI_Exscan, COLL_OTHER)                 \
  X(MPI_Comm_dup, COLL_OTHER)               \
  X(MPI_Comm_dup_with_info, COLL_OTHER)     \
  X(MPI_Comm_split, COLL_OTHER)             \
  X(MPI_Comm_split_type, COLL_OTHER)        \
  X(MPI_Comm_create, COLL_OTHER)            \
  X(MPI_Comm_create_group, COLL_OTHER)      \
  X(MPI_Cart_create, COLL_OTHER)            \
  X(MPI_Cart_sub, COLL_OTHER)               \
  X(MPI_Comm_free, FUNCTION)

namespace poems::trace::interpose {

enum class Region : unsigned {
#define POEMS_TRACE_REGION_ID(name, role) name,
  POEMS_TRACE_REGIONS(POEMS_TRACE_REGION_ID)
#undef POEMS_TRACE_REGION_ID
      kCount
};

}  // namespace poems::trace::interpose
