! The communication of nonblocking.cpp in Fortran with `use mpi`: MPI_Isend,
! MPI_Irecv, MPI_Waitall, MPI_Waitany, an MPI_Test loop, persistent requests
! and MPI_Waitsome; checked against tests/trace/nonblocking.goal.
program nonblocking
  use mpi
  implicit none
  character :: a(100000), b(100000), c(100000), d(100000)
  integer :: rank, size, other, ierr, r(2), idx, k, left, n, indices(2)
  logical :: done
  a = ' '
  b = ' '
  c = ' '
  d = ' '
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (size /= 2) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  other = 1 - rank

  call MPI_Irecv(a, 4000, MPI_CHARACTER, other, 1, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Isend(b, 4000, MPI_CHARACTER, other, 1, MPI_COMM_WORLD, r(2), ierr)
  call compute_us(2000)
  call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)

  if (rank == 0) then
    call MPI_Irecv(a, 100000, MPI_CHARACTER, 1, 2, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Irecv(b, 100000, MPI_CHARACTER, 1, 3, MPI_COMM_WORLD, r(2), ierr)
    call MPI_Waitany(2, r, idx, MPI_STATUS_IGNORE, ierr)
    call compute_us(500)
    call MPI_Waitany(2, r, idx, MPI_STATUS_IGNORE, ierr)
  else
    call compute_us(1000)
    call MPI_Send(c, 100, MPI_CHARACTER, 0, 3, MPI_COMM_WORLD, ierr)
    call compute_us(1000)
    call MPI_Send(c, 50000, MPI_CHARACTER, 0, 2, MPI_COMM_WORLD, ierr)
  end if

  if (rank == 0) then
    call MPI_Isend(d, 60000, MPI_CHARACTER, 1, 4, MPI_COMM_WORLD, r(1), ierr)
    done = .false.
    do while (.not. done)
      call compute_us(200)
      call MPI_Test(r(1), done, MPI_STATUS_IGNORE, ierr)
    end do
  else
    call compute_us(3000)
    call MPI_Recv(d, 60000, MPI_CHARACTER, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end if

  call MPI_Recv_init(a, 800, MPI_CHARACTER, other, 5, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Send_init(b, 800, MPI_CHARACTER, other, 5, MPI_COMM_WORLD, r(2), ierr)
  do k = 1, 3
    call MPI_Startall(2, r, ierr)
    call compute_us(500)
    call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_Request_free(r(1), ierr)
  call MPI_Request_free(r(2), ierr)

  if (rank == 1) then
    call MPI_Irecv(a, 1000, MPI_CHARACTER, 0, 6, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Irecv(b, 1000, MPI_CHARACTER, 0, 7, MPI_COMM_WORLD, r(2), ierr)
    left = 2
    do while (left > 0)
      call MPI_Waitsome(2, r, n, indices, MPI_STATUSES_IGNORE, ierr)
      left = left - n
    end do
  else
    call MPI_Send(c, 700, MPI_CHARACTER, 1, 7, MPI_COMM_WORLD, ierr)
    call compute_us(1000)
    call MPI_Send(c, 600, MPI_CHARACTER, 1, 6, MPI_COMM_WORLD, ierr)
  end if
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
