! A Fortran 77 program with mpif.h: point to point with statuses,
! MPI_STATUS_IGNORE and MPI_ANY_SOURCE, collectives on DOUBLE PRECISION,
! COMPLEX, DOUBLE COMPLEX, LOGICAL and MAXLOC pairs, MPI_IN_PLACE,
! MPI_BOTTOM with absolute addresses, a struct and a vector type,
! MPI_WTIME. Same lines as under mpirun.
      program f77test
      implicit none
      include 'mpif.h'
      integer rank, nprocs, ierr, i, next, prev, status(MPI_STATUS_SIZE)
      integer ival, isum, itype, ivec, cnt
      double precision dval, dsum, t0, t1, pair(2), best(2), a(3)
      complex cval, csum
      double complex zval, zsum
      logical lval, lall
      integer blocks(2), types(2), ii(4)
      integer(kind=MPI_ADDRESS_KIND) disps(2), ext, lb
      double precision grid(4, 3)

      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
      next = mod(rank + 1, nprocs)
      prev = mod(rank + nprocs - 1, nprocs)
      t0 = MPI_WTIME()

      ival = rank * 3
      call MPI_SENDRECV(ival, 1, MPI_INTEGER, next, 5, isum, 1,
     &     MPI_INTEGER, prev, 5, MPI_COMM_WORLD, status, ierr)
      call MPI_GET_COUNT(status, MPI_INTEGER, cnt, ierr)
      write(*, '(I0,A,I0,A,I0,A,I0,A,I0)') rank, ': sendrecv ', isum,
     &     ' from ', status(MPI_SOURCE), ' tag ', status(MPI_TAG),
     &     ' count ', cnt

      if (rank .eq. 0) then
        isum = 0
        do i = 1, nprocs - 1
          call MPI_RECV(ival, 1, MPI_INTEGER, MPI_ANY_SOURCE, 9,
     &         MPI_COMM_WORLD, status, ierr)
          isum = isum + ival * 10 + status(MPI_SOURCE)
        end do
        write(*, '(I0,A,I0)') rank, ': any source ', isum
      else
        ival = rank + 1
        call MPI_SEND(ival, 1, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, ierr)
      end if

      dval = 0.5d0 * (rank + 1)
      call MPI_ALLREDUCE(dval, dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      cval = cmplx(real(rank), 1.0)
      call MPI_ALLREDUCE(cval, csum, 1, MPI_COMPLEX, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      zval = dcmplx(1.0d0, dble(rank))
      call MPI_ALLREDUCE(zval, zsum, 1, MPI_DOUBLE_COMPLEX, MPI_PROD,
     &     MPI_COMM_WORLD, ierr)
      lval = rank .lt. 100
      call MPI_ALLREDUCE(lval, lall, 1, MPI_LOGICAL, MPI_LAND,
     &     MPI_COMM_WORLD, ierr)
      write(*, '(I0,A,F8.2,A,2F8.2,A,2F8.2,A,L1)') rank, ': sums ',
     &     dsum, ' complex ', csum, ' dcomplex ', zsum, ' land ', lall

      pair(1) = dble(mod(rank * 7, 5))
      pair(2) = dble(rank)
      call MPI_ALLREDUCE(pair, best, 1, MPI_2DOUBLE_PRECISION,
     &     MPI_MAXLOC, MPI_COMM_WORLD, ierr)
      ival = rank + 1
      call MPI_ALLREDUCE(MPI_IN_PLACE, ival, 1, MPI_INTEGER, MPI_MAX,
     &     MPI_COMM_WORLD, ierr)
      write(*, '(I0,A,F6.1,A,F6.1,A,I0)') rank, ': maxloc ', best(1),
     &     ' at ', best(2), ' in place max ', ival

!     A row of a column-major grid as a vector type.
      do i = 1, 12
        grid(mod(i - 1, 4) + 1, (i - 1) / 4 + 1) = dble(i + 100 * rank)
      end do
      call MPI_TYPE_VECTOR(3, 1, 4, MPI_DOUBLE_PRECISION, ivec, ierr)
      call MPI_TYPE_COMMIT(ivec, ierr)
      call MPI_SENDRECV(grid(2, 1), 1, ivec, next, 7, a, 3,
     &     MPI_DOUBLE_PRECISION, prev, 7, MPI_COMM_WORLD,
     &     MPI_STATUS_IGNORE, ierr)
      write(*, '(I0,A,3F8.1)') rank, ': row ', a
      call MPI_TYPE_FREE(ivec, ierr)

!     A struct type over absolute addresses, sent from MPI_BOTTOM.
      ii(1) = rank
      ii(2) = rank * rank
      dval = rank + 0.25d0
      call MPI_GET_ADDRESS(ii, disps(1), ierr)
      call MPI_GET_ADDRESS(dval, disps(2), ierr)
      blocks(1) = 2
      blocks(2) = 1
      types(1) = MPI_INTEGER
      types(2) = MPI_DOUBLE_PRECISION
      call MPI_TYPE_CREATE_STRUCT(2, blocks, disps, types, itype, ierr)
      call MPI_TYPE_COMMIT(itype, ierr)
      call MPI_TYPE_GET_EXTENT(MPI_DOUBLE_PRECISION, lb, ext, ierr)
      if (rank .eq. 0) then
        call MPI_SEND(MPI_BOTTOM, 1, itype, next, 8, MPI_COMM_WORLD,
     &       ierr)
      end if
      if (nprocs .gt. 1 .and. rank .eq. 1) then
        ii(1) = -1
        ii(2) = -1
        dval = -1.0d0
        call MPI_RECV(MPI_BOTTOM, 1, itype, 0, 8, MPI_COMM_WORLD,
     &       MPI_STATUS_IGNORE, ierr)
        write(*, '(I0,A,I0,A,I0,A,F6.2,A,I0)') rank, ': struct ',
     &       ii(1), ' ', ii(2), ' ', dval, ' extent ', ext
      end if
      if (nprocs .eq. 1) then
        call MPI_RECV(MPI_BOTTOM, 1, itype, 0, 8, MPI_COMM_WORLD,
     &       MPI_STATUS_IGNORE, ierr)
        write(*, '(I0,A,I0,A,I0,A,F6.2,A,I0)') rank, ': struct ',
     &       ii(1), ' ', ii(2), ' ', dval, ' extent ', ext
      end if
      call MPI_TYPE_FREE(itype, ierr)

      t1 = MPI_WTIME()
      write(*, '(I0,A,L1)') rank, ': time goes forward ', t1 .ge. t0
      call MPI_FINALIZE(ierr)
      end
