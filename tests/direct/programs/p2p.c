/* Point to point: every send mode, the wait and test families, probes and
 * counts, persistent requests, MPI_PROC_NULL and MPI_ANY_SOURCE. Prints the
 * same lines under mpirun and under `poems direct` (sorted, rank-prefixed).
 * Run with 2 or more ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;

  /* Every blocking mode around the ring; rank 0 sends first. */
  int modes[4] = {0, 0, 0, 0};
  for (int m = 0; m < 4; ++m) {
    int v = 100 * m + rank, got = -1;
    if (rank == 0) {
      if (m == 0) MPI_Send(&v, 1, MPI_INT, next, m, MPI_COMM_WORLD);
      if (m == 1) MPI_Ssend(&v, 1, MPI_INT, next, m, MPI_COMM_WORLD);
      if (m == 2) {
        int bufsize = 1024 + MPI_BSEND_OVERHEAD;
        char* buf = malloc((size_t)bufsize);
        MPI_Buffer_attach(buf, bufsize);
        MPI_Bsend(&v, 1, MPI_INT, next, m, MPI_COMM_WORLD);
        MPI_Buffer_detach(&buf, &bufsize);
        free(buf);
      }
      if (m == 3) MPI_Send(&v, 1, MPI_INT, next, m, MPI_COMM_WORLD); /* Rsend needs a posted receive: below */
      MPI_Recv(&got, 1, MPI_INT, prev, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&got, 1, MPI_INT, prev, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      v = got + 1;
      if (m == 1)
        MPI_Ssend(&v, 1, MPI_INT, next, m, MPI_COMM_WORLD);
      else
        MPI_Send(&v, 1, MPI_INT, next, m, MPI_COMM_WORLD);
    }
    modes[m] = got;
  }
  printf("%d: ring %d %d %d %d\n", rank, modes[0], modes[1], modes[2], modes[3]);

  /* Ready send: the receiver posts, then tells the sender (barrier). */
  int ready = -1;
  MPI_Request rq;
  if (rank == 1) MPI_Irecv(&ready, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &rq);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int x = 77;
    MPI_Rsend(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
  }
  if (rank == 1) {
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    printf("%d: rsend %d\n", rank, ready);
  }

  /* Nonblocking exchange with everyone; waitany collects in any order. */
  int* in = malloc(sizeof(int) * (size_t)size);
  int* out = malloc(sizeof(int) * (size_t)size);
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
  for (int p = 0; p < size; ++p) {
    out[p] = rank * 1000 + p;
    MPI_Irecv(&in[p], 1, MPI_INT, p, 11, MPI_COMM_WORLD, &reqs[p]);
  }
  for (int p = 0; p < size; ++p) {
    if (p % 2)
      MPI_Issend(&out[p], 1, MPI_INT, p, 11, MPI_COMM_WORLD, &reqs[size + p]);
    else
      MPI_Isend(&out[p], 1, MPI_INT, p, 11, MPI_COMM_WORLD, &reqs[size + p]);
  }
  long sum = 0;
  for (int k = 0; k < size; ++k) {
    int index;
    MPI_Status st;
    MPI_Waitany(size, reqs, &index, &st);
    if (st.MPI_SOURCE != index || st.MPI_TAG != 11) printf("%d: bad status %d %d\n", rank, st.MPI_SOURCE, st.MPI_TAG);
    sum += in[index];
  }
  int index;
  MPI_Waitany(size, reqs, &index, MPI_STATUS_IGNORE);
  printf("%d: waitany sum %ld, then %s\n", rank, sum, index == MPI_UNDEFINED ? "undefined" : "defined");
  int flag = 0;
  while (!flag) MPI_Testall(size, reqs + size, &flag, MPI_STATUSES_IGNORE);
  printf("%d: testall done\n", rank);

  /* Waitsome and testsome over a second exchange. */
  for (int p = 0; p < size; ++p) {
    MPI_Irecv(&in[p], 1, MPI_INT, p, 12, MPI_COMM_WORLD, &reqs[p]);
    MPI_Isend(&out[p], 1, MPI_INT, p, 12, MPI_COMM_WORLD, &reqs[size + p]);
  }
  int done = 0, outcount;
  int* idx = malloc(sizeof(int) * 2 * (size_t)size);
  while (done < size) {
    MPI_Waitsome(size, reqs, &outcount, idx, MPI_STATUSES_IGNORE);
    done += outcount;
  }
  done = 0;
  while (done < size) {
    MPI_Testsome(size, reqs + size, &outcount, idx, MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED) done += outcount;
  }
  sum = 0;
  for (int p = 0; p < size; ++p) sum += in[p];
  printf("%d: waitsome sum %ld\n", rank, sum);

  /* Testany until one completes. */
  if (rank == 0) {
    double big[300];
    for (int i = 0; i < 300; ++i) big[i] = i * 0.5;
    for (int p = 1; p < size; ++p) MPI_Send(big, 300, MPI_DOUBLE, p, 13, MPI_COMM_WORLD);
  } else {
    double big[300];
    MPI_Request r1;
    MPI_Irecv(big, 300, MPI_DOUBLE, 0, 13, MPI_COMM_WORLD, &r1);
    int which = -1, f = 0;
    while (!f) MPI_Testany(1, &r1, &which, &f, MPI_STATUS_IGNORE);
    printf("%d: testany %d %.1f\n", rank, which, big[299]);
  }

  /* Probe, Iprobe and Get_count on a message whose length the receiver does not know. */
  if (rank == 0) {
    for (int p = 1; p < size; ++p) {
      int n = 3 + p;
      int data[16];
      for (int i = 0; i < n; ++i) data[i] = p * i;
      MPI_Send(data, n, MPI_INT, p, 20 + p, MPI_COMM_WORLD);
    }
  } else {
    MPI_Status st;
    int f = 0;
    /* Any tag from rank 0 (the previous rank's tag-30 message below may already be here), then any source with that
     * tag. */
    while (!f) MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &f, &st);
    MPI_Probe(MPI_ANY_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
    int n;
    MPI_Get_count(&st, MPI_INT, &n);
    int data[16];
    MPI_Recv(data, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
    int bytes;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    printf("%d: probed tag %d count %d bytes %d last %d\n", rank, st.MPI_TAG, n, bytes, data[n - 1]);
  }

  /* Persistent requests: three rounds around the ring. */
  int token = rank, incoming = -1;
  MPI_Request pr[2];
  MPI_Send_init(&token, 1, MPI_INT, next, 30, MPI_COMM_WORLD, &pr[0]);
  MPI_Recv_init(&incoming, 1, MPI_INT, prev, 30, MPI_COMM_WORLD, &pr[1]);
  for (int round = 0; round < 3; ++round) {
    MPI_Startall(2, pr);
    MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    token = incoming + 1;
  }
  MPI_Request_free(&pr[0]);
  MPI_Request_free(&pr[1]);
  printf("%d: persistent %d\n", rank, token);

  /* Sendrecv, Sendrecv_replace, MPI_PROC_NULL. */
  int a = rank, b = -1;
  MPI_Sendrecv(&a, 1, MPI_INT, next, 40, &b, 1, MPI_INT, prev, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int c = rank * 10;
  MPI_Sendrecv_replace(&c, 1, MPI_INT, prev, 41, next, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Status nst;
  int d = 5;
  MPI_Recv(&d, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &nst);
  int nc;
  MPI_Get_count(&nst, MPI_INT, &nc);
  printf("%d: sendrecv %d replace %d procnull %d %d %d\n", rank, b, c, nst.MPI_SOURCE == MPI_PROC_NULL, nc, d);

  /* ANY_SOURCE: rank 0 gathers one message from each other rank. */
  if (rank == 0) {
    long total = 0;
    for (int k = 1; k < size; ++k) {
      int v;
      MPI_Status st;
      MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &st);
      total += v * 10 + st.MPI_SOURCE;
    }
    printf("%d: any_source %ld\n", rank, total);
  } else {
    int v = rank * rank;
    MPI_Send(&v, 1, MPI_INT, 0, 50, MPI_COMM_WORLD);
  }
  free(in);
  free(out);
  free(reqs);
  free(idx);
  MPI_Finalize();
  return 0;
}
