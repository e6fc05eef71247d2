#!/usr/bin/env bash
# ior.sh: IOR's standard cases (bench/ior-style.c) on ddio over TCP and over
# UCX against ROMIO's ufs: on a local directory, in the same run; per-call
# latency; `ddio cp` in and out against cp.
# See bench/README.md "ior.sh". Usage: bench/ior.sh [--quick] [options]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"
# the ddio build to measure: its mpich/, tools/ and ioserver/ (default: the
# repository this script is in, after ./ddio.sh build or make)
DDIO_BUILD=${DDIO_BUILD:-$(cd "$here/.." && pwd)}

usage() {
  cat <<EOF
usage: bench/ior.sh [options]

  --quick              P=4, 1 repetition, a quarter of the volume, fewer
                       latency calls (about 3 minutes)
  -n, --reps N         repetitions (default 3)
  -P, --ranks LIST     rank counts (default 4,8)
  -t, --xfers LIST     transfer sizes (default 8,4k,64k,1m,4m)
  -c, --cases LIST     subset of sf-ind,sf-coll,fpp-ind,sf-rand,sf-nbr
  -m, --methods LIST   subset of ufs,ddio-tcp,ddio-ucx (default all)
  -s, --servers N      ddio servers (default 2)
  -H, --hints K=V,...  MPI_Info hints for the ddio methods' opens
      --drop MODE      how reads are made cold: fadvise (default: fdatasync
                       + posix_fadvise(DONTNEED) on the ufs files and the
                       servers' store files) or drop_caches (echo 3 >
                       /proc/sys/vm/drop_caches; root, the whole machine)
      --no-latency     skip the per-call latency runs
      --no-cp          skip the ddio cp runs
      --cp-mib N       size of the cp file (default 300)
  -o, --out DIR        results (default bench/results/DATE-ior[-quick])
      --tmp DIR        scratch on the local file system under test (default OUT/tmp)
      --timeout S      limit for one launch (default 600)
  -h, --help

environment: DDIO_BUILD (default: this repository) is the build measured:
\$DDIO_BUILD/mpich/bin/mpicc, \$DDIO_BUILD/tools/ddio-run, \$DDIO_BUILD/tools/ddio.
EOF
}

QUICK=0; REPS=3; PLIST=4,8; XFERS=8,4k,64k,1m,4m
CASES=sf-ind,sf-coll,fpp-ind,sf-rand,sf-nbr; METHODS=ufs,ddio-tcp,ddio-ucx
NSERV=2; HINTS=""; DROP=fadvise; DO_LAT=1; DO_CP=1; CP_MIB=300; OUT=""; TMP=""; TO=600
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1; REPS=1; PLIST=4; shift ;;
    -n|--reps) REPS=$2; shift 2 ;;
    -P|--ranks) PLIST=$2; shift 2 ;;
    -t|--xfers) XFERS=$2; shift 2 ;;
    -c|--cases) CASES=$2; shift 2 ;;
    -m|--methods) METHODS=$2; shift 2 ;;
    -s|--servers) NSERV=$2; shift 2 ;;
    -H|--hints) HINTS=$2; shift 2 ;;
    --drop) DROP=$2; shift 2 ;;
    --no-latency) DO_LAT=0; shift ;;
    --no-cp) DO_CP=0; shift ;;
    --cp-mib) CP_MIB=$2; shift 2 ;;
    -o|--out) OUT=$2; shift 2 ;;
    --tmp) TMP=$2; shift 2 ;;
    --timeout) TO=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "ior.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$DROP" in fadvise|drop_caches) ;; *) echo "ior.sh: --drop fadvise|drop_caches" >&2; exit 2 ;; esac

die() { echo "ior.sh: $*" >&2; exit 2; }
MPICC=$DDIO_BUILD/mpich/bin/mpicc; MPIEXEC=$DDIO_BUILD/mpich/bin/mpiexec
RUN=$DDIO_BUILD/tools/ddio-run; DDIO=$DDIO_BUILD/tools/ddio
for f in "$MPICC" "$MPIEXEC" "$RUN" "$DDIO"; do
  [ -x "$f" ] || die "$f missing: build ddio first (./ddio.sh build) or set DDIO_BUILD"
