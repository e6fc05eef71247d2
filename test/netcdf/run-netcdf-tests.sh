#!/usr/bin/env bash
# netCDF-C's own parallel tests (netCDF-4 over parallel HDF5) on ddio.
# netCDF-C (Debian's 4.9.0 source, built once into the cache by scripts/
# build-netcdf.sh with our MPICH's mpicc against Debian's libhdf5-mpich) runs
# the commands of ITS OWN parallel test scripts, read from its configured
# build tree: nc_test4/run_par_test.sh (tst_mode, tst_mpi_parallel,
# tst_parallel 3 4 5 6, tst_nc4perf, tst_simplerw_coll_r, tst_parallel_zlib,
# tst_parallel_compress, tst_quantize_par) and h5_test/run_par_tests.sh
# (tst_h_par, tst_h_par_compress), each in its own directory; a block the
# script runs only `if test "no" = "yes"` is left out as the script leaves
# it out. By default each program runs once, at the largest process count
# its script gives it (14 commands; NC_SET=all: all 24 of the scripts'
# commands, tst_parallel4 on 1 2 4 8, tst_simplerw_coll_r and the h5_test
# programs on 1 2 4...). Not run: nc_perf's run_gfs_test.sh (tst_compress_par,
# a benchmark writing a 7.2 GB file: over 180 s on ufs: alone here) and
# run_par_bm_test.sh (a benchmark whose inputs nc_perf's serial tests make).
#
# The programs name their files relative to the working directory (and
# reopen them serially, remove them), so the runs' working directory is:
#   ufs    the control: a local directory, ROMIO_FSTYPE_FORCE=ufs:.
#   mount  a directory inside a ddio FUSE mount (ddio-run --mount): ROMIO
#          sends plain paths under it to the ddio driver, POSIX goes
#          through the mount. The servers must have seen disk-directed
#          collectives (coll_xfers > 0: the FUSE daemon sends none).
# Every command is one test per mode (its exit status: the programs check
# what they read back). Then every file a command left (tst_parallel,
# tst_parallel3, tst_parallel4 and tst_nc4perf remove theirs) is compared
# between the modes, the mount's read through the mount: the same names, and
# bytes equal or, where they differ, ncdump (h5dump) output equal (see
# compare). Then t_nc4 (test/netcdf/t_nc4.c) writes and reads a ddio: name
# through nc_create_par/nc_open_par; ncdump of it (through a ddio mount)
# must equal ncdump of the same program's ufs: file.
# Writes test/netcdf/netcdf.out; closes with "netcdf: N passed, N failed".
# usage: run-netcdf-tests.sh [MODE...]     (default: ufs mount)
#   env: NC_LIMIT  seconds per command (default 180)
#        NC_SET    all: every command of the scripts (default: each program once)
#        NC_TESTS  "PROG ..." to run only those programs
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
here=$SRC/test/netcdf
top=$BUILD
T_TEE="$here/netcdf.out"
[ "${1:-}" = --inner ] || t_init netcdf
t_mpi_env 60
limit=${NC_LIMIT:-180}

