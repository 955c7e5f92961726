! The communication of p2p.c in Fortran 2008 with `use mpi_f08`.
program p2p_f08
  use mpi_f08
  implicit none
  double precision :: buf(8192), in(8192)
  integer :: rank, size, it, ints(10), count
  type(MPI_Status) :: st
  buf = 0
  ints = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  if (size /= 2) call MPI_Abort(MPI_COMM_WORLD, 2)
  do it = 0, 1
    call compute_us(3000 + 1000 * rank)
    if (rank == 0) then
      call MPI_Send(buf, 125, MPI_DOUBLE_PRECISION, 1, it, MPI_COMM_WORLD)
      call MPI_Recv(in, 8192, MPI_DOUBLE_PRECISION, 1, MPI_ANY_TAG, MPI_COMM_WORLD, st)
    else
      call MPI_Recv(in, 8192, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      call compute_us(2000)
      call MPI_Send(buf, 5000, MPI_DOUBLE_PRECISION, 0, 10 + it, MPI_COMM_WORLD)
    end if
    call compute_us(1000)
    call MPI_Sendrecv(buf, 250, MPI_DOUBLE_PRECISION, 1 - rank, 20, in, 250, MPI_DOUBLE_PRECISION, 1 - rank, 20, &
                      MPI_COMM_WORLD, st)
    if (rank == 1) then
      call MPI_Send(ints, 10, MPI_INTEGER, 0, 30, MPI_COMM_WORLD)
    else
      call MPI_Probe(1, MPI_ANY_TAG, MPI_COMM_WORLD, st)
      call MPI_Get_count(st, MPI_INTEGER, count)
      call MPI_Recv(ints, count, MPI_INTEGER, st%MPI_SOURCE, st%MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    end if
  end do
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
