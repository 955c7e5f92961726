/* selfish_detour: records a host's OS noise as a POEMS noise trace.
 *
 * The "selfish detour" method of noise studies: one thread reads a clock in
 * a tight loop; whenever two consecutive readings are further apart than a
 * threshold, something took the CPU (an interrupt, a daemon, the kernel, a
 * hypervisor) and the gap is a detour. Each detour is printed as one line
 * "start length" in ns from the start of the recording, the format
 * `poems simulate --noise file:PATH` (and `poems direct`, a PSL machine's
 * `noise_file`) reads (docs/simulator.md, "OS noise").
 *
 *   cc -O2 examples/noise/selfish_detour.c -o selfish_detour
 *   ./selfish_detour --seconds 20 > host-noise.txt            # thread CPU time
 *   ./selfish_detour --seconds 20 --clock wall > wall-noise.txt
 *
 * --clock cpu (the default) reads the thread's CPU time, the clock direct
 * execution charges a rank's computation by (docs/direct.md): a detour is
 * CPU time the thread was charged for without running its loop (interrupts
 * and kernel work on its behalf). --clock wall reads CLOCK_MONOTONIC: every
 * gap counts, preemption by other processes too. Summary on stderr: the
 * detours, their share of the time, the smallest step (the loop's
 * resolution) and the length percentiles. Plain C99 and POSIX; nothing of
 * POEMS needed, so it runs on the machine whose noise is wanted.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long read_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int by_value(const void* a, const void* b) {
  const long long x = *(const long long*)a, y = *(const long long*)b;
  return x < y ? -1 : x > y;
}

static void usage(const char* why) {
  fprintf(stderr,
          "selfish_detour: %s\n"
          "usage: selfish_detour [--seconds S (0.01..3600, default 10)] [--threshold NS (100..1e9, default 2000)]\n"
          "                      [--clock cpu|wall (default cpu)]\n",
          why);
  exit(2);
}

/* A number in [lo, hi] or a usage error naming the option. */
static double number(const char* option, const char* text, double lo, double hi) {
  char* end = NULL;
  const double v = strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= lo && v <= hi)) {
    char why[160];
    snprintf(why, sizeof why, "%s: '%s' is not allowed; allowed: a number from %g to %g", option, text, lo, hi);
    usage(why);
  }
  return v;
}

int main(int argc, char** argv) {
  double seconds = 10, threshold = 2000;
  clockid_t clock = CLOCK_THREAD_CPUTIME_ID;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc) usage(strcmp(argv[i], "--help") == 0 ? "records detours" : "an option without its value");
    if (strcmp(argv[i], "--seconds") == 0) {
      seconds = number("--seconds", argv[++i], 0.01, 3600);
    } else if (strcmp(argv[i], "--threshold") == 0) {
      threshold = number("--threshold", argv[++i], 100, 1e9);
    } else if (strcmp(argv[i], "--clock") == 0) {
      ++i;
      if (strcmp(argv[i], "cpu") == 0)
        clock = CLOCK_THREAD_CPUTIME_ID;
      else if (strcmp(argv[i], "wall") == 0)
        clock = CLOCK_MONOTONIC;
      else
        usage("--clock: allowed: cpu or wall");
    } else {
      usage("unknown option");
    }
  }
  /* Lengths kept for the percentiles; the lines are printed as they come. */
  size_t count = 0, capacity = 4096;
  long long* lengths = malloc(capacity * sizeof *lengths);
  if (!lengths) return 1;
  const long long limit = (long long)threshold, start = read_ns(clock), end = start + (long long)(seconds * 1e9);
  long long previous = start, total = 0, smallest = -1;
  while (previous < end) {
    const long long now = read_ns(clock), step = now - previous;
    if (smallest < 0 || step < smallest) smallest = step;
    if (step > limit) {
      printf("%lld %lld\n", previous - start, step);
      total += step;
      if (count == capacity) {
        long long* more = realloc(lengths, 2 * capacity * sizeof *lengths);
        if (!more) return 1;
        lengths = more, capacity *= 2;
      }
      lengths[count++] = step;
    }
    previous = now;
  }
  if (fflush(stdout) != 0) return 1;
  if (smallest > limit) {
    /* Every gap was a detour: the trace would leave no time to compute. */
    fprintf(stderr,
            "selfish_detour: every step of the loop (the smallest %lld ns) is longer than --threshold %lld ns; "
            "raise --threshold above it\n",
            smallest, limit);
    free(lengths);
    return 1;
  }
  qsort(lengths, count, sizeof *lengths, by_value);
  fprintf(stderr,
          "selfish_detour: %zu detours over %lld ns in %.3f s of %s time (%.3f %%, one every %.1f us), smallest step "
          "%lld ns\n",
          count, limit, seconds, clock == CLOCK_MONOTONIC ? "wall" : "thread CPU",
          100.0 * (double)total / (seconds * 1e9), count ? seconds * 1e6 / (double)count : 0.0, smallest);
  if (count)
    fprintf(stderr, "selfish_detour: lengths (ns): median %lld, 90th %lld, 99th %lld, largest %lld\n",
            lengths[count / 2], lengths[count * 9 / 10], lengths[count * 99 / 100], lengths[count - 1]);
  free(lengths);
  return 0;
}
