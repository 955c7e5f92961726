/* Not compared with mpirun: ways a program fails (DirectPrograms.FailuresAreFailedRuns),
 * and processes a rank starts (DirectPrograms.ProcessesARankLeavesBehindAreKilled,
 * DirectPrograms.AForkedProcessCallingMpiIsReportedAsSuch).
 * The argument says how; rank 1 fails, the others go through a barrier. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Rank 1 starts a daemon: a grandchild in a session of its own (setsid, then
 * a second fork), whose parent exits at once. Its pid, the rank's and the
 * controller's go to `pid_file`. */
static void start_daemon(const char* pid_file) {
  int ready[2];
  if (pipe(ready) != 0) exit(9);
  pid_t child = fork();
  if (child == 0) {
    setsid();
    if (fork() == 0) {
      pid_t self = getpid();
      if (write(ready[1], &self, sizeof self) != (ssize_t)sizeof self) _exit(1);
      for (;;) pause();
    }
    _exit(0);
  }
  waitpid(child, NULL, 0);
  pid_t daemon = 0;
  if (read(ready[0], &daemon, sizeof daemon) != (ssize_t)sizeof daemon) exit(9);
  FILE* f = fopen(pid_file, "w");
  if (!f) exit(9);
  fprintf(f, "%d %d %d\n", (int)daemon, (int)getpid(), (int)getppid()); /* the daemon, this rank, the controller */
  fclose(f);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* how = argc > 1 ? argv[1] : "ok";
  printf("rank %d starts\n", rank);
  if (rank == 1) {
    if (strcmp(how, "early") == 0) exit(2);
    if (strcmp(how, "abort") == 0) MPI_Abort(MPI_COMM_WORLD, 7);
    if (strcmp(how, "segv") == 0) {
      volatile int* p = NULL;
      *p = 1;
    }
    if (strcmp(how, "unsupported") == 0) {
      MPI_File f;
      MPI_File_open(MPI_COMM_WORLD, "none", MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    }
    if (strcmp(how, "daemon") == 0 || strcmp(how, "daemon-hang") == 0) start_daemon(argv[2]);
    if (strcmp(how, "daemon-hang") == 0) { /* blocks until killed: poems dies meanwhile */
      int never[2];
      char c;
      if (pipe(never) != 0 || read(never[0], &c, 1) != 1) exit(9);
    }
    if (strcmp(how, "fork") == 0 || strcmp(how, "fork-exit") == 0) {
      fflush(stdout);
      pid_t child = fork();
      if (child == 0) {
        if (strcmp(how, "fork-exit") == 0) exit(0); /* computes, ends through exit(): allowed */
        int value = 1;
        MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD); /* a process that is no rank calls MPI */
        _exit(0);
      }
      waitpid(child, NULL, 0);
    }
    if (strcmp(how, "big-message") == 0) { /* 64 MiB in flight: more than a region of 32 MiB holds */
      char* data = calloc(64u << 20, 1);
      MPI_Send(data, 64 << 20, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      free(data);
    }
  }
  if (rank == 0 && strcmp(how, "big-message") == 0) {
    char* data = malloc(64u << 20);
    MPI_Recv(data, 64 << 20, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    free(data);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 1 && strcmp(how, "exit") == 0) exit(3);
  if (rank == 0 && strcmp(how, "return") == 0) return 5;
  return 0;
}