done
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-ior$([ $QUICK = 1 ] && echo -quick)"
[ -n "$TMP" ] || TMP="$OUT/tmp"
mkdir -p "$OUT/raw" "$OUT/logs" "$TMP" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd); TMP=$(cd "$TMP" && pwd)
BIN="$here/bin/ior-style"
mkdir -p "$here/bin"
"$MPICC" -std=c11 -O2 -Wall -Wextra -Werror -o "$BIN" "$here/ior-style.c" || die "cannot build ior-style"
export PATH="$DDIO_BUILD/mpich/bin:$PATH"

log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/run.log"; }

# bytes per rank for a transfer size: enough calls to time, small enough
# that the 8-byte calls fit the run; the same for every case, so a
# collective case moves the bytes its independent one does (its target is
# the same bytes moved independently; IOR's plain ranges are not
# interleaved, so ROMIO's own collectives do not go two-phase)
volume() {   # volume XFER_BYTES CASE -> bytes per rank
  local x=$1 v
  if [ "$x" -le 8 ]; then v=$((32 << 10))
  elif [ "$x" -le 4096 ]; then v=$((4 << 20))
  elif [ "$x" -le 65536 ]; then v=$((16 << 20))
  else v=$((32 << 20)); fi
  [ $QUICK = 1 ] && v=$((v / 4))
  [ "$v" -lt "$x" ] && v=$x
  echo "$v"
}
bytes() {   # 4k -> 4096
  local s=${1,,} m=1
  case "$s" in *k) m=1024; s=${s%k} ;; *m) m=1048576; s=${s%m} ;; *g) m=1073741824; s=${s%g} ;; esac
  echo $((s * m))
}
case_flags() {
  case "$1" in
    sf-ind) echo "" ;; sf-coll) echo "-c" ;; fpp-ind) echo "-F" ;;
    sf-rand) echo "-z" ;; sf-nbr) echo "-C" ;;
    *) die "unknown case $1" ;;
  esac
}
make_plan() {   # make_plan FILE: one line per case and transfer size, 4 segments
  : > "$1"
  local c x xb v seg
  for c in ${CASES//,/ }; do
    for x in ${XFERS//,/ }; do
      xb=$(bytes "$x"); v=$(volume "$xb" "$c"); seg=4
      while [ $seg -gt 1 ] && [ $((v / seg % xb)) -ne 0 ]; do seg=$((seg / 2)); done
      echo "-n $c-t$xb -t $xb -b $((v / seg)) -s $seg $(case_flags "$c")" >> "$1"
    done
  done
}

# make the files under the directories cold; one drops.csv row
drop_cold() {   # drop_cold TAG DIR...
  local tag=$1; shift
  if [ "$DROP" = drop_caches ]; then
    sync; echo 3 > /proc/sys/vm/drop_caches || die "drop_caches not writable: use --drop fadvise"
  else
    "$here/drop-pages.py" "$@" || die "fadvise failed"
  fi
  local files res
  files=$(find "$@" -type f | wc -l)
  res=$(find "$@" -type f -print0 | xargs -0 -r fincore --bytes --noheadings --output RES 2>/dev/null | awk '{s += $1} END {print s + 0}')
  echo "$tag,$DROP,$files,$res" >> "$OUT/drops.csv"
}

# one launch of ior-style for METHOD; RESULT lines -> results.csv
launch() {   # launch METHOD P REP WHAT DIR ARGS...
  local m=$1 p=$2 rep=$3 what=$4 dir=$5; shift 5
  local raw="$OUT/raw/$m-P$p-rep$rep-$what.txt" err="$OUT/logs/$m-P$p-rep$rep-$what.log"
  local target cmd=() t0 rc
  case "$m" in
    ufs) target="ufs:$dir/" ;;
    ddio-*) target="ddio:/ior-"
            cmd=("$RUN" -s "$NSERV" --root "$dir" --transport "${m#ddio-}" --)
            [ -n "$HINTS" ] && set -- -H "$HINTS" "$@" ;;
  esac
  t0=$(date +%s.%N)
  timeout -k 15 "$TO" "${cmd[@]}" "$MPIEXEC" -n "$p" "$BIN" "$@" -G "$rep" "$target" > "$raw" 2> "$err"
  rc=$?
  echo "$m,$p,$rep,$what,$rc,$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')" >> "$OUT/launches.csv"
  [ $rc = 0 ] || log "  $m P=$p rep $rep $what: exit $rc (see logs/$(basename "$err"))"
  grep '^RESULT,' "$raw" | sed "s/^RESULT,/$m,$rep,/" >> "$OUT/results.csv"
  grep '^LATENCY,' "$raw" | sed "s/^LATENCY,/$m,$rep,$what,/" >> "$OUT/latency.csv"
  grep -c ',FAIL' "$raw" > /dev/null && log "  $m P=$p rep $rep $what: $(grep -c ',FAIL' "$raw") failed phases"
  return 0
}

