#!/usr/bin/env bash
# Registers the ddio driver in a ROMIO: MPICH 4.0.x's (src/mpi/romio) or
# Open MPI 4.1.x's ROMIO 3.2.1 io component (ompi/mca/io/romio321/romio).
# Usage: romio-register.sh MPICH_OR_OPENMPI_SRC_DIR
# Idempotent. Refuses, with a clear message, a tree whose registration points
# (known file systems, adio.h constants, fs prototypes, fstype table,
# adio/Makefile.mk) do not look the way this script expects. The two ROMIOs
# differ only in the anchors of steps 1, 2 and 4; the driver's own source
# differences are in adio/ad_ddio/ad_ddio_compat.h.
set -euo pipefail
top=${1:?usage: romio-register.sh MPICH_OR_OPENMPI_SRC_DIR}
die() { echo "romio-register: $*" >&2; exit 1; }

if [ -f "$top/maint/version.m4" ]; then
  romio="$top/src/mpi/romio"; flavor=mpich40
  ver=$(sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\([^]]*\)\].*/\1/p' "$top/maint/version.m4")
  case "$ver" in
    4.0|4.0.*) ;;
    *) die "MPICH $ver is not supported: the ddio registration fits MPICH 4.0.x only" ;;
  esac
  what="MPICH $ver"
elif [ -d "$top/ompi/mca/io/romio321/romio" ] && [ -f "$top/VERSION" ]; then
  romio="$top/ompi/mca/io/romio321/romio"; flavor=romio321
  ver=$(sed -n 's/^major=//p; s/^minor=//p' "$top/VERSION" | paste -sd.)
  case "$ver" in
    4.1) ;;
    *) die "Open MPI $ver is not supported: the ddio registration fits Open MPI 4.1.x (ROMIO 3.2.1)" ;;
  esac
  what="Open MPI $ver (ROMIO 3.2.1)"
else
  die "$top is neither an MPICH source tree (maint/version.m4) nor an Open MPI one (ompi/mca/io/romio321)"
fi

cfg="$romio/configure.ac"; adioh="$romio/adio/include/adio.h"
proto="$romio/adio/include/adioi_fs_proto.h"; fstype="$romio/adio/common/ad_fstype.c"
mk="$romio/adio/Makefile.mk"
for f in "$cfg" "$adioh" "$proto" "$fstype" "$mk"; do [ -f "$f" ] || die "missing $f"; done

# Each edit: skip if already present, else require its anchor and apply.
need() { grep -q "$2" "$1" || die "anchor '$2' not found in $1 ($what layout differs)"; }

# 1. ROMIO configure.ac: known file systems (else the driver is silently never built)
if [ $flavor = mpich40 ]; then fslist='testfs xfs panfs lustre gpfs ime quobytefs'
else fslist='testfs xfs panfs gridftp lustre gpfs zoidfs hfs piofs sfs'; fi
if ! grep -q "$fslist ddio" "$cfg"; then
  need "$cfg" "$fslist\\])"
  sed -i "s/$fslist\\])/$fslist ddio])/" "$cfg"
fi
if ! grep -q 'ROMIO_DDIO' "$cfg"; then
  need "$cfg" '^if test -n "\$file_system_ufs"; then'
  sed -i 's/^if test -n "\$file_system_ufs"; then/if test -n "$file_system_ddio"; then\n    AC_DEFINE(ROMIO_DDIO,1,[Define for ROMIO with the ddio disk-directed I\/O driver])\nfi\n\n&/' "$cfg"
fi
# 2. adio.h constant
if [ $flavor = mpich40 ]; then lastfs='^#define ADIO_QUOBYTEFS  *171'; else lastfs='^#define ADIO_GPFS  *168'; fi
if ! grep -q 'ADIO_DDIO' "$adioh"; then
  need "$adioh" "$lastfs"
  sed -i "s|$lastfs.*|&\\n#define ADIO_DDIO                172    /* ddio disk-directed I/O servers */|" "$adioh"
fi
# 3. fs prototypes
if ! grep -q 'ADIO_DDIO_operations' "$proto"; then
  need "$proto" '^#ifdef ROMIO_TESTFS'
  sed -i 's|^#ifdef ROMIO_TESTFS|#ifdef ROMIO_DDIO\nextern struct ADIOI_Fns_struct ADIO_DDIO_operations;\n/* prototypes are in adio/ad_ddio/ad_ddio.h */\n#endif\n\n&|' "$proto"
fi
# 4. fstype table
#    (MPICH 4.0: one table row; ROMIO 3.2.1: the prefix chain and the
#    file system -> operations chain)
if ! grep -q 'ADIO_DDIO_operations' "$fstype"; then
  if [ $flavor = mpich40 ]; then
    need "$fstype" '^#ifdef ROMIO_TESTFS'
    sed -i '0,/^#ifdef ROMIO_TESTFS/s|^#ifdef ROMIO_TESTFS|#ifdef ROMIO_DDIO\n    {\&ADIO_DDIO_operations, ADIO_DDIO, "ddio:"},\n#endif\n&|' "$fstype"
  else
    need "$fstype" '^    else if (!strncmp(filename, "testfs:", 7) *$'
    need "$fstype" '^    if (file_system == ADIO_TESTFS) {$'
    sed -i 's|^    else if (!strncmp(filename, "testfs:", 7) *$|    else if (!strncmp(filename, "ddio:", 5) \|\| !strncmp(filename, "DDIO:", 5)) {\n\t*fstype = ADIO_DDIO;\n    }\n&|' "$fstype"
    sed -i 's|^    if (file_system == ADIO_TESTFS) {$|    if (file_system == ADIO_DDIO) {\n#ifndef ROMIO_DDIO\n\t*error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,\n\t\t\t\t\t   myname, __LINE__, MPI_ERR_IO,\n\t\t\t\t\t   "**iofstypeunsupported", 0);\n\treturn;\n#else\n\t*ops = \&ADIO_DDIO_operations;\n#endif\n    }\n&|' "$fstype"
  fi
