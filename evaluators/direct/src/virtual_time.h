// The C library's clocks and sleeps in virtual time: a program that times
// itself with gettimeofday, clock_gettime, time or std::chrono, or sleeps,
// sees the simulated clock of its rank (MPI_Wtime's). CPU-time clocks
// (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, clock(), getrusage)
// stay the host's: under --compute measured they are what the simulation
// charges. Outside a rank (the controller, a program run without ranks)
// every call is the C library's.
#pragma once

#include <time.h>

namespace poems::direct::detail {

// The C library's clock_gettime, whatever this library interposes.
int real_clock_gettime(clockid_t clock, timespec* ts);

// Finds a sanitizer runtime's clock_gettime interceptor, if one is loaded
// (the runtime calls it before any rank runs): see clock_gettime.
void find_sanitizer_clock();

}  // namespace poems::direct::detail