# write + hot re-read, then cold reads with fresh servers (a server's
# memory holds nothing from the first launch) after the files were dropped
group() {   # group METHOD P REP
  local m=$1 p=$2 rep=$3 dir="$TMP/$1-P$2"
  rm -rf "$dir"; mkdir -p "$dir"
  launch "$m" "$p" "$rep" hot "$dir" -w -r -k -T hot -f "$PLAN"
  drop_cold "$m-P$p-rep$rep" "$dir"
  launch "$m" "$p" "$rep" cold "$dir" -r -T cold -f "$PLAN"
  rm -rf "$dir"
}

latency() {   # latency METHOD REP: one rank calling, then all ranks
  local m=$1 rep=$2 dir="$TMP/$1-lat" n=1000
  [ $QUICK = 1 ] && n=300
  rm -rf "$dir"; mkdir -p "$dir"
  launch "$m" "$LAT_P" "$rep" one "$dir" -L -b 64m -N $n -n lat
  launch "$m" "$LAT_P" "$rep" all "$dir" -L -A -b 64m -N $n -n lat
  rm -rf "$dir"
}

secs() { local a b; a=$(date +%s.%N); "$@" > /dev/null 2>&1 || return 1; b=$(date +%s.%N); awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", b - a}'; }
cp_row() {   # cp_row METHOD OP REP SECONDS|""
  local st=ok rate=""
  [ -n "$4" ] && rate=$(awk -v m="$CP_MIB" -v s="$4" 'BEGIN{printf "%.1f", m / s}') || st=FAIL
  echo "$1,$2,$3,$CP_MIB,$4,$rate,$st" >> "$OUT/cp.csv"
}
copies() {   # copies REP: cp on the local fs, ddio cp in and out on each transport
  local rep=$1 src="$TMP/cp-src" back="$TMP/cp-back" s x
  s=$(secs cp "$src" "$back") && cmp -s "$src" "$back" || s=""; cp_row local cp "$rep" "$s"; rm -f "$back"
  s=$(secs bash -c 'cp "$0" "$1" && sync "$1"' "$src" "$back") && cmp -s "$src" "$back" || s=""
  cp_row local cp+sync "$rep" "$s"; rm -f "$back"
  for x in tcp ucx; do
    case ",$METHODS," in *,ddio-$x,*) ;; *) continue ;; esac
    rm -rf "$TMP/cp-srv"; mkdir -p "$TMP/cp-srv"
    timeout -k 15 "$TO" "$RUN" -s "$NSERV" --root "$TMP/cp-srv" --transport "$x" -- bash -c '
      t() { local a b; a=$(date +%s.%N); "$@" > /dev/null || return 1; b=$(date +%s.%N); awk -v a="$a" -v b="$b" "BEGIN{printf \"%.3f\n\", b - a}"; }
      echo "in $(t "$0" cp "$1" ddio:/cp)"; echo "out $(t "$0" cp ddio:/cp "$2")"; cmp "$1" "$2" && echo same
    ' "$DDIO" "$src" "$back" > "$OUT/raw/cp-ddio-$x-rep$rep.txt" 2> "$OUT/logs/cp-ddio-$x-rep$rep.log"
    local out; out="$OUT/raw/cp-ddio-$x-rep$rep.txt"
    if grep -qx same "$out"; then
      cp_row "ddio-$x" in "$rep" "$(awk '$1=="in"{print $2}' "$out")"
      cp_row "ddio-$x" out "$rep" "$(awk '$1=="out"{print $2}' "$out")"
    else cp_row "ddio-$x" in "$rep" ""; cp_row "ddio-$x" out "$rep" ""; fi
    rm -f "$back"; rm -rf "$TMP/cp-srv"
  done
}

