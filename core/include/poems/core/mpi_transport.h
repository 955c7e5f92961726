/* The plugin interface of the MPI-distributed study runner: the few MPI
 * calls it needs, behind plain C functions. `poems` does not link an MPI
 * library (the programs it runs under direct execution get their own,
 * libpoems_mpi.so); under mpirun it dlopens libpoems_mpi_runner.so
 * (mpi_runner/), the one part linked against Open MPI, and calls these. */
#ifndef POEMS_CORE_MPI_TRANSPORT_H
#define POEMS_CORE_MPI_TRANSPORT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define POEMS_MPI_TRANSPORT_VERSION 1

/* Every function returns 0 on success, else a message is in last_error(). */
struct poems_mpi_transport {
  int version; /* POEMS_MPI_TRANSPORT_VERSION */
  /* MPI_Init and this process's place in MPI_COMM_WORLD. */
  int (*init)(int* rank, int* size);
  /* A blocking send of `size` bytes to `rank` with `tag`. */
  int (*send)(int rank, int tag, const void* data, uint64_t size);
  /* Whether a message waits (never blocks): *found = 1 with its source, tag and size. */
  int (*probe)(int* found, int* rank, int* tag, uint64_t* size);
  /* Receives the message `probe` found. */
  int (*receive)(int rank, int tag, void* data, uint64_t size);
  int (*finalize)(void);
  void (*abort)(int code);
  const char* (*last_error)(void);
};

/* The plugin's one exported symbol. */
typedef const struct poems_mpi_transport* (*poems_mpi_transport_function)(void);
#define POEMS_MPI_TRANSPORT_SYMBOL "poems_mpi_transport_v1"

#ifdef __cplusplus
}
#endif

#endif
