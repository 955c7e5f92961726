/* Threads that call MPI at the same time (MPI_THREAD_MULTIPLE), printing
 * what must be the same under mpirun and under direct execution:
 * - the level granted, MPI_Query_thread's and MPI_Is_thread_main's answers;
 * - a ping-pong as osu_latency_mt runs it: rank 0 sends from one thread,
 *   two threads of rank 1 take the messages in turns (each blocks in
 *   MPI_Recv while the other replies; with the argument "serial" rank 1's
 *   own thread replies, and the ping-pong's time, on stderr, is the same);
 * - a thread that waits for a message its rank's other thread sends (in
 *   MPI_Recv, and in MPI_Mprobe);
 * - two threads of every rank reducing on communicators of their own, at
 *   the same time;
 * - a thread that spins, never calling MPI, beside its rank's receive. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 2
#define ROUNDS 400
#define REDUCTIONS 50

static int rank, size;
static MPI_Comm comms[THREADS];

static void* replier(void* arg) {
  const int id = *(const int*)arg;
  for (int i = id; i < ROUNDS; i += THREADS) {
    int v = 0;
    MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    v = 2 * v + 1;
    MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  }
  return NULL;
}

static void ping_pong(int serial) {
  if (rank == 0) {
    int wrong = 0;
    const double start = MPI_Wtime();
    for (int i = 0; i < ROUNDS; ++i) {
      int v = i;
      MPI_Send(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (v != 2 * i + 1) ++wrong;
    }
    /* The time goes to stderr: under mpirun it is the host's. */
    fprintf(stderr, "ping-pong time %.3f us\n", (MPI_Wtime() - start) * 1e6);
    printf("ping-pong: %d rounds, %d wrong replies\n", ROUNDS, wrong);
  } else if (rank == 1 && serial) { /* the same replies from the rank's one thread */
    for (int i = 0; i < ROUNDS; ++i) {
      int v = 0;
      MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      v = 2 * v + 1;
      MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
  } else if (rank == 1) {
    pthread_t t[THREADS];
    int ids[THREADS];
    for (int i = 0; i < THREADS; ++i) {
      ids[i] = i;
      if (pthread_create(&t[i], NULL, replier, &ids[i]) != 0) exit(9);
    }
    for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  }
}

static void* self_receiver(void* arg) {
  int* got = (int*)arg;
  MPI_Recv(got, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

static void* self_sender(void* arg) {
  (void)arg;
  int v = 100 + rank;
  MPI_Ssend(&v, 1, MPI_INT, rank, 3, MPI_COMM_WORLD);
  return NULL;
}

/* Waits in MPI_Mprobe for any message with tag 5, then takes it. */
static void* self_prober(void* arg) {
  int* got = (int*)arg;
  MPI_Message message;
  MPI_Status status;
  MPI_Mprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &message, &status);
  MPI_Mrecv(got, 1, MPI_INT, &message, MPI_STATUS_IGNORE);
  return NULL;
}

static void* self_probe_sender(void* arg) {
  (void)arg;
  int v = 200 + rank;
  MPI_Send(&v, 1, MPI_INT, rank, 5, MPI_COMM_WORLD);
  return NULL;
}

/* Runs `receive` and `send` in two new threads of the rank; what `receive` got. */
static int between_threads(void* (*receive)(void*), void* (*send)(void*)) {
  int got = -1;
  pthread_t receiver, sender;
  if (pthread_create(&receiver, NULL, receive, &got) != 0) exit(9);
  if (pthread_create(&sender, NULL, send, NULL) != 0) exit(9);
  pthread_join(receiver, NULL);
  pthread_join(sender, NULL);
  return got;
}

static void self_message(void) {
  printf("rank %d: a thread received %d from its rank's other thread\n", rank,
         between_threads(self_receiver, self_sender));
  printf("rank %d: a thread probed and received %d from its rank's other thread\n", rank,
         between_threads(self_prober, self_probe_sender));
}

static void* reducer(void* arg) {
  const int id = *(const int*)arg;
  long total = 0;
  for (int i = 0; i < REDUCTIONS; ++i) {
    long mine = (long)(rank + 1) * (id + 1) + i, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comms[id]);
    total += sum;
  }
  printf("rank %d thread %d: %d reductions, total %ld\n", rank, id, REDUCTIONS, total);
  return NULL;
}

static void concurrent_reductions(void) {
  for (int i = 0; i < THREADS; ++i) MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
  pthread_t t[THREADS];
  int ids[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    ids[i] = i;
    if (pthread_create(&t[i], NULL, reducer, &ids[i]) != 0) exit(9);
  }
  for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  for (int i = 0; i < THREADS; ++i) MPI_Comm_free(&comms[i]);
}

static int released = 0;

static void* spinner(void* arg) {
  (void)arg;
  while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE)) {
  }
  return NULL;
}

/* A thread of rank 1 spins, never calling MPI, until its rank's receive has
 * returned: nothing waits for it to reach MPI for ever. */
static void spin_beside_a_receive(void) {
  int v = 0;
  if (rank == 0) {
    v = 42;
    MPI_Send(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
  } else if (rank == 1) {
    pthread_t t;
    if (pthread_create(&t, NULL, spinner, NULL) != 0) exit(9);
    MPI_Recv(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    printf("rank 1: received %d while a thread of it spun\n", v);
  }
}

static void* ask_main(void* arg) {
  MPI_Is_thread_main((int*)arg);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int queried = 0, main_thread = 0, other_thread = -1;
  MPI_Query_thread(&queried);
  MPI_Is_thread_main(&main_thread);
  pthread_t t;
  if (pthread_create(&t, NULL, ask_main, &other_thread) != 0) exit(9);
  pthread_join(t, NULL);
  printf("rank %d: provided %s, queried %s, main thread %d, another thread %d\n", rank,
         provided == MPI_THREAD_MULTIPLE ? "MULTIPLE" : "less", queried == MPI_THREAD_MULTIPLE ? "MULTIPLE" : "less",
         main_thread, other_thread);
  if (provided != MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    return 0;
  }
  if (size >= 2) ping_pong(argc > 1 && strcmp(argv[1], "serial") == 0);
  if (size >= 2) spin_beside_a_receive();
  MPI_Barrier(MPI_COMM_WORLD);
  self_message();
  concurrent_reductions();
  MPI_Finalize();
  return 0;
}