# cmds BLD: "DIR NP PROG" for the commands of netCDF's parallel scripts:
# with NC_SET=all every one, else (the default, and CI's) each program once,
# at the largest process count its script runs it with, but tst_nc4perf (a
# timing loop of 8-49 s per mode on the 2-core VM: NC_SET=all runs it)
cmds() {
  local d s
  for s in nc_test4/run_par_test.sh h5_test/run_par_tests.sh; do
    d=${s%/*}
    awk -v d="$d" '/^if test "[^"]*" = "yes"; then/ { skip = ($0 !~ /^if test "yes" = "yes"/); next }
      /^fi/ { skip = 0; next }
      !skip && $1 == "mpiexec" && $2 == "-n" && $4 ~ /^\.\// { print d, $3, substr($4, 3) }' "$1/$s"
  done | if [ "${NC_SET:-ci}" = all ]; then cat; else
    awk '$3 == "tst_nc4perf" { next } { if (!($3 in np)) order[++n] = $3; if (!($3 in np) || $2 + 0 > np[$3]) { np[$3] = $2 + 0; dir[$3] = $1 } }
         END { for (i = 1; i <= n; i++) print dir[order[i]], np[order[i]], order[i] }'
  fi
}

# --- inner: one mode's commands, in WORK (inside ddio-run for mount) --------
if [ "${1:-}" = --inner ]; then
  mode=$2 work=$3 res=$4 bld=$5
  i=0
  while read -r dir np prog; do
    i=$((i + 1))
    case " ${NC_TESTS:-$prog} " in *" $prog "*) ;; *) continue ;; esac
    w="$work/$(printf %02d $i)-$prog-np$np"; mkdir -p "$w"
    t0=$(date +%s)
    (cd "$w" && timeout -k 10 "$limit" mpiexec -n "$np" "$bld/$dir/$prog") < /dev/null > "$res.$i.out" 2>&1
    rc=$?
    echo "$rc $(( $(date +%s) - t0 )) $i $dir $np $prog" >> "$res"
  done < <(cmds "$bld")
  if [ "$mode" != ufs ]; then "$T_DDIO" stats opens xfers coll_xfers bytes_written > "$res.stats"; fi
  exit 0
fi

# dump FILE OUT [-h]: the text a user compares (ncdump; h5dump for an
# HDF5 file ncdump cannot read) in OUT, without FILE's directory; fails for
# a file of neither format
dump() {
  case $(head -c 4 "$1" | od -An -tx1 | tr -d ' \n') in
    434446*|89484446) { "$NC_PREFIX/bin/ncdump" ${3:-} "$1" 2>&1 || h5dump ${3:+-H} "$1" 2>&1; } \
                        | sed "s|${1%/*}/||g" > "$2" ;;
    *) return 1 ;;
  esac
}

# compare UFSDIR MOUNTDIR NAME: every file the command left, in both modes:
# the same names, and each file byte for byte equal or, where bytes differ,
# its dump equal (h5diff for a plain HDF5 file). tst_simplerw_coll_r's NOFILL files (*_fv_2.nc) leave one
# column of every row never written, undefined by netCDF (the test skips it
# too): there ROMIO's ufs: data sieving writes back whatever its buffer held
# (-1 here), ddio writes nothing (0); their headers (ncdump -h) are compared.
compare() {
  local u=$1 m=$2 name=$3 f n=0 why="" bytes=0 hdr=0 opt
  if [ "$(cd "$u" && ls)" != "$(cd "$m" && ls)" ]; then
    why="files differ: ufs: [$(cd "$u" && ls | tr '\n' ' ')] mount: [$(cd "$m" && ls | tr '\n' ' ')]"
  fi
  for f in "$u"/*; do
    [ -f "$f" ] && [ -z "$why" ] || continue
    f=${f##*/}; n=$((n + 1))
    if cmp -s "$u/$f" "$m/$f"; then bytes=$((bytes + 1)); continue; fi
    # a plain HDF5 file (h5_test's, 62 MB): h5diff compares every object
    # and value in a second, where its ncdump text is 200 MB
    if [[ $f == *.h5 ]]; then
      h5diff "$u/$f" "$m/$f" > "$tmp/h5diff.out" 2>&1 || { why="$f: h5diff: $(tail -n 1 "$tmp/h5diff.out")"; break; }
      continue
    fi
    opt=""; case $f in *simplerw_coll_*_fv_2.nc) opt=-h; hdr=$((hdr + 1)) ;; esac
    dump "$u/$f" "$tmp/dump.u" $opt || { why="$f: bytes differ"; break; }
    dump "$m/$f" "$tmp/dump.m" $opt || { why="$f: no dump of the mount's file"; break; }
    cmp -s "$tmp/dump.u" "$tmp/dump.m" || { why="$f: ${opt:+header }dump differs"; break; }
  done
  rm -f "$tmp/dump.u" "$tmp/dump.m"
  if [ -n "$why" ]; then t_fail "$name" "$why"
  elif [ $n -gt 0 ]; then
    local note="$n files: $bytes byte for byte, $((n - bytes - hdr)) by dump or h5diff"
    [ $hdr -gt 0 ] && note+=", $hdr by header (NOFILL)"
    t_pass "$name" "$note"
  fi
}

