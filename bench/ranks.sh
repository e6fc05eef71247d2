#!/usr/bin/env bash
# Many ranks, small data: correctness and the collective gate's
# cost at P = 64, 128, 256 (oversubscribed: this machine has 2 cores).
# Each P runs test/mpi/bin/t_ranks (chunks of CHUNK bytes dealt round-robin
# over the ranks; CALLS collective writes of K bytes per rank, the same
# read back and checked; each call timed between barriers, the slowest
# rank's time) on ddio: inside ddio-run, then on ufs:, and compares the two
# files byte for byte. Server memory: every server's VmHWM and STATS
# heap_in_use before the job (servers started, idle) and after it; per
# participant = (VmHWM after - the P = 1 run's VmHWM after) / (P - 1)
# (connections, their threads, the gate's per-participant state, all of it).
#
# A P written with a trailing "n" (256n) runs with MPIR_CVAR_NOLOCAL=1: MPI's
# own messages between the ranks over TCP loopback instead of shared memory.
# MPICH 4.0.2's ch3:nemesis cannot start 182 or more ranks on one node: it
# sizes its fastbox region as num_local * (num_local - 1) * 65600 in int
# arithmetic (src/mpid/ch3/channels/nemesis/src/mpid_nem_init.c, the
# fbox_len and MAILBOX_INDEX * MPID_NEM_FBOX_LEN expressions), which
# overflows past 2^31 at 182 local ranks: the segment is made too small and
# every rank segfaults in MPI_Init (a plain hello world does too). Without
# shared memory (NOLOCAL) nothing is sized by num_local^2.
#
# usage: bench/ranks.sh [OUT_DIR]
#   env: PROCS (default "1 64 128 128n 256n"), SERVERS (2), K (4096), CHUNK (512),
#        CALLS (10), TMO (900), MPIEXEC_ARGS (extra mpiexec arguments),
#        SERVER_OPTS (extra ddio-run options, e.g. "--server-opt --max-unauth=512"),
#        REPORT_ONLY=1 (rewrite RANKS.md from OUT_DIR's csv)
# Writes OUT_DIR/ranks.csv and OUT_DIR/RANKS.md; each run's output in OUT_DIR/*.log.
set -u
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
OUT=${1:-$here/results/$(date +%Y-%m-%d)-ranks}
PROCS=${PROCS:-"1 64 128 128n 256n"}
SERVERS=${SERVERS:-2}
K=${K:-4096}
CHUNK=${CHUNK:-512}
CALLS=${CALLS:-10}
TMO=${TMO:-900}
MPIEXEC_ARGS=${MPIEXEC_ARGS:-}
SERVER_OPTS=${SERVER_OPTS:-}
BIN=$top/test/mpi/bin/t_ranks
CMP=$top/test/mpi/bin/filecmp
export PATH="$top/mpich/bin:$PATH"
log() { echo "ranks: $*" >&2; }
[ -x "$BIN" ] && [ -x "$CMP" ] || { log "build first (make test/mpi/bin/t_ranks test/mpi/bin/filecmp)"; exit 1; }
mkdir -p "$OUT"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/ranks.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
CSV=$OUT/ranks.csv
[ -n "${REPORT_ONLY:-}" ] || echo "method,P,mpi_local,bytes_per_call,write_ms_median,write_ms_max,read_ms_median,read_ms_max,srv_hwm_before_kB,srv_hwm_after_kB,srv_heap_before,srv_heap_after,seconds,status" > "$CSV"

# inside ddio-run: the servers' (our parent's children) VmHWM and heap in
# use (largest over the servers), the job, the same again
probe='srv() { for p in $(pgrep -P "$PPID" -x ddio-server); do awk "/^VmHWM/ {print \$2}" /proc/$p/status; done | sort -n | tail -1; }
heap() { "$TOP/tools/ddio" stats heap_in_use | awk "{ if (\$3 > m) m = \$3 } END { print m + 0 }"; }
echo "SRVBEFORE $(srv) $(heap)"
mpiexec $MPIEXEC_ARGS "$@"; st=$?
echo "SRVAFTER $(srv) $(heap)"
exit $st'

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }

