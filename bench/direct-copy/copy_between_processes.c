// What a block costs to move between two rank processes (process_vm_readv,
// the kernel pinning the other process's pages and copying) against a memcpy
// inside one address space (SMPI's ranks, threads of one process), both
// buffers resident (docs/PERFORMANCE.md, "All-to-all data moved once").
//   cc -O2 -o copy_between_processes copy_between_processes.c && ./copy_between_processes
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(void) {
  const size_t sizes[] = {64 << 10, 256 << 10, 2 << 20, 8 << 20};
  const size_t largest = 8 << 20;
  char* source = malloc(largest);
  if (!source) return perror("malloc"), 2;
  memset(source, 1, largest);
  pid_t parent = getpid();
  int ready[2];
  if (pipe(ready) != 0) return perror("pipe"), 2;
  pid_t child = fork();
  if (child < 0) return perror("fork"), 2;
  if (child > 0) {  // the parent only keeps its buffer alive
    close(ready[1]);
    char c;
    while (read(ready[0], &c, 1) > 0) {
    }
    waitpid(child, NULL, 0);
    return 0;
  }
  char* local = malloc(largest);
  char* target = malloc(largest);
  if (!local || !target) return perror("malloc"), 2;
  memset(local, 2, largest);
  memset(target, 3, largest);
  printf("%10s %14s %14s %10s\n", "bytes", "memcpy us", "vm_readv us", "ratio");
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    size_t bytes = sizes[i];
    int reps = (int)((64u << 20) / bytes) + 5;
    double best_copy = 1e30, best_readv = 1e30;
    for (int round = 0; round < 5; ++round) {
      double a = now_us();
      for (int r = 0; r < reps; ++r) {
        memcpy(target, local, bytes);
        __asm__ volatile("" ::"r"(target) : "memory");
      }
      double b = now_us();
      for (int r = 0; r < reps; ++r) {
        struct iovec here = {target, bytes}, there = {source, bytes};
        if (process_vm_readv(parent, &here, 1, &there, 1, 0) != (ssize_t)bytes) return perror("process_vm_readv"), 2;
      }
      double c = now_us();
      if ((b - a) / reps < best_copy) best_copy = (b - a) / reps;
      if ((c - b) / reps < best_readv) best_readv = (c - b) / reps;
    }
    printf("%10zu %14.2f %14.2f %10.2f\n", bytes, best_copy, best_readv, best_readv / best_copy);
  }
  close(ready[1]);
  return 0;
}
