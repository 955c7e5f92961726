! The communication of communicators.c in Fortran with `use mpi`:
! MPI_Comm_split, MPI_Comm_dup, MPI_Comm_free; checked against
! tests/trace/communicators.goal.
program communicators
  use mpi
  implicit none
  character :: buf(1000)
  double precision :: x
  integer :: rank, size, in_half, n, half, dup, ierr
  buf = ' '
  x = 1
  n = 1
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (size /= 4) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
  call MPI_Comm_rank(half, in_half, ierr)
  call MPI_Bcast(buf, 100, MPI_CHARACTER, 0, half, ierr)
  if (in_half == 0) then
    call MPI_Send(buf, 500, MPI_CHARACTER, 1, 0, half, ierr)
  else
    call MPI_Recv(buf, 500, MPI_CHARACTER, 0, 0, half, MPI_STATUS_IGNORE, ierr)
  end if
  call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE_PRECISION, MPI_SUM, half, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  if (rank == 0) then
    call MPI_Send(buf, 300, MPI_CHARACTER, 1, 9, dup, ierr)
    call MPI_Send(buf, 700, MPI_CHARACTER, 1, 9, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call MPI_Recv(buf, 1000, MPI_CHARACTER, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Recv(buf, 1000, MPI_CHARACTER, 0, 9, dup, MPI_STATUS_IGNORE, ierr)
  end if
  call MPI_Allreduce(MPI_IN_PLACE, n, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  call MPI_Comm_free(half, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program
