// What the engine would pay to read a computing rank's CPU clock from its own
// process (clock_getcpuclockid + clock_gettime), the lower bound a conservative
// scheme for several host cores polls (docs/PERFORMANCE.md, "A ceiling for
// ranks on several host cores").
//   cc -O2 -o cpu_clock_read cpu_clock_read.c && ./cpu_clock_read
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double reads_us(pid_t other, int n) {
  clockid_t id;
  if (clock_getcpuclockid(other, &id) != 0) return -1;
  struct timespec a, b, t;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < n; ++i) clock_gettime(id, &t);
  clock_gettime(CLOCK_MONOTONIC, &b);
  return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n;
}

int main(void) {
  for (int computing = 1; computing >= 0; --computing) {
    pid_t other = fork();
    if (other < 0) return perror("fork"), 2;
    if (other == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (computing)
        for (volatile unsigned long x = 0;; ++x) {
        }
      pause();
      return 0;
    }
    double best = 1e30;
    for (int round = 0; round < 3; ++round) {
      double us = reads_us(other, 200000);
      if (us < 0) return perror("clock_getcpuclockid"), 2;
      if (us < best) best = us;
    }
    printf("another process's CPU clock, the process %s: %.3f us a read\n", computing ? "computing" : "asleep", best);
    kill(other, SIGKILL);
    waitpid(other, NULL, 0);
  }
  return 0;
}
