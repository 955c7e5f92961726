/* A 2-D Jacobi solver: the application of docs/tutorial.md, modelled in
 * jacobi.psl. Laplace's equation on an nx x ny grid split over a px x py
 * process grid; each iteration exchanges one-cell halos with the four
 * neighbours (MPI_Isend/MPI_Irecv), applies the 5-point stencil, and every
 * `check` iterations sums the squared update with MPI_Allreduce.
 *
 *   jacobi NX NY PX PY ITERATIONS [CHECK]   the solver (under mpirun or poems direct)
 *   jacobi --kernel ROWS COLS                the stencil alone on one ROWS x COLS block
 *
 * The solver prints "jacobi time_s=T residual=R" (T: the iteration loop of
 * the slowest process, in seconds); the kernel prints "kernel_s=T" for
 * several samples (T: one sweep, in seconds), without starting MPI. Built
 * with poems-mpicc, each sweep declares its work (one unit per cell) with
 * POEMS_Compute, so direct execution can price it with the model's processor. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One sweep over the rows x cols interior of u (row length cols + 2) into v;
 * returns the sum of squared updates. */
static double sweep(const double* u, double* v, int rows, int cols) {
  const int w = cols + 2;
  double sum = 0;
  for (int i = 1; i <= rows; ++i)
    for (int j = 1; j <= cols; ++j) {
      const double x = 0.25 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1]);
      const double d = x - u[i * w + j];
      v[i * w + j] = x;
      sum += d * d;
    }
  return sum;
}

static double* block(int rows, int cols) {
  double* a = calloc((size_t)(rows + 2) * (size_t)(cols + 2), sizeof(double));
  if (!a) {
    fprintf(stderr, "jacobi: out of memory for a %d x %d block\n", rows, cols);
    exit(1);
  }
  return a;
}

static int positive(const char* text, const char* name) {
  char* end = NULL;
  const long v = strtol(text, &end, 10);
  if (!*text || *end || v < 1 || v > 1000000000L) {
    fprintf(stderr, "jacobi: %s = '%s' is not an integer in 1..1000000000\n", name, text);
    exit(2);
  }
  return (int)v;
}

/* The stencil alone, on a block laid out and started as the solver's (a hot
 * edge, zeros elsewhere): 5 samples, each the mean sweep of a batch lasting
 * at least 20 ms, after one such batch of warm-up. */
static int kernel(int rows, int cols) {
  double *u = block(rows, cols), *v = block(rows, cols);
  for (int j = 0; j < cols + 2; ++j) u[j] = v[j] = 1.0;
  double sink = 0;
  int batch = 0;
  for (const double t0 = now_s(); now_s() - t0 < 20e-3; ++batch) {
    sink += sweep(u, v, rows, cols);
    double* t = u;
    u = v;
    v = t;
  }
  for (int s = 0; s < 5; ++s) {
    const double t0 = now_s();
    for (int b = 0; b < batch; ++b) {
      sink += sweep(u, v, rows, cols);
      double* t = u;
      u = v;
      v = t;
    }
    printf("kernel_s=%.9e\n", (now_s() - t0) / batch);
  }
  fprintf(stderr, "checksum %g\n", sink);
  free(u);
  free(v);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "--kernel") == 0)
    return kernel(positive(argv[2], "ROWS"), positive(argv[3], "COLS"));
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 6 || argc > 7) {
    if (rank == 0) fprintf(stderr, "usage: jacobi NX NY PX PY ITERATIONS [CHECK] | jacobi --kernel ROWS COLS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int nx = positive(argv[1], "NX"), ny = positive(argv[2], "NY"), px = positive(argv[3], "PX"),
            py = positive(argv[4], "PY"), iterations = positive(argv[5], "ITERATIONS"),
            check = argc == 7 ? positive(argv[6], "CHECK") : 10;
  if (px * py != size || nx < px || ny < py) {
    if (rank == 0) fprintf(stderr, "jacobi: PX * PY = %d processes for %d, each with at least one cell\n", px * py, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* Rank (pi, pj) of the grid; the remainder cells go to the lowest ranks. */
  const int pi = rank / py, pj = rank % py;
  const int rows = nx / px + (pi < nx % px), cols = ny / py + (pj < ny % py), w = cols + 2;
  const int north = pi > 0 ? rank - py : MPI_PROC_NULL, south = pi < px - 1 ? rank + py : MPI_PROC_NULL;
  const int west = pj > 0 ? rank - 1 : MPI_PROC_NULL, east = pj < py - 1 ? rank + 1 : MPI_PROC_NULL;
  double *u = block(rows, cols), *v = block(rows, cols);
  double *west_out = malloc(sizeof(double) * (size_t)rows), *east_out = malloc(sizeof(double) * (size_t)rows);
  double *west_in = malloc(sizeof(double) * (size_t)rows), *east_in = malloc(sizeof(double) * (size_t)rows);
  /* The initial guess, written before the timed loop (so the loop does not
   * pay the first touch of the blocks' pages): zero, with a hot edge. */
  for (int i = 0; i < (rows + 2) * w; ++i) u[i] = v[i] = 0.0;
  if (pi == 0)
    for (int j = 0; j < w; ++j) u[j] = v[j] = 1.0;

  double residual = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int it = 1; it <= iterations; ++it) {
    MPI_Request r[8];
    for (int i = 0; i < rows; ++i) west_out[i] = u[(i + 1) * w + 1], east_out[i] = u[(i + 1) * w + cols];
    MPI_Irecv(u, w, MPI_DOUBLE, north, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(u + (rows + 1) * w, w, MPI_DOUBLE, south, 1, MPI_COMM_WORLD, &r[1]);
    MPI_Irecv(west_in, rows, MPI_DOUBLE, west, 2, MPI_COMM_WORLD, &r[2]);
    MPI_Irecv(east_in, rows, MPI_DOUBLE, east, 3, MPI_COMM_WORLD, &r[3]);
    MPI_Isend(u + (rows)*w, w, MPI_DOUBLE, south, 0, MPI_COMM_WORLD, &r[4]);
    MPI_Isend(u + w, w, MPI_DOUBLE, north, 1, MPI_COMM_WORLD, &r[5]);
    MPI_Isend(east_out, rows, MPI_DOUBLE, east, 2, MPI_COMM_WORLD, &r[6]);
    MPI_Isend(west_out, rows, MPI_DOUBLE, west, 3, MPI_COMM_WORLD, &r[7]);
    MPI_Waitall(8, r, MPI_STATUSES_IGNORE);
    if (west != MPI_PROC_NULL)
      for (int i = 0; i < rows; ++i) u[(i + 1) * w] = west_in[i];
    if (east != MPI_PROC_NULL)
      for (int i = 0; i < rows; ++i) u[(i + 1) * w + cols + 1] = east_in[i];
    double local = sweep(u, v, rows, cols);
#ifdef POEMS_DIRECT_MPI
    POEMS_Compute((double)rows * (double)cols);
#endif
    double* t = u;
    u = v;
    v = t;
    if (it % check == 0) MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  double elapsed = MPI_Wtime() - t0, slowest = 0;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("jacobi time_s=%.9f residual=%.12e\n", slowest, residual);
  free(u), free(v), free(west_out), free(east_out), free(west_in), free(east_in);
  MPI_Finalize();
  return 0;
}
