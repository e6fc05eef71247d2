#!/usr/bin/env bash
# ROMIO's whole test directory (MPICH source of the build cache) on ddio:,
# with ROMIO's ufs: as the control.
#
# How the tests are run: ROMIO's own `runtests` script (the configured copy
# in the MPICH build tree), WITHOUT -subset, so atomicity, misc, shared_fp
# and ordered_fp run too. runtests takes the file name with -fname=NAME and
# hands it to every program unchanged, so it is simply given a ddio: name
# (-fname=ddio:/romio-test; the ufs control gets -fname=ufs:DIR/test). Its
# mpirun is hard-coded at configure time, so the harness runs a copy whose
# mpirun line points at mpirun-wrap.sh: every program then runs on fresh
# storage (new servers per test on ddio:, because runtests' `rm -f
# $FILENAME*` cannot remove ddio: files) under a time limit, and its output
# and exit status are recorded for judging here. runtests itself checks
# nothing (its CheckOutput calls are commented out upstream).
# With test names as arguments, the harness runs just those, with the
# process counts and arguments of runtests' own lines.
#
# Also run, because ROMIO builds them but runtests does not run them:
# perf and coll_perf (smoke tests: they verify no data, pass = exit 0;
# coll_perf's array is scaled down, see below),
# external32 (its file name is hard-coded and it reads the file back with
# fopen(): on ddio: it runs with a ddio mount as its working directory, where
# ROMIO routes the plain name to the ddio driver; on ufs: ROMIO_FSTYPE_FORCE),
# syshints once more with its hint file on the ddio mount (syshints.2: the
# runtests line opens the hint file in the source tree), big_extents and
# creat_excl (sources in the directory
# that its Makefile does not build), large_file and large_array (a 4 GiB file
# each; about 15 s each on ddio: here; on the ufs: control only with
# DDIO_ROMIO_LARGE_CONTROL=1, as ROMIO's two-phase takes minutes there).
# The Fortran tests (fcoll_test, fmisc, pfcoll_test from runtests; fperf,
# which runtests does not run, as a smoke test) are built with our MPICH's
# mpifort (configure generated their .f sources).
#
# A test passes when it exits 0 and prints ROMIO's "No Errors" line (tests
# that print no such line: see judge()). On ddio:, every test whose source
# makes a collective read or write must also have gone through ddio's
# disk-directed collective: the servers' coll_xfers counters must not all be
# 0; and every test that reads or writes at all must show the servers' xfers
# counters above 0 (its I/O went to ddio).
# Prints every failing test by name, then the control's count
# (romio-ufs: N passed, N failed) and last the ddio: count that
# scripts/test-summary.sh adds up (romio: N passed, N failed).
# With --ompi: ROMIO 3.2.1's test directory (Debian's Open MPI source, in
# the plug-in's cache entry, scripts/build-ompi-romio.sh) built with
# mpicc.openmpi and mpifort.openmpi, run by Debian's mpirun.openmpi: on
# ddio: through the plug-in (ddio-run --ompi), the control on ufs: through
# Debian's own ROMIO 3.2.1 component (--mca io romio321). Judged the same
# way, with what ROMIO 3.2.1 cannot do on ddio skipped by name and reason
# (ompi_skip below); closing line "romio-ompi: N passed, N failed".
# env: DDIO_TEST_LIMIT seconds per test (default 120; large tests 900)
#      DDIO_ROMIO_CONTROL=0 skips the ufs: control
#      DDIO_ROMIO_LARGE=0 leaves out large_file and large_array (4 GiB each);
#      DDIO_ROMIO_LARGE_CONTROL=1 runs them on the ufs: control too
# usage: run-romio-tests.sh [--ompi] [TEST...]
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
ompi=0
[ "${1:-}" = --ompi ] && { ompi=1; shift; }
here=$SRC/test/romio
top=$BUILD
if [ $ompi = 1 ]; then
  t_init romio-ompi
  command -v mpirun.openmpi >/dev/null && command -v mpicc.openmpi >/dev/null \
    || t_unusable romio-ompi/deps "Debian's Open MPI is not installed (scripts/install-deps.sh)"
  export DDIO_TIMEOUT=${DDIO_TIMEOUT:-30} OMPI_MCA_rmaps_base_oversubscribe=1
  if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
  t_step -t "${OMPI_BUILD_LIMIT:-3600}" romio-ompi/build "$SRC/scripts/build-ompi-romio.sh" "$SRC" "$top/ompi-romio" \
    || t_unusable romio-ompi/build "scripts/build-ompi-romio.sh failed"
  export DDIO_OMPI_COMPONENT_DIR=$top/ompi-romio
  base=$(dirname "$(readlink -f "$top/ompi-romio")")   # cache entry: src/, build/, lib/
  src="$base/src/ompi/mca/io/romio321/romio/test"
  gen="$base/build/ompi/mca/io/romio321/romio/test"
  # (ompi-mpi1.h: the MPI-1 names some of the tests still use)
  CC="mpicc.openmpi -include $here/ompi-mpi1.h"; FC=mpifort.openmpi
  # the wrapper: ddio-run --ompi (Open MPI's mpiexec, the plug-in); the
  # control through Debian's own ROMIO 3.2.1 on ufs:
  export WRAP_RUN_OPTS=--ompi WRAP_MPIEXEC="mpiexec.openmpi --mca io romio321"
