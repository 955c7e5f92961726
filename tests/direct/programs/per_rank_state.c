/* Every rank has its own globals, statics, thread-locals and C library
 * state (getopt's optind, errno, stdio buffers): under mpirun each rank is
 * a process, and under `poems direct` too. Run with arguments -n 3 -v. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int counter = 0;
static double scale = 1.0;
_Thread_local int tls = 0;

static int calls(void) {
  static int n = 0;
  return ++n;
}

int main(int argc, char** argv) {
  int iterations = 1, verbose = 0, opt;
  while ((opt = getopt(argc, argv, "n:v")) != -1) {
    if (opt == 'n') iterations = atoi(optarg);
    if (opt == 'v') verbose = 1;
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Each rank changes its globals differently; a rank that finishes first
   * must not change what the others see. */
  scale = rank + 1;
  for (int round = 0; round < iterations; ++round) {
    for (int i = 0; i <= rank; ++i) {
      counter += 1;
      tls += 2;
      calls();
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  errno = 0;
  if (fopen("/nonexistent/poems/file", "r") == NULL && rank % 2 == 1) errno = EACCES + rank;
  const int my_errno = errno;
  char line[128];
  snprintf(line, sizeof line, "%d: optind %d iterations %d verbose %d counter %d scale %.0f tls %d calls %d", rank,
           optind, iterations, verbose, counter, scale, tls, calls() - 1);
  /* Buffered output: each rank's stdio buffer is its own (a shared one would
   * mix the ranks' halves). The line is flushed whole: under mpirun a flush
   * between the halves lets another rank's line land in the middle. */
  printf("%s", line);
  printf(" errno %s\n", my_errno == (rank % 2 ? EACCES + rank : ENOENT) ? "own" : strerror(my_errno));
  fflush(stdout);
  int total = 0;
  MPI_Allreduce(&counter, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("total %d\n", total);
  MPI_Finalize();
  return 0;
}
