#!/usr/bin/env bash
# run-bench.sh: Kotz's access patterns on five MPI-IO methods, side by side,
# with the storage ceiling measured in the same run. See bench/README.md.
#
# For each record size, for each method: every write pattern (so the reads
# have data), then every read pattern, one process launch per pattern so the
# page cache can be dropped right before each read. Every run verifies its
# data (ddio-patterns does), has a timeout, and a failure is recorded as FAIL
# without stopping the rest.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"
top=$(cd "$here/.." && pwd)

ALL_METHODS="ddio,ddio-tcp,ddio-ucx,ddio-nosort,ddio-2ph,ufs-2ph,ufs-indep"
# Debian's Open MPI (not in the default set: --methods names them)
OMPI_METHODS="ompi-ddio,ompi-ompio,ompi-romio"
ALL_WRITES="wn,wb,wc,wnb,wbb,wcb,wbc,wcc,wcn"
ALL_READS="ra,rn,rb,rc,rnb,rnc,rbn,rbb,rbc,rcn,rcb,rcc"

usage() {
  cat <<EOF
usage: bench/run-bench.sh [options]

  -P, --ranks N          MPI ranks (default 4)
  -s, --servers N        ddio servers for the ddio methods (default 2)
  -m, --mib N            file size in MiB (default 256)
  -r, --recsizes LIST    record sizes in bytes (default 8,8192)
  -p, --patterns LIST    patterns (default all; writes run before reads)
      --methods LIST     subset of $ALL_METHODS
                         (default all) and of $OMPI_METHODS
  -n, --reps N           repetitions of every run (default 1)
      --from-rep K       add repetitions K..N to the results already in OUT
                         (an interrupted or too-short run), with the same
                         parameters; OUT must hold reps 1..K-1 and no later
  -o, --out DIR          results directory (default bench/results/DATE-HOST)
      --tmp DIR          scratch directory for the data files; it must be on
                         the file system under test (default OUT/tmp)
  -t, --timeout SECS     limit for one run (default 900)
  -H, --hint KEY=VAL     extra MPI_Info hint for every method (repeatable)
      --ddio-run-args S  extra ddio-run options, e.g. "--block-size 1048576"
      --ceiling-qd N     ceiling queue depth (default 16)
      --ceiling-bs KIB   ceiling request size in KiB (default 1024)
      --no-ceiling       skip the ceiling measurement
      --no-beside        skip the device measurement beside each run (below)
      --no-report        do not run report.py at the end
  -w, --window MIB       every pattern in calls of at most MIB per rank
                         (ddio-patterns -w; default: one call, Kotz's, or
                         windows where one call would not fit: bench/README.md,
                         "Memory guard")
      --force            run even where the memory estimate says the ranks
                         would not fit (bench/README.md, "Memory guard")
      --keep             keep the data files (default: removed after each
                         method/record-size block)
      --mpich DIR        MPICH to use for every method (default $top/mpich)
  -h, --help

methods:
  ddio         ddio: disk-directed I/O, default hints (transport: auto)
  ddio-tcp     ddio: with the TCP transport (ddio-run --transport tcp)
  ddio-ucx     ddio: with the UCX transport (ddio-run --transport ucx)
  ddio-nosort  ddio: with romio_ddio_presort=disable
  ddio-2ph     ddio: servers under ROMIO two-phase (romio_ddio_collective=twophase)
  ufs-2ph      ufs: ROMIO defaults (two-phase collective buffering)
  ufs-indep    ufs: romio_cb_read=disable,romio_cb_write=disable (independent
               I/O with data sieving)
  ompi-ddio    Debian's Open MPI (mpirun.openmpi, ddio-patterns built with
               mpicc.openmpi) on ddio: through the plug-in (ddio-run --ompi;
               scripts/build-ompi-romio.sh builds it, cached)
  ompi-ompio   the same program on a local file through Open MPI's OMPIO
               (its default MPI-IO)
  ompi-romio   the same on ufs: through Debian's own ROMIO 3.2.1 component
               (defaults: two-phase)

Output in OUT: results.csv, ceiling.csv, machine.txt, params.txt, logs/,
REPORT.md and PNG charts (bench/report.py).
EOF
}

