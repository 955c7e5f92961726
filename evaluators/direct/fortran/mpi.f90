! The Fortran module of the simulated MPI (`use mpi`): the constants and
! sentinels of mpif.h. Procedures have implicit interfaces, as with mpif.h;
! the compiler wrappers pass -fallow-argument-mismatch so one routine may be
! called with buffers of different types.
module mpi
  implicit none
  include 'mpif.h'
end module mpi
