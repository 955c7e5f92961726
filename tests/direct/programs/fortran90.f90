! A Fortran 90 program with `use mpi`: collectives (gatherv, alltoallv,
! reduce_scatter, scan), a communicator split, a Cartesian grid, a
! subarray type in Fortran order, a user-defined operator, one-sided put
! with fences, the TAG_UB attribute, MPI_ABORT not called. Same lines as
! under mpirun.
module ops
contains
  subroutine absmax(invec, inoutvec, n, datatype)
    integer :: n, datatype, i
    double precision :: invec(n), inoutvec(n)
    do i = 1, n
      inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
    end do
  end subroutine absmax
end module ops

program f90test
  use mpi
  use ops
  implicit none
  integer :: rank, nprocs, ierr, i, row, rrank, rsize, cart, sub, op, win
  integer :: dims(2), coords(2), src, dst
  logical :: periods(2), flag
  integer, allocatable :: counts(:), displs(:), gathered(:), sendv(:), recvv(:)
  integer, allocatable :: scounts(:), sdispls(:), rcounts(:), rdispls(:), rs(:)
  integer :: mine(8), part, scanned, sizes(2), subsizes(2), starts(2)
  double precision :: vals(2), mx(2), field(5, 4), box(2, 3)
  integer(kind=MPI_ADDRESS_KIND) :: tag_ub, winsize, disp
  integer :: target(4), one

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  allocate(counts(nprocs), displs(nprocs), scounts(nprocs), sdispls(nprocs))
  allocate(rcounts(nprocs), rdispls(nprocs))

  do i = 1, nprocs
    counts(i) = i
    displs(i) = (i - 1) * i / 2
  end do
  allocate(gathered(nprocs * (nprocs + 1) / 2))
  gathered = -1
  mine = rank
  call MPI_Gatherv(mine, rank + 1, MPI_INTEGER, gathered, counts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) write(*, '(I0,A,100(1X,I0))') rank, ': gatherv', gathered

  do i = 1, nprocs
    scounts(i) = i
    sdispls(i) = (i - 1) * i / 2
    rcounts(i) = rank + 1
    rdispls(i) = (i - 1) * (rank + 1)
  end do
  allocate(sendv(nprocs * (nprocs + 1) / 2), recvv(nprocs * (rank + 1)), rs(rank + 1))
  sendv = rank * 10
  call MPI_Alltoallv(sendv, scounts, sdispls, MPI_INTEGER, recvv, rcounts, rdispls, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  write(*, '(I0,A,100(1X,I0))') rank, ': alltoallv', recvv
  do i = 1, size(sendv)
    sendv(i) = i + rank
  end do
  call MPI_Reduce_scatter(sendv, rs, scounts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  write(*, '(I0,A,100(1X,I0))') rank, ': reduce_scatter', rs
  part = rank + 1
  call MPI_Scan(part, scanned, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  write(*, '(I0,A,I0)') rank, ': scan ', scanned

  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, row, ierr)
  call MPI_Comm_rank(row, rrank, ierr)
  call MPI_Comm_size(row, rsize, ierr)
  write(*, '(I0,A,I0,A,I0)') rank, ': split ', rrank, ' of ', rsize
  call MPI_Comm_free(row, ierr)

  dims = 0
  call MPI_Dims_create(nprocs, 2, dims, ierr)
  periods = (/ .true., .false. /)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_Cart_coords(cart, rank, 2, coords, ierr)
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  write(*, '(I0,A,I0,A,I0,A,I0,A,I0,A,I0,A,I0)') rank, ': cart ', dims(1), 'x', dims(2), ' at ', coords(1), ',', &
      coords(2), ' shift ', src, ' ', dst
  call MPI_Comm_free(cart, ierr)

  ! A 2x3 box of a 5x4 field, Fortran order.
  do i = 1, 20
    field(mod(i - 1, 5) + 1, (i - 1) / 5 + 1) = dble(i + 100 * rank)
  end do
  sizes = (/ 5, 4 /)
  subsizes = (/ 2, 3 /)
  starts = (/ 1, 1 /)
  call MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, sub, ierr)
  call MPI_Type_commit(sub, ierr)
  call MPI_Sendrecv(field, 1, sub, mod(rank + 1, nprocs), 3, box, 6, MPI_DOUBLE_PRECISION, &
                    mod(rank + nprocs - 1, nprocs), 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  write(*, '(I0,A,6F7.1)') rank, ': subarray', box
  call MPI_Type_free(sub, ierr)

  call MPI_Op_create(absmax, .true., op, ierr)
  vals = (/ dble(-rank), dble(rank) * 0.5d0 /)
  call MPI_Allreduce(vals, mx, 2, MPI_DOUBLE_PRECISION, op, MPI_COMM_WORLD, ierr)
  write(*, '(I0,A,2F6.1)') rank, ': absmax', mx
  call MPI_Op_free(op, ierr)

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  write(*, '(I0,A,L1)') rank, ': tag_ub ', flag .and. tag_ub >= 32767

  target = 0
  winsize = 4 * 4
  call MPI_Win_create(target, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  one = rank + 1
  disp = mod(rank, 4)
  if (rank < 4) call MPI_Put(one, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  if (rank == 0) write(*, '(I0,A,4(1X,I0))') rank, ': window', target
  call MPI_Win_free(win, ierr)

  ! Freed: the sanitizer build's leak check sees the main program's arrays as leaked otherwise.
  deallocate(counts, displs, scounts, sdispls, rcounts, rdispls, gathered, sendv, recvv, rs)
  call MPI_Finalize(ierr)
end program f90test