P=4; NSERV=2; MIB=256; RECSIZES=8,8192; PATTERNS=all; METHODS=$ALL_METHODS; REPS=1; FROM=1
OUT=""; TMPD=""; TMO=900; HINTS=(); DDIO_RUN_ARGS=""; CQD=16; CBS=1024
DO_CEIL=1; DO_BESIDE=1; DO_REPORT=1; KEEP=0; MPICH=$top/mpich; FORCE=0; WINDOW=""
die() { echo "run-bench: $*" >&2; exit 2; }
need() { [ $# -ge 2 ] || die "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case "$1" in
    -P|--ranks) need "$@"; P=$2; shift 2 ;;
    -s|--servers) need "$@"; NSERV=$2; shift 2 ;;
    -m|--mib) need "$@"; MIB=$2; shift 2 ;;
    -r|--recsizes) need "$@"; RECSIZES=$2; shift 2 ;;
    -p|--patterns) need "$@"; PATTERNS=$2; shift 2 ;;
    --methods) need "$@"; METHODS=$2; shift 2 ;;
    -n|--reps) need "$@"; REPS=$2; shift 2 ;;
    --from-rep) need "$@"; FROM=$2; shift 2 ;;
    -o|--out) need "$@"; OUT=$2; shift 2 ;;
    --tmp) need "$@"; TMPD=$2; shift 2 ;;
    -t|--timeout) need "$@"; TMO=$2; shift 2 ;;
    -H|--hint) need "$@"; HINTS+=("$2"); shift 2 ;;
    --ddio-run-args) need "$@"; DDIO_RUN_ARGS=$2; shift 2 ;;
    --ceiling-qd) need "$@"; CQD=$2; shift 2 ;;
    --ceiling-bs) need "$@"; CBS=$2; shift 2 ;;
    --no-ceiling) DO_CEIL=0; shift ;;
    --no-beside) DO_BESIDE=0; shift ;;
    --no-report) DO_REPORT=0; shift ;;
    --keep) KEEP=1; shift ;;
    --force) FORCE=1; shift ;;
    -w|--window) need "$@"; WINDOW=$2; shift 2 ;;
    --mpich) need "$@"; MPICH=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
for v in P NSERV MIB REPS FROM TMO CQD CBS; do
  [[ "${!v}" =~ ^[0-9]+$ ]] && [ "${!v}" -gt 0 ] || die "$v must be a positive integer, got '${!v}'"
done
[ "$FROM" -le "$REPS" ] || die "--from-rep $FROM is past --reps $REPS"
[ "$PATTERNS" = all ] && PATTERNS="$ALL_WRITES,$ALL_READS"
IFS=, read -r -a methods <<<"$METHODS"
IFS=, read -r -a recsizes <<<"$RECSIZES"
IFS=, read -r -a pats <<<"$PATTERNS"
for m in "${methods[@]}"; do
  case ",$ALL_METHODS,$OMPI_METHODS," in *",$m,"*) ;; *) die "unknown method '$m' (known: $ALL_METHODS,$OMPI_METHODS)";; esac
done
is_ddio() { [[ $1 == ddio* || $1 == ompi-ddio ]]; }
NEED_MPICH=0; NEED_OMPI=0
for m in "${methods[@]}"; do if [[ $m == ompi-* ]]; then NEED_OMPI=1; else NEED_MPICH=1; fi; done
writes=(); reads=()
for p in "${pats[@]}"; do
  case ",$ALL_WRITES," in *",$p,"*) writes+=("$p"); continue;; esac
  case ",$ALL_READS," in *",$p,"*) reads+=("$p"); continue;; esac
  die "unknown pattern '$p'"
done
[ $NEED_MPICH = 0 ] || { [ -x "$MPICH/bin/mpiexec" ] && [ -x "$MPICH/bin/mpicc" ]; } \
  || die "no MPICH at $MPICH (build it: make mpich-build)"
[ $NEED_OMPI = 0 ] || { command -v mpirun.openmpi >/dev/null && command -v mpicc.openmpi >/dev/null; } \
  || die "no Debian Open MPI (scripts/install-deps.sh: openmpi-bin libopenmpi-dev)"
command -v timeout >/dev/null || die "timeout(1) not found"

[ -n "$OUT" ] || OUT=$here/results/$(date +%Y%m%d-%H%M%S)-$(hostname -s)
mkdir -p "$OUT/logs" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
[ -n "$TMPD" ] || TMPD=$OUT/tmp
mkdir -p "$TMPD/ufs" "$TMPD/ddio" || die "cannot create $TMPD"
TMPD=$(cd "$TMPD" && pwd)

