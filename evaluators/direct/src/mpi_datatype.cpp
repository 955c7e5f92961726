// Derived datatypes and packing (MPI 3.1 chapter 4).
#include <algorithm>
#include <cstring>
#include <vector>

#include "api.h"
#include "attributes.h"

namespace poems::direct::detail {

namespace {

// Runs `make(rt)` building a type from checked arguments and returns its new handle.
template <typename Make>
int new_type(const char* call, MPI_Datatype* newtype, Make&& make) {
  return mpi_call(
      call,
      [&](Runtime& rt) {
        TypeInfo t = make(rt);
        *newtype = rt.objects().add_type(std::move(t));
        return MPI_SUCCESS;
      },
      false);
}

std::vector<std::int64_t> widen(const int* v, int n) { return std::vector<std::int64_t>(v, v + n); }
std::vector<std::int64_t> widen(const MPI_Aint* v, int n) { return std::vector<std::int64_t>(v, v + n); }

void record(TypeInfo& t, int combiner, std::initializer_list<int> ints, std::vector<MPI_Aint> aints,
            std::vector<MPI_Datatype> types) {
  t.combiner = combiner;
  t.ints.assign(ints.begin(), ints.end());
  t.aints.assign(aints.begin(), aints.end());
  t.types.assign(types.begin(), types.end());
}

}  // namespace

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

extern "C" {

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return new_type("MPI_Type_contiguous", newtype, [&](Runtime& rt) {
    check_count(rt, "MPI_Type_contiguous", count);
    TypeInfo t = make_contiguous(count, check_type_handle(rt, "MPI_Type_contiguous", oldtype));
    record(t, MPI_COMBINER_CONTIGUOUS, {count}, {}, {oldtype});
    return t;
  });
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return new_type("MPI_Type_vector", newtype, [&](Runtime& rt) {
    check_count(rt, "MPI_Type_vector", count);
    check_count(rt, "MPI_Type_vector", blocklength);
    const TypeInfo& old = check_type_handle(rt, "MPI_Type_vector", oldtype);
    TypeInfo t = make_hvector(count, blocklength, static_cast<std::int64_t>(stride) * old.extent(), old);
    record(t, MPI_COMBINER_VECTOR, {count, blocklength, stride}, {}, {oldtype});
    return t;
  });
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return new_type("MPI_Type_create_hvector", newtype, [&](Runtime& rt) {
    check_count(rt, "MPI_Type_create_hvector", count);
    check_count(rt, "MPI_Type_create_hvector", blocklength);
    TypeInfo t = make_hvector(count, blocklength, stride, check_type_handle(rt, "MPI_Type_create_hvector", oldtype));
    record(t, MPI_COMBINER_HVECTOR, {count, blocklength}, {stride}, {oldtype});
    return t;
  });
}
int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return MPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

int MPI_Type_indexed(int count, const int blocklengths[], const int displacements[], MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  return new_type("MPI_Type_indexed", newtype, [&](Runtime& rt) {
    check_count(rt, "MPI_Type_indexed", count);
    const TypeInfo& old = check_type_handle(rt, "MPI_Type_indexed", oldtype);
    std::vector<std::int64_t> disp = widen(displacements, count);
    for (std::int64_t& d : disp) d *= old.extent();
    TypeInfo t = make_hindexed(count, widen(blocklengths, count).data(), disp.data(), old);
    record(t, MPI_COMBINER_INDEXED, {count}, {}, {oldtype});
    t.ints.insert(t.ints.end(), blocklengths, blocklengths + count);
    t.ints.insert(t.ints.end(), displacements, displacements + count);
    return t;
  });
}

int MPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displacements[], MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  return new_type("MPI_Type_create_hindexed", newtype, [&](Runtime& rt) {
    check_count(rt, "MPI_Type_create_hindexed", count);
    TypeInfo t = make_hindexed(count, widen(blocklengths, count).data(), widen(displacements, count).data(),
                               check_type_handle(rt, "MPI_Type_create_hindexed", oldtype));
    record(t, MPI_COMBINER_HINDEXED, {count}, std::vector<MPI_Aint>(displacements, displacements + count), {oldtype});
    t.ints.insert(t.ints.end(), blocklengths, blocklengths + count);
    return t;
  });
}
int MPI_Type_hindexed(int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
  return MPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype);
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype* newtype) {
  return new_type("MPI_Type_create_indexed_block", newtype, [&](Runtime& rt) {
    check_count(rt, "MPI_Type_create_indexed_block", count);
    const TypeInfo& old = check_type_handle(rt, "MPI_Type_create_indexed_block", oldtype);
    std::vector<std::int64_t> disp = widen(displacements, count);
    for (std::int64_t& d : disp) d *= old.extent();
    const std::vector<std::int64_t> lengths(static_cast<std::size_t>(count), blocklength);
    TypeInfo t = make_hindexed(count, lengths.data(), disp.data(), old);
    record(t, MPI_COMBINER_INDEXED_BLOCK, {count, blocklength}, {}, {oldtype});
    t.ints.insert(t.ints.end(), displacements, displacements + count);
    return t;
  });
}

