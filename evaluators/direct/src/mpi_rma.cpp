// One-sided communication (MPI 3.1 chapter 11): to come.
#include "api.h"