else
  t_init romio
  t_mpi_env 30
  base=$(dirname "$(cd "$MPI" && pwd -P)")   # cache entry: src/, build/, prefix/
  src="$base/src/src/mpi/romio/test"
  gen="$base/build/src/mpi/romio/test"       # configure-generated files (runtests, misc.c, ...)
  CC=mpicc; FC=mpifort
fi
lbl=romio; [ $ompi = 1 ] && lbl=romio-ompi
[ -f "$src/Makefile.am" ] && [ -f "$gen/runtests" ] \
  || t_unusable $lbl/build "ROMIO's tests not found under $src and $gen"
limit=${DDIO_TEST_LIMIT:-120}
large_limit=$(( limit > 900 ? limit : 900 ))
tmp=$T_TMP
have_fuse=0
t_have_fuse && have_fuse=1
t_select "$@"

# --- build: every C program of ROMIO's test Makefile, plus the two sources
# its Makefile leaves out --------------------------------------------------
ctests=$(sed -n '/^CTESTS *=/,/[^\\]$/p' "$src/Makefile.am" | sed 's/^CTESTS *=//; s/\\//g' | tr -s ' \n' ' ')
ftests=$(sed -n 's/^FTESTS *= *//p' "$src/Makefile.am")
progs=$ctests
# (ROMIO 3.2.1 has neither)
for p in big_extents creat_excl; do [ -f "$src/$p.c" ] && progs="$progs $p"; done
mkdir -p "$tmp/bin"
build_fail=()
for p in $progs; do
  c="$src/$p.c"; [ -f "$gen/$p.c" ] && c="$gen/$p.c"
  if [ "$p" = coll_perf ]; then
    # A smoke test: its 2176x1152x1408-int array (14 GiB, 3.5 GiB of memory
    # per rank) is scaled to 272x144x176 (27 MiB): 128 -> 16 in its sizes.
    # (ROMIO 3.2.1 writes "128*17")
    sed 's/\(array_of_gsizes\[[0-2]\] = \)128 *\*/\116 */' "$c" >"$tmp/bin/coll_perf.c"
    [ "$(grep -c 'array_of_gsizes\[[0-2]\] = 16 \*' "$tmp/bin/coll_perf.c")" = 3 ] \
      || t_unusable $lbl/build "could not scale coll_perf's array"
    c="$tmp/bin/coll_perf.c"
  fi
  if ! $CC -O1 -I"$gen" -I"$src" -o "$tmp/bin/$p" "$c" >"$tmp/bin/$p.build.log" 2>&1; then
    build_fail+=("$p"); echo "build of $p failed:"; t_indent "$tmp/bin/$p.build.log" 20
  fi
done
for p in $ftests; do
  f="$gen/$p.f"; [ -f "$f" ] || f="$src/$p.f"
  if ! $FC -O1 -o "$tmp/bin/$p" "$f" >"$tmp/bin/$p.build.log" 2>&1; then
    build_fail+=("$p"); echo "build of $p failed:"; t_indent "$tmp/bin/$p.build.log" 20
  fi