int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype) {
  return new_type("MPI_Type_create_hindexed_block", newtype, [&](Runtime& rt) {
    check_count(rt, "MPI_Type_create_hindexed_block", count);
    const std::vector<std::int64_t> lengths(static_cast<std::size_t>(count), blocklength);
    TypeInfo t = make_hindexed(count, lengths.data(), widen(displacements, count).data(),
                               check_type_handle(rt, "MPI_Type_create_hindexed_block", oldtype));
    record(t, MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength},
           std::vector<MPI_Aint>(displacements, displacements + count), {oldtype});
    return t;
  });
}

int MPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displacements[],
                           const MPI_Datatype types[], MPI_Datatype* newtype) {
  return new_type("MPI_Type_create_struct", newtype, [&](Runtime& rt) {
    check_count(rt, "MPI_Type_create_struct", count);
    std::vector<TypeInfo> copies;  // the table may move while we hold pointers: copy
    copies.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) copies.push_back(check_type_handle(rt, "MPI_Type_create_struct", types[i]));
    std::vector<const TypeInfo*> ptrs;
    for (const TypeInfo& c : copies) ptrs.push_back(&c);
    TypeInfo t = make_struct(count, widen(blocklengths, count).data(), widen(displacements, count).data(), ptrs.data());
    record(t, MPI_COMBINER_STRUCT, {count}, std::vector<MPI_Aint>(displacements, displacements + count),
           std::vector<MPI_Datatype>(types, types + count));
    t.ints.insert(t.ints.end(), blocklengths, blocklengths + count);
    return t;
  });
}
int MPI_Type_struct(int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype types[],
                    MPI_Datatype* newtype) {
  return MPI_Type_create_struct(count, blocklengths, displacements, types, newtype);
}

int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                             MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return new_type("MPI_Type_create_subarray", newtype, [&](Runtime& rt) {
    TypeInfo t;
    const std::string error = make_subarray(ndims, sizes, subsizes, starts, order,
                                            check_type_handle(rt, "MPI_Type_create_subarray", oldtype), t);
    if (!error.empty()) rt.fail("MPI_Type_create_subarray", error + " (MPI_ERR_ARG)");
    record(t, MPI_COMBINER_SUBARRAY, {ndims}, {}, {oldtype});
    t.ints.insert(t.ints.end(), sizes, sizes + ndims);
    t.ints.insert(t.ints.end(), subsizes, subsizes + ndims);
    t.ints.insert(t.ints.end(), starts, starts + ndims);
    t.ints.push_back(order);
    return t;
  });
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
  return new_type("MPI_Type_create_resized", newtype, [&](Runtime& rt) {
    TypeInfo t = make_resized(check_type_handle(rt, "MPI_Type_create_resized", oldtype), lb, extent);
    record(t, MPI_COMBINER_RESIZED, {}, {lb, extent}, {oldtype});
    return t;
  });
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const int rc = new_type("MPI_Type_dup", newtype, [&](Runtime& rt) {
    TypeInfo t = check_type_handle(rt, "MPI_Type_dup", oldtype);
    t.predefined = false;
    t.name.clear();
    record(t, MPI_COMBINER_DUP, {}, {}, {oldtype});
    return t;
  });
  if (rc == MPI_SUCCESS)
    mpi_call(
        "MPI_Type_dup",
        [&](Runtime& rt) {
          copy_attributes(rt, ObjectTables::kTypeAttr, oldtype, *newtype);
          return MPI_SUCCESS;
        },
        false);
  return rc;
}

