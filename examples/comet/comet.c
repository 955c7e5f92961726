/* CoMet: the communication kernels of the CoMet benchmark of message-passing
 * machines, as one MPI program (C99, MPI + libc + libm only).
 *
 * Kernels (--kernels, default all, run in the order given):
 *   echo       ping-pong between ranks 0 and 1; time = round trip / 2
 *   pairwise   ranks i <-> i^1 exchange at once (MPI_Sendrecv)
 *   broadcast  MPI_Bcast from rank 0
 *   reduce     MPI_Reduce of doubles (sum) to rank 0
 *   allreduce  MPI_Allreduce of doubles (sum)
 *   barrier    MPI_Barrier
 *   contention ranks 0 and 1 exchange while --load of the other ranks
 *              exchange in pairs among themselves (cross traffic)
 *   overlap    Irecv + Isend, a DAXPY of --daxpy elements, Waitall
 *   guard      halo exchange with the 4 neighbours of a periodic 2-D grid
 *   shift      circular shift: send to rank+1, receive from rank-1 (mod P)
 *   transpose  MPI_Alltoall transpose of an N x N matrix of doubles by rows
 *   rowbcast   MPI_Bcast within each row of the --grid RxC process grid
 *   colbcast   MPI_Bcast within each column of the grid
 *
 * Method: the timer's resolution is measured and printed; every timed
 * repetition starts after a barrier; --warmup repetitions are not counted;
 * each repetition's time is the slowest rank's (MPI_MAX over ranks); per
 * kernel and size the minimum, median and maximum over --reps are printed
 * by rank 0 (examples/comet/README.md gives the output format).
 *
 * Bad arguments are found by every rank the same way before any
 * communication: rank 0 names the parameter and its range on stderr and all
 * ranks exit with status 2. */

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMET_MAX_SIZES 64
#define COMET_MAX_KERNELS 64
#define COMET_MAX_BYTES (16L * 1024L * 1024L)
#define COMET_MAX_REPS 1000000L
#define COMET_MAX_DAXPY 100000000L
#define COMET_MAX_MATRIX 8192L
#define COMET_TIMER_READS 10000

enum kernel_id {
  K_ECHO,
  K_PAIRWISE,
  K_BROADCAST,
  K_REDUCE,
  K_ALLREDUCE,
  K_BARRIER,
  K_CONTENTION,
  K_OVERLAP,
  K_GUARD,
  K_SHIFT,
  K_TRANSPOSE,
  K_ROWBCAST,
  K_COLBCAST,
  K_COUNT
};

static const char* const kernel_names[K_COUNT] = {"echo",      "pairwise",   "broadcast", "reduce", "allreduce",
                                                  "barrier",   "contention", "overlap",   "guard",  "shift",
                                                  "transpose", "rowbcast",   "colbcast"};

/* Kernels that exchange between two ranks and cannot run on one. */
static int kernel_needs_two(int k) { return k == K_ECHO || k == K_PAIRWISE || k == K_CONTENTION || k == K_OVERLAP; }

struct options {
  int kernels[COMET_MAX_KERNELS];
  int nkernels;
  long sizes[COMET_MAX_SIZES];
  int nsizes;
  long reps, warmup, daxpy, matrix;
  double load;
  int grid_rows, grid_cols;
  int json, help;
};

struct context {
  struct options opt;
  int rank, size;
  MPI_Comm row_comm, col_comm;
  char *sbuf, *rbuf;     /* rbuf holds 4 messages (guard) */
  double *dsend, *drecv; /* reduce, allreduce */
  double *x, *y;         /* DAXPY */
  double *times, *maxtimes, *sorted;
  int first_result;
};

/* ---- argument checking (no communication) ---------------------------------- */

static int bad(int rank, const char* param, const char* value, const char* allowed) {
  if (rank == 0) fprintf(stderr, "comet: %s: \"%s\" is not allowed; allowed: %s\n", param, value, allowed);
  return 0;
}

/* The next comma-separated item of *cursor (which advances), NULL at the end. */
static char* next_item(char** cursor) {
  char* item = *cursor;
  if (!item) return NULL;
  char* comma = strchr(item, ',');
  if (comma) {
    *comma = '\0';
    *cursor = comma + 1;
  } else {
    *cursor = NULL;
  }
  return item;
}