done
progs="$progs $ftests"

# runtests with our mpirun, and no make (every program is built above).
sed -e "s|^mpirun=.*|mpirun=\"$here/mpirun-wrap.sh\"|" -e 's|^MAKE=.*|MAKE="false"|' \
  "$gen/runtests" >"$tmp/bin/runtests"
chmod +x "$tmp/bin/runtests"
grep -q "^mpirun=\"$here/mpirun-wrap.sh\"" "$tmp/bin/runtests" \
  || t_unusable $lbl/build "could not point runtests' mpirun at the wrapper"

# runtests' own lines: "NAME NP ARGS" (with $FILENAME and $srcdir left in),
# for runs of selected tests and for the list of what the full run must run.
# ROMIO 3.2.1 built without Fortran (Open MPI's component) generates a
# runtests whose Fortran block is `if [ 1 = 0 ]`: those tests are run
# outside runtests instead (extras), built with the Fortran wrapper.
f_off=0
grep -A1 '^if \[ 1 = 0 \]' "$gen/runtests" | grep -q 'echo ""' &&
  grep -A3 '^if \[ 1 = 0 \]' "$gen/runtests" | grep -q 'FORTRAN TESTS' && f_off=1
runtests_all() {
  sed -n 's/^[[:space:]]*\$mpirun -np \([0-9]*\) \.\/\([A-Za-z0-9_-]*\) *\(.*\)$/\2 \1 \3/p' "$gen/runtests"
}
runtests_list() {
  runtests_all | while read -r n np args; do
      [ $f_off = 1 ] && case " $ftests " in *" $n "*) continue ;; esac
      echo "$n $np $args"
    done
}
# The programs runtests does not run: NAME NP ARGS (same placeholders).
extras_list() {
  if [ $f_off = 1 ]; then
    runtests_all | while read -r n np args; do
      case " $ftests " in *" $n "*) echo "$n $np $args" ;; esac
    done
  fi
  echo "perf 4 -fname \$FILENAME"
  echo "fperf 4 -fname \$FILENAME"
  echo "coll_perf 4 -fname \$FILENAME"
  echo "external32 1"
  [ -f "$src/big_extents.c" ] && echo "big_extents 4 \$FILENAME"
  [ -f "$src/creat_excl.c" ] && echo "creat_excl 4 -fname \$FILENAME"
  # the ufs: control of the 4 GiB tests only on request: ROMIO's two-phase
  # large_array alone took 107-286 s here (ddio: 15 s)
  if [ "${DDIO_ROMIO_LARGE:-1}" = 1 ] && { [ "$1" = ddio ] || [ "${DDIO_ROMIO_LARGE_CONTROL:-0}" = 1 ]; }; then
    echo "large_file 1 -fname \$FILENAME"
    echo "large_array 4 -fname \$FILENAME"
  fi
}

# a runtests line whose program has no source here (ROMIO 3.2.1's runtests
# still runs syshints, which its directory lacks) is skipped, by name
while read -r n _; do
  case " $progs " in *" $n "*) ;; *)
    export "WRAP_SKIP_${n//[^A-Za-z0-9_]/_}=runtests runs it, but this ROMIO's test directory has no source for it" ;;
  esac
done < <(runtests_list)

# Atomic mode and the shared pointer (atomicity, misc, fmisc, shared_fp,
# ordered_fp) run on ddio under ROMIO 3.2.1 too: its lock macros reach the
# servers' locks through the hook the build adds (build-ompi-romio.sh).
# error is skipped on both: it looks for MPICH's error text, and Open MPI's
# MPI_Error_string gives only the class (Debian's own ROMIO 3.2.1 on ufs:
# fails it the same way).
ompi_skip() {   # ompi_skip MODE: export WRAP_SKIP_NAME=WHY for that mode
  [ $ompi = 1 ] || return 0
  export WRAP_SKIP_error="looks for MPICH's error text; Open MPI's MPI_Error_string gives the class only (fails on Debian's ROMIO 3.2.1 on ufs: too)"
}