export PATH="$MPICH/bin:$PATH"
export LD_LIBRARY_PATH="$MPICH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/run.log" >&2; }

# ---- build the helpers (bench/bin, git-ignored) --------------------------------
BIN=$here/bin
mkdir -p "$BIN"
build() {   # build OUTPUT SOURCE... -- COMMAND...
  local out=$1; shift; local srcs=() s newer=0
  while [ "$1" != -- ]; do srcs+=("$1"); shift; done; shift
  [ -x "$out" ] || newer=1
  for s in "${srcs[@]}"; do [ "$s" -nt "$out" ] && newer=1; done
  [ $newer = 0 ] && return 0
  log "building $(basename "$out")"
  "$@" || die "cannot build $out"
}
PATBIN=$BIN/ddio-patterns
[ $NEED_MPICH = 0 ] || build "$PATBIN" "$top/examples/ddio-patterns.c" "$MPICH/lib/libmpich.so" -- \
  "$MPICH/bin/mpicc" -O2 -g -o "$PATBIN" "$top/examples/ddio-patterns.c"
# Open MPI: the same workload built with Debian's mpicc.openmpi, and for
# ompi-ddio the plug-in (cached; ddio-run --ompi finds it in $top/ompi-romio)
PATBIN_OMPI=$BIN/ddio-patterns.openmpi
OMPI_MPIRUN=(mpirun.openmpi -n "$P" --mca rmaps_base_oversubscribe 1)
if [ $NEED_OMPI = 1 ]; then
  build "$PATBIN_OMPI" "$top/examples/ddio-patterns.c" -- \
    mpicc.openmpi -O2 -g -o "$PATBIN_OMPI" "$top/examples/ddio-patterns.c"
  [ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  case ",$METHODS," in *,ompi-ddio,*)
    log "the Open MPI plug-in (scripts/build-ompi-romio.sh)"
    "$top/scripts/build-ompi-romio.sh" "$top" "$top/ompi-romio" >> "$OUT/run.log" 2>&1 \
      || die "scripts/build-ompi-romio.sh failed (see $OUT/run.log)" ;;
  esac
fi
CEIL=$BIN/ddio-ceiling
build "$CEIL" "$here/ddio-ceiling.c" -- \
  ${CC:-cc} -std=gnu11 -O2 -g -Wall -o "$CEIL" "$here/ddio-ceiling.c" -laio

DDIO_RUN=$top/tools/ddio-run
DDIO_OK=1; DDIO_WHY=""
if [ ! -x "$DDIO_RUN" ]; then DDIO_OK=0; DDIO_WHY="no tools/ddio-run"
elif [ ! -x "$top/ioserver/ddio-server" ] && ! command -v ddio-server >/dev/null; then
  DDIO_OK=0; DDIO_WHY="no ddio-server binary (build it: make)"
fi

