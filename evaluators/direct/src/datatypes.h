// The predefined datatypes and reduction operators of the simulated MPI.
#pragma once

#include <cstddef>

#include "mpi.h"

namespace poems::direct::detail {

// Bytes one element occupies in a buffer (for the pair types of
// MPI_MINLOC/MAXLOC, the C struct's size); 0 for an unknown datatype.
std::size_t datatype_size(MPI_Datatype type);
const char* datatype_name(MPI_Datatype type);
const char* op_name(MPI_Op op);
bool valid_op(MPI_Op op);
// Whether `op` applies to `type` (MPI 3.1 section 5.9.2); MPI_MINLOC and
// MPI_MAXLOC need a pair type, the logical and bitwise operators integers.
bool op_applies(MPI_Op op, MPI_Datatype type);
// acc[i] = acc[i] op in[i] for `count` elements; op_applies(op, type) must hold.
void reduce_into(MPI_Op op, MPI_Datatype type, void* acc, const void* in, std::size_t count);

}  // namespace poems::direct::detail