int MPI_Type_commit(MPI_Datatype* datatype) {
  return mpi_call(
      "MPI_Type_commit",
      [&](Runtime& rt) {
        check_type_handle(rt, "MPI_Type_commit", *datatype).committed = true;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Type_free(MPI_Datatype* datatype) {
  return mpi_call(
      "MPI_Type_free",
      [&](Runtime& rt) {
        const TypeInfo& t = check_type_handle(rt, "MPI_Type_free", *datatype);
        if (t.predefined) rt.fail("MPI_Type_free", "a predefined datatype cannot be freed (MPI_ERR_TYPE)");
        delete_attributes(rt, ObjectTables::kTypeAttr, *datatype);
        // Messages in flight keep their own copy of the layout (RecvTarget).
        rt.objects().free_type(*datatype);
        *datatype = MPI_DATATYPE_NULL;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Type_size(MPI_Datatype datatype, int* size) {
  if (!(Runtime::active() && Runtime::active()->running())) {  // predefined types work outside a rank too
    if (!is_predefined(datatype)) return MPI_ERR_TYPE;
    *size = static_cast<int>(predefined_size(datatype));
    return MPI_SUCCESS;
  }
  return mpi_call(
      "MPI_Type_size",
      [&](Runtime& rt) {
        *size = static_cast<int>(check_type_handle(rt, "MPI_Type_size", datatype).size);
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  return mpi_call(
      "MPI_Type_size_x",
      [&](Runtime& rt) {
        *size = static_cast<MPI_Count>(check_type_handle(rt, "MPI_Type_size_x", datatype).size);
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  return mpi_call(
      "MPI_Type_get_extent",
      [&](Runtime& rt) {
        const TypeInfo& t = check_type_handle(rt, "MPI_Type_get_extent", datatype);
        *lb = t.lb;
        *extent = t.extent();
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  MPI_Aint l = 0, e = 0;
  const int rc = MPI_Type_get_extent(datatype, &l, &e);
  *lb = l;
  *extent = e;
  return rc;
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  return mpi_call(
      "MPI_Type_get_true_extent",
      [&](Runtime& rt) {
        const TypeInfo& t = check_type_handle(rt, "MPI_Type_get_true_extent", datatype);
        *true_lb = t.true_lb;
        *true_extent = t.true_ub - t.true_lb;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  MPI_Aint l = 0, e = 0;
  const int rc = MPI_Type_get_true_extent(datatype, &l, &e);
  *true_lb = l;
  *true_extent = e;
  return rc;
}

int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  MPI_Aint lb = 0;
  return MPI_Type_get_extent(datatype, &lb, extent);
}

int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  MPI_Aint extent = 0;
  return MPI_Type_get_extent(datatype, displacement, &extent);
}

int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  MPI_Aint lb = 0, extent = 0;
  const int rc = MPI_Type_get_extent(datatype, &lb, &extent);
  *displacement = lb + extent;
  return rc;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char* name) {
  return mpi_call(
      "MPI_Type_set_name",
      [&](Runtime& rt) {
        check_type_handle(rt, "MPI_Type_set_name", datatype).name = sstring(name).substr(0, MPI_MAX_OBJECT_NAME - 1);
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Type_get_name(MPI_Datatype datatype, char* name, int* resultlen) {
  return mpi_call(
      "MPI_Type_get_name",
      [&](Runtime& rt) {
        *resultlen = std::snprintf(name, MPI_MAX_OBJECT_NAME, "%s",
                                   check_type_handle(rt, "MPI_Type_get_name", datatype).name.c_str());
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes,
                          int* combiner) {
  return mpi_call(
      "MPI_Type_get_envelope",
      [&](Runtime& rt) {
        const TypeInfo& t = check_type_handle(rt, "MPI_Type_get_envelope", datatype);
        *combiner = t.predefined ? MPI_COMBINER_NAMED : t.combiner;
        *num_integers = t.predefined ? 0 : static_cast<int>(t.ints.size());
        *num_addresses = t.predefined ? 0 : static_cast<int>(t.aints.size());
        *num_datatypes = t.predefined ? 0 : static_cast<int>(t.types.size());
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                          int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
  return mpi_call(
      "MPI_Type_get_contents",
      [&](Runtime& rt) {
        const TypeInfo& t = check_type_handle(rt, "MPI_Type_get_contents", datatype);
        if (t.predefined) rt.fail("MPI_Type_get_contents", "a predefined datatype has no contents (MPI_ERR_TYPE)");
        std::copy_n(t.ints.begin(), std::min<std::size_t>(t.ints.size(), static_cast<std::size_t>(max_integers)),
                    array_of_integers);
        std::copy_n(t.aints.begin(), std::min<std::size_t>(t.aints.size(), static_cast<std::size_t>(max_addresses)),
                    array_of_addresses);
        std::copy_n(t.types.begin(), std::min<std::size_t>(t.types.size(), static_cast<std::size_t>(max_datatypes)),
                    array_of_datatypes);
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  *datatype = MPI_DATATYPE_NULL;
  if (typeclass == MPI_TYPECLASS_INTEGER)
    *datatype = size == 1   ? MPI_INTEGER1
                : size == 2 ? MPI_INTEGER2
                : size == 4 ? MPI_INTEGER4
                : size == 8 ? MPI_INTEGER8
                            : 0;
  else if (typeclass == MPI_TYPECLASS_REAL)
    *datatype = size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8 : size == 16 ? MPI_REAL16 : 0;
  else if (typeclass == MPI_TYPECLASS_COMPLEX)
    *datatype = size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16 : 0;
  return *datatype == MPI_DATATYPE_NULL ? MPI_ERR_ARG : MPI_SUCCESS;
}

// Fortran's selected kinds (MPI 3.1 17.1.9): the predefined type of the
// precision and range asked for, as far as the basic types reach.
int MPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  *newtype = r <= 2 ? MPI_INTEGER1 : r <= 4 ? MPI_INTEGER2 : r <= 9 ? MPI_INTEGER4 : r <= 18 ? MPI_INTEGER8 : 0;
  return *newtype == MPI_DATATYPE_NULL ? MPI_ERR_ARG : MPI_SUCCESS;
}
int MPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  const bool single = (p == MPI_UNDEFINED || p <= 6) && (r == MPI_UNDEFINED || r <= 37);
  const bool dbl = (p == MPI_UNDEFINED || p <= 15) && (r == MPI_UNDEFINED || r <= 307);
  *newtype = single ? MPI_REAL : dbl ? MPI_DOUBLE_PRECISION : MPI_DATATYPE_NULL;
  return *newtype == MPI_DATATYPE_NULL ? MPI_ERR_ARG : MPI_SUCCESS;
}
int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  const int rc = MPI_Type_create_f90_real(p, r, newtype);
  if (rc == MPI_SUCCESS) *newtype = *newtype == MPI_REAL ? MPI_COMPLEX : MPI_DOUBLE_COMPLEX;
  return rc;
}

// ---- packing --------------------------------------------------------------------------------

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  return mpi_call("MPI_Pack_size", [&](Runtime& rt) {
    check_comm(rt, "MPI_Pack_size", comm);
    *size = static_cast<int>(check_bytes(rt, "MPI_Pack_size", incount, datatype));
    return MPI_SUCCESS;
  });
}

int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
             MPI_Comm comm) {
  return mpi_call("MPI_Pack", [&](Runtime& rt) {
    check_comm(rt, "MPI_Pack", comm);
    const std::uint64_t bytes = check_bytes(rt, "MPI_Pack", incount, datatype);
    if (*position < 0 || static_cast<std::uint64_t>(*position) + bytes > static_cast<std::uint64_t>(outsize))
      rt.fail("MPI_Pack", "the data (" + std::to_string(bytes) + " bytes at position " + std::to_string(*position) +
                              ") do not fit the buffer of " + std::to_string(outsize) + " bytes (MPI_ERR_TRUNCATE)");
    pack_into(rt, inbuf, static_cast<std::uint64_t>(incount), datatype, static_cast<std::byte*>(outbuf) + *position);
    *position += static_cast<int>(bytes);
    return MPI_SUCCESS;
  });
}

int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
               MPI_Comm comm) {
  return mpi_call("MPI_Unpack", [&](Runtime& rt) {
    check_comm(rt, "MPI_Unpack", comm);
    const std::uint64_t bytes = check_bytes(rt, "MPI_Unpack", outcount, datatype);
    if (*position < 0 || static_cast<std::uint64_t>(*position) + bytes > static_cast<std::uint64_t>(insize))
      rt.fail("MPI_Unpack", "the buffer of " + std::to_string(insize) + " bytes holds no " + std::to_string(bytes) +
                                " bytes at position " + std::to_string(*position) + " (MPI_ERR_TRUNCATE)");
    unpack_into(rt, static_cast<const std::byte*>(inbuf) + *position, bytes, outbuf,
                static_cast<std::uint64_t>(outcount), datatype);
    *position += static_cast<int>(bytes);
    return MPI_SUCCESS;
  });
}

}  // extern "C"
