/* Not compared with mpirun: ways a program fails (DirectPrograms.FailuresAreFailedRuns),
 * and processes a rank starts (DirectPrograms.ProcessesARankLeavesBehindAreKilled,
 * DirectPrograms.AForkedProcessCallingMpiIsReportedAsSuch, DirectPrograms.ASecondThreadInMpiIsReported).
 * The argument says how; rank 1 fails, the others go through a barrier. */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A second thread's MPI call while the rank's thread is inside MPI (in an
 * attribute's delete callback, which MPI_Comm_delete_attr runs in its call):
 * more than MPI_THREAD_SERIALIZED allows. */
static void* second_thread(void* unused) {
  (void)unused;
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return NULL;
}

/* A thread that would send (here: never) what its rank's other thread waits for. */
static void* never_sends(void* unused) {
  (void)unused;
  int never[2];
  char c;
  if (pipe(never) != 0 || read(never[0], &c, 1) != 1) exit(9);
  return NULL;
}

static int delete_in_a_second_thread(MPI_Comm comm, int key, void* value, void* extra) {
  (void)comm, (void)key, (void)value, (void)extra;
  pthread_t t;
  if (pthread_create(&t, NULL, second_thread, NULL) != 0) exit(9);
  pthread_join(t, NULL);
  return MPI_SUCCESS;
}

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
  int provided = 0;
  const char* how = argc > 1 ? argv[1] : "ok";
  /* "second-thread" breaks SERIALIZED, the level it asks for; FAILURES_SERIALIZED asks for it in every case (ranks
     on several host cores provide no more) */
  const int serialized = strcmp(how, "second-thread") == 0 || getenv("FAILURES_SERIALIZED") != NULL;
  MPI_Init_thread(&argc, &argv, serialized ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE, &provided);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
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
    if (strcmp(how, "second-thread") == 0) {
      if (provided != MPI_THREAD_SERIALIZED) exit(8);
      int key = MPI_KEYVAL_INVALID;
      MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_in_a_second_thread, &key, NULL);
      MPI_Comm_set_attr(MPI_COMM_WORLD, key, NULL);
      MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    }
    if (strcmp(how, "thread-deadlock") == 0) {
      pthread_t t;
      if (pthread_create(&t, NULL, never_sends, NULL) != 0) exit(9);
      int y = 0;
      MPI_Recv(&y, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (strcmp(how, "big-message") == 0) { /* 64 MiB in flight: more than a region of 32 MiB holds */
      char* data = calloc(64u << 20, 1);
      MPI_Send(data, 64 << 20, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      free(data);
    }
  }
  if (rank == 0 && strcmp(how, "thread-deadlock") == 0) {
    int y = 0;
    MPI_Recv(&y, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&y, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
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