# ---- cache control -------------------------------------------------------------
drop_caches() {   # prints yes when the page cache was dropped, no otherwise
  sync
  if { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then echo yes; else
    if [ ! -e "$OUT/.cache-warned" ]; then   # (runs in a subshell: a file, not a variable)
      log "WARNING: cannot drop the page cache (not root, or /proc/sys read-only):" \
          "read runs are NOT cold; they are marked cold=no in results.csv"
      : > "$OUT/.cache-warned"
    fi
    echo no
  fi
}

# ---- machine details -------------------------------------------------------------
fs_of() { findmnt -no FSTYPE -T "$1" 2>/dev/null || stat -f -c %T "$1"; }
dev_of() { findmnt -no SOURCE -T "$1" 2>/dev/null || echo "?"; }
MACHINE=$OUT/machine.txt
[ "$FROM" -gt 1 ] && MACHINE=$OUT/machine-rep$FROM.txt
{
  echo "date: $(date -Is)"
  echo "host: $(hostname)"
  echo "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
  echo "nproc: $(nproc)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "kernel: $(uname -srm)"
  echo "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
  echo "scratch: $TMPD"
  echo "fs: $(fs_of "$TMPD")"
  echo "device: $(dev_of "$TMPD")"
  echo "mount options: $(findmnt -no OPTIONS -T "$TMPD" 2>/dev/null)"
  d=$(basename "$(dev_of "$TMPD")" 2>/dev/null); d=${d%%[0-9]*}
  [ -r /sys/block/$d/queue/rotational ] && echo "device rotational: $(cat /sys/block/$d/queue/rotational)"
  [ -r /sys/block/$d/queue/scheduler ] && echo "device scheduler: $(cat /sys/block/$d/queue/scheduler)"
  [ -r /sys/block/$d/size ] && echo "device size: $(( $(cat /sys/block/$d/size) / 2097152 )) GiB"
  echo "git commit: $(git -C "$top" rev-parse HEAD 2>/dev/null)$(git -C "$top" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  [ $NEED_OMPI = 1 ] && echo "openmpi: $(ompi_info --version 2>/dev/null | head -n1) ($(dpkg-query -W -f='${Version}' libopenmpi3 2>/dev/null))"
  echo "mpich: $("$MPICH/bin/mpichversion" 2>/dev/null | sed -n "s/^MPICH Version:[[:space:]]*//p") ($MPICH)"
  echo "drop_caches: $( [ -w /proc/sys/vm/drop_caches ] && echo writable || echo 'NOT writable: reads are warm')"
  echo "ddio: $( [ $DDIO_OK = 1 ] && echo available || echo "unavailable: $DDIO_WHY")"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$MACHINE"
params() {   # what must match for repetitions to join a run (not the command, not reps)
  echo "ranks: $P"; echo "servers: $NSERV"; echo "file_MiB: $MIB"; echo "recsizes: $RECSIZES"
  echo "patterns: $PATTERNS"; echo "methods: $METHODS"; echo "timeout: $TMO"
  echo "hints: ${HINTS[*]:-}"; echo "ddio-run args: $DDIO_RUN_ARGS"
  echo "ceiling: ${CBS} KiB requests, QD $CQD"
  [ -z "$WINDOW" ] || echo "window: $WINDOW MiB per rank per call"
}
if [ "$FROM" = 1 ]; then
  { echo "command: $CMDLINE"; params; echo "reps: $REPS"; } > "$OUT/params.txt"
else
  # Joining a run: same parameters, and nothing yet from rep FROM on (a
  # half-done repetition's rows must be taken out first, by hand, knowingly).
  [ -s "$OUT/params.txt" ] || die "--from-rep $FROM: no $OUT/params.txt to add to"
  diff <(grep -Ev '^(command|resumed|reps):' "$OUT/params.txt") <(params) >&2 ||
    die "--from-rep $FROM: these parameters differ from $OUT/params.txt (above)"
  for f in results.csv:12 ceiling.csv:9 beside.csv:5; do
    [ -f "$OUT/${f%:*}" ] || continue
    n=$(awk -F, -v c="${f#*:}" -v k="$FROM" 'NR > 1 && $c + 0 >= k' "$OUT/${f%:*}" | wc -l)
    [ "$n" = 0 ] || die "--from-rep $FROM: $OUT/${f%:*} already has $n row(s) of rep $FROM or later"
  done
  sed -i "s/^reps: .*/reps: $REPS/" "$OUT/params.txt"
  echo "resumed: $CMDLINE (reps $FROM-$REPS; machine-rep$FROM.txt)" >> "$OUT/params.txt"
fi
log "results in $OUT; scratch $TMPD ($(fs_of "$TMPD") on $(dev_of "$TMPD"))"

RES=$OUT/results.csv
[ -s "$RES" ] || echo "method,pattern,op,recsize,P,servers,file_MiB,MiB,seconds,MiB_s,status,rep,cold,wall_s,client_cpu_s,server_cpu_s,window_MiB,rank_peak_kB,server_peak_kB" > "$RES"
CEILCSV=$OUT/ceiling.csv
[ -s "$CEILCSV" ] || echo "where,op,file_MiB,block_KiB,qd,seconds,MiB_s,status,rep,cold,path" > "$CEILCSV"
BESIDE=$OUT/beside.csv
[ -s "$BESIDE" ] || echo "method,pattern,op,recsize,rep,files,MiB,seconds,MiB_s,status,cold" > "$BESIDE"

# ---- the ceiling ---------------------------------------------------------------
ceiling() {   # ceiling WHERE DIR REP
  local where=$1 dir=$2 rep=$3 op flag cold lg line st f
  f=$dir/ceiling.dat
  # write-alloc: the first pass creates and allocates the file; write: the
  # second pass overwrites it (the device's rate, as most write patterns see
  # it: only the first write pattern of a method allocates); read: cold.
  for op in write-alloc write read; do
    flag=-w; [ $op = read ] && flag=-r
    cold=n/a; [ $op = read ] && cold=$(drop_caches)
    lg=$OUT/logs/ceiling-$where-$op.rep$rep.log
    timeout -k 10 "$TMO" "$CEIL" -s "$MIB" -b "$CBS" -q "$CQD" $flag "$f" >"$lg" 2>&1
    st=$?
    line=$(grep '^ceiling,' "$lg" | tail -1)
    if [ $st = 0 ] && [ -n "$line" ]; then
      IFS=, read -r _ _ mib bk qd secs rate _ <<<"$line"
      echo "$where,$op,$MIB,$bk,$qd,$secs,$rate,ok,$rep,$cold,$f" >> "$CEILCSV"
      log "ceiling $where $op: $rate MiB/s"
    else
      local why=FAIL; [ $st = 124 ] || [ $st = 137 ] && why=TIMEOUT; [ $st = 3 ] && why="FAIL(no O_DIRECT)"
      echo "$where,$op,$MIB,$CBS,$CQD,,,$why,$rep,$cold,$f" >> "$CEILCSV"
      log "ceiling $where $op: $why (see $lg)"
    fi
  done
  rm -f "$f"
}
ceilings() {   # ceilings REP: both locations, once per repetition
  [ $DO_CEIL = 1 ] || return 0
  mkdir -p "$TMPD/ddio/ceiling-root"
  ceiling ufs "$TMPD/ufs" "$1"
  ceiling ddio-root "$TMPD/ddio/ceiling-root" "$1"
  rmdir "$TMPD/ddio/ceiling-root" 2>/dev/null
}

# ---- the device beside each run -----------------------------------------------
# This machine's disk drifts 2x within minutes (two concurrent O_DIRECT
# readers: 1150 MiB/s aggregate one minute, 2400 the next), so the ceiling
# taken once per repetition can be far from what the device gave a run
# measured minutes later. Right after each run the ceiling tool reads the
# files that run used (read), or overwrites scratch files of the same sizes
# (write), one process per file, all at once: as the run's servers (or the
# one ufs: file) met the device. beside.csv: aggregate MiB/s = all MiB / the
# slowest file's time.
beside() {   # beside METHOD PATTERN REC REP OP FILE...
  local m=$1 pat=$2 rec=$3 rep=$4 op=$5; shift 5
  local files=("$@") targets=() sizes=() f i n sz cold=n/a flag=-r lg pids=() st=ok
  local mib=0 secs=0 line s r
  [ $DO_BESIDE = 1 ] && [ ${#files[@]} -gt 0 ] || return 0
  for f in "${files[@]}"; do
    sz=$(stat -c %s "$f" 2>/dev/null) || return 0
    sizes+=($(( (sz + 1048575) / 1048576 )))
  done
  if [ $op = write ]; then
    flag=-w; mkdir -p "$TMPD/beside"
    for i in "${!files[@]}"; do
      f=$TMPD/beside/$i.dat; targets+=("$f")
      # the first pass allocates the scratch file (not recorded)
      [ "$(stat -c %s "$f" 2>/dev/null)" = $(( sizes[i] * 1048576 )) ] ||
        { rm -f "$f"; "$CEIL" -s "${sizes[i]}" -b "$CBS" -q "$CQD" -w "$f" >/dev/null 2>&1; }
    done
  else
    targets=("${files[@]}"); cold=$(drop_caches)
  fi
  lg=$OUT/logs/r$rec/$m/$pat.beside.rep$rep.log
  : > "$lg"
  for i in "${!targets[@]}"; do
    timeout -k 10 "$TMO" "$CEIL" -s "${sizes[i]}" -b "$CBS" -q "$CQD" $flag "${targets[i]}" \
      > "$lg.$i" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do wait "${pids[i]}" || st=FAIL; done
  for i in "${!targets[@]}"; do
    cat "$lg.$i" >> "$lg"; line=$(grep '^ceiling,' "$lg.$i" | tail -1); rm -f "$lg.$i"
    [ -n "$line" ] || { st=FAIL; continue; }
    IFS=, read -r _ _ n _ _ s r _ <<<"$line"
    mib=$(awk -v a="$mib" -v b="$n" 'BEGIN {print a + b}')
    secs=$(awk -v a="$secs" -v b="$s" 'BEGIN {print (b > a) ? b : a}')
  done
  if [ $st = ok ] && awk -v s="$secs" 'BEGIN {exit !(s > 0)}'; then
    r=$(awk -v a="$mib" -v s="$secs" 'BEGIN {printf "%.2f", a / s}')
    echo "$m,$pat,$op,$rec,$rep,${#targets[@]},$mib,$secs,$r,ok,$cold" >> "$BESIDE"
  else
    echo "$m,$pat,$op,$rec,$rep,${#targets[@]},,,,FAIL,$cold" >> "$BESIDE"
  fi
}
run_files() {   # run_files METHOD REC: the data files a run of METHOD used
  if is_ddio "$1"; then
    # the servers' data files, not their metadata under .ddio/
    find "$ROOT" -name .ddio -prune -o -type f -name "bench-r$2.dat" -print 2>/dev/null | sort
  else
    echo "$TMPD/ufs/$1-r$2.dat"
  fi
}

# ---- the methods ---------------------------------------------------------------
method_hints() {
  case "$1" in
    ddio-nosort) echo "romio_ddio_presort=disable" ;;
    ddio-2ph) echo "romio_ddio_collective=twophase" ;;
    ufs-indep) echo "romio_cb_read=disable romio_cb_write=disable" ;;
  esac
}

# run_one METHOD PATTERN RECSIZE REP [prep]: one launch; appends to results.csv
run_one() {
  local m=$1 pat=$2 rec=$3 rep=$4 prep=${5:-} op=read cold=n/a h args=() cmd=() lg st line t0 t1
  case "$pat" in w*) op="write";; esac
  args=(-C -p "$pat" -r "$rec" -m "$MIB")
  local plan win=""; plan=$(mem_plan "$m" "$pat" "$rec")
  case "$plan" in window\ *) win=${plan#window };; esac
  [ -n "$WINDOW" ] && [[ $plan != SKIP* ]] && win=$WINDOW
  [ -n "$win" ] && args+=(-w "$win")
  for h in $(method_hints "$m") "${HINTS[@]}"; do args+=(-H "$h"); done
  local srv=0
  if is_ddio "$m"; then
    srv=$NSERV
    local extra=(); read -r -a extra <<<"$DDIO_RUN_ARGS"
    # the profile: per-call phase times from every rank (DDIO_TIMING) and
    # the servers' per-XFER counters (debug log, printed after the run)
    case "$m" in ddio-tcp) extra+=(--transport tcp);; ddio-ucx) extra+=(--transport ucx);; esac
    if [ "$m" = ompi-ddio ]; then
      cmd=(env DDIO_TIMING=1 DDIO_RUN_CPU=1 "$DDIO_RUN" --ompi -s "$NSERV" --root "$ROOT" -l debug \
           --keep-logs "${extra[@]}" -- "$here/cpu-wrap.sh" "${OMPI_MPIRUN[@]}" "$PATBIN_OMPI" \
           "${args[@]}" "ddio:/bench-r$rec.dat")
    else
      cmd=(env DDIO_TIMING=1 DDIO_RUN_CPU=1 "$DDIO_RUN" -s "$NSERV" --root "$ROOT" -l debug \
           --keep-logs "${extra[@]}" -- "$here/cpu-wrap.sh" mpiexec -n "$P" "$PATBIN" "${args[@]}" \
           "ddio:/bench-r$rec.dat")
    fi
  elif [ "$m" = ompi-ompio ]; then
    cmd=("$here/cpu-wrap.sh" "${OMPI_MPIRUN[@]}" --mca io ompio "$PATBIN_OMPI" "${args[@]}" \
         "$TMPD/ufs/$m-r$rec.dat")
  elif [ "$m" = ompi-romio ]; then
    cmd=("$here/cpu-wrap.sh" "${OMPI_MPIRUN[@]}" --mca io romio321 "$PATBIN_OMPI" "${args[@]}" \
         "ufs:$TMPD/ufs/$m-r$rec.dat")
  else
    cmd=("$here/cpu-wrap.sh" mpiexec -n "$P" "$PATBIN" "${args[@]}" "ufs:$TMPD/ufs/$m-r$rec.dat")
  fi
  lg=$OUT/logs/r$rec/$m/$pat${prep:+-prep}.rep$rep.log
  mkdir -p "$(dirname "$lg")"
  local why=""; [[ $plan == SKIP* ]] && why=$plan
  if [ -n "$why" ]; then
    echo "$why: the estimated memory exceeds 80% of MemAvailable (--force runs it)" > "$lg"
    [ -z "$prep" ] && echo "$m,$pat,$op,$rec,$P,$srv,$MIB,,,,$why,$rep,$cold," >> "$RES"
    log "$m $pat r=$rec: $why"
    return 1
  fi
  if is_ddio "$m" && [ $DDIO_OK = 0 ]; then
    echo "skipped: $DDIO_WHY" > "$lg"
    [ -z "$prep" ] && echo "$m,$pat,$op,$rec,$P,$srv,$MIB,,,,FAIL(ddio unavailable),$rep,$cold," >> "$RES"
    return 1
  fi
  [ $op = read ] && cold=$(drop_caches) || sync
  echo "+ ${cmd[*]}" > "$lg"
  [ -n "$win" ] && [ -z "$WINDOW" ] && log "$m $pat r=$rec: one call would not fit in memory: calls of $win MiB per rank"
  t0=$(date +%s.%N)
  timeout -k 15 "$TMO" "${cmd[@]}" >>"$lg" 2>&1
  st=$?
  t1=$(date +%s.%N)
  local wall; wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
  line=$(grep "^$pat,$rec," "$lg" | tail -1)
  local status mib secs rate
  if [ -n "$line" ]; then
    IFS=, read -r _ _ _ mib secs rate status <<<"$line"
    [ "$status" = ok ] || status="FAIL(verify)"
    [ $st != 0 ] && [ "$status" = ok ] && status="FAIL(rc=$st)"
  else
    mib=""; secs=""; rate=""
    case $st in
      124|137) status=TIMEOUT ;;
      *) status="FAIL(rc=$st)" ;;
    esac
  fi
  # CPU seconds: the ranks (and mpiexec), and the ddio servers
  local ccpu scpu
  ccpu=$(awk '/^cpu-wrap: children/ {printf "%.3f", $3 + $4}' "$lg")
  scpu=$(awk '/^ddio-run: server [0-9]+ cpu/ {s += $5 + $6; n++} END {if (n) printf "%.3f", s}' "$lg")
  # peak RSS: the largest rank (cpu-wrap) and the largest server (ddio-run)
  local rpk spk
  rpk=$(awk '/^cpu-wrap: peak_rss_kB/ {print $3}' "$lg" | tail -n 1)
  spk=$(awk '/^ddio-run: server [0-9]+ peak_rss_kB/ {if ($5 > m) m = $5} END {if (m) print m}' "$lg")
  if [ -z "$prep" ]; then
    echo "$m,$pat,$op,$rec,$P,$srv,$MIB,$mib,$secs,$rate,$status,$rep,$cold,$wall,$ccpu,$scpu,$win,$rpk,$spk" >> "$RES"
    if [ "$status" = ok ]; then
      local files=(); mapfile -t files < <(run_files "$m" "$rec")
      beside "$m" "$pat" "$rec" "$rep" "$op" "${files[@]}"
    fi
    log "$(printf '%-11s %-4s r=%-5s rep %d: %10s MiB/s  %s%s' "$m" "$pat" "$rec" "$rep" "${rate:--}" "$status" "$( [ $op = read ] && echo " cold=$cold")")"
  else
    log "$m r=$rec: prepared the file with $pat ($status)"
  fi
  [ "$status" = ok ]
}

