#!/usr/bin/env bash
# Registers the ddio driver in an MPICH 4.0.x source tree's ROMIO.
# Usage: romio-register.sh MPICH_SRC_DIR
# Idempotent. Refuses, with a clear message, a tree whose registration points
# (known file systems, adio.h constants, fs prototypes, fstype table,
# adio/Makefile.mk) do not look the way this script expects.
set -euo pipefail
top=${1:?usage: romio-register.sh MPICH_SRC_DIR}
romio="$top/src/mpi/romio"
die() { echo "romio-register: $*" >&2; exit 1; }

[ -f "$top/maint/version.m4" ] || die "$top is not an MPICH source tree (no maint/version.m4)"
ver=$(sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\([^]]*\)\].*/\1/p' "$top/maint/version.m4")
case "$ver" in
  4.0|4.0.*) ;;
  *) die "MPICH $ver is not supported: the ddio registration fits MPICH 4.0.x only" ;;
esac

cfg="$romio/configure.ac"; adioh="$romio/adio/include/adio.h"
proto="$romio/adio/include/adioi_fs_proto.h"; fstype="$romio/adio/common/ad_fstype.c"
mk="$romio/adio/Makefile.mk"
for f in "$cfg" "$adioh" "$proto" "$fstype" "$mk"; do [ -f "$f" ] || die "missing $f"; done

# Each edit: skip if already present, else require its anchor and apply.
need() { grep -q "$2" "$1" || die "anchor '$2' not found in $1 (MPICH $ver layout differs)"; }

# 1. ROMIO configure.ac: known file systems (else the driver is silently never built)
if ! grep -q 'testfs xfs panfs lustre gpfs ime quobytefs ddio' "$cfg"; then
  need "$cfg" 'testfs xfs panfs lustre gpfs ime quobytefs\])'
  sed -i 's/testfs xfs panfs lustre gpfs ime quobytefs\])/testfs xfs panfs lustre gpfs ime quobytefs ddio])/' "$cfg"
fi
if ! grep -q 'ROMIO_DDIO' "$cfg"; then
  need "$cfg" '^if test -n "\$file_system_ufs"; then'
  sed -i 's/^if test -n "\$file_system_ufs"; then/if test -n "$file_system_ddio"; then\n    AC_DEFINE(ROMIO_DDIO,1,[Define for ROMIO with the ddio disk-directed I\/O driver])\nfi\n\n&/' "$cfg"
fi
# 2. adio.h constant
if ! grep -q 'ADIO_DDIO' "$adioh"; then
  need "$adioh" '^#define ADIO_QUOBYTEFS  *171'
  sed -i 's|^#define ADIO_QUOBYTEFS  *171.*|&\n#define ADIO_DDIO                172    /* ddio disk-directed I/O servers */|' "$adioh"
fi
# 3. fs prototypes
if ! grep -q 'ADIO_DDIO_operations' "$proto"; then
  need "$proto" '^#ifdef ROMIO_TESTFS'
  sed -i 's|^#ifdef ROMIO_TESTFS|#ifdef ROMIO_DDIO\nextern struct ADIOI_Fns_struct ADIO_DDIO_operations;\n/* prototypes are in adio/ad_ddio/ad_ddio.h */\n#endif\n\n&|' "$proto"
fi
# 4. fstype table
if ! grep -q 'ADIO_DDIO_operations' "$fstype"; then
  need "$fstype" '^#ifdef ROMIO_TESTFS'
  sed -i '0,/^#ifdef ROMIO_TESTFS/s|^#ifdef ROMIO_TESTFS|#ifdef ROMIO_DDIO\n    {\&ADIO_DDIO_operations, ADIO_DDIO, "ddio:"},\n#endif\n&|' "$fstype"
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
echo "romio-register: ddio registered in MPICH $ver ROMIO"
