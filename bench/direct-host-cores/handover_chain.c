// What a wait costs when ranks compute on two host CPUs at once and a controller
// resumes the next rank each time one waits (docs/PERFORMANCE.md, "A ceiling for
// ranks on several host cores"): WORKERS processes each compute GRAIN us of CPU
// time, hand the turn back through a shared futex word and sleep; the
// controller wakes the next sleeping worker, keeping CPUS of them computing at
// once, GRAINS grains in all. Prints the wall time and the cost of a wait in
// core time, (CPUS x wall - GRAINS x GRAIN) / GRAINS. Placement:
//   free   the kernel places the woken worker
//   steer  the controller first moves the worker to the CPU of the one that
//          just waited (sched_setaffinity), so a wake need not cross CPUs
//   relay  no controller in the chain: the worker that waits moves the next one
//          to its own CPU and wakes it (as if the engine ran in the ranks)
//   pinned as relay, but worker w stays on CPU w mod CPUS and wakes the next
//          worker of its own CPU (ranks parted among the cores)
//   cc -O2 -o handover_chain handover_chain.c && ./handover_chain steer 8 2 56 100000
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

enum { kMaxWorkers = 64 };
// Far below zero: a start another worker still adds after the stop cannot bring it back to 0.
enum { kStop = -1000000 };

struct Shared {
  _Atomic int go[kMaxWorkers];   // grains the worker may start (it can be started again before it ran); kStop: stop
  _Atomic int cpu[kMaxWorkers];  // where the worker last computed
  _Atomic int done;              // futex word: grains handed back, not yet seen by the controller
  _Atomic int waiting;           // 1 while the controller sleeps on `done`
  _Atomic long handed[kMaxWorkers];
  _Atomic long started;                  // relay: grains started
  _Atomic long started_on[kMaxWorkers];  // pinned: grains started on each CPU
  int cpus;
  long grains;
  int workers;
  pid_t pid[kMaxWorkers];
};

static void futex_wait(_Atomic int* word, int value) { syscall(SYS_futex, word, FUTEX_WAIT, value, NULL, NULL, 0); }
static void futex_wake(_Atomic int* word) { syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0); }

static double now_us(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

// Relay: the worker that just computed starts the next grain on its own CPU.
static void relay_pinned(struct Shared* s, int w) {
  if (atomic_fetch_add(&s->started, 1) >= s->grains) return;
  const int cpu = w % s->cpus, per_cpu = s->workers / s->cpus;
  const long k = atomic_fetch_add(&s->started_on[cpu], 1);
  const int next = cpu + s->cpus * (int)(k % per_cpu);
  atomic_fetch_add(&s->go[next], 1);
  futex_wake(&s->go[next]);
}

static void relay(struct Shared* s) {
  const long k = atomic_fetch_add(&s->started, 1);
  if (k >= s->grains) return;
  const int next = (int)(k % s->workers);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(sched_getcpu(), &set);
  sched_setaffinity(s->pid[next], sizeof set, &set);
  atomic_fetch_add(&s->go[next], 1);
  futex_wake(&s->go[next]);
}

static void worker(struct Shared* s, int w, double grain_us, int relaying, int pinned) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (pinned) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w % s->cpus, &set);
    sched_setaffinity(0, sizeof set, &set);
  }
  for (;;) {
    int g;
    while ((g = atomic_load(&s->go[w])) == 0) futex_wait(&s->go[w], 0);
    if (g < 0) _exit(0);
    atomic_fetch_sub(&s->go[w], 1);
    const double start = now_us(CLOCK_THREAD_CPUTIME_ID);
    while (now_us(CLOCK_THREAD_CPUTIME_ID) - start < grain_us) {
    }
    atomic_store(&s->cpu[w], sched_getcpu());
    atomic_fetch_add(&s->handed[w], 1);
    if (pinned)
      relay_pinned(s, w);
    else if (relaying)
      relay(s);
    // Relaying, the controller only waits for the last grain.
    if (atomic_fetch_add(&s->done, 1) + 1 == s->grains || !relaying)
      if (atomic_load(&s->waiting)) futex_wake(&s->done);
  }
}