# Memory guard (per pattern, summed over the ranks on this machine):
# ddio-patterns holds its buffer (its part of the file; every rank the
# whole file for ra) and nothing per record; ddio's driver and servers hold
# nothing per piece of a view. ROMIO does: a view of N tiny pieces (last
# dimension CYCLIC) costs every rank its flattened list (16 B a piece) and
# the two-phase aggregators more (measured, 8-byte rc, 64 MiB, P=4: 210 MiB
# per rank, 465 MiB on rank 0): 150 N for the ROMIO-flattening methods
# (ufs-*, ddio-2ph, the Open MPI ones). When the buffers exceed half of
# MemAvailable (the machine is shared), or all of it 80 %, the pattern runs
# in calls of W MiB per rank (ddio-patterns -w; results.csv window_MiB), W
# the largest power of two whose P buffers take at most a quarter of it;
# when the per-piece part alone takes 60 %, it is skipped.
flattens() { [[ $1 == ufs-* || $1 == ddio-2ph || $1 == ompi-* ]]; }
mem_plan() {   # mem_plan METHOD PATTERN REC: prints "", "window MIB" or "SKIP(...)"
  local m=$1 pat=$2 rec=$3 avail mult=1 per=0 est buf w=1
  [ $FORCE = 1 ] && return 0
  avail=$(awk '/MemAvailable/ {print $2 * 1024}' /proc/meminfo)
  [ -n "$avail" ] || return 0
  [ "$pat" = ra ] && mult=$P
  [[ $pat == *c ]] && flattens "$m" && per=150
  buf=$(awk -v m="$MIB" -v k="$mult" 'BEGIN {printf "%.0f", k * m * 1048576}')
  est=$(awk -v b="$buf" -v m="$MIB" -v r="$rec" -v c="$per" \
    'BEGIN {printf "%.0f", b + c * m * 1048576 / r}')
  awk -v e="$est" -v b="$buf" -v a="$avail" 'BEGIN {exit !(e > 0.8 * a || b > 0.5 * a)}' || return 0
  if awk -v e="$est" -v b="$buf" -v a="$avail" 'BEGIN {exit !(e - b > 0.6 * a)}'; then
    awk -v e="$est" 'BEGIN {printf "SKIP(memory: est %.1f GiB)", e / 1073741824}'
    return 0
  fi
  while awk -v w="$w" -v p="$P" -v a="$avail" 'BEGIN {exit !(2 * w * p * 1048576 <= a / 4)}'; do
    w=$((w * 2))
  done
  echo "window $w"
}