# run_one MODE NAME NP ARGS...: one program through the wrapper, outside runtests
run_one() {
  local mode=$1 n=$2 np=$3; shift 3
  local lim=$limit
  case $n in large_*) lim=$large_limit ;; esac
  (cd "$tmp/run-$mode" && WRAP_LIMIT=$lim "$here/mpirun-wrap.sh" -np "$np" "./$n" "$@") \
    </dev/null >>"$tmp/run-$mode.log" 2>&1
}

# run_mode MODE FILENAME: the whole list on one file system
run_mode() {
  local mode=$1 fname=$2 n np args
  mkdir -p "$tmp/run-$mode" "$tmp/res-$mode" "$tmp/files-$mode"
  for p in $progs; do [ -x "$tmp/bin/$p" ] && ln -sf "$tmp/bin/$p" "$tmp/run-$mode/$p"; done
  # (runtests' MakeExe wants a program even for what the wrapper skips)
  while read -r n _; do
    case " $progs " in *" $n "*) ;; *) ln -sf /bin/false "$tmp/run-$mode/$n" ;; esac
  done < <(runtests_list)
  ln -sf "$tmp/bin/runtests" "$tmp/run-$mode/runtests"
  export WRAP_MODE=$mode WRAP_OUT="$tmp/res-$mode" WRAP_TOP="$top" WRAP_LIMIT=$limit
  export WRAP_CLEAN="$tmp/files-$mode"
  ompi_skip "$mode"
  # external32's name is hard-coded: on ddio it runs on a ddio mount, where
  # ROMIO routes the plain name to the driver and its fopen() sees the file
  if [ "$mode" = ufs ]; then export WRAP_FORCE_external32=ufs:; else export WRAP_MOUNT_external32=1; fi
  if [ ${#T_SELECT[@]} -eq 0 ]; then
    # Every runtests line has its own limit; this bounds runtests as a whole.
    local n_lines; n_lines=$(runtests_list | wc -l)
    (cd "$tmp/run-$mode" && timeout -k 10 $(( (n_lines + 1) * (limit + 30) )) \
       ./runtests -fname="$fname") >"$tmp/run-$mode.log" 2>&1
  else
    while read -r n np args; do
      t_selected "$n" || continue
      args=${args//\$FILENAME/$fname}; args=${args//\$srcdir/$src}
      # shellcheck disable=SC2086 # runtests' arguments, split as runtests splits them
      run_one "$mode" "$n" "$np" $args
    done < <(runtests_list)
  fi
  while read -r n np args; do
    t_selected "$n" || continue
    [ "$n" = external32 ] && [ "$mode" = ddio ] && [ $have_fuse = 0 ] && continue
    args=${args//\$FILENAME/$fname}
    # shellcheck disable=SC2086
    run_one "$mode" "$n" "$np" $args
  done < <(extras_list "$mode")
  # runtests' syshints opens the hint file in ROMIO's source tree (a local
  # file); syshints.2 is the same test with the hint file on a ddio mount,
  # so that the file it opens, and whose hints it checks, is a ddio file.
  if [ "$mode" = ddio ] && [ $have_fuse = 1 ] && [ -x "$tmp/bin/syshints" ] && t_selected syshints; then
    WRAP_MOUNT_syshints=1 WRAP_PRE_syshints="cp '$src/test_hintfile' test_hintfile" \
      run_one ddio syshints 1 test_hintfile
  fi
}

# the program's source (C, or Fortran: .f, generated by configure)
source_of() {
  local e
  for e in c f; do
    [ -f "$gen/$1.$e" ] && { echo "$gen/$1.$e"; return; }
    [ -f "$src/$1.$e" ] && { echo "$src/$1.$e"; return; }
  done
  echo /dev/null
}

# The source makes a collective read or write: it must take ddio's collective.
is_coll() {
  grep -qiE 'MPI_File_i?(read|write)(_at)?_all' "$(source_of "$1")"
}

# It reads or writes at all: that I/O must reach the servers.
is_io() {
  grep -qiE 'MPI_File_i?(read|write)' "$(source_of "$1")"
}

# judge MODE NAME: 0 when the recorded run passed; prints the reason otherwise
judge() {
  local mode=$1 n=$2 r="$tmp/res-$1"
  local rc out="$r/$n.out" base=${n%%.*}
  rc=$(cat "$r/$n.rc" 2>/dev/null || echo none)
  [ "$rc" = 0 ] || { echo "exit status $rc"; return 1; }
  case $base in
    perf|coll_perf|fperf) ;;      # smoke: no data check in the program
    external32)
      grep -qx "native datarep is LITTLE ENDIAN" "$out" && grep -qx "external32 datarep is BIG ENDIAN" "$out" \
        || { echo "wrong byte order in the file"; return 1; } ;;
    large_file) grep -q "^Data read back is correct" "$out" || { echo "no 'Data read back is correct'"; return 1; } ;;
    large_array)
      [ "$(grep -c "data read back is correct" "$out")" = 4 ] || { echo "not every rank read its data back"; return 1; } ;;
    *) grep -qE '^ *No Errors *$' "$out" || { echo "no 'No Errors' line"; return 1; } ;;
  esac
  # (runtests' own syshints line opens the hint file in the source tree)
  if [ "$mode" = ddio ] && [ "$n" != syshints ] && grep -qi MPI_File_open "$(source_of "$base")"; then
    local o; o=$(cat "$r/$n.opens" 2>/dev/null || echo 0)
    [ "${o:-0}" -gt 0 ] || { echo "opens 0: its file was not opened on the ddio servers"; return 1; }
  fi
  if [ "$mode" = ddio ] && is_io "$base"; then
    local x l; x=$(cat "$r/$n.xfers" 2>/dev/null || echo 0); l=$(cat "$r/$n.local" 2>/dev/null || echo 0)
    [ "${x:-0}" -gt 0 ] || [ "${l:-0}" -gt 0 ] || { echo "xfers 0: its I/O did not go to the ddio servers"; return 1; }
  fi
  if [ "$mode" = ddio ] && is_coll "$base"; then
    # a collective of plain ranges that only reads may be all same-host reads
    local k l; k=$(cat "$r/$n.coll" 2>/dev/null || echo 0); l=$(cat "$r/$n.local" 2>/dev/null || echo 0)
    [ "${k:-0}" -gt 0 ] || [ "${l:-0}" -gt 0 ] || { echo "coll_xfers 0: the collective did not take the disk-directed path"; return 1; }
    echo "coll_xfers $k${l:+, same-host handovers $l}"
  fi
  return 0
}

