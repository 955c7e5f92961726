// The environment (MPI 3.1 chapter 8): initialization, errors, time,
// processor names, memory; handle conversions; the POEMS extensions.
#include <pthread.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api.h"
#include "thread_gate.h"

namespace poems::direct::detail {

namespace {

const char* const kErrorNames[] = {
    "MPI_SUCCESS: no error",
    "MPI_ERR_BUFFER: invalid buffer pointer",
    "MPI_ERR_COUNT: invalid count argument",
    "MPI_ERR_TYPE: invalid datatype",
    "MPI_ERR_TAG: invalid tag",
    "MPI_ERR_COMM: invalid communicator",
    "MPI_ERR_RANK: invalid rank",
    "MPI_ERR_REQUEST: invalid request",
    "MPI_ERR_ROOT: invalid root",
    "MPI_ERR_GROUP: invalid group",
    "MPI_ERR_OP: invalid reduce operation",
    "MPI_ERR_TOPOLOGY: invalid communicator topology",
    "MPI_ERR_DIMS: invalid dimension argument",
    "MPI_ERR_ARG: invalid argument of some other kind",
    "MPI_ERR_UNKNOWN: unknown error",
    "MPI_ERR_TRUNCATE: message truncated",
    "MPI_ERR_OTHER: known error not in this list",
    "MPI_ERR_INTERN: internal error",
};

}  // namespace

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

namespace {
// The thread that called MPI_Init in this process (MPI_Is_thread_main).
pthread_t g_init_thread{};
bool g_init_thread_set = false;
}  // namespace

extern "C" {

int MPI_Init(int*, char***) {
  return mpi_call(
      "MPI_Init",
      [](Runtime& rt) {
        Rank& k = rt.current();
        if (k.initialized) rt.fail("MPI_Init", "MPI is already initialized");
        k.initialized = true;
        g_init_thread = ::pthread_self();
        g_init_thread_set = true;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = MPI_Init(argc, argv);
  Runtime& rt = runtime_for("MPI_Init_thread");
  Rank& k = rt.current();
  // Ranks as processes provide MULTIPLE (their threads take turns at the
  // rank's state through a gate); ranks as threads of one process provide
  // SERIALIZED, and are named if the run deadlocks (a thread may wait for
  // another's call).
  int level = required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED;
  if (required >= MPI_THREAD_MULTIPLE) {
    k.asked_multiple = true;
    if (rt.concurrent()) {
      mpi_call("MPI_Init_thread", [](Runtime& r) -> int {
        r.fail("MPI_Init_thread",
               "MPI_THREAD_MULTIPLE is provided with the ranks on one host core only (this run has --host-cores "
               "above 1: run it with --host-cores 1)");
      });
    } else if (!rt.threads()) {
      grant_multiple(k);
      level = MPI_THREAD_MULTIPLE;
    }
  }
  if (provided) *provided = level;
  return rc;
}

int MPI_Finalize(void) {
  return mpi_call("MPI_Finalize", [](Runtime& rt) {
    rt.issue_compute();  // the computation up to here is the rank's last before MPI_Finalize
    rt.current().finalized = true;
    return MPI_SUCCESS;
  });
}

int MPI_Initialized(int* flag) {
  return mpi_call(
      "MPI_Initialized",
      [&](Runtime& rt) {
        *flag = rt.current().initialized ? 1 : 0;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Finalized(int* flag) {
  return mpi_call(
      "MPI_Finalized",
      [&](Runtime& rt) {
        *flag = rt.current().finalized ? 1 : 0;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Abort(MPI_Comm, int errorcode) {
  return mpi_call(
      "MPI_Abort",
      [&](Runtime& rt) -> int {
        std::fflush(nullptr);  // what the rank printed before it gave up
        rt.abort_run(errorcode);
      },
      false);
}

int MPI_Query_thread(int* provided) {
  *provided = multiple_threads() ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
  return MPI_SUCCESS;
}

int MPI_Is_thread_main(int* flag) {
  // The thread that initialized MPI (ranks as threads: each rank's own).
  *flag = !g_init_thread_set || ::pthread_equal(g_init_thread, ::pthread_self()) ? 1 : 0;
  if (Runtime* rt = Runtime::active(); rt && rt->threads()) *flag = 1;
  return MPI_SUCCESS;
}

// The host's name, as under mpirun on this machine (every rank runs here).
int MPI_Get_processor_name(char* name, int* resultlen) {
  return mpi_call(
      "MPI_Get_processor_name",
      [&](Runtime&) {
        char host[MPI_MAX_PROCESSOR_NAME] = {};
        if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
        *resultlen = std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", host);
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Get_version(int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int MPI_Get_library_version(char* version, int* resultlen) {
  *resultlen =
      std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                    "POEMS direct execution: MPI %d.%d simulated on the LogGOPS engine", MPI_VERSION, MPI_SUBVERSION);
  return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (errorcode >= 0 && static_cast<std::size_t>(errorcode) < sizeof kErrorNames / sizeof *kErrorNames)
    *resultlen = std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", kErrorNames[errorcode]);
  else
    *resultlen = std::snprintf(string, MPI_MAX_ERROR_STRING, "MPI error %d", errorcode);
  return MPI_SUCCESS;
}

int MPI_Error_class(int errorcode, int* errorclass) {
  *errorclass = errorcode >= 0 && errorcode <= MPI_ERR_LASTCODE ? errorcode : MPI_ERR_UNKNOWN;
  return MPI_SUCCESS;
}

int MPI_Add_error_class(int* errorclass) {
  static int next = MPI_ERR_LASTCODE + 1;
  *errorclass = next++;
  return MPI_SUCCESS;
}

int MPI_Add_error_code(int, int* errorcode) { return MPI_Add_error_class(errorcode); }

int MPI_Add_error_string(int, const char*) { return MPI_SUCCESS; }

// Errors stop the run whatever the handler (docs/direct.md): a handler is
// accepted and kept, so programs that install MPI_ERRORS_RETURN run.
namespace {
int set_handler(const char* call, MPI_Errhandler handler) {
  return mpi_call(call, [&](Runtime& rt) {
    if (handler < MPI_ERRORS_ARE_FATAL) rt.fail(call, "the error handler is MPI_ERRHANDLER_NULL (MPI_ERR_ARG)");
    return MPI_SUCCESS;
  });
}
}  // namespace

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  return mpi_call("MPI_Comm_set_errhandler", [&](Runtime& rt) {
    Comm& c = check_comm(rt, "MPI_Comm_set_errhandler", comm);
    if (errhandler < MPI_ERRORS_ARE_FATAL)
      rt.fail("MPI_Comm_set_errhandler", "the error handler is MPI_ERRHANDLER_NULL (MPI_ERR_ARG)");
    c.errhandler = errhandler;
    return MPI_SUCCESS;
  });
}
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return mpi_call("MPI_Comm_get_errhandler", [&](Runtime& rt) {
    *errhandler = check_comm(rt, "MPI_Comm_get_errhandler", comm).errhandler;
    return MPI_SUCCESS;
  });
}
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) { return MPI_Comm_set_errhandler(comm, errhandler); }
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) { return MPI_Comm_get_errhandler(comm, errhandler); }
int MPI_Win_set_errhandler(MPI_Win, MPI_Errhandler errhandler) {
  return set_handler("MPI_Win_set_errhandler", errhandler);
}
int MPI_File_set_errhandler(MPI_File, MPI_Errhandler errhandler) {
  return set_handler("MPI_File_set_errhandler", errhandler);
}
int MPI_Errhandler_free(MPI_Errhandler* errhandler) {
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}
namespace {
int new_handler(MPI_Errhandler* errhandler) {
  static int next = MPI_ERRORS_RETURN + 1;
  *errhandler = next++;
  return MPI_SUCCESS;
}
}  // namespace
int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function*, MPI_Errhandler* errhandler) {
  return new_handler(errhandler);
}
int MPI_Errhandler_create(MPI_Handler_function*, MPI_Errhandler* errhandler) { return new_handler(errhandler); }
int MPI_Win_create_errhandler(MPI_Win_errhandler_function*, MPI_Errhandler* errhandler) {
  return new_handler(errhandler);
}
int MPI_File_create_errhandler(MPI_File_errhandler_function*, MPI_Errhandler* errhandler) {
  return new_handler(errhandler);
}
int MPI_Win_get_errhandler(MPI_Win, MPI_Errhandler* errhandler) {
  *errhandler = MPI_ERRORS_ARE_FATAL;  // errors are fatal whatever the handler (docs/direct.md)
  return MPI_SUCCESS;
}
int MPI_Win_call_errhandler(MPI_Win, int errorcode) {
  return mpi_call("MPI_Win_call_errhandler", [&](Runtime& rt) -> int {
    rt.fail("MPI_Win_call_errhandler", "the program raised error " + std::to_string(errorcode));
  });
}
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  return mpi_call("MPI_Comm_call_errhandler", [&](Runtime& rt) -> int {
    check_comm(rt, "MPI_Comm_call_errhandler", comm);
    rt.fail("MPI_Comm_call_errhandler", "the program raised error " + std::to_string(errorcode));
  });
}

double MPI_Wtime(void) {
  double seconds = 0;
  mpi_call(
      "MPI_Wtime",
      [&](Runtime& rt) {
        seconds = static_cast<double>(rt.checkpoint("MPI_Wtime", rt.node_of("MPI_Wtime"), true)) * 1e-12;
        return MPI_SUCCESS;
      },
      false);
  return seconds;
}

double MPI_Wtick(void) { return 1e-12; }  // virtual time is in picoseconds

int MPI_Pcontrol(const int, ...) { return MPI_SUCCESS; }
int PMPI_Pcontrol(const int, ...) { return MPI_SUCCESS; }

int MPI_Get_address(const void* location, MPI_Aint* address) {
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}
int MPI_Address(void* location, MPI_Aint* address) { return MPI_Get_address(location, address); }
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return addr1 - addr2; }

int MPI_Alloc_mem(MPI_Aint size, MPI_Info, void* baseptr) {
  return mpi_call(
      "MPI_Alloc_mem",
      [&](Runtime& rt) {
        if (size < 0) rt.fail("MPI_Alloc_mem", "size " + std::to_string(size) + " is negative (MPI_ERR_SIZE)");
        void* p = std::malloc(size == 0 ? 1 : static_cast<std::size_t>(size));
        if (!p) rt.fail("MPI_Alloc_mem", "cannot allocate " + std::to_string(size) + " bytes (MPI_ERR_NO_MEM)");
        std::memcpy(baseptr, &p, sizeof p);
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Free_mem(void* base) {
  std::free(base);
  return MPI_SUCCESS;
}

// Handles are the same integers in C and Fortran.
MPI_Fint MPI_Comm_c2f(MPI_Comm comm) { return comm; }
MPI_Comm MPI_Comm_f2c(MPI_Fint comm) { return comm; }
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler) { return errhandler; }
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler) { return errhandler; }
MPI_Fint MPI_File_c2f(MPI_File file) { return file; }
MPI_File MPI_File_f2c(MPI_Fint file) { return file; }
MPI_Fint MPI_Group_c2f(MPI_Group group) { return group; }
MPI_Group MPI_Group_f2c(MPI_Fint group) { return group; }
MPI_Fint MPI_Info_c2f(MPI_Info info) { return info; }
MPI_Info MPI_Info_f2c(MPI_Fint info) { return info; }
MPI_Fint MPI_Message_c2f(MPI_Message message) { return message; }
MPI_Message MPI_Message_f2c(MPI_Fint message) { return message; }
MPI_Fint MPI_Op_c2f(MPI_Op op) { return op; }
MPI_Op MPI_Op_f2c(MPI_Fint op) { return op; }
MPI_Fint MPI_Request_c2f(MPI_Request request) { return request; }
MPI_Request MPI_Request_f2c(MPI_Fint request) { return request; }
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype) { return datatype; }
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype) { return datatype; }
MPI_Fint MPI_Win_c2f(MPI_Win win) { return win; }
MPI_Win MPI_Win_f2c(MPI_Fint win) { return win; }
int MPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  std::memcpy(f_status, c_status, sizeof *c_status);
  return MPI_SUCCESS;
}
int MPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  std::memcpy(c_status, f_status, sizeof *c_status);
  return MPI_SUCCESS;
}

void POEMS_Advance(double ns) {
  mpi_call(
      "POEMS_Advance",
      [&](Runtime& rt) {
        if (!(ns >= 0) || !std::isfinite(ns))
          rt.fail("POEMS_Advance", "the time " + std::to_string(ns) + " ns is not a finite number >= 0");
        rt.charge(ns * 1000.0);
        return MPI_SUCCESS;
      },
      false);
}

void POEMS_Compute(double work) {
  mpi_call(
      "POEMS_Compute",
      [&](Runtime& rt) {
        if (!(work >= 0) || !std::isfinite(work))
          rt.fail("POEMS_Compute", "the work " + std::to_string(work) + " is not a finite number >= 0");
        rt.charge_task(poems::processor::TaskRequest{"", "execute_code_block", {{"work", work}}});
        return MPI_SUCCESS;
      },
      false);
}

int POEMS_Direct(void) { return 1; }

}  // extern "C"