fi
# 5. adio/Makefile.mk
if ! grep -q 'ad_ddio/Makefile.mk' "$mk"; then
  need "$mk" '^include $(top_srcdir)/adio/ad_testfs/Makefile.mk'
  sed -i 's|^include $(top_srcdir)/adio/ad_testfs/Makefile.mk|include $(top_srcdir)/adio/ad_ddio/Makefile.mk\n&|' "$mk"
fi
# 6. plain paths on a ddio mount (FUSE with the user.ddio.servers xattr) are
#    ADIO_DDIO: one call into the driver (adio/ad_ddio/ad_ddio_mount.c) at the
#    start of the statfs-based detection, so the logic stays in the overlay.
if ! grep -q 'ADIOI_DDIO_Is_mount_path' "$proto"; then
  need "$proto" '^extern struct ADIOI_Fns_struct ADIO_DDIO_operations;'
  sed -i 's|^extern struct ADIOI_Fns_struct ADIO_DDIO_operations;|&\nint ADIOI_DDIO_Is_mount_path(const char *filename);|' "$proto"
fi
if ! grep -q 'ADIOI_DDIO_Is_mount_path' "$fstype"; then
  need "$fstype" '^static void ADIO_FileSysType_fncall(const char \*filename, int \*fstype, int \*error_code)$'
  sed -i '/^static void ADIO_FileSysType_fncall(const char \*filename, int \*fstype, int \*error_code)$/,/^    \*error_code = MPI_SUCCESS;$/{
/^    \*error_code = MPI_SUCCESS;$/a\
#ifdef ROMIO_DDIO\
    if (ADIOI_DDIO_Is_mount_path(filename)) {\
        *fstype = ADIO_DDIO;\
        return;\
    }\
#endif
}' "$fstype"
  grep -q 'ADIOI_DDIO_Is_mount_path' "$fstype" || die "could not add the ddio mount check to $fstype"
fi
# 7. views are never flattened for ddio files (issue #23): ROMIO flattens the
#    etype and filetype in ADIO_Set_view (16 bytes per contiguous piece, held
#    until the view changes) and walks that list for positions. For
#    file_system == ADIO_DDIO these four functions hand over to the driver,
#    which answers from its constructor-built tree (adio/ad_ddio/ad_ddio_pos.c);
#    the seek is the driver's own table entry. ROMIO's two-phase fallback
#    (romio_ddio_collective=twophase) still flattens, lazily, when it runs.
#    Each hook goes first in the function body: one call, then return.
pos="$romio/adio/common"
hook() {  # file, signature start (regex), call
  local f="$pos/$1"
  [ -f "$f" ] || die "missing $f"
  grep -q 'fd->file_system == ADIO_DDIO' "$f" && return 0
  need "$f" "^$2"
  sed -i "/^$2/,/^{\$/{
/^{\$/a\\
#ifdef ROMIO_DDIO\\
    /* ddio: from the driver's view tree, never a flattened list (romio-register.sh 7) */\\
    if (fd->file_system == ADIO_DDIO) {\\
        $3;\\
        return;\\
    }\\
#endif
}" "$f"
  grep -q 'fd->file_system == ADIO_DDIO' "$f" || die "could not hook $f"
}
hook ad_set_view.c 'void ADIO_Set_view(ADIO_File fd,' \
  'ADIOI_DDIO_Set_view(fd, disp, etype, filetype, info, error_code)'
hook get_fp_posn.c 'void ADIOI_Get_position(ADIO_File fd,' 'ADIOI_DDIO_Get_position(fd, offset)'
hook byte_offset.c 'void ADIOI_Get_byte_offset(ADIO_File fd,' \
  'ADIOI_DDIO_Get_byte_offset(fd, offset, disp)'
hook eof_offset.c 'void ADIOI_Get_eof_offset(ADIO_File fd,' 'ADIOI_DDIO_Get_eof_offset(fd, eof_offset)'
if ! grep -q 'ADIOI_DDIO_Set_view' "$proto"; then
  need "$proto" '^int ADIOI_DDIO_Is_mount_path(const char \*filename);'
  sed -i 's|^int ADIOI_DDIO_Is_mount_path(const char \*filename);|&\
/* called by ROMIO'"'"'s set_view and position code (scripts/romio-register.sh 7) */\
void ADIOI_DDIO_Set_view(ADIO_File fd, ADIO_Offset disp, MPI_Datatype etype,\
                         MPI_Datatype filetype, MPI_Info info, int *error_code);\
void ADIOI_DDIO_Get_position(ADIO_File fd, ADIO_Offset * offset);\
void ADIOI_DDIO_Get_byte_offset(ADIO_File fd, ADIO_Offset offset, ADIO_Offset * disp);\
void ADIOI_DDIO_Get_eof_offset(ADIO_File fd, ADIO_Offset * eof_offset);|' "$proto"
fi
echo "romio-register: ddio registered in $what ROMIO"
