// Fortran bindings whose arguments follow no rule of the generator
// (bindings/generate.py): MPI_INIT without argc/argv, the functions
// MPI_WTIME and MPI_AINT_ADD, attributes (Fortran keeps values, C pointers),
// keyvals and operators with Fortran procedures, and the common blocks that
// hold mpif.h's sentinels.
#include <algorithm>
#include <cstring>
#include <vector>

#include "api.h"
#include "attributes.h"
#include "fortran.h"

extern "C" {

__attribute__((visibility("default"))) MPI_Fint poems_mpi_bottom_ = 0;
__attribute__((visibility("default"))) MPI_Fint poems_mpi_in_place_ = 0;
__attribute__((visibility("default"))) MPI_Fint poems_mpi_status_ignore_[6] = {};
__attribute__((visibility("default"))) MPI_Fint poems_mpi_statuses_ignore_[6] = {};
__attribute__((visibility("default"))) MPI_Fint poems_mpi_errcodes_ignore_[1] = {};
__attribute__((visibility("default"))) MPI_Fint poems_mpi_unweighted_[1] = {};
__attribute__((visibility("default"))) MPI_Fint poems_mpi_weights_empty_[1] = {};
__attribute__((visibility("default"))) char poems_mpi_argv_null_[1] = {};
__attribute__((visibility("default"))) char poems_mpi_argvs_null_[1] = {};

#define POEMS_F(name) __attribute__((visibility("default"))) void name

POEMS_F(mpi_init_)(MPI_Fint* ierror) { *ierror = MPI_Init(nullptr, nullptr); }
POEMS_F(pmpi_init_)(MPI_Fint* ierror) { *ierror = MPI_Init(nullptr, nullptr); }
POEMS_F(mpi_init_thread_)(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  *ierror = MPI_Init_thread(nullptr, nullptr, *required, provided);
}
POEMS_F(pmpi_init_thread_)(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  *ierror = MPI_Init_thread(nullptr, nullptr, *required, provided);
}
__attribute__((visibility("default"))) double mpi_wtime_() { return MPI_Wtime(); }
__attribute__((visibility("default"))) double pmpi_wtime_() { return MPI_Wtime(); }
__attribute__((visibility("default"))) double mpi_wtick_() { return MPI_Wtick(); }
__attribute__((visibility("default"))) double pmpi_wtick_() { return MPI_Wtick(); }
__attribute__((visibility("default"))) MPI_Aint mpi_aint_add_(const MPI_Aint* base, const MPI_Aint* disp) {
  return *base + *disp;
}
__attribute__((visibility("default"))) MPI_Aint mpi_aint_diff_(const MPI_Aint* a, const MPI_Aint* b) { return *a - *b; }
POEMS_F(mpi_pcontrol_)(const MPI_Fint*, MPI_Fint* ierror) { *ierror = MPI_SUCCESS; }

// ---- attributes: Fortran reads and writes values ---------------------------------------------

// The predefined communicator attributes are integers (C: pointers to them).
static bool predefined_int_attribute(int keyval) { return keyval >= MPI_TAG_UB && keyval <= MPI_APPNUM; }

POEMS_F(mpi_comm_get_attr_)
(const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag, MPI_Fint* ierror) {
  void* p = nullptr;
  *ierror = MPI_Comm_get_attr(*comm, *keyval, &p, flag);
  if (*ierror == MPI_SUCCESS && *flag)
    *value = predefined_int_attribute(*keyval) ? *static_cast<int*>(p) : reinterpret_cast<MPI_Aint>(p);
}
POEMS_F(mpi_comm_set_attr_)(const MPI_Fint* comm, const MPI_Fint* keyval, const MPI_Aint* value, MPI_Fint* ierror) {
  *ierror = MPI_Comm_set_attr(*comm, *keyval, reinterpret_cast<void*>(*value));
}
// MPI-1: default INTEGER values.
POEMS_F(mpi_attr_get_)
(const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Fint* value, MPI_Fint* flag, MPI_Fint* ierror) {
  void* p = nullptr;
  *ierror = MPI_Comm_get_attr(*comm, *keyval, &p, flag);
  if (*ierror == MPI_SUCCESS && *flag)
    *value = predefined_int_attribute(*keyval) ? *static_cast<int*>(p)
                                               : static_cast<MPI_Fint>(reinterpret_cast<MPI_Aint>(p));
}
POEMS_F(mpi_attr_put_)(const MPI_Fint* comm, const MPI_Fint* keyval, const MPI_Fint* value, MPI_Fint* ierror) {
  *ierror = MPI_Comm_set_attr(*comm, *keyval, reinterpret_cast<void*>(static_cast<MPI_Aint>(*value)));
}
POEMS_F(mpi_type_get_attr_)
(const MPI_Fint* type, const MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag, MPI_Fint* ierror) {
  void* p = nullptr;
  *ierror = MPI_Type_get_attr(*type, *keyval, &p, flag);
  if (*ierror == MPI_SUCCESS && *flag) *value = reinterpret_cast<MPI_Aint>(p);
}
POEMS_F(mpi_type_set_attr_)(const MPI_Fint* type, const MPI_Fint* keyval, const MPI_Aint* value, MPI_Fint* ierror) {
  *ierror = MPI_Type_set_attr(*type, *keyval, reinterpret_cast<void*>(*value));
}
POEMS_F(mpi_win_get_attr_)
(const MPI_Fint* win, const MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag, MPI_Fint* ierror) {
  void* p = nullptr;
  *ierror = MPI_Win_get_attr(*win, *keyval, &p, flag);
  if (*ierror != MPI_SUCCESS || !*flag) return;
  // The window's base is an address; its size, displacement unit, flavor and model are integers.
  if (*keyval == MPI_WIN_BASE)
    *value = reinterpret_cast<MPI_Aint>(p);
  else if (*keyval == MPI_WIN_SIZE)
    *value = *static_cast<MPI_Aint*>(p);
  else if (*keyval == MPI_WIN_DISP_UNIT || *keyval == MPI_WIN_CREATE_FLAVOR || *keyval == MPI_WIN_MODEL)
    *value = *static_cast<int*>(p);
  else
    *value = reinterpret_cast<MPI_Aint>(p);
}
POEMS_F(mpi_win_set_attr_)(const MPI_Fint* win, const MPI_Fint* keyval, const MPI_Aint* value, MPI_Fint* ierror) {
  *ierror = MPI_Win_set_attr(*win, *keyval, reinterpret_cast<void*>(*value));
}

void mpi_comm_null_copy_fn_(void*, void*, void*, void*, void*, MPI_Fint* flag, MPI_Fint* ierror);
void mpi_comm_dup_fn_(void*, void*, void*, MPI_Aint* in, MPI_Aint* out, MPI_Fint* flag, MPI_Fint* ierror);

}  // extern "C"

