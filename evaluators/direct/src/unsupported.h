// A function of MPI 3.1 outside what the simulated MPI runs: the run stops
// with one line naming it (generated/stubs.cpp calls this).
#pragma once

#include "mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

int poems_unsupported(const char* function);

#ifdef __cplusplus
}
#endif