/* An integer in [lo, hi], with an optional K (1024) or M (1024^2) suffix if suffixes. */
static int parse_long(const char* text, long lo, long hi, int suffixes, long* out) {
  const char* p = text;
  long v = 0;
  if (*p < '0' || *p > '9') return 0;
  while (*p >= '0' && *p <= '9') {
    if (v > (hi + 9) / 10 + 1) return 0; /* far above hi: stop before overflow */
    v = v * 10 + (*p - '0');
    ++p;
  }
  if (suffixes && (*p == 'K' || *p == 'k')) {
    if (v > hi / 1024 + 1) return 0;
    v *= 1024;
    ++p;
  } else if (suffixes && (*p == 'M' || *p == 'm')) {
    if (v > hi / (1024L * 1024L) + 1) return 0;
    v *= 1024L * 1024L;
    ++p;
  }
  if (*p != '\0' || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static int parse_kernels(const char* text, struct options* o, int rank) {
  char list[1024];
  char allowed[512] = "a comma-separated list of: all";
  for (int k = 0; k < K_COUNT; ++k) {
    strcat(allowed, ", ");
    strcat(allowed, kernel_names[k]);
  }
  if (strlen(text) >= sizeof list) return bad(rank, "--kernels", text, allowed);
  strcpy(list, text);
  o->nkernels = 0;
  char* cursor = list;
  for (char* item = next_item(&cursor); item; item = next_item(&cursor)) {
    if (strcmp(item, "all") == 0) {
      for (int k = 0; k < K_COUNT && o->nkernels < COMET_MAX_KERNELS; ++k) o->kernels[o->nkernels++] = k;
      continue;
    }
    int found = -1;
    for (int k = 0; k < K_COUNT; ++k)
      if (strcmp(item, kernel_names[k]) == 0) found = k;
    if (found < 0) return bad(rank, "--kernels", item, allowed);
    if (o->nkernels == COMET_MAX_KERNELS) return bad(rank, "--kernels", text, "at most 64 kernels");
    o->kernels[o->nkernels++] = found;
  }
  if (o->nkernels == 0) return bad(rank, "--kernels", text, allowed);
  return 1;
}

static int parse_sizes(const char* text, struct options* o, int rank) {
  const char* allowed =
      "a comma-separated list of at most 64 sizes in bytes from 0 to 16M (suffix K = 1024, M = 1024K)";
  char list[1024];
  if (strlen(text) >= sizeof list || text[0] == '\0' || text[0] == ',' || text[strlen(text) - 1] == ',' ||
      strstr(text, ",,"))
    return bad(rank, "--sizes", text, allowed);
  strcpy(list, text);
  o->nsizes = 0;
  char* cursor = list;
  for (char* item = next_item(&cursor); item; item = next_item(&cursor)) {
    long v;
    if (o->nsizes == COMET_MAX_SIZES || !parse_long(item, 0, COMET_MAX_BYTES, 1, &v))
      return bad(rank, "--sizes", item, allowed);
    o->sizes[o->nsizes++] = v;
  }
  return 1;
}

static int parse_grid(const char* text, struct options* o, int rank, int nranks) {
  char allowed[160];
  snprintf(allowed, sizeof allowed, "RxC with R, C >= 1 and R * C = the number of ranks (%d)", nranks);
  const char* x = strchr(text, 'x');
  if (!x) return bad(rank, "--grid", text, allowed);
  char r[32];
  long rows, cols;
  size_t n = (size_t)(x - text);
  if (n >= sizeof r) return bad(rank, "--grid", text, allowed);
  memcpy(r, text, n);
  r[n] = '\0';
  if (!parse_long(r, 1, nranks, 0, &rows) || !parse_long(x + 1, 1, nranks, 0, &cols) || rows * cols != nranks)
    return bad(rank, "--grid", text, allowed);
  o->grid_rows = (int)rows;
  o->grid_cols = (int)cols;
  return 1;
}

static void usage(void) {
  printf(
      "usage: comet [--kernels LIST] [--sizes LIST] [--reps N] [--warmup N] [--load F]\n"
      "             [--daxpy N] [--matrix N] [--grid RxC] [--json]\n"
      "  --kernels  all (default) or a comma-separated list of:\n"
      "             echo pairwise broadcast reduce allreduce barrier contention overlap\n"
      "             guard shift transpose rowbcast colbcast\n"
      "  --sizes    message sizes in bytes, 0..16M, K/M suffixes (default 0,1,8,64,512,4K,32K,256K,1M)\n"
      "  --reps     timed repetitions, 1..1000000 (default 10)\n"
      "  --warmup   untimed repetitions first, 0..1000000 (default 2)\n"
      "  --load     contention: fraction 0..1 of the other ranks exchanging at once (default 1)\n"
      "  --daxpy    overlap: DAXPY elements, 0..100000000 (default 100000)\n"
      "  --matrix   transpose: N, a multiple of the number of ranks, up to 8192 (default 256 rounded up)\n"
      "  --grid     process grid RxC, R * C = number of ranks (default the squarest)\n"
      "  --json     one JSON document instead of lines\n");
}

/* Every rank parses the same argv the same way, so all agree on failure. */
static int parse_options(int argc, char** argv, struct options* o, int rank, int nranks) {
  static const long default_sizes[] = {0, 1, 8, 64, 512, 4096, 32768, 262144, 1048576};
  memset(o, 0, sizeof *o);
  for (int k = 0; k < K_COUNT; ++k) o->kernels[o->nkernels++] = k;
  o->nsizes = (int)(sizeof default_sizes / sizeof default_sizes[0]);
  memcpy(o->sizes, default_sizes, sizeof default_sizes);
  o->reps = 10;
  o->warmup = 2;
  o->load = 1.0;
  o->daxpy = 100000;
  o->matrix = ((256 + nranks - 1) / nranks) * nranks; /* over 8192 only with more ranks */
  o->grid_rows = 1;
  for (int r = 1; (long)r * r <= nranks; ++r)
    if (nranks % r == 0) o->grid_rows = r;
  o->grid_cols = nranks / o->grid_rows;

  for (int i = 1; i < argc; ++i) {
    char name[64];
    const char* arg = argv[i];
    const char* value = NULL;
    const char* eq = strchr(arg, '=');
    if (strncmp(arg, "--", 2) == 0 && eq && (size_t)(eq - arg) < sizeof name) {
      memcpy(name, arg, (size_t)(eq - arg));
      name[eq - arg] = '\0';
      value = eq + 1;
    } else {
      snprintf(name, sizeof name, "%s", arg);
    }
    if (strcmp(name, "--json") == 0 && !value) {
      o->json = 1;
      continue;
    }
    if ((strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) && !value) {
      o->help = 1;
      continue;
    }
    static const char* const valued[] = {"--kernels", "--sizes", "--reps",   "--warmup",
                                         "--load",    "--daxpy", "--matrix", "--grid"};
    int known = 0;
    for (size_t j = 0; j < sizeof valued / sizeof valued[0]; ++j)
      if (strcmp(name, valued[j]) == 0) known = 1;
    if (!known)
      return bad(rank, "option", arg,
                 "--kernels, --sizes, --reps, --warmup, --load, --daxpy, --matrix, --grid, --json, --help");
    if (!value) {
      if (i + 1 >= argc) return bad(rank, name, "", "a value after the option");
      value = argv[++i];
    }
    if (strcmp(name, "--kernels") == 0) {
      if (!parse_kernels(value, o, rank)) return 0;
    } else if (strcmp(name, "--sizes") == 0) {
      if (!parse_sizes(value, o, rank)) return 0;
    } else if (strcmp(name, "--reps") == 0) {
      if (!parse_long(value, 1, COMET_MAX_REPS, 0, &o->reps))
        return bad(rank, name, value, "an integer from 1 to 1000000");
    } else if (strcmp(name, "--warmup") == 0) {
      if (!parse_long(value, 0, COMET_MAX_REPS, 0, &o->warmup))
        return bad(rank, name, value, "an integer from 0 to 1000000");
    } else if (strcmp(name, "--daxpy") == 0) {
      if (!parse_long(value, 0, COMET_MAX_DAXPY, 0, &o->daxpy))
        return bad(rank, name, value, "an integer from 0 to 100000000");
    } else if (strcmp(name, "--matrix") == 0) {
      char allowed[128];
      snprintf(allowed, sizeof allowed, "a multiple of the number of ranks (%d) from %d to %ld", nranks, nranks,
               COMET_MAX_MATRIX);
      if (!parse_long(value, nranks, COMET_MAX_MATRIX, 0, &o->matrix) || o->matrix % nranks != 0)
        return bad(rank, name, value, allowed);
    } else if (strcmp(name, "--load") == 0) {
      char* end = NULL;
      double v = strtod(value, &end);
      if (end == value || *end != '\0' || !(v >= 0.0 && v <= 1.0))
        return bad(rank, name, value, "a number from 0 to 1");
      o->load = v;
    } else if (strcmp(name, "--grid") == 0) {
      if (!parse_grid(value, o, rank, nranks)) return 0;
    }
  }
  return 1;
}

/* ---- measurement ------------------------------------------------------------ */

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

struct stats {
  double min, median, max;
};

/* Min, median and max (ns) of the slowest rank's time per repetition. Collective. */
static struct stats reduce_times(struct context* c) {
  struct stats s = {0.0, 0.0, 0.0};
  const int n = (int)c->opt.reps;
  MPI_Allreduce(c->times, c->maxtimes, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (c->rank != 0) return s;
  memcpy(c->sorted, c->maxtimes, (size_t)n * sizeof(double));
  qsort(c->sorted, (size_t)n, sizeof(double), compare_doubles);
  s.min = c->sorted[0] * 1e9;
  s.max = c->sorted[n - 1] * 1e9;
  s.median = (n % 2 ? c->sorted[n / 2] : 0.5 * (c->sorted[n / 2 - 1] + c->sorted[n / 2])) * 1e9;
  return s;
}

/* The timer: MPI_Wtick and the smallest non-zero step between successive
 * MPI_Wtime reads (bounded: a clock that never moves, as virtual time
 * without computation, gives 0). */
static void measure_timer(double* wtick_ns, double* step_ns, long* reads) {
  double smallest = 0.0, previous = MPI_Wtime();
  int changes = 0;
  long i = 0;
  for (; i < COMET_TIMER_READS && changes < 1000; ++i) {
    const double now = MPI_Wtime();
    if (now > previous) {
      if (smallest == 0.0 || now - previous < smallest) smallest = now - previous;
      ++changes;
    }
    previous = now;
  }
  *wtick_ns = MPI_Wtick() * 1e9;
  *step_ns = smallest * 1e9;
  *reads = i + 1;
}

/* ---- kernels: one repetition each, returning this rank's time (s) ----------- */

static double run_echo(struct context* c, int bytes) {
  double t = 0.0;
  if (c->rank == 0) {
    const double t0 = MPI_Wtime();
    MPI_Send(c->sbuf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    MPI_Recv(c->rbuf, bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    t = (MPI_Wtime() - t0) / 2.0;
  } else if (c->rank == 1) {
    MPI_Recv(c->rbuf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(c->sbuf, bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
  }
  return t;
}

static double exchange(struct context* c, int partner, int bytes) {
  const double t0 = MPI_Wtime();
  MPI_Sendrecv(c->sbuf, bytes, MPI_BYTE, partner, 3, c->rbuf, bytes, MPI_BYTE, partner, 3, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  return MPI_Wtime() - t0;
}

static double run_pairwise(struct context* c, int bytes) {
  const int partner = c->rank ^ 1;
  return partner < c->size ? exchange(c, partner, bytes) : 0.0;
}

/* How many of the ranks 2..P-1 exchange in pairs (2,3), (4,5), ... while
 * ranks 0 and 1 are timed: --load of them, rounded to whole pairs. */
static int contention_active(const struct context* c) {
  const int others = c->size > 2 ? c->size - 2 : 0;
  int pairs = (int)floor(c->opt.load * others / 2.0 + 0.5);
  if (pairs > others / 2) pairs = others / 2;
  return 2 * pairs;
}

static double run_contention(struct context* c, int bytes) {
  if (c->rank < 2) return exchange(c, c->rank ^ 1, bytes);
  if (c->rank < 2 + contention_active(c)) exchange(c, c->rank ^ 1, bytes);
  return 0.0;
}

static double run_broadcast(struct context* c, int bytes) {
  const double t0 = MPI_Wtime();
  MPI_Bcast(c->sbuf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
  return MPI_Wtime() - t0;
}

static int doubles_of(long bytes) { return (int)((bytes + 7) / 8); }

static double run_reduce(struct context* c, int bytes, int all) {
  const double t0 = MPI_Wtime();
  if (all)
    MPI_Allreduce(c->dsend, c->drecv, doubles_of(bytes), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  else
    MPI_Reduce(c->dsend, c->drecv, doubles_of(bytes), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  return MPI_Wtime() - t0;
}

static double run_barrier(struct context* c) {
  (void)c;
  const double t0 = MPI_Wtime();
  MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Wtime() - t0;
}

static void daxpy(long n, double a, const double* x, double* y) {
  for (long i = 0; i < n; ++i) y[i] += a * x[i];
}

/* mode 0: communication alone, 1: with the DAXPY, 2: the DAXPY alone. */
static double run_overlap(struct context* c, int bytes, int mode) {
  const int partner = c->rank ^ 1;
  if (partner >= c->size) return 0.0;
  MPI_Request req[2];
  const double t0 = MPI_Wtime();
  if (mode != 2) {
    MPI_Irecv(c->rbuf, bytes, MPI_BYTE, partner, 4, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(c->sbuf, bytes, MPI_BYTE, partner, 4, MPI_COMM_WORLD, &req[1]);
  }
  if (mode != 0) daxpy(c->opt.daxpy, 1.0000001, c->x, c->y);
  if (mode != 2) MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  return MPI_Wtime() - t0;
}

/* Periodic RxC grid, rank = row * C + col. Tags name the direction of travel. */
static double run_guard(struct context* c, int bytes) {
  const int rows = c->opt.grid_rows, cols = c->opt.grid_cols;
  const int row = c->rank / cols, col = c->rank % cols;
  const int north = ((row + rows - 1) % rows) * cols + col, south = ((row + 1) % rows) * cols + col;
  const int west = row * cols + (col + cols - 1) % cols, east = row * cols + (col + 1) % cols;
  const int to[4] = {north, south, west, east};
  const int from[4] = {south, north, east, west}; /* the message travelling the same way */
  MPI_Request req[8];
  const double t0 = MPI_Wtime();
  for (int d = 0; d < 4; ++d)
    MPI_Irecv(c->rbuf + (size_t)d * (size_t)bytes, bytes, MPI_BYTE, from[d], 10 + d, MPI_COMM_WORLD, &req[d]);
  for (int d = 0; d < 4; ++d) MPI_Isend(c->sbuf, bytes, MPI_BYTE, to[d], 10 + d, MPI_COMM_WORLD, &req[4 + d]);
  MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
  return MPI_Wtime() - t0;
}

static double run_shift(struct context* c, int bytes) {
  const int next = (c->rank + 1) % c->size, previous = (c->rank + c->size - 1) % c->size;
  const double t0 = MPI_Wtime();
  MPI_Sendrecv(c->sbuf, bytes, MPI_BYTE, next, 5, c->rbuf, bytes, MPI_BYTE, previous, 5, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  return MPI_Wtime() - t0;
}

static double run_bcast_in(MPI_Comm comm, struct context* c, int bytes) {
  const double t0 = MPI_Wtime();
  MPI_Bcast(c->sbuf, bytes, MPI_BYTE, 0, comm);
  return MPI_Wtime() - t0;
}

/* The transpose of the N x N matrix A, rows distributed in blocks of b = N/P:
 * pack the P b x b blocks, MPI_Alltoall, transpose each block received. */
struct matrix {
  long n, b;
  double *a, *packed, *received, *t;
};

static void matrix_init(struct matrix* m, const struct context* c) {
  for (long i = 0; i < m->b; ++i)
    for (long j = 0; j < m->n; ++j) m->a[i * m->n + j] = (double)((c->rank * m->b + i) * m->n + j);
}

static double run_transpose(struct context* c, struct matrix* m) {
  const long n = m->n, b = m->b;
  const double t0 = MPI_Wtime();
  for (long p = 0; p < c->size; ++p)
    for (long i = 0; i < b; ++i) memcpy(m->packed + (p * b + i) * b, m->a + i * n + p * b, (size_t)b * sizeof(double));
  MPI_Alltoall(m->packed, (int)(b * b), MPI_DOUBLE, m->received, (int)(b * b), MPI_DOUBLE, MPI_COMM_WORLD);
  /* Block p holds rows p*b.. of A, columns rank*b..; T[i][p*b + j] = A[p*b + j][rank*b + i]. */
  for (long p = 0; p < c->size; ++p)
    for (long j = 0; j < b; ++j)
      for (long i = 0; i < b; ++i) m->t[i * n + p * b + j] = m->received[(p * b + j) * b + i];
  return MPI_Wtime() - t0;
}

/* 0 if this rank's rows of the transpose are right. */
static long matrix_errors(const struct matrix* m, const struct context* c) {
  long errors = 0;
  for (long i = 0; i < m->b; ++i)
    for (long j = 0; j < m->n; ++j)
      if (m->t[i * m->n + j] != (double)(j * m->n + c->rank * m->b + i)) ++errors;
  return errors;
}

/* ---- output ------------------------------------------------------------------ */

static void print_result(struct context* c, int kernel, long bytes, struct stats s, const char* extra_lines,
                         const char* extra_json) {
  if (c->rank != 0) return;
  if (c->opt.json) {
    printf(
        "%s\n    {\"kernel\": \"%s\", \"bytes\": %ld, \"reps\": %ld, \"min_ns\": %.1f, \"median_ns\": %.1f, "
        "\"max_ns\": %.1f%s}",
        c->first_result ? "" : ",", kernel_names[kernel], bytes, c->opt.reps, s.min, s.median, s.max, extra_json);
  } else {
    printf("comet kernel=%s bytes=%ld reps=%ld min_ns=%.1f median_ns=%.1f max_ns=%.1f%s\n", kernel_names[kernel], bytes,
           c->opt.reps, s.min, s.median, s.max, extra_lines);
  }
  c->first_result = 0;
  fflush(stdout);
}

static void print_skipped(struct context* c, int kernel) {
  if (c->rank != 0) return;
  if (c->opt.json)
    printf("%s\n    {\"kernel\": \"%s\", \"skipped\": \"needs at least 2 ranks\"}", c->first_result ? "" : ",",
           kernel_names[kernel]);
  else
    printf("comet kernel=%s skipped: needs at least 2 ranks\n", kernel_names[kernel]);
  c->first_result = 0;
  fflush(stdout);
}

/* ---- driver ------------------------------------------------------------------ */

/* Warm-up, then the timed repetitions, each after a barrier. */
#define REPEAT(c, body)                                                \
  do {                                                                 \
    for (long rep_ = -(c)->opt.warmup; rep_ < (c)->opt.reps; ++rep_) { \
      MPI_Barrier(MPI_COMM_WORLD);                                     \
      const double t_ = (body);                                        \
      if (rep_ >= 0) (c)->times[rep_] = t_;                            \
    }                                                                  \
  } while (0)

static int run_kernel(struct context* c, int k, struct matrix* m) {
  char extra[256] = "", extra_json[256] = "";
  if (kernel_needs_two(k) && c->size < 2) {
    print_skipped(c, k);
    return 0;
  }
  if (k == K_BARRIER) {
    REPEAT(c, run_barrier(c));
    print_result(c, k, 0, reduce_times(c), "", "");
    return 0;
  }
  if (k == K_TRANSPOSE) {
    matrix_init(m, c);
    REPEAT(c, run_transpose(c, m));
    long errors = matrix_errors(m, c), total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    snprintf(extra, sizeof extra, " matrix=%ld", m->n);
    snprintf(extra_json, sizeof extra_json, ", \"matrix\": %ld", m->n);
    print_result(c, k, m->b * m->b * (long)sizeof(double), reduce_times(c), extra, extra_json);
    if (total != 0) {
      if (c->rank == 0) fprintf(stderr, "comet: transpose: %ld elements wrong\n", total);
      return 1;
    }
    return 0;
  }
  for (int s = 0; s < c->opt.nsizes; ++s) {
    const int bytes = (int)c->opt.sizes[s];
    extra[0] = extra_json[0] = '\0';
    switch (k) {
      case K_ECHO: REPEAT(c, run_echo(c, bytes)); break;
      case K_PAIRWISE: REPEAT(c, run_pairwise(c, bytes)); break;
      case K_BROADCAST: REPEAT(c, run_broadcast(c, bytes)); break;
      case K_REDUCE: REPEAT(c, run_reduce(c, bytes, 0)); break;
      case K_ALLREDUCE: REPEAT(c, run_reduce(c, bytes, 1)); break;
      case K_CONTENTION:
        REPEAT(c, run_contention(c, bytes));
        snprintf(extra, sizeof extra, " load=%.3f active=%d", c->opt.load, contention_active(c));
        snprintf(extra_json, sizeof extra_json, ", \"load\": %.3f, \"active\": %d", c->opt.load, contention_active(c));
        break;
      case K_OVERLAP: {
        REPEAT(c, run_overlap(c, bytes, 0));
        const struct stats comm = reduce_times(c);
        REPEAT(c, run_overlap(c, bytes, 2));
        const struct stats work = reduce_times(c);
        REPEAT(c, run_overlap(c, bytes, 1));
        /* The share of the shorter of communication and DAXPY hidden behind the other (medians). */
        const double hidden = comm.median + work.median, shorter = fmin(comm.median, work.median);
        double fraction = 0.0;
        const struct stats both = reduce_times(c);
        if (shorter > 0.0) fraction = fmax(0.0, fmin(1.0, (hidden - both.median) / shorter));
        snprintf(extra, sizeof extra, " daxpy=%ld comm_median_ns=%.1f daxpy_median_ns=%.1f overlap=%.3f", c->opt.daxpy,
                 comm.median, work.median, fraction);
        snprintf(extra_json, sizeof extra_json,
                 ", \"daxpy\": %ld, \"comm_median_ns\": %.1f, \"daxpy_median_ns\": %.1f, \"overlap\": %.3f",
                 c->opt.daxpy, comm.median, work.median, fraction);
        print_result(c, k, bytes, both, extra, extra_json);
        continue;
      }
      case K_GUARD:
        REPEAT(c, run_guard(c, bytes));
        snprintf(extra, sizeof extra, " grid=%dx%d", c->opt.grid_rows, c->opt.grid_cols);
        snprintf(extra_json, sizeof extra_json, ", \"grid\": \"%dx%d\"", c->opt.grid_rows, c->opt.grid_cols);
        break;
      case K_SHIFT: REPEAT(c, run_shift(c, bytes)); break;
      case K_ROWBCAST:
      case K_COLBCAST:
        REPEAT(c, run_bcast_in(k == K_ROWBCAST ? c->row_comm : c->col_comm, c, bytes));
        snprintf(extra, sizeof extra, " grid=%dx%d", c->opt.grid_rows, c->opt.grid_cols);
        snprintf(extra_json, sizeof extra_json, ", \"grid\": \"%dx%d\"", c->opt.grid_rows, c->opt.grid_cols);
        break;
      default: break;
    }
    print_result(c, k, bytes, reduce_times(c), extra, extra_json);
  }
  return 0;
}

static void* allocate(size_t bytes) {
  void* p = calloc(bytes ? bytes : 1, 1);
  if (!p) {
    fprintf(stderr, "comet: out of memory (%zu bytes)\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

int main(int argc, char** argv) {
  struct context c;
  memset(&c, 0, sizeof c);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  if (!parse_options(argc, argv, &c.opt, c.rank, c.size)) {
    MPI_Finalize();
    return 2;
  }
  if (c.opt.help) {
    if (c.rank == 0) usage();
    MPI_Finalize();
    return 0;
  }

  long max_bytes = 0;
  for (int s = 0; s < c.opt.nsizes; ++s)
    if (c.opt.sizes[s] > max_bytes) max_bytes = c.opt.sizes[s];
  c.sbuf = allocate((size_t)max_bytes);
  c.rbuf = allocate(4 * (size_t)max_bytes);
  for (long i = 0; i < max_bytes; ++i) c.sbuf[i] = (char)(i * 7 + c.rank);
  c.dsend = allocate((size_t)doubles_of(max_bytes) * sizeof(double));
  c.drecv = allocate((size_t)doubles_of(max_bytes) * sizeof(double));
  for (int i = 0; i < doubles_of(max_bytes); ++i) c.dsend[i] = 1.0 + c.rank;
  c.x = allocate((size_t)c.opt.daxpy * sizeof(double));
  c.y = allocate((size_t)c.opt.daxpy * sizeof(double));
  for (long i = 0; i < c.opt.daxpy; ++i) c.x[i] = 0.5 + (double)(i % 7);
  c.times = allocate((size_t)c.opt.reps * sizeof(double));
  c.maxtimes = allocate((size_t)c.opt.reps * sizeof(double));
  c.sorted = allocate((size_t)c.opt.reps * sizeof(double));
  c.first_result = 1;

  int wants_transpose = 0, wants_grid_comms = 0;
  for (int i = 0; i < c.opt.nkernels; ++i) {
    wants_transpose |= c.opt.kernels[i] == K_TRANSPOSE;
    wants_grid_comms |= c.opt.kernels[i] == K_ROWBCAST || c.opt.kernels[i] == K_COLBCAST;
  }
  struct matrix m = {c.opt.matrix, c.opt.matrix / c.size, NULL, NULL, NULL, NULL};
  if (wants_transpose) {
    const size_t elements = (size_t)m.b * (size_t)m.n;
    m.a = allocate(elements * sizeof(double));
    m.packed = allocate(elements * sizeof(double));
    m.received = allocate(elements * sizeof(double));
    m.t = allocate(elements * sizeof(double));
  }
  c.row_comm = c.col_comm = MPI_COMM_NULL;
  if (wants_grid_comms) {
    MPI_Comm_split(MPI_COMM_WORLD, c.rank / c.opt.grid_cols, c.rank % c.opt.grid_cols, &c.row_comm);
    MPI_Comm_split(MPI_COMM_WORLD, c.rank % c.opt.grid_cols, c.rank / c.opt.grid_cols, &c.col_comm);
  }

  double wtick_ns, step_ns;
  long reads;
  measure_timer(&wtick_ns, &step_ns, &reads);
  if (c.rank == 0) {
    if (c.opt.json) {
      printf(
          "{\n  \"benchmark\": \"comet\",\n  \"ranks\": %d,\n  \"grid\": \"%dx%d\",\n  \"reps\": %ld,\n"
          "  \"warmup\": %ld,\n  \"load\": %.3f,\n  \"daxpy\": %ld,\n  \"matrix\": %ld,\n"
          "  \"timer\": {\"wtick_ns\": %.3f, \"resolution_ns\": %.1f, \"reads\": %ld},\n  \"results\": [",
          c.size, c.opt.grid_rows, c.opt.grid_cols, c.opt.reps, c.opt.warmup, c.opt.load, c.opt.daxpy, c.opt.matrix,
          wtick_ns, step_ns, reads);
    } else {
      printf("# comet ranks=%d grid=%dx%d reps=%ld warmup=%ld load=%.3f daxpy=%ld matrix=%ld\n", c.size,
             c.opt.grid_rows, c.opt.grid_cols, c.opt.reps, c.opt.warmup, c.opt.load, c.opt.daxpy, c.opt.matrix);
      printf("# timer wtick_ns=%.3f resolution_ns=%.1f reads=%ld\n", wtick_ns, step_ns, reads);
    }
    fflush(stdout);
  }

  int failed = 0;
  for (int i = 0; i < c.opt.nkernels; ++i) failed |= run_kernel(&c, c.opt.kernels[i], &m);

  if (c.rank == 0 && c.opt.json) {
    printf("\n  ]\n}\n");
    fflush(stdout);
  }
  /* Keep the DAXPY's result observable. */
  if (c.opt.daxpy > 0 && c.y[0] < -1.0) printf("# %g\n", c.y[0]);
  if (c.row_comm != MPI_COMM_NULL) MPI_Comm_free(&c.row_comm);
  if (c.col_comm != MPI_COMM_NULL) MPI_Comm_free(&c.col_comm);
  free(m.a);
  free(m.packed);
  free(m.received);
  free(m.t);
  free(c.sbuf);
  free(c.rbuf);
  free(c.dsend);
  free(c.drecv);
  free(c.x);
  free(c.y);
  free(c.times);
  free(c.maxtimes);
  free(c.sorted);
  MPI_Finalize();
  return failed;
}
