! Fortran MPI-IO, built with Debian's mpif90.mpich and run on the ddio MPICH
! through LD_LIBRARY_PATH alone (libmpichfort.so.12 -> libmpich.so.12).
! Each rank writes its 8-byte integers cyclically (every nprocs-th element,
! a vector file view) in one collective call, then reads its neighbour's
! back collectively and a contiguous tail independently (nonblocking), and
! checks every value; then, in FILE.2, each rank writes its block of rows of
! a 2-D array through a subarray view with the blocking independent
! MPI_File_write (individual file pointer) and reads its neighbour's block
! with MPI_File_read_at. The files it leaves are compared with the same run
! on ufs: by the test runner. usage: t_fio FILE
program t_fio
  use mpi
  implicit none
  integer, parameter :: n = 4096
  integer :: ierr, rank, nprocs, fh, ftype, i8type, i, cnt, nbr, req, bad
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: disp, fsize, tail
  integer(kind=8) :: wbuf(n), rbuf(n), t(8)
  character(len=512) :: fname
  character(len=8) :: env

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (command_argument_count() /= 1) call fail('usage: t_fio FILE')
  call get_command_argument(1, fname)
  ! a Fortran-only entry point (libmpich exports it for libmpichfort);
  ! T_FIO_NO_F90=1: MPI_INTEGER8 instead, for ROMIO 3.2.1 (Open MPI's
  ! romio321: Debian's own and ddio's plug-in), whose MPI_File_close fails
  ! (MPI_ERR_TYPE in MPI_Type_free) on a view built of that type
  call get_environment_variable('T_FIO_NO_F90', env)
  if (env == '1') then
     i8type = MPI_INTEGER8
  else
     call MPI_Type_create_f90_integer(15, i8type, ierr)
     call check(ierr, 'MPI_Type_create_f90_integer')
  end if

  call MPI_Type_vector(n, 1, nprocs, i8type, ftype, ierr)
  call MPI_Type_commit(ftype, ierr)
  do i = 1, n
     wbuf(i) = int(rank, 8) * 1000000_8 + i
  end do
  call MPI_File_open(MPI_COMM_WORLD, fname, ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
       MPI_INFO_NULL, fh, ierr)
  call check(ierr, 'MPI_File_open')
  disp = int(rank, MPI_OFFSET_KIND) * 8
  call MPI_File_set_view(fh, disp, i8type, ftype, 'native', MPI_INFO_NULL, ierr)
  call check(ierr, 'MPI_File_set_view')
  call MPI_File_write_all(fh, wbuf, n, i8type, status, ierr)
  call check(ierr, 'MPI_File_write_all')
  call MPI_Get_count(status, i8type, cnt, ierr)
  if (cnt /= n) call fail('write_all count')

  ! the tail: 8 integers per rank after the cyclic part, nonblocking
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  tail = int(n, MPI_OFFSET_KIND) * nprocs * 8 + int(rank, MPI_OFFSET_KIND) * 64
  do i = 1, 8
     t(i) = -(int(rank, 8) * 100 + i)
  end do
  call MPI_File_iwrite_at(fh, tail, t, 8, MPI_INTEGER8, req, ierr)
  call check(ierr, 'MPI_File_iwrite_at')
  call MPI_Wait(req, status, ierr)
  call check(ierr, 'MPI_Wait (iwrite_at)')
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  call check(ierr, 'MPI_File_sync')

  nbr = mod(rank + 1, nprocs)
  disp = int(nbr, MPI_OFFSET_KIND) * 8
  call MPI_File_set_view(fh, disp, i8type, ftype, 'native', MPI_INFO_NULL, ierr)
  call MPI_File_read_all(fh, rbuf, n, i8type, status, ierr)
  call check(ierr, 'MPI_File_read_all')
  bad = 0
  do i = 1, n
     if (rbuf(i) /= int(nbr, 8) * 1000000_8 + i) bad = bad + 1
  end do
  if (bad /= 0) call fail('neighbour''s cyclic elements differ')
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  tail = int(n, MPI_OFFSET_KIND) * nprocs * 8 + int(nbr, MPI_OFFSET_KIND) * 64
  t = 0
  call MPI_File_iread_at(fh, tail, t, 8, MPI_INTEGER8, req, ierr)
  call MPI_Wait(req, status, ierr)
  call check(ierr, 'MPI_File_iread_at')
  do i = 1, 8
     if (t(i) /= -(int(nbr, 8) * 100 + i)) call fail('neighbour''s tail differs')
  end do
  call MPI_File_get_size(fh, fsize, ierr)
  if (fsize /= int(n, MPI_OFFSET_KIND) * nprocs * 8 + nprocs * 64) call fail('file size')
  call MPI_File_close(fh, ierr)
  call check(ierr, 'MPI_File_close')
  call MPI_Type_free(ftype, ierr)
  call subarray_part(trim(fname) // '.2')
  if (rank == 0) print '(a,i0,a)', 't_fio: ', nprocs, ' ranks, every value checked'
  call MPI_Finalize(ierr)

contains
  ! FILE.2: a (16 * nprocs) x 40 array of default integers in Fortran
  ! order; rank r owns rows 16r+1 .. 16r+16 (40 pieces of 16, strided)
  subroutine subarray_part(name)
    character(len=*), intent(in) :: name
    integer, parameter :: ly = 16, lx = 40
    integer :: a(ly, lx), b(ly, lx), mine, theirs, f2, i, j
    integer :: st(MPI_STATUS_SIZE)
    integer(kind=MPI_OFFSET_KIND) :: pos
    do j = 1, lx
       do i = 1, ly
          a(i, j) = rank * 100000 + j * 100 + i
       end do
    end do
    mine = rows_type(rank)
    theirs = rows_type(nbr)
    call MPI_File_open(MPI_COMM_WORLD, name, ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
         MPI_INFO_NULL, f2, ierr)
    call check(ierr, 'MPI_File_open (subarray)')
    call MPI_File_set_view(f2, 0_MPI_OFFSET_KIND, MPI_INTEGER, mine, 'native', MPI_INFO_NULL, ierr)
    call check(ierr, 'MPI_File_set_view (subarray)')
    call MPI_File_write(f2, a, ly * lx, MPI_INTEGER, st, ierr)
    call check(ierr, 'MPI_File_write (subarray)')
    call MPI_File_get_position(f2, pos, ierr)
    if (pos /= ly * lx) call fail('file pointer after MPI_File_write')
    call MPI_File_sync(f2, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(f2, ierr)
    call MPI_File_set_view(f2, 0_MPI_OFFSET_KIND, MPI_INTEGER, theirs, 'native', MPI_INFO_NULL, ierr)
    b = 0
    call MPI_File_read_at(f2, 0_MPI_OFFSET_KIND, b, ly * lx, MPI_INTEGER, st, ierr)
    call check(ierr, 'MPI_File_read_at (subarray)')
    do j = 1, lx
       do i = 1, ly
          if (b(i, j) /= nbr * 100000 + j * 100 + i) call fail('neighbour''s subarray differs')
       end do
    end do
    call MPI_File_get_size(f2, pos, ierr)
    if (pos /= int(ly, MPI_OFFSET_KIND) * nprocs * lx * 4) call fail('subarray file size')
    call MPI_File_close(f2, ierr)
    call check(ierr, 'MPI_File_close (subarray)')
    call MPI_Type_free(mine, ierr)
    call MPI_Type_free(theirs, ierr)
  end subroutine subarray_part
  integer function rows_type(r)
    integer, intent(in) :: r
    integer :: sizes(2), subs(2), starts(2), e
    sizes = (/ 16 * nprocs, 40 /)
    subs = (/ 16, 40 /)
    starts = (/ 16 * r, 0 /)
    call MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INTEGER, rows_type, e)
    call MPI_Type_commit(rows_type, e)
  end function rows_type
  subroutine check(e, what)
    integer, intent(in) :: e
    character(len=*), intent(in) :: what
    character(len=MPI_MAX_ERROR_STRING) :: msg
    integer :: l, e2
    if (e == MPI_SUCCESS) return
    call MPI_Error_string(e, msg, l, e2)
    print '(a,i0,4a)', 'rank ', rank, ': ', what, ' failed: ', msg(1:l)
    call MPI_Abort(MPI_COMM_WORLD, 1, e2)
  end subroutine check
  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e2
    print '(a,i0,2a)', 'rank ', rank, ': ', what
    call MPI_Abort(MPI_COMM_WORLD, 1, e2)
  end subroutine fail
end program t_fio
