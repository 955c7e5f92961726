// Datatypes of the simulated MPI: the predefined ones (C and Fortran) and
// derived ones (contiguous, vector, indexed, struct, subarray, resized, ...)
// as a list of contiguous byte runs. A message carries the packed bytes of
// its data (count x size), so derived datatypes set the message sizes the
// engine simulates; receivers unpack into their own layout. Reductions work
// on packed data of one predefined element type, or call a user-defined
// operator on the unpacked layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "mpi.h"
#include "shared_memory.h"

namespace poems::direct::detail {

struct Block {
  std::int64_t disp = 0;  // bytes from the buffer's start
  std::uint64_t len = 0;  // bytes
};

struct TypeInfo {
  bool used = false, committed = false, predefined = false;
  std::uint64_t size = 0;       // bytes of data in one item (the packed size)
  std::int64_t lb = 0, ub = 0;  // extent = ub - lb
  std::int64_t true_lb = 0, true_ub = 0;
  bool lb_marked = false, ub_marked = false;  // MPI_LB / MPI_UB in its typemap (MPI-1)
  std::uint32_t align = 1;                    // of its widest element (pads struct extents)
  svector<Block> blocks;                      // the data runs of one item, adjacent runs merged
  MPI_Datatype element = MPI_DATATYPE_NULL;   // the predefined type of all its data, or NULL (mixed)
  std::uint64_t elements = 0;                 // items of `element` in one item
  // Its basic elements in order as runs of (bytes each, how many): MPI_Get_elements.
  svector<std::pair<std::uint32_t, std::uint64_t>> basic_runs;
  int combiner = MPI_COMBINER_NAMED;
  svector<int> ints;  // MPI_Type_get_contents
  svector<MPI_Aint> aints;
  svector<MPI_Datatype> types;
  sstring name;
  std::int64_t extent() const { return ub - lb; }
  // One run starting at 0 whose length is the extent: count items are count x size bytes.
  bool contiguous() const {
    return blocks.size() == 1 && blocks[0].disp == 0 && static_cast<std::int64_t>(blocks[0].len) == extent();
  }
};

// The predefined types: size (0 for MPI_LB/MPI_UB), name, alignment.
inline constexpr MPI_Datatype kLastPredefined = 70;
bool is_predefined(MPI_Datatype type);
std::size_t predefined_size(MPI_Datatype type);
const char* predefined_name(MPI_Datatype type);
TypeInfo predefined_info(MPI_Datatype type);

// Reductions on `count` elements of a predefined type.
const char* op_name(MPI_Op op);
bool predefined_op(MPI_Op op);
bool op_applies(MPI_Op op, MPI_Datatype element);
// acc[i] = acc[i] op in[i]; op_applies(op, element) must hold.
void reduce_into(MPI_Op op, MPI_Datatype element, void* acc, const void* in, std::size_t count);

// The basic elements `bytes` packed bytes of `t` hold, or -1 if they end inside one.
std::int64_t basic_elements(const TypeInfo& t, std::uint64_t bytes);

// Packing: `count` items of `t` at `buf` to/from consecutive bytes.
void pack(const TypeInfo& t, const void* buf, std::uint64_t count, std::byte* out);
// Unpacks `bytes` bytes (at most count x size) into `count` items at `buf`.
void unpack(const TypeInfo& t, const std::byte* in, std::uint64_t bytes, void* buf, std::uint64_t count);
// The same for a layout given by its runs, extent and size.
void unpack_runs(std::span<const Block> blocks, std::int64_t extent, std::uint64_t size, const std::byte* in,
                 std::uint64_t bytes, void* buf, std::uint64_t count);

// Constructors (MPI 3.1 section 4.1); `old` must be valid. Each returns the new type, uncommitted.
TypeInfo make_contiguous(std::int64_t count, const TypeInfo& old);
TypeInfo make_hvector(std::int64_t count, std::int64_t blocklength, std::int64_t stride_bytes, const TypeInfo& old);
// Blocks of `old` at byte displacements.
TypeInfo make_hindexed(std::int64_t count, const std::int64_t* blocklengths, const std::int64_t* displacements,
                       const TypeInfo& old);
TypeInfo make_struct(std::int64_t count, const std::int64_t* blocklengths, const std::int64_t* displacements,
                     const TypeInfo* const* types);
TypeInfo make_resized(const TypeInfo& old, std::int64_t lb, std::int64_t extent);
// An error message, or empty on success.
std::string make_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts, int order,
                          const TypeInfo& old, TypeInfo& out);

}  // namespace poems::direct::detail
