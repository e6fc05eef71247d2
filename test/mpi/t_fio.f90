! Fortran MPI-IO, built with Debian's mpif90.mpich and run on the ddio MPICH
! through LD_LIBRARY_PATH alone (libmpichfort.so.12 -> libmpich.so.12).
! Each rank writes its 8-byte integers cyclically (every nprocs-th element,
! a vector file view) in one collective call, then reads its neighbour's
! back collectively and a contiguous tail independently (nonblocking), and
! checks every value; the file it leaves is compared with the same run on
! ufs: by the test runner. usage: t_fio FILE
program t_fio
  use mpi
  implicit none
  integer, parameter :: n = 4096
  integer :: ierr, rank, nprocs, fh, ftype, i8type, i, cnt, nbr, req, bad
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: disp, fsize, tail
  integer(kind=8) :: wbuf(n), rbuf(n), t(8)
  character(len=512) :: fname

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (command_argument_count() /= 1) call fail('usage: t_fio FILE')
  call get_command_argument(1, fname)
  ! a Fortran-only entry point (libmpich exports it for libmpichfort)
  call MPI_Type_create_f90_integer(15, i8type, ierr)
  call check(ierr, 'MPI_Type_create_f90_integer')

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
  if (rank == 0) print '(a,i0,a)', 't_fio: ', nprocs, ' ranks, every value checked'
  call MPI_Finalize(ierr)

contains
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
