! The communication of p2p.c in Fortran with `use mpi` (the mpif.h bindings).
program p2p
  use mpi
  implicit none
  double precision :: buf(8192), in(8192)
  integer :: rank, size, ierr, it, ints(10), count, st(MPI_STATUS_SIZE)
  buf = 0
  ints = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (size /= 2) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  do it = 0, 1
    call compute_us(3000 + 1000 * rank)
    if (rank == 0) then
      call MPI_Send(buf, 125, MPI_DOUBLE_PRECISION, 1, it, MPI_COMM_WORLD, ierr)
      call MPI_Recv(in, 8192, MPI_DOUBLE_PRECISION, 1, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
    else
      call MPI_Recv(in, 8192, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
      call compute_us(2000)
      call MPI_Send(buf, 5000, MPI_DOUBLE_PRECISION, 0, 10 + it, MPI_COMM_WORLD, ierr)
    end if
    call compute_us(1000)
    call MPI_Sendrecv(buf, 250, MPI_DOUBLE_PRECISION, 1 - rank, 20, in, 250, MPI_DOUBLE_PRECISION, 1 - rank, 20, &
                      MPI_COMM_WORLD, st, ierr)
    if (rank == 1) then
      call MPI_Send(ints, 10, MPI_INTEGER, 0, 30, MPI_COMM_WORLD, ierr)
    else
      call MPI_Probe(1, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
      call MPI_Get_count(st, MPI_INTEGER, count, ierr)
      call MPI_Recv(ints, count, MPI_INTEGER, st(MPI_SOURCE), st(MPI_TAG), MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end if
  end do
  call MPI_Finalize(ierr)
contains
  subroutine compute_us(us)
    integer, intent(in) :: us
    integer(8) :: t0, t, rate
    call system_clock(t0, rate)
    do
      call system_clock(t)
      if ((t - t0) * 1000000_8 / rate >= us) exit
    end do
  end subroutine
end program
