// The MpiCollectiveEnd record of each collective, shared by the C and the
// Fortran wrappers (which convert their handles first). Bytes follow
// Score-P's counting, so archives of both tools read alike (docs/trace.md):
// a rank "sends" its block to every member and "receives" one from every
// member, e.g. a bcast root sends N·b and receives b, an allreduce sends and
// receives N·b. MPI_IN_PLACE is counted as if the data were sent (Score-P
// leaves the rank's own block out), so the block size is exact. Arguments
// the standard calls insignificant on a rank (a non-root's receive buffer in
// gather) are not read.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace poems::trace::interpose::collective {

void barrier(MPI_Comm comm);
void bcast(std::int64_t count, MPI_Datatype type, int root, MPI_Comm comm);
void reduce(std::int64_t count, MPI_Datatype type, int root, MPI_Comm comm);
void allreduce(std::int64_t count, MPI_Datatype type, MPI_Comm comm);
void gather(bool in_place, std::int64_t send_count, MPI_Datatype send_type, std::int64_t recv_count,
            MPI_Datatype recv_type, int root, MPI_Comm comm);
void gatherv(bool in_place, std::int64_t send_count, MPI_Datatype send_type, const int* recv_counts,
             MPI_Datatype recv_type, int root, MPI_Comm comm);
void scatter(bool in_place, std::int64_t send_count, MPI_Datatype send_type, std::int64_t recv_count,
             MPI_Datatype recv_type, int root, MPI_Comm comm);
void scatterv(bool in_place, const int* send_counts, MPI_Datatype send_type, std::int64_t recv_count,
              MPI_Datatype recv_type, int root, MPI_Comm comm);
void allgather(bool in_place, std::int64_t send_count, MPI_Datatype send_type, std::int64_t recv_count,
               MPI_Datatype recv_type, MPI_Comm comm);
void allgatherv(bool in_place, std::int64_t send_count, MPI_Datatype send_type, const int* recv_counts,
                MPI_Datatype recv_type, MPI_Comm comm);
void alltoall(bool in_place, std::int64_t send_count, MPI_Datatype send_type, std::int64_t recv_count,
              MPI_Datatype recv_type, MPI_Comm comm);
void alltoallv(bool in_place, const int* send_counts, MPI_Datatype send_type, const int* recv_counts,
               MPI_Datatype recv_type, MPI_Comm comm);
void reduce_scatter(const int* recv_counts, MPI_Datatype type, MPI_Comm comm);
void reduce_scatter_block(std::int64_t recv_count, MPI_Datatype type, MPI_Comm comm);
void scan(bool exclusive, std::int64_t count, MPI_Datatype type, MPI_Comm comm);
// A communicator made from `parent` (MPI_COMM_NULL on the ranks left out).
void created(MPI_Comm parent, MPI_Comm created);

}  // namespace poems::trace::interpose::collective