int main(int argc, char** argv) {
  if (argc != 6 ||
      (strcmp(argv[1], "free") && strcmp(argv[1], "steer") && strcmp(argv[1], "relay") && strcmp(argv[1], "pinned"))) {
    fprintf(stderr, "usage: %s free|steer|relay|pinned WORKERS CPUS GRAIN_US GRAINS\n", argv[0]);
    return 2;
  }
  const int steer = strcmp(argv[1], "steer") == 0, pinned = strcmp(argv[1], "pinned") == 0;
  const int relaying = pinned || strcmp(argv[1], "relay") == 0;
  const int workers = atoi(argv[2]), cpus = atoi(argv[3]);
  const double grain = atof(argv[4]);
  const long grains = atol(argv[5]);
  if (workers < 2 || workers > kMaxWorkers || cpus < 1 || cpus >= workers || grain <= 0 || grains < cpus ||
      (pinned && workers % cpus != 0)) {
    fprintf(stderr, "WORKERS in 2..%d, CPUS in 1..WORKERS-1 (pinned: dividing WORKERS), GRAIN_US > 0, GRAINS >= CPUS\n",
            kMaxWorkers);
    return 2;
  }
  struct Shared* s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED) return perror("mmap"), 2;
  memset(s, 0, sizeof *s);
  s->grains = grains;
  s->workers = workers;
  s->cpus = cpus;
  for (int c = 0; c < cpus; ++c) s->started_on[c] = 1;  // worker c starts first (below)
  pid_t* pid = s->pid;
  for (int w = 0; w < workers; ++w) {
    pid[w] = fork();
    if (pid[w] < 0) return perror("fork"), 2;
    if (pid[w] == 0) worker(s, w, grain, relaying, pinned);
  }
  // A ring of workers: CPUS compute at once; each hand-back resumes the next sleeping one.
  atomic_store(&s->started, cpus);  // before any worker can count a start of its own
  const double start = now_us(CLOCK_MONOTONIC);
  int next = 0;
  for (int c = 0; c < cpus; ++c, ++next) {
    atomic_fetch_add(&s->go[next], 1);
    futex_wake(&s->go[next]);
  }
  long started = cpus, seen = 0;  // (relaying, the workers start the grains: s->started)
  long last_seen[kMaxWorkers] = {0};
  while (relaying) {  // the workers count the grains in `done`
    atomic_store(&s->waiting, 1);
    const int d = atomic_load(&s->done);
    if (d >= grains) break;
    futex_wait(&s->done, d);
  }
  while (!relaying && seen < grains) {
    int d;
    atomic_store(&s->waiting, 1);
    while ((d = atomic_load(&s->done)) == 0) futex_wait(&s->done, 0);
    atomic_store(&s->waiting, 0);
    atomic_fetch_sub(&s->done, d);
    for (int k = 0; k < d; ++k) {
      ++seen;
      if (started == grains) continue;
      // The CPU just freed: that of a worker whose count moved since we last looked.
      int freed = -1;
      for (int w = 0; w < workers && freed < 0; ++w)
        if (atomic_load(&s->handed[w]) != last_seen[w]) {
          last_seen[w] = atomic_load(&s->handed[w]);
          freed = atomic_load(&s->cpu[w]);
        }
      if (steer && freed >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(freed, &set);
        sched_setaffinity(pid[next], sizeof set, &set);
      }
      atomic_fetch_add(&s->go[next], 1);
      futex_wake(&s->go[next]);
      next = (next + 1) % workers;
      ++started;
    }
  }
  const double wall = now_us(CLOCK_MONOTONIC) - start;
  for (int w = 0; w < workers; ++w) {
    atomic_store(&s->go[w], kStop);
    futex_wake(&s->go[w]);
    waitpid(pid[w], NULL, 0);
  }
  printf("%s: %d workers on %d CPUs, %ld grains of %.1f us: %.3f s (ideal %.3f s), %.2f us of core time a wait\n",
         argv[1], workers, cpus, grains, grain, wall / 1e6, grains * grain / cpus / 1e6,
         (cpus * wall - grains * grain) / grains);
  return 0;
}