# --- outer -----------------------------------------------------------------
logf=$T_TEE
if ! (set -o pipefail; "$top/scripts/build-netcdf.sh" "$top" "$top/netcdf" 2>&1 | tee -a "$logf"); then
  t_unusable netcdf/build "scripts/build-netcdf.sh failed"
fi
nc=$(cd "$top/netcdf" && pwd -P)
bld="$nc/build"
export NC_PREFIX="$nc/prefix"
tmp=$T_TMP
list=$(cmds "$bld")
[ -n "$list" ] || t_unusable netcdf/list "no mpiexec command found in $bld's parallel test scripts"

# Debian's libhdf5 (mpich flavour) must run on OUR libmpich.so.12
p=$bld/nc_test4/tst_parallel
lib=$(ldd "$p" | awk '$1=="libmpich.so.12"{print $3}')
h5=$(ldd "$p" | awk '$1 ~ /^libhdf5_mpich[.]so/{print $3}')
if [ "$(readlink -f "$lib")" = "$(readlink -f "$MPI/lib/libmpich.so.12")" ] && [[ "$h5" == *hdf5_mpich* ]]; then
  t_pass netcdf/ldd "libhdf5: $h5, libmpich.so.12: $lib"
else
  t_fail netcdf/ldd "libhdf5: '$h5', libmpich.so.12: '$lib'"
fi