# Repetitions outermost: each one measures the ceiling and then every method,
# so the device's drift over a long run (seen here: O_DIRECT reads from 1.2
# to 3.4 GB/s within an hour) hits all methods alike instead of whichever
# method happened to run last; the report takes medians over repetitions.
trap 'log "interrupted"; exit 130' INT TERM
for rec in "${recsizes[@]}"; do
  [[ "$rec" =~ ^[0-9]+$ ]] || die "bad record size '$rec'"
done
for ((rep = FROM; rep <= REPS; rep++)); do
  ceilings $rep
  for rec in "${recsizes[@]}"; do
    for m in "${methods[@]}"; do
      ROOT=$TMPD/ddio/$m-r$rec
      is_ddio "$m" && mkdir -p "$ROOT"
      log "== rep $rep/$REPS: $m, $rec-byte records, P=$P, $MIB MiB$(is_ddio "$m" && echo ", $NSERV servers")"
      for pat in "${writes[@]}"; do run_one "$m" "$pat" "$rec" "$rep"; done
      # Reads need the file: write it once (not recorded) when no write ran.
      if [ ${#reads[@]} -gt 0 ] && [ ${#writes[@]} -eq 0 ] && [ $rep = "$FROM" ]; then
        run_one "$m" wb "$rec" 1 prep
      fi
      for pat in "${reads[@]}"; do run_one "$m" "$pat" "$rec" "$rep"; done
    done
  done
done
if [ $KEEP = 0 ]; then
  for rec in "${recsizes[@]}"; do
    for m in "${methods[@]}"; do
      rm -f "$TMPD/ufs/$m-r$rec.dat"
      is_ddio "$m" && rm -rf "$TMPD/ddio/$m-r$rec"
    done
  done
fi
trap - INT TERM
rm -rf "$TMPD/beside"
[ $KEEP = 0 ] && rmdir "$TMPD/ufs" "$TMPD/ddio" "$TMPD" 2>/dev/null
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$MACHINE"

if [ $DO_REPORT = 1 ]; then
  PY=""
  for c in python3 /usr/bin/python3; do
    "$c" -c 'import matplotlib' 2>/dev/null && { PY=$c; break; }
  done
  if [ -n "$PY" ]; then
    "$PY" "$here/report.py" "$OUT" && log "report: $OUT/REPORT.md"
    "$PY" "$here/targets.py" "$OUT" && log "targets: $OUT/TARGETS.md"
    "$PY" "$here/transport_targets.py" "$OUT" >/dev/null &&
      [ -f "$OUT/TRANSPORT-TARGETS.md" ] && log "transport targets: $OUT/TRANSPORT-TARGETS.md"
  else
    log "no python3 with matplotlib: run bench/report.py $OUT yourself"
  fi
fi
log "done: $OUT"
