! MPI-IO through the Fortran 2008 bindings (use mpi_f08), built with
! Debian's mpif90.mpich and run on the ddio MPICH through LD_LIBRARY_PATH:
! each rank writes its block collectively through a contiguous-type view
! (MPI_Type_contiguous of 7 doubles, displacement per rank), reads its
! neighbour's block back with the independent MPI_File_read_at, and checks
! every value; the file is compared with the ufs: run. usage: t_f08 FILE
program t_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 3000
  type(MPI_File) :: fh
  type(MPI_Datatype) :: blk
  type(MPI_Status) :: st
  integer :: ierr, rank, nprocs, i, nbr, cnt
  integer(kind=MPI_OFFSET_KIND) :: disp, fsize
  double precision :: w(7 * n), r(7 * n)
  character(len=512) :: fname

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  if (command_argument_count() /= 1) call fail('usage: t_f08 FILE')
  call get_command_argument(1, fname)
  call MPI_Type_contiguous(7, MPI_DOUBLE_PRECISION, blk)
  call MPI_Type_commit(blk)
  do i = 1, 7 * n
     w(i) = rank * 1.0d6 + i + 0.25d0
  end do
  call MPI_File_open(MPI_COMM_WORLD, trim(fname), ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
       MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_File_open')
  disp = int(rank, MPI_OFFSET_KIND) * 7 * n * 8
  call MPI_File_set_view(fh, disp, MPI_DOUBLE_PRECISION, blk, 'native', MPI_INFO_NULL, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_File_set_view')
  call MPI_File_write_all(fh, w, n, blk, st, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_File_write_all')
  call MPI_Get_count(st, blk, cnt)
  if (cnt /= n) call fail('write_all count')
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_sync(fh)
  nbr = mod(rank + 1, nprocs)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL)
  call MPI_File_read_at(fh, int(nbr, MPI_OFFSET_KIND) * 7 * n * 8, r, 7 * n, &
       MPI_DOUBLE_PRECISION, st, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_File_read_at')
  do i = 1, 7 * n
     if (r(i) /= nbr * 1.0d6 + i + 0.25d0) call fail('neighbour''s block differs')
  end do
  call MPI_File_get_size(fh, fsize)
  if (fsize /= int(nprocs, MPI_OFFSET_KIND) * 7 * n * 8) call fail('file size')
  call MPI_File_close(fh, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_File_close')
  call MPI_Type_free(blk)
  if (rank == 0) print '(a,i0,a)', 't_f08: ', nprocs, ' ranks, every value checked'
  call MPI_Finalize()

contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,2a)', 'rank ', rank, ': ', what
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine fail
end program t_f08
