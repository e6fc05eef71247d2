#!/usr/bin/env bash
# scaling.sh: how throughput, descriptor size and server memory scale.
#
# Sweeps (each optional, see --sweeps):
#   ranks    throughput vs MPI ranks (default 1,2,4,8,16) at --servers0 and --mib0
#   servers  throughput vs ddio servers (default 1,2,3,4), ddio methods only
#   sizes    throughput vs file size (default 64,256,1024,4096 MiB), with the
#            ceiling measured at every size
#   desc     bytes describing one rank's part of a call: ROMIO two-phase's
#            (offset,length) list vs the ddio descriptor (bench/desc_size)
#   mem      ddio-server peak memory (VmHWM) during a collective read of a
#            --mem-mib file (default 4096)
# The throughput sweeps call bench/run-bench.sh once per point (same options,
# timeouts, FAIL handling, cold reads); everything lands in OUT, and
# bench/scaling_report.py OUT makes SCALING.md and the plots.
#
# On a 2-core machine 8 and 16 ranks are oversubscribed (MPICH's nemesis
# channel busy-polls, so those points measure CPU contention as much as I/O);
# the report says so.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
CMDLINE="$0 $*"

usage() {
  cat <<'EOF'
usage: bench/scaling.sh [options]
  --sweeps LIST        ranks,servers,sizes,desc,mem (default all)
  -p, --patterns LIST  patterns for the throughput sweeps (default wb,wc,rb,rc,rbc)
      --methods LIST   methods (default ddio,ufs-2ph,ufs-indep; the servers and
                       mem sweeps use only the ddio ones)
  -r, --recsize N      record size for the throughput/mem sweeps (default 8192)
      --ranks LIST     (default 1,2,4,8,16)
      --servers LIST   (default 1,2,3,4)
      --sizes LIST     file sizes in MiB (default 64,256,1024,4096)
      --P0 N           ranks when another parameter varies (default 4)
      --servers0 N     servers when another parameter varies (default 2)
      --mib0 N         file size when another parameter varies (default 256)
      --desc-sizes L   file sizes for desc (default 64,256,1024,4096)
      --desc-recsizes L  record sizes for desc (default 8,8192)
      --desc-ranks L   rank counts for desc (default 4,16)
      --desc-maxpieces N  desc_size -x: largest piece list per rank to
                       compress (default 8388608, ~150 MB per rank)
      --mem-mib N      file size for the mem sweep (default 4096)
      --mem-patterns L read patterns for the mem sweep (default rb,rc,rbc)
  -n, --reps N         repetitions (default 1)
  -t, --timeout SECS   limit for one run (default 1800)
  -o, --out DIR        (default bench/results/scaling-DATE-HOST)
      --tmp DIR        scratch directory (default OUT/tmp)
      --mpich DIR      (default ./mpich)
EOF
}

SWEEPS=ranks,servers,sizes,desc,mem; PATS=wb,wc,rb,rc,rbc; METHODS=ddio,ufs-2ph,ufs-indep
REC=8192; RANKS=1,2,4,8,16; SERVERS=1,2,3,4; SIZES=64,256,1024,4096; P0=4; S0=2; M0=256
DSIZES=64,256,1024,4096; DRECS=8,8192; DRANKS=4,16; DMAXP=8388608; MEMMIB=4096; MEMPATS=rb,rc,rbc
REPS=1; TMO=1800; OUT=""; TMPD=""; MPICH=$top/mpich
die() { echo "scaling: $*" >&2; exit 2; }
need() { [ $# -ge 2 ] || die "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --sweeps) need "$@"; SWEEPS=$2; shift 2 ;;
    -p|--patterns) need "$@"; PATS=$2; shift 2 ;;
    --methods) need "$@"; METHODS=$2; shift 2 ;;
    -r|--recsize) need "$@"; REC=$2; shift 2 ;;
    --ranks) need "$@"; RANKS=$2; shift 2 ;;
    --servers) need "$@"; SERVERS=$2; shift 2 ;;
    --sizes) need "$@"; SIZES=$2; shift 2 ;;
    --P0) need "$@"; P0=$2; shift 2 ;;
    --servers0) need "$@"; S0=$2; shift 2 ;;
    --mib0) need "$@"; M0=$2; shift 2 ;;
    --desc-sizes) need "$@"; DSIZES=$2; shift 2 ;;
    --desc-recsizes) need "$@"; DRECS=$2; shift 2 ;;
    --desc-ranks) need "$@"; DRANKS=$2; shift 2 ;;
    --desc-maxpieces) need "$@"; DMAXP=$2; shift 2 ;;
    --mem-mib) need "$@"; MEMMIB=$2; shift 2 ;;
    --mem-patterns) need "$@"; MEMPATS=$2; shift 2 ;;
    -n|--reps) need "$@"; REPS=$2; shift 2 ;;
    -t|--timeout) need "$@"; TMO=$2; shift 2 ;;
    -o|--out) need "$@"; OUT=$2; shift 2 ;;
    --tmp) need "$@"; TMPD=$2; shift 2 ;;
    --mpich) need "$@"; MPICH=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[ -x "$MPICH/bin/mpiexec" ] || die "no MPICH at $MPICH"
