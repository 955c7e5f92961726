/* Not compared with mpirun but checked against known answers
 * (DirectPrograms.ClocksAndSleepsAreVirtual): the C library's clocks and
 * sleeps in virtual time. Run under --compute model on 2 ranks. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long ns_of(struct timespec t) { return (long long)t.tv_sec * 1000000000LL + t.tv_nsec; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    struct timespec m0, m1, r0, r1;
    struct timeval g0, g1;
    clock_gettime(CLOCK_MONOTONIC, &m0);
    clock_gettime(CLOCK_REALTIME, &r0);
    gettimeofday(&g0, NULL);
    const time_t s0 = time(NULL);
    const double w0 = MPI_Wtime();
    usleep(2500);
    struct timespec req = {0, 1250000}, rem = {9, 9};
    nanosleep(&req, &rem);
    sleep(2);
    clock_gettime(CLOCK_MONOTONIC, &m1);
    clock_gettime(CLOCK_REALTIME, &r1);
    gettimeofday(&g1, NULL);
    const time_t s1 = time(NULL);
    const double w1 = MPI_Wtime();
    printf("monotonic %lld\n", ns_of(m1) - ns_of(m0));
    printf("realtime %lld\n", ns_of(r1) - ns_of(r0));
    printf("gettimeofday %lld\n", (long long)(g1.tv_sec - g0.tv_sec) * 1000000LL + (g1.tv_usec - g0.tv_usec));
    printf("time %lld\n", (long long)(s1 - s0));
    printf("wtime %.9f\n", w1 - w0);
    printf("remain %ld %ld\n", (long)rem.tv_sec, rem.tv_nsec);
    /* A message from rank 1: its arrival and processing in virtual time. */
    struct timespec a, b;
    int v = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    clock_gettime(CLOCK_MONOTONIC, &a);
    MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("receive %lld value %d\n", ns_of(b) - ns_of(a), v);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    int v = 42;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  /* CPU-time clocks stay the host's: they are not advanced by a sleep. */
  struct timespec c0, c1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  usleep(500000);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  if (rank == 0) printf("cpu clock below a tenth of the sleep %d\n", ns_of(c1) - ns_of(c0) < 50000000LL);
  MPI_Finalize();
  return 0;
}
