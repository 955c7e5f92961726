// Round trip of two processes handing a turn back and forth through a shared
// futex word, the primitive under a rank's hand-over (docs/PERFORMANCE.md, "A
// ceiling for ranks on several host cores"). Modes: "cross" (one process per
// CPU, each sleeps in the futex), "same" (both on CPU 0), "spin" (one per CPU,
// each spins on the word), "busy" (as cross, with a process computing beside
// each of the two on its CPU: a wake finds its CPU running, not idle).
//   cc -O2 -o futex_pingpong futex_pingpong.c && ./futex_pingpong cross 20000
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("sched_setaffinity");
    exit(2);
  }
}

// The turn: 0 = parent's, 1 = child's.
static void wait_for(_Atomic int* turn, int mine, int spin) {
  while (atomic_load_explicit(turn, memory_order_acquire) != mine)
    if (!spin) syscall(SYS_futex, turn, FUTEX_WAIT, !mine, NULL, NULL, 0);
}

static void give(_Atomic int* turn, int other, int spin) {
  atomic_store_explicit(turn, other, memory_order_release);
  if (!spin) syscall(SYS_futex, turn, FUTEX_WAKE, 1, NULL, NULL, 0);
}

int main(int argc, char** argv) {
  if (argc != 3 ||
      (strcmp(argv[1], "cross") && strcmp(argv[1], "same") && strcmp(argv[1], "spin") && strcmp(argv[1], "busy"))) {
    fprintf(stderr, "usage: %s cross|same|spin|busy ROUND_TRIPS\n", argv[0]);
    return 2;
  }
  long n = atol(argv[2]);
  if (n <= 0) {
    fprintf(stderr, "ROUND_TRIPS: a positive count\n");
    return 2;
  }
  int spin = strcmp(argv[1], "spin") == 0, same = strcmp(argv[1], "same") == 0;
  pid_t burners[2] = {0, 0};
  if (strcmp(argv[1], "busy") == 0) {
    for (int cpu = 0; cpu < 2; ++cpu) {
      burners[cpu] = fork();
      if (burners[cpu] < 0) return perror("fork"), 2;  // a burner already started dies with us (below)
      if (burners[cpu] == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // whatever way the measuring process ends
        pin(cpu);
        for (volatile unsigned long x = 0;; ++x) {
        }
      }
    }
  }
  _Atomic int* turn = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (turn == MAP_FAILED) return perror("mmap"), 2;
  *turn = 0;
  pid_t child = fork();
  if (child < 0) return perror("fork"), 2;
  pin(child == 0 && !same ? 1 : 0);
  int mine = child == 0;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; ++i) {
    wait_for(turn, mine, spin);
    give(turn, !mine, spin);
  }
  if (child == 0) return 0;
  wait_for(turn, 0, spin);
  clock_gettime(CLOCK_MONOTONIC, &b);
  waitpid(child, NULL, 0);
  for (int cpu = 0; cpu < 2; ++cpu)
    if (burners[cpu] > 0) {
      kill(burners[cpu], SIGKILL);
      waitpid(burners[cpu], NULL, 0);
    }
  double us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n;
  printf("%s: %.2f us a round trip (%ld)\n", argv[1], us, n);
  return 0;
}