// Fortran keyvals: their callbacks are called with Fortran's conventions
// (all by reference, values as integers).
using poems::direct::detail::create_keyval;

extern "C" {

POEMS_F(mpi_comm_create_keyval_)(void* copy, void* del, MPI_Fint* keyval, const MPI_Aint* extra, MPI_Fint* ierror) {
  *ierror = create_keyval("MPI_Comm_create_keyval", copy, del, keyval, reinterpret_cast<void*>(*extra), true);
}
POEMS_F(mpi_type_create_keyval_)(void* copy, void* del, MPI_Fint* keyval, const MPI_Aint* extra, MPI_Fint* ierror) {
  *ierror = create_keyval("MPI_Type_create_keyval", copy, del, keyval, reinterpret_cast<void*>(*extra), true);
}
POEMS_F(mpi_win_create_keyval_)(void* copy, void* del, MPI_Fint* keyval, const MPI_Aint* extra, MPI_Fint* ierror) {
  *ierror = create_keyval("MPI_Win_create_keyval", copy, del, keyval, reinterpret_cast<void*>(*extra), true);
}
POEMS_F(mpi_keyval_create_)(void* copy, void* del, MPI_Fint* keyval, const MPI_Fint* extra, MPI_Fint* ierror) {
  *ierror = create_keyval("MPI_Keyval_create", copy, del, keyval,
                          reinterpret_cast<void*>(static_cast<MPI_Aint>(*extra)), true);
}

// The predefined callbacks as Fortran procedures (EXTERNAL in mpif.h).
POEMS_F(mpi_comm_null_copy_fn_)(void*, void*, void*, void*, void*, MPI_Fint* flag, MPI_Fint* ierror) {
  *flag = 0;
  *ierror = MPI_SUCCESS;
}
POEMS_F(mpi_comm_dup_fn_)(void*, void*, void*, MPI_Aint* in, MPI_Aint* out, MPI_Fint* flag, MPI_Fint* ierror) {
  *out = *in;
  *flag = 1;
  *ierror = MPI_SUCCESS;
}
POEMS_F(mpi_comm_null_delete_fn_)(void*, void*, void*, void*, MPI_Fint* ierror) { *ierror = MPI_SUCCESS; }
POEMS_F(mpi_null_copy_fn_)(void* a, void* b, void* c, void* d, void* e, MPI_Fint* flag, MPI_Fint* ierror) {
  mpi_comm_null_copy_fn_(a, b, c, d, e, flag, ierror);
}
POEMS_F(mpi_dup_fn_)(void* a, void* b, void* c, MPI_Fint* in, MPI_Fint* out, MPI_Fint* flag, MPI_Fint* ierror) {
  (void)a, (void)b, (void)c;
  *out = *in;
  *flag = 1;
  *ierror = MPI_SUCCESS;
}
POEMS_F(mpi_null_delete_fn_)(void*, void*, void*, void*, MPI_Fint* ierror) { *ierror = MPI_SUCCESS; }
POEMS_F(mpi_type_null_copy_fn_)(void* a, void* b, void* c, void* d, void* e, MPI_Fint* flag, MPI_Fint* ierror) {
  mpi_comm_null_copy_fn_(a, b, c, d, e, flag, ierror);
}
POEMS_F(mpi_type_dup_fn_)(void* a, void* b, void* c, MPI_Aint* in, MPI_Aint* out, MPI_Fint* flag, MPI_Fint* ierror) {
  mpi_comm_dup_fn_(a, b, c, in, out, flag, ierror);
}
POEMS_F(mpi_type_null_delete_fn_)(void*, void*, void*, void*, MPI_Fint* ierror) { *ierror = MPI_SUCCESS; }
POEMS_F(mpi_win_null_copy_fn_)(void* a, void* b, void* c, void* d, void* e, MPI_Fint* flag, MPI_Fint* ierror) {
  mpi_comm_null_copy_fn_(a, b, c, d, e, flag, ierror);
}
POEMS_F(mpi_win_dup_fn_)(void* a, void* b, void* c, MPI_Aint* in, MPI_Aint* out, MPI_Fint* flag, MPI_Fint* ierror) {
  mpi_comm_dup_fn_(a, b, c, in, out, flag, ierror);
}
POEMS_F(mpi_win_null_delete_fn_)(void*, void*, void*, void*, MPI_Fint* ierror) { *ierror = MPI_SUCCESS; }

// User-defined operators: a Fortran procedure (invec, inoutvec, len, type) takes the C arguments as they are.
POEMS_F(mpi_op_create_)(void* function, const MPI_Fint* commute, MPI_Fint* op, MPI_Fint* ierror) {
  *ierror = MPI_Op_create(reinterpret_cast<MPI_User_function*>(function), *commute, op);
}
POEMS_F(pmpi_op_create_)(void* function, const MPI_Fint* commute, MPI_Fint* op, MPI_Fint* ierror) {
  mpi_op_create_(function, commute, op, ierror);
}

// Error handlers: kept, errors still stop the run (docs/direct.md).
POEMS_F(mpi_comm_create_errhandler_)(void* function, MPI_Fint* errhandler, MPI_Fint* ierror) {
  *ierror = MPI_Comm_create_errhandler(reinterpret_cast<MPI_Comm_errhandler_function*>(function), errhandler);
}
POEMS_F(mpi_errhandler_create_)(void* function, MPI_Fint* errhandler, MPI_Fint* ierror) {
  *ierror = MPI_Errhandler_create(reinterpret_cast<MPI_Handler_function*>(function), errhandler);
}
POEMS_F(mpi_win_create_errhandler_)(void* function, MPI_Fint* errhandler, MPI_Fint* ierror) {
  *ierror = MPI_Win_create_errhandler(reinterpret_cast<MPI_Win_errhandler_function*>(function), errhandler);
}
POEMS_F(mpi_file_create_errhandler_)(void* function, MPI_Fint* errhandler, MPI_Fint* ierror) {
  *ierror = MPI_File_create_errhandler(reinterpret_cast<MPI_File_errhandler_function*>(function), errhandler);
}

}  // extern "C"

