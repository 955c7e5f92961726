/* The simulated MPI of POEMS direct execution (simulation[direct]).
 *
 * An ordinary MPI program compiled against this header (poems-mpicc,
 * poems-mpicxx, poems-mpif90) runs as P ranks, each an OS process with its
 * own globals and C library state: messages are really delivered, MPI calls
 * advance each rank's virtual clock through the POEMS LogGOPS simulator,
 * computation between calls is the host CPU time of the rank (or the
 * processor model), and MPI_Wtime and the C library's clocks return virtual
 * time. See docs/direct.md.
 *
 * Every function of MPI 3.1 is declared (mpi_functions.h); docs/direct.md
 * lists, per chapter of the standard, those that run. Calling any other one
 * stops the run with one line naming it.
 */
#ifndef POEMS_DIRECT_MPI_H
#define POEMS_DIRECT_MPI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define POEMS_DIRECT_MPI 1

/* Handles are integers, the same in C and Fortran (MPI_Xxx_f2c is the identity). */
typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Group;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_File;
typedef int MPI_Message;
typedef int MPI_Fint;
typedef long MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_T_enum;
typedef int MPI_T_cvar_handle;
typedef int MPI_T_pvar_handle;
typedef int MPI_T_pvar_session;

/* Six integers, so a Fortran status (MPI_STATUS_SIZE = 6) is the same memory. */
typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  int poems_count_lo; /* received bytes, low and high 32 bits (MPI_Get_count) */
  int poems_count_hi;
  int poems_cancelled;
} MPI_Status;

typedef void(MPI_User_function)(void* invec, void* inoutvec, int* len, MPI_Datatype* datatype);
typedef int(MPI_Comm_copy_attr_function)(MPI_Comm oldcomm, int comm_keyval, void* extra_state, void* attribute_val_in,
                                         void* attribute_val_out, int* flag);
typedef int(MPI_Comm_delete_attr_function)(MPI_Comm comm, int comm_keyval, void* attribute_val, void* extra_state);
typedef int(MPI_Type_copy_attr_function)(MPI_Datatype oldtype, int type_keyval, void* extra_state,
                                         void* attribute_val_in, void* attribute_val_out, int* flag);
typedef int(MPI_Type_delete_attr_function)(MPI_Datatype datatype, int type_keyval, void* attribute_val,
                                           void* extra_state);
typedef int(MPI_Win_copy_attr_function)(MPI_Win oldwin, int win_keyval, void* extra_state, void* attribute_val_in,
                                        void* attribute_val_out, int* flag);
typedef int(MPI_Win_delete_attr_function)(MPI_Win win, int win_keyval, void* attribute_val, void* extra_state);
typedef int(MPI_Copy_function)(MPI_Comm oldcomm, int keyval, void* extra_state, void* attribute_val_in,
                               void* attribute_val_out, int* flag);
typedef int(MPI_Delete_function)(MPI_Comm comm, int keyval, void* attribute_val, void* extra_state);
typedef void(MPI_Comm_errhandler_function)(MPI_Comm* comm, int* error_code, ...);
typedef void(MPI_File_errhandler_function)(MPI_File* file, int* error_code, ...);
typedef void(MPI_Win_errhandler_function)(MPI_Win* win, int* error_code, ...);
typedef void(MPI_Handler_function)(MPI_Comm* comm, int* error_code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef int(MPI_Grequest_query_function)(void* extra_state, MPI_Status* status);
typedef int(MPI_Grequest_free_function)(void* extra_state);
typedef int(MPI_Grequest_cancel_function)(void* extra_state, int complete);
typedef int(MPI_Datarep_extent_function)(MPI_Datatype datatype, MPI_Aint* extent, void* extra_state);
typedef int(MPI_Datarep_conversion_function)(void* userbuf, MPI_Datatype datatype, int count, void* filebuf,
                                             MPI_Offset position, void* extra_state);

#include "mpi_constants.h"

#define MPI_IN_PLACE ((void*)1)
#define MPI_BOTTOM ((void*)0)
#define MPI_STATUS_IGNORE ((MPI_Status*)0)
#define MPI_STATUSES_IGNORE ((MPI_Status*)0)
#define MPI_ERRCODES_IGNORE ((int*)0)
#define MPI_ARGV_NULL ((char**)0)
#define MPI_ARGVS_NULL ((char***)0)
#define MPI_UNWEIGHTED ((int*)2)
#define MPI_WEIGHTS_EMPTY ((int*)3)
#define MPI_F_STATUS_IGNORE ((MPI_Fint*)0)
#define MPI_F_STATUSES_IGNORE ((MPI_Fint*)0)
#define MPI_F_STATUS_SIZE 6
#define MPI_F_SOURCE 0
#define MPI_F_TAG 1
#define MPI_F_ERROR 2
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function*)0)

/* The predefined attribute callbacks. */
int MPI_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*, int*);
int MPI_DUP_FN(MPI_Comm, int, void*, void*, void*, int*);
int MPI_NULL_DELETE_FN(MPI_Comm, int, void*, void*);
int MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*, int*);
int MPI_COMM_DUP_FN(MPI_Comm, int, void*, void*, void*, int*);
int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void*, void*);
int MPI_TYPE_NULL_COPY_FN(MPI_Datatype, int, void*, void*, void*, int*);
int MPI_TYPE_DUP_FN(MPI_Datatype, int, void*, void*, void*, int*);
int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype, int, void*, void*);
int MPI_WIN_NULL_COPY_FN(MPI_Win, int, void*, void*, void*, int*);
int MPI_WIN_DUP_FN(MPI_Win, int, void*, void*, void*, int*);
int MPI_WIN_NULL_DELETE_FN(MPI_Win, int, void*, void*);

#include "mpi_functions.h"

/* ---- POEMS extensions (memory-reduced mode, paper section 6.1) ----------- */

/* Advance this rank's virtual clock by `ns` nanoseconds of computation, as
 * MPI-Sim's "special simulator function" does: a computation that is not
 * executed (its arrays need not exist) but costs time. */
void POEMS_Advance(double ns);
/* The computation just done (or skipped) was `work` units: under
 * `--compute model` it costs what the processor model says (processor[wg]:
 * work x Wg; the run fails if there is no processor model); under
 * `--compute measured` it costs nothing more, the code's own CPU time counts. */
void POEMS_Compute(double work);
/* 1 when running under POEMS direct execution. */
int POEMS_Direct(void);

#ifdef __cplusplus
}
#endif

#endif /* POEMS_DIRECT_MPI_H */
