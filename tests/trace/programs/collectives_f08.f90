! The collectives of collectives.c in Fortran 2008 with `use mpi_f08`, on four
! ranks; checked against tests/trace/collectives.psl.
program collectives_f08
  use mpi_f08
  implicit none
  double precision :: d(4096), e(4096)
  integer :: i(4096), j(4096), rank, size
  d = 0
  e = 0
  i = 0
  j = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  if (size /= 4) call MPI_Abort(MPI_COMM_WORLD, 2)
  call MPI_Barrier(MPI_COMM_WORLD)
  call compute_us(1000 + 300 * rank)
  call MPI_Bcast(d, 1000, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD)
  call compute_us(500)
  call MPI_Reduce(d, e, 16, MPI_DOUBLE_PRECISION, MPI_SUM, 2, MPI_COMM_WORLD)
  call MPI_Allreduce(MPI_IN_PLACE, d, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  call compute_us(700)
  call MPI_Gather(i, 100, MPI_INTEGER, j, 100, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Scatter(i, 200, MPI_INTEGER, j, 200, MPI_INTEGER, 3, MPI_COMM_WORLD)
  call compute_us(300)
  call MPI_Allgather(d, 50, MPI_DOUBLE_PRECISION, e, 50, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
  call MPI_Alltoall(i, 25, MPI_INTEGER, j, 25, MPI_INTEGER, MPI_COMM_WORLD)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Finalize()
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