# report MODE LABEL: PASS/FAIL per test (and every expected test that did not run)
report() {
  local mode=$1 label=$2 n sec expect
  t_section "$label"
  expect=$( { runtests_list; extras_list "$mode"; } | awk '{print $1}')
  for n in $expect; do
    t_selected "$n" || continue
    [ "$n" = external32 ] && [ "$mode" = ddio ] && [ $have_fuse = 0 ] && {
      t_skip "$label/external32" "reads its file with fopen(): needs a ddio mount, and FUSE is unavailable"
      continue; }
    grep -qx "$n" "$tmp/res-$mode/ran" 2>/dev/null || { t_fail "$label/$n" "not run"; continue; }
  done
  for n in $(cat "$tmp/res-$mode/ran" 2>/dev/null); do
    sec=$(cat "$tmp/res-$mode/$n.sec" 2>/dev/null)
    if [ "$(cat "$tmp/res-$mode/$n.rc" 2>/dev/null)" = skip ]; then
      t_skip "$label/$n" "$(cat "$tmp/res-$mode/$n.out")"; continue
    fi
    t_judge "$label/$n" "$sec" "$tmp/res-$mode/$n.out" judge "$mode" "$n"
  done
  for n in "${build_fail[@]}"; do t_selected "$n" && t_fail "$label/$n" "build failed"; done
}

# the ufs: control first (its line is printed before the closing line, which counts ddio:)
if [ "${DDIO_ROMIO_CONTROL:-1}" != 0 ]; then
  run_mode ufs "ufs:$tmp/files-ufs/test"
  report ufs "$lbl-ufs"
fi
run_mode ddio "ddio:/romio-test"
report ddio "$lbl"
t_done