machine() {
  echo "date: $(date -u -Is)"
  echo "host: $(hostname), $(nproc) cores ($(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//')), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "kernel: $(uname -r)"
  echo "scratch: $TMP on $(df -T "$TMP" | awk 'NR==2 {print $2, $1}')"
  echo "ddio build: $DDIO_BUILD at $(git -C "$DDIO_BUILD" rev-parse --short HEAD 2>/dev/null)$(git -C "$DDIO_BUILD" diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)')"
  echo "bench: $(git -C "$here" rev-parse --short HEAD 2>/dev/null)"
  echo "mpich: $("$DDIO_BUILD/mpich/bin/mpichversion" 2>/dev/null | head -n 1 | sed 's/  */ /g')"
  echo "ucx: $(pkg-config --modversion ucx 2>/dev/null || echo unknown)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
}

LAT_P=4
PLAN="$OUT/plan.txt"
: > "$OUT/run.log"
echo "method,rep,case,phase,P,xfer,block,segments,fpp,coll,random,neighbour,bytes,seconds,MiB_s,status,open_s,io_s,sync_s,close_s" > "$OUT/results.csv"
echo "method,rep,mode,op,size,calls,callers,p50_us,p99_us,mean_us,max_us,status" > "$OUT/latency.csv"
echo "method,op,rep,MiB,seconds,MiB_s,status" > "$OUT/cp.csv"
echo "method,P,rep,launch,rc,wall_s" > "$OUT/launches.csv"
echo "group,mode,files,resident_bytes_after" > "$OUT/drops.csv"
{ echo "command: $CMDLINE"; echo "reps: $REPS"; echo "ranks: $PLIST"; echo "xfers: $XFERS"
  echo "cases: $CASES"; echo "methods: $METHODS"; echo "servers: $NSERV"; echo "hints: ${HINTS:-none}"
  echo "drop: $DROP"; echo "latency: P=$LAT_P, $([ $QUICK = 1 ] && echo 300 || echo 1000) calls per op and size"
  echo "cp: $CP_MIB MiB"; echo "quick: $QUICK"; echo "order: methods rotated each repetition"; } > "$OUT/params.txt"
machine > "$OUT/machine.txt"
make_plan "$PLAN"
[ $DO_CP = 1 ] && head -c $((CP_MIB << 20)) /dev/urandom > "$TMP/cp-src"

# the methods, starting one further along each repetition: whichever runs
# first after the scratch directory was emptied writes into freshly freed
# pages, which this VM hands out several times faster than pages it must
# fault in anew (docs/PERFORMANCE.md, "Noise"), so no method is always first
rotated() {   # rotated REP
  local a=(${METHODS//,/ }) i
  for ((i = 0; i < ${#a[@]}; i++)); do echo "${a[(i + $1 - 1) % ${#a[@]}]}"; done
}

start=$(date +%s)
for ((rep = 1; rep <= REPS; rep++)); do
  for p in ${PLIST//,/ }; do
    for m in $(rotated "$rep"); do
      log "rep $rep P=$p $m"
      group "$m" "$p" "$rep"
    done
  done
  if [ $DO_LAT = 1 ]; then
    for m in ${METHODS//,/ }; do log "rep $rep latency $m"; latency "$m" "$rep"; done
  fi
  [ $DO_CP = 1 ] && { log "rep $rep cp"; copies "$rep"; }
done
rm -f "$TMP/cp-src"; rmdir "$TMP" 2> /dev/null
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
echo "wall: $(( $(date +%s) - start )) s" >> "$OUT/machine.txt"
log "done in $(( $(date +%s) - start )) s"

py=python3
/usr/bin/python3 -c 'import matplotlib' 2> /dev/null && py=/usr/bin/python3
"$py" "$here/ior_report.py" "$OUT" && log "report: $OUT/REPORT.md"