[ -n "$OUT" ] || OUT=$here/results/scaling-$(date +%Y%m%d-%H%M%S)-$(hostname -s)
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || die "cannot create $OUT"
[ -n "$TMPD" ] || TMPD=$OUT/tmp
mkdir -p "$TMPD" && TMPD=$(cd "$TMPD" && pwd)
export PATH="$MPICH/bin:$PATH"
export LD_LIBRARY_PATH="$MPICH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/scaling.log" >&2; }
has() { case ",$1," in *",$2,"*) return 0;; esac; return 1; }
ddio_only() { local m out=""; IFS=, read -r -a ms <<<"$1"
  for m in "${ms[@]}"; do [[ $m == ddio* ]] && out="$out${out:+,}$m"; done; echo "$out"; }
{
  echo "command: $CMDLINE"; echo "date: $(date -Is)"; echo "nproc: $(nproc)"
  echo "patterns: $PATS"; echo "methods: $METHODS"; echo "recsize: $REC"
  echo "P0: $P0"; echo "servers0: $S0"; echo "mib0: $M0"; echo "reps: $REPS"
} > "$OUT/params.txt"

RB=$here/run-bench.sh
bench() {   # bench SWEEP VALUE run-bench-options...
  local sweep=$1 val=$2; shift 2
  log "sweep $sweep = $val"
  "$RB" -p "$PATS" -r "$REC" -n "$REPS" -t "$TMO" --no-report --mpich "$MPICH" \
    --tmp "$TMPD/$sweep-$val" -o "$OUT/$sweep/$val" "$@" >>"$OUT/scaling.log" 2>&1 \
    || log "run-bench failed for $sweep=$val (see $OUT/$sweep/$val)"
}

if has "$SWEEPS" ranks; then
  IFS=, read -r -a vs <<<"$RANKS"; first=1
  for v in "${vs[@]}"; do
    [ "$v" -gt "$(nproc)" ] && log "ranks=$v on $(nproc) CPUs: oversubscribed"
    if [ $first = 1 ]; then bench ranks "$v" -P "$v" -s "$S0" -m "$M0" --methods "$METHODS"
    else bench ranks "$v" -P "$v" -s "$S0" -m "$M0" --methods "$METHODS" --no-ceiling; fi
    first=0
  done
fi
if has "$SWEEPS" servers; then
  dm=$(ddio_only "$METHODS")
  if [ -z "$dm" ]; then log "servers sweep: no ddio method selected, skipped"; else
    IFS=, read -r -a vs <<<"$SERVERS"; first=1
    for v in "${vs[@]}"; do
      if [ $first = 1 ]; then bench servers "$v" -P "$P0" -s "$v" -m "$M0" --methods "$dm"
      else bench servers "$v" -P "$P0" -s "$v" -m "$M0" --methods "$dm" --no-ceiling; fi
      first=0
    done
  fi
fi
if has "$SWEEPS" sizes; then
  IFS=, read -r -a vs <<<"$SIZES"
  for v in "${vs[@]}"; do bench sizes "$v" -P "$P0" -s "$S0" -m "$v" --methods "$METHODS"; done
fi