modes=("$@"); [ ${#modes[@]} -gt 0 ] || modes=(ufs mount)
for mode in "${modes[@]}"; do
  m0=$(date +%s) p0=$T_PASS f0=$T_FAIL
  res="$tmp/$mode.results"; : > "$res"
  case $mode in
    ufs) mkdir -p "$tmp/ufs"
         ROMIO_FSTYPE_FORCE=ufs: "$0" --inner ufs "$tmp/ufs" "$res" "$bld" ;;
    mount) mkdir -p "$tmp/mnt" "$tmp/srv"
         # the comparison reads the mount's files: it runs in the session
         timeout -k 10 3600 "$T_RUN" -s 2 --root "$tmp/srv" --mount "$tmp/mnt" -- \
           bash -c '"$0" --inner mount "$1/out" "$2" "$3" && cp -a "$1/out" "$4/mount-files"' \
           "$0" "$tmp/mnt" "$res" "$bld" "$tmp" > "$tmp/mount.session.log" 2>&1 ;;
    *) t_unusable netcdf/usage "unknown mode '$mode' (ufs|mount)" ;;
  esac
  [ -s "$res" ] || { t_fail "netcdf/$mode" "did not run"; t_indent "$tmp/$mode.session.log" 20; continue; }
  while read -r rc secs i dir np prog; do
    name="$mode/$dir/$prog/np$np"
    if [ "$rc" = 0 ]; then t_pass "$name" "${secs}s"
    else t_fail "$name" "exit $rc, ${secs}s" "$res.$i.out"; fi
  done < "$res"
  if [ "$mode" = mount ]; then
    n=$(awk '$2=="opens"{o+=$3} $2=="xfers"{x+=$3} $2=="coll_xfers"{c+=$3} $2=="bytes_written"{b+=$3}
             END{if (o>0 && x>0 && c>0 && b>0) print o" opens, "x" xfers ("c" collective), "b" bytes written"}' "$res.stats" 2>/dev/null)
    if [ -n "$n" ]; then t_pass mount/servers "servers: $n"; else t_fail mount/servers "no I/O reached the ddio servers"; fi
  fi
  t_say "mode $mode: $((T_PASS - p0)) passed, $((T_FAIL - f0)) failed, $(( $(date +%s) - m0 ))s"
done

# every command's files: mount against the ufs: control
if [ -d "$tmp/ufs" ] && [ -d "$tmp/mount-files" ]; then
  c0=$(date +%s) p0=$T_PASS f0=$T_FAIL
  for u in "$tmp/ufs"/*/; do
    u=${u%/}; compare "$u" "$tmp/mount-files/${u##*/}" "cmp/${u##*/}"
  done
  t_say "comparison: $((T_PASS - p0)) passed, $((T_FAIL - f0)) failed, $(( $(date +%s) - c0 ))s"
fi
# t_nc4: ddio: names through nc_create_par/nc_open_par, against ufs:. Its
# netCDF-4 files are compared by ncdump, read through the mount: not byte
# for byte, because two runs of it on ufs: already differ in 85 bytes
# (16-byte runs of 0x00 against 0xff), so bytes say nothing here
# (test/hdf5's t_h5 files are byte-identical, and are compared so).
t_nc4() {
  local np=4 ns=2 mnt="$tmp/nc4-mnt" st="$tmp/t_nc4.stats" rc n
  mkdir -p "$mnt" "$tmp/nc4-ufs"
  STATS_OUT="$st" timeout -k 10 "$limit" "$T_RUN" -s $ns --root "$tmp/nc4-srv" --mount "$mnt" -- bash -c \
    'mpiexec -n "$0" "$1" ddio:/t_nc4.nc < /dev/null && "$2" stats coll_xfers > "$STATS_OUT" &&
     "$3" "$4/t_nc4.nc" > "$5"' \
    $np "$tmp/t_nc4" "$T_DDIO" "$NC_PREFIX/bin/ncdump" "$mnt" "$tmp/t_nc4.ddio.cdl" > "$tmp/t_nc4.ddio.log" 2>&1
  rc=$?; n=$(awk '$2=="coll_xfers" && $3>0{n++} END{print n+0}' "$st" 2>/dev/null)
  if [ $rc = 0 ] && grep -q '^PASS' "$tmp/t_nc4.ddio.log" && [ "$n" = $ns ]; then
    t_pass t_nc4/ddio "coll_xfers > 0 on $n of $ns servers, sum $(t_stat_sum "$st" coll_xfers)"
  else t_fail t_nc4/ddio "exit $rc, coll_xfers > 0 on $n of $ns servers" "$tmp/t_nc4.ddio.log"; fi
  timeout -k 10 "$limit" mpiexec -n $np "$tmp/t_nc4" "ufs:$tmp/nc4-ufs/t_nc4.nc" < /dev/null > "$tmp/t_nc4.ufs.log" 2>&1
  rc=$?
  if [ $rc = 0 ] && grep -q '^PASS' "$tmp/t_nc4.ufs.log"; then t_pass t_nc4/ufs
  else t_fail t_nc4/ufs "exit $rc" "$tmp/t_nc4.ufs.log"; fi
  "$NC_PREFIX/bin/ncdump" "$tmp/nc4-ufs/t_nc4.nc" > "$tmp/t_nc4.ufs.cdl" 2>&1
  if [ -s "$tmp/t_nc4.ufs.cdl" ] && cmp -s "$tmp/t_nc4.ufs.cdl" "$tmp/t_nc4.ddio.cdl"; then
    t_pass t_nc4/ncdump "$(wc -l < "$tmp/t_nc4.ufs.cdl") lines equal"
  else
    diff "$tmp/t_nc4.ufs.cdl" "$tmp/t_nc4.ddio.cdl" > "$tmp/t_nc4.diff" 2>&1
    t_fail t_nc4/ncdump "ncdump of the ddio: file (through the mount) differs" "$tmp/t_nc4.diff"
  fi
}
if mpicc -O2 -g -Wall -Wextra -Werror -I"$NC_PREFIX/include" -o "$tmp/t_nc4" "$here/t_nc4.c" \
     $("$NC_PREFIX/bin/nc-config" --libs) > "$tmp/t_nc4.build.log" 2>&1; then
  t0=$(date +%s) p0=$T_PASS f0=$T_FAIL
  t_nc4
  t_say "t_nc4: $((T_PASS - p0)) passed, $((T_FAIL - f0)) failed, $(( $(date +%s) - t0 ))s"
else
  t_fail t_nc4/build "" "$tmp/t_nc4.build.log"
fi
t_done
