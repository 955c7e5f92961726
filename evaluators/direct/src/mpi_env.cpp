// Environment, communicators, time, datatypes and the POEMS extensions.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api.h"

namespace poems::direct::detail {

Runtime& runtime_for(const char* call) {
  Runtime* rt = Runtime::active();
  if (!rt || !rt->running()) {
    std::fprintf(stderr,
                 "poems: %s called outside a simulated rank (a program built with poems-mpicxx runs under "
                 "`poems direct PROGRAM -np P`)\n",
                 call);
    std::abort();
  }
  return *rt;
}

Comm& check_comm(Runtime& rt, const char* call, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) rt.fail(call, "the communicator is MPI_COMM_NULL (MPI_ERR_COMM)");
  Comm* c = rt.comm(comm);
  if (!c) rt.fail(call, "communicator " + std::to_string(comm) + " is not one of this rank's (MPI_ERR_COMM)");
  return *c;
}

std::size_t check_type(Runtime& rt, const char* call, MPI_Datatype type) {
  const std::size_t size = datatype_size(type);
  if (size == 0)
    rt.fail(call, "datatype " + std::to_string(type) +
                      " is not a predefined datatype (derived datatypes are not supported; MPI_ERR_TYPE)");
  return size;
}

std::uint64_t check_bytes(Runtime& rt, const char* call, int count, MPI_Datatype type) {
  if (count < 0) rt.fail(call, "count " + std::to_string(count) + " is negative (MPI_ERR_COUNT)");
  return static_cast<std::uint64_t>(count) * check_type(rt, call, type);
}

void check_buffer(Runtime& rt, const char* call, const void* buf, std::uint64_t bytes, const char* what) {
  if (bytes > 0 && buf == nullptr)
    rt.fail(call, std::string(what) + " is null but holds " + std::to_string(bytes) + " bytes (MPI_ERR_BUFFER)");
}

std::int32_t check_peer(Runtime& rt, const char* call, const Comm& c, int rank, bool any_allowed) {
  if (rank == MPI_PROC_NULL) return -2;
  if (any_allowed && rank == MPI_ANY_SOURCE) return -1;
  if (rank < 0 || rank >= c.size())
    rt.fail(call, "rank " + std::to_string(rank) + " is not in the communicator of size " + std::to_string(c.size()) +
                      " (MPI_ERR_RANK)");
  return static_cast<std::int32_t>(rt.world_rank(c, rank));
}

int check_tag(Runtime& rt, const char* call, int tag, bool any_allowed) {
  if (any_allowed && tag == MPI_ANY_TAG) return tag;
  if (tag < 0 || tag > 0x3fffffff)
    rt.fail(call, "tag " + std::to_string(tag) + " is not in 0..1073741823 (MPI_ERR_TAG)");
  return tag;
}

int check_root(Runtime& rt, const char* call, const Comm& c, int root) {
  if (root < 0 || root >= c.size())
    rt.fail(call, "root " + std::to_string(root) + " is not in the communicator of size " + std::to_string(c.size()) +
                      " (MPI_ERR_ROOT)");
  return root;
}

void check_op(Runtime& rt, const char* call, MPI_Op op, MPI_Datatype type) {
  if (!valid_op(op))
    rt.fail(call, "operator " + std::to_string(op) + " is not a predefined reduction operator (MPI_ERR_OP)");
  if (!op_applies(op, type))
    rt.fail(call, std::string(op_name(op)) + " does not apply to " + datatype_name(type) + " (MPI_ERR_OP)");
}

void set_status(MPI_Status* status, int source, int tag, std::uint64_t bytes) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = source;
  status->MPI_TAG = tag;
  status->MPI_ERROR = MPI_SUCCESS;
  status->poems_bytes = static_cast<long long>(bytes);
}

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

extern "C" {

int MPI_Init(int*, char***) {
  return mpi_call(
      "MPI_Init",
      [](Runtime& rt) {
        Rank& k = rt.current();
        if (k.initialized) rt.fail("MPI_Init", "MPI is already initialized");
        k.initialized = true;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Init_thread(int* argc, char*** argv, int, int* provided) {
  if (provided) *provided = MPI_THREAD_SINGLE;  // one OS thread runs all ranks
  return MPI_Init(argc, argv);
}

int MPI_Finalize(void) {
  return mpi_call("MPI_Finalize", [](Runtime& rt) {
    rt.issue_compute();  // the computation up to here is the rank's last
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
      "MPI_Abort", [&](Runtime& rt) -> int { rt.abort_run(errorcode); }, false);
}

int MPI_Query_thread(int* provided) {
  *provided = MPI_THREAD_SINGLE;
  return MPI_SUCCESS;
}

int MPI_Get_processor_name(char* name, int* resultlen) {
  return mpi_call(
      "MPI_Get_processor_name",
      [&](Runtime& rt) {
        const int n = std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "poems-direct-rank-%u", rt.current().world);
        *resultlen = n;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Get_version(int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  *resultlen = std::snprintf(string, MPI_MAX_ERROR_STRING, "MPI error %d", errorcode);
  return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  return mpi_call("MPI_Comm_set_errhandler", [&](Runtime& rt) {
    check_comm(rt, "MPI_Comm_set_errhandler", comm);
    if (errhandler != MPI_ERRORS_ARE_FATAL)
      rt.fail("MPI_Comm_set_errhandler", "only MPI_ERRORS_ARE_FATAL is supported (errors stop the run)");
    return MPI_SUCCESS;
  });
}

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  return mpi_call("MPI_Comm_rank", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Comm_rank", comm);
    *rank = rt.comm_rank(c, rt.current().world);
    return MPI_SUCCESS;
  });
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  return mpi_call("MPI_Comm_size", [&](Runtime& rt) {
    *size = check_comm(rt, "MPI_Comm_size", comm).size();
    return MPI_SUCCESS;
  });
}

int MPI_Comm_free(MPI_Comm* comm) {
  return mpi_call("MPI_Comm_free", [&](Runtime& rt) {
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
      rt.fail("MPI_Comm_free", "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed (MPI_ERR_COMM)");
    check_comm(rt, "MPI_Comm_free", *comm);
    *comm = MPI_COMM_NULL;  // communicators are small: their records live until the run ends
    return MPI_SUCCESS;
  });
}

double MPI_Wtime(void) {
  double seconds = 0;
  mpi_call("MPI_Wtime", [&](Runtime& rt) {
    seconds = static_cast<double>(rt.checkpoint("MPI_Wtime", rt.node_of("MPI_Wtime"))) * 1e-12;
    return MPI_SUCCESS;
  });
  return seconds;
}

double MPI_Wtick(void) { return 1e-12; }  // virtual time is in picoseconds

// Pure functions: they work outside a rank too (e.g. on a status kept by the program).
int MPI_Type_size(MPI_Datatype datatype, int* size) {
  const std::size_t bytes = datatype_size(datatype);
  if (bytes == 0) {
    if (Runtime::active() && Runtime::active()->running())
      check_type(runtime_for("MPI_Type_size"), "MPI_Type_size", datatype);
    return MPI_ERR_TYPE;
  }
  *size = static_cast<int>(bytes);
  return MPI_SUCCESS;
}

int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  const std::size_t size = datatype_size(datatype);
  if (size == 0) {
    if (Runtime::active() && Runtime::active()->running())
      check_type(runtime_for("MPI_Get_count"), "MPI_Get_count", datatype);
    return MPI_ERR_TYPE;
  }
  const auto bytes = static_cast<std::uint64_t>(status->poems_bytes);
  *count = bytes % size == 0 ? static_cast<int>(bytes / size) : MPI_UNDEFINED;
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