# ---- descriptor bytes vs file size ------------------------------------------------
if has "$SWEEPS" desc; then
  mkdir -p "$here/bin"
  DS=$here/bin/desc_size
  srcs=("$here/desc_size.c" "$top"/common/ddio_desc_*.c "$top/common/ddio_proto.c")
  rebuild=0; [ -x "$DS" ] || rebuild=1
  for s in "${srcs[@]}"; do [ "$s" -nt "$DS" ] && rebuild=1; done
  if [ $rebuild = 1 ]; then
    log "building desc_size"
    "$MPICH/bin/mpicc" -O2 -g -I"$top/common" -o "$DS" "${srcs[@]}" || die "cannot build desc_size"
  fi
  IFS=, read -r -a vs <<<"$DRANKS"
  for p in "${vs[@]}"; do
    log "desc: P=$p, sizes $DSIZES, records $DRECS"
    if timeout -k 10 "$TMO" mpiexec -n "$p" "$DS" -r "$DRECS" -m "$DSIZES" -x "$DMAXP" > "$OUT/desc-P$p.csv" 2>"$OUT/desc-P$p.log"; then :
    else log "desc_size failed for P=$p (see $OUT/desc-P$p.log)"; fi
  done
  { head -1 "$OUT/desc-P${vs[0]}.csv"
    for p in "${vs[@]}"; do grep -E '^[a-z]+,[0-9]+,[0-9]+,' "$OUT/desc-P$p.csv"; done; } \
    > "$OUT/desc.csv" 2>/dev/null
fi

# ---- server peak memory during a large collective read ---------------------------------
if has "$SWEEPS" mem; then
  dm=$(ddio_only "$METHODS")
  PATBIN=$here/bin/ddio-patterns
  [ -x "$PATBIN" ] || "$MPICH/bin/mpicc" -O2 -g -o "$PATBIN" "$top/examples/ddio-patterns.c" \
    || die "cannot build ddio-patterns"
  MEMCSV=$OUT/mem.csv
  echo "method,pattern,recsize,P,servers,file_MiB,server,VmHWM_kB,VmRSS_kB,MiB_s,status" > "$MEMCSV"
  # Run inside ddio-run: after the MPI program, read the servers' peak RSS
  # (the servers are ddio-run's children: our parent's).
  probe='mpiexec "$@"; st=$?
for p in $(pgrep -P "$PPID" -x ddio-server); do
  echo "VMHWM $p $(awk "/^VmHWM/ {print \$2}" /proc/$p/status) $(awk "/^VmRSS/ {print \$2}" /proc/$p/status)"
done; exit $st'
  IFS=, read -r -a ms <<<"$dm"; IFS=, read -r -a mp <<<"$MEMPATS"
  for m in "${ms[@]}"; do
    hints=(); case $m in
      ddio-nosort) hints=(-H romio_ddio_presort=disable) ;;
      ddio-2ph) hints=(-H romio_ddio_collective=twophase) ;;
    esac
    root=$TMPD/mem-$m; mkdir -p "$root"
    for pat in wb "${mp[@]}"; do
      lg=$OUT/mem-$m-$pat.log
      [[ $pat == r* ]] && { sync; echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null
      log "mem: $m $pat, $MEMMIB MiB, P=$P0, $S0 servers"
      timeout -k 15 "$TMO" "$top/tools/ddio-run" -s "$S0" --root "$root" -- bash -c "$probe" probe \
        -n "$P0" "$PATBIN" -C -p "$pat" -r "$REC" -m "$MEMMIB" "${hints[@]}" "ddio:/mem.dat" >"$lg" 2>&1
      st=$?
      line=$(grep "^$pat,$REC," "$lg" | tail -1)
      rate=$(echo "$line" | cut -d, -f6); status=$(echo "$line" | cut -d, -f7)
      [ -z "$line" ] && status="FAIL(rc=$st)"; [ $st = 124 ] && status=TIMEOUT
      i=0
      while read -r _ _ hwm rss; do
        echo "$m,$pat,$REC,$P0,$S0,$MEMMIB,$i,$hwm,$rss,$rate,$status" >> "$MEMCSV"; i=$((i + 1))
      done < <(grep '^VMHWM ' "$lg")
      [ $i = 0 ] && echo "$m,$pat,$REC,$P0,$S0,$MEMMIB,,,,$rate,$status" >> "$MEMCSV"
      log "mem: $m $pat: $status $rate MiB/s, peak kB per server: $(grep '^VMHWM ' "$lg" | awk '{printf "%s ", $3}')"
    done
    rm -rf "$root"
  done
fi
rmdir "$TMPD"/* "$TMPD" 2>/dev/null

PY=""
for c in python3 /usr/bin/python3; do "$c" -c 'import matplotlib' 2>/dev/null && { PY=$c; break; }; done
if [ -n "$PY" ]; then "$PY" "$here/scaling_report.py" "$OUT" && log "report: $OUT/SCALING.md"
else log "no python3 with matplotlib: run bench/scaling_report.py $OUT yourself"; fi
log "done: $OUT"