run_p() {
  local p=${1%n} tag=$1 root=$TMPD/srv lg=$OUT/ddio-P$1.log t0 rc line b a st=ok loc=shm
  if [ "$tag" != "$p" ]; then export MPIR_CVAR_NOLOCAL=1; loc=tcp; else unset MPIR_CVAR_NOLOCAL; fi
  rm -rf "$root"; mkdir -p "$root"; t0=$(date +%s)
  # shellcheck disable=SC2086
  timeout -k 15 "$TMO" "$top/tools/ddio-run" -s "$SERVERS" --root "$root" $SERVER_OPTS -- \
    env TOP="$top" MPIEXEC_ARGS="$MPIEXEC_ARGS" bash -c "$probe" probe -n "$p" "$BIN" \
    -k "$K" -c "$CHUNK" -n "$CALLS" ddio:/ranks.dat > "$lg" 2>&1
  rc=$?
  line=$(grep '^ranks ' "$lg" | tail -1); b=$(grep '^SRVBEFORE' "$lg"); a=$(grep '^SRVAFTER' "$lg")
  # ufs: the same job, and the files compared
  if [ "$rc" = 0 ]; then
    mkdir -p "$TMPD/ufs"; rm -f "$TMPD/ufs/ranks.dat"
    # shellcheck disable=SC2086
    timeout -k 15 "$TMO" mpiexec $MPIEXEC_ARGS -n "$p" "$BIN" -k "$K" -c "$CHUNK" -n "$CALLS" \
      "ufs:$TMPD/ufs/ranks.dat" > "$OUT/ufs-P$tag.log" 2>&1 || st="ufs FAIL"
    "$top/tools/ddio-run" -s "$SERVERS" --root "$root" -- mpiexec -n 1 "$CMP" ddio:/ranks.dat \
      "ufs:$TMPD/ufs/ranks.dat" >> "$lg" 2>&1 || st="DIFFERS from ufs:"
  else
    st="FAIL(rc=$rc)"; [ "$rc" = 124 ] && st=TIMEOUT
  fi
  echo "ddio,$p,$loc,$(field bytes_per_call "$line"),$(field write_ms_median "$line"),$(field write_ms_max "$line"),$(field read_ms_median "$line"),$(field read_ms_max "$line"),$(awk '{print $2}' <<<"$b"),$(awk '{print $2}' <<<"$a"),$(awk '{print $3}' <<<"$b"),$(awk '{print $3}' <<<"$a"),$(( $(date +%s) - t0 )),$st" >> "$CSV"
  line=$(grep '^ranks ' "$OUT/ufs-P$tag.log" 2>/dev/null | tail -1)
  [ -n "$line" ] && echo "ufs,$p,$loc,$(field bytes_per_call "$line"),$(field write_ms_median "$line"),$(field write_ms_max "$line"),$(field read_ms_median "$line"),$(field read_ms_max "$line"),,,,,,ok" >> "$CSV"
  log "P=$tag: $(tail -1 "$CSV" | cut -d, -f1-8) / $st"
  rm -rf "$root" "$TMPD/ufs"
}

if [ -z "${REPORT_ONLY:-}" ]; then
  for p in $PROCS; do run_p "$p"; done
fi

{
  echo "# Many ranks, small data: the collective gate's cost"
  echo
  echo "\`bench/ranks.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores (every P oversubscribed), $SERVERS servers,"
  echo "$K bytes per rank per call in chunks of $CHUNK bytes dealt round-robin over the ranks, $CALLS collective"
  echo "writes then $CALLS collective reads (checked), each call timed between barriers (slowest rank)."
  echo "Server: largest VmHWM over the servers before the job (idle) and after it; per participant ="
  echo "(after - the P = 1 run's after) / (P - 1). Heap: STATS \`heap_in_use\` after the job (before: idle). ddio: file == ufs:'s."
  echo
  echo "| P | MPI between ranks | bytes per call | ddio write ms (median / max) | ddio read ms (median / max) | ufs: write ms | ufs: read ms | server VmHWM before / after | per participant | heap in use before / after | ddio == ufs: |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  for tag in $PROCS; do
    p=${tag%n}; l=shm; [ "$tag" = "$p" ] || l=tcp
    d=$(awk -F, -v p="$p" -v l="$l" '$1=="ddio" && $2==p && $3==l' "$CSV"); u=$(awk -F, -v p="$p" -v l="$l" '$1=="ufs" && $2==p && $3==l' "$CSV")
    IFS=, read -r _ _ _ bpc wm wx rm rx hb ha pb pa _ st <<<"$d"
    IFS=, read -r _ _ _ _ uwm uwx urm urx _ <<<"$u"
    # per participant: above the P = 1 run's peak (the servers' fixed cost of a first
    # call: buffers, threads), else above the idle server
    b1=$(awk -F, '$1=="ddio" && $2==1 { print $10 }' "$CSV" | head -1)
    pp=$(awk -v a="${ha:-0}" -v b="${hb:-0}" -v b1="${b1:-0}" -v p="$p" 'BEGIN {
      if (a <= 0) print "—"; else if (b1 > 0 && p > 1) printf "%.1f kB", (a - b1) / (p - 1);
      else printf "%.1f kB (idle base)", (a - b) / p }')
    mib() { awk -v k="${1:-0}" 'BEGIN { if (k > 0) printf "%.1f MiB", k / 1024; else print "—" }'; }
    echo "| $p | $l | ${bpc:-—} | ${wm:-—} / ${wx:-—} | ${rm:-—} / ${rx:-—} | ${uwm:-—} / ${uwx:-—} | ${urm:-—} / ${urx:-—} | $(mib "$hb") / $(mib "$ha") | $pp | $(mib "$((${pb:-0} / 1024))") / $(mib "$((${pa:-0} / 1024))") | ${st:-—} |"
  done
  echo
  echo "MPI between ranks: shm = ch3:nemesis shared memory (the default); tcp = MPIR_CVAR_NOLOCAL=1,"
  echo "which P >= 182 needs on one node with MPICH 4.0.2 (its fastbox region's size overflows an int: see the script)."
  echo
  echo "Raw: \`ranks.csv\`; each run's output: \`ddio-PN.log\`, \`ufs-PN.log\` (N with an n: NOLOCAL)."
} > "$OUT/RANKS.md"
cat "$OUT/RANKS.md"