// MPI-1's Fortran bindings: addresses, extents and displacements are default INTEGERs.
extern "C" {

POEMS_F(mpi_address_)(void* location, MPI_Fint* address, MPI_Fint* ierror) {
  MPI_Aint a = 0;
  *ierror = MPI_Get_address(poems_fbuf(location), &a);
  *address = static_cast<MPI_Fint>(a);
}
POEMS_F(mpi_type_extent_)(const MPI_Fint* type, MPI_Fint* extent, MPI_Fint* ierror) {
  MPI_Aint e = 0;
  *ierror = MPI_Type_extent(*type, &e);
  *extent = static_cast<MPI_Fint>(e);
}
POEMS_F(mpi_type_lb_)(const MPI_Fint* type, MPI_Fint* lb, MPI_Fint* ierror) {
  MPI_Aint v = 0;
  *ierror = MPI_Type_lb(*type, &v);
  *lb = static_cast<MPI_Fint>(v);
}
POEMS_F(mpi_type_ub_)(const MPI_Fint* type, MPI_Fint* ub, MPI_Fint* ierror) {
  MPI_Aint v = 0;
  *ierror = MPI_Type_ub(*type, &v);
  *ub = static_cast<MPI_Fint>(v);
}
POEMS_F(mpi_type_hvector_)
(const MPI_Fint* count, const MPI_Fint* blocklength, const MPI_Fint* stride, const MPI_Fint* oldtype, MPI_Fint* newtype,
 MPI_Fint* ierror) {
  *ierror = MPI_Type_create_hvector(*count, *blocklength, *stride, *oldtype, newtype);
}
POEMS_F(mpi_type_hindexed_)
(const MPI_Fint* count, MPI_Fint* blocklengths, const MPI_Fint* displacements, const MPI_Fint* oldtype,
 MPI_Fint* newtype, MPI_Fint* ierror) {
  std::vector<MPI_Aint> d(displacements, displacements + std::max(*count, 0));
  *ierror = MPI_Type_create_hindexed(*count, blocklengths, d.data(), *oldtype, newtype);
}
POEMS_F(mpi_type_struct_)
(const MPI_Fint* count, MPI_Fint* blocklengths, const MPI_Fint* displacements, MPI_Fint* types, MPI_Fint* newtype,
 MPI_Fint* ierror) {
  std::vector<MPI_Aint> d(displacements, displacements + std::max(*count, 0));
  *ierror = MPI_Type_create_struct(*count, blocklengths, d.data(), types, newtype);
}

}  // extern "C"
