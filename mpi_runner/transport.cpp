// libpoems_mpi_runner.so: the MPI calls of the distributed study runner
// (poems/core/mpi_transport.h) on Open MPI. Nothing else lives here: the
// runner itself is core/src/mpi_study.cpp, which dlopens this under mpirun.
#include <mpi.h>

#include <climits>
#include <string>

#include "poems/core/mpi_transport.h"

namespace {

std::string last;

int check(int code, const char* what) {
  if (code == MPI_SUCCESS) return 0;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  last = std::string(what) + ": " + std::string(text, static_cast<std::size_t>(length));
  return 1;
}

int too_large(uint64_t size) {
  if (size <= static_cast<uint64_t>(INT_MAX)) return 0;
  last = "a message of " + std::to_string(size) + " bytes (more than an MPI count)";
  return 1;
}

int init(int* rank, int* size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided), "MPI_Init_thread")) return 1;
  }
  if (check(MPI_Comm_rank(MPI_COMM_WORLD, rank), "MPI_Comm_rank")) return 1;
  return check(MPI_Comm_size(MPI_COMM_WORLD, size), "MPI_Comm_size");
}

int send(int rank, int tag, const void* data, uint64_t size) {
  if (too_large(size)) return 1;
  return check(MPI_Send(data, static_cast<int>(size), MPI_BYTE, rank, tag, MPI_COMM_WORLD), "MPI_Send");
}

int probe(int* found, int* rank, int* tag, uint64_t* size) {
  MPI_Status status;
  if (check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, found, &status), "MPI_Iprobe")) return 1;
  if (!*found) return 0;
  int count = 0;
  if (check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count")) return 1;
  *rank = status.MPI_SOURCE;
  *tag = status.MPI_TAG;
  *size = static_cast<uint64_t>(count);
  return 0;
}

int receive(int rank, int tag, void* data, uint64_t size) {
  if (too_large(size)) return 1;
  return check(MPI_Recv(data, static_cast<int>(size), MPI_BYTE, rank, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
               "MPI_Recv");
}

int finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized ? 0 : check(MPI_Finalize(), "MPI_Finalize");
}

void abort_all(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

const char* last_error() { return last.c_str(); }

const poems_mpi_transport transport = {
    POEMS_MPI_TRANSPORT_VERSION, init, send, probe, receive, finalize, abort_all, last_error};

}  // namespace

extern "C" __attribute__((visibility("default"))) const poems_mpi_transport* poems_mpi_transport_v1() {
  return &transport;
}
