#!/usr/bin/env bash
# What a file view costs in memory (issue #23): peak RSS per rank and per
# server against the view's extent, for the 8-byte cyclic view (one
# MPI_Type_vector of every P-th double over the whole extent), ddio: vs
# ROMIO's ufs:. Each run is test/mpi/bin/t_viewcost: windows of W bytes per
# rank (collective at the view's start and end, independent in its middle)
# written, read back and checked, a seek to the last record; the file is
# sparse, so the extent costs no disk.
#
# ROMIO flattens the view in set_view (16 bytes per record: 2 x extent / P
# per rank); ufs: runs only while that stays under UFS_MAX_TOTAL_MIB over all
# ranks (default 2048, the machine is shared), and the table says where it
# stopped.
#
# usage: bench/view-memory.sh [OUT_DIR]
#   env: SIZES_MIB (default "64 256 1024 4096 16384"), PROCS ("4 8"),
#        SERVERS (2), WINDOW (16777216), UFS_MAX_TOTAL_MIB (2048), TMO (600),
#        REPORT_ONLY=1 (rewrite VIEW-MEMORY.md from an existing OUT_DIR's csv)
# Writes OUT_DIR/view-memory.csv and OUT_DIR/VIEW-MEMORY.md.
set -u
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
OUT=${1:-$here/results/$(date +%Y-%m-%d)-view-memory}
SIZES_MIB=${SIZES_MIB:-"64 256 1024 4096 16384"}
PROCS=${PROCS:-"4 8"}
SERVERS=${SERVERS:-2}
WINDOW=${WINDOW:-16777216}
UFS_MAX_TOTAL_MIB=${UFS_MAX_TOTAL_MIB:-2048}
TMO=${TMO:-600}
BIN=$top/test/mpi/bin/t_viewcost
export PATH="$top/mpich/bin:$PATH"
log() { echo "view-memory: $*" >&2; }
[ -x "$BIN" ] || { log "build first (make test/mpi/bin/t_viewcost)"; exit 1; }
mkdir -p "$OUT"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/view-memory.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
CSV=$OUT/view-memory.csv
[ -n "${REPORT_ONLY:-}" ] || echo "method,P,extent_MiB,window_B,rank_peak_kB,rank_base_kB,rank_grew_kB,server_peak_kB,seconds,status" > "$CSV"

# inside ddio-run: the MPI program, then the servers' (our parent's children) peak RSS
probe='mpiexec "$@"; st=$?
for p in $(pgrep -P "$PPID" -x ddio-server); do echo "SRVHWM $(awk "/^VmHWM/ {print \$2}" /proc/$p/status)"; done
exit $st'

row() {  # method P mib log rc seconds
  local m=$1 p=$2 mib=$3 lg=$4 rc=$5 s=$6 line peak base grew srv status=ok
  line=$(grep '^viewcost ' "$lg" | tail -1)
  peak=$(sed -n 's/.*peak_kB=\([0-9]*\).*/\1/p' <<<"$line")
  base=$(sed -n 's/.*base_kB=\([0-9]*\).*/\1/p' <<<"$line")
  grew=$(sed -n 's/.*grew_kB=\([0-9]*\).*/\1/p' <<<"$line")
  srv=$(awk '/^SRVHWM/ { if ($2 > m) m = $2 } END { print m + 0 }' "$lg")
  [ "$m" = ufs ] && srv=
  [ "$rc" = 0 ] || status="FAIL(rc=$rc)"; [ "$rc" = 124 ] && status=TIMEOUT
  echo "$m,$p,$mib,$WINDOW,$peak,$base,$grew,$srv,$s,$status" >> "$CSV"
  log "$m P=$p $mib MiB: rank peak ${peak:-?} kB (grew ${grew:-?}), server ${srv:-n/a} kB, ${s}s, $status"
}

for p in $PROCS; do
  [ -n "${REPORT_ONLY:-}" ] && break
  for mib in $SIZES_MIB; do
    e=$((mib * 1048576))
    root=$TMPD/srv; rm -rf "$root"; mkdir -p "$root"
    lg=$OUT/ddio-P$p-$mib.log; t0=$(date +%s)
    timeout -k 15 "$TMO" "$top/tools/ddio-run" -s "$SERVERS" --root "$root" -- bash -c "$probe" \
      probe -n "$p" "$BIN" -e "$e" -w "$WINDOW" ddio:/view.dat > "$lg" 2>&1
    row ddio "$p" "$mib" "$lg" $? $(( $(date +%s) - t0 ))
    rm -rf "$root"
    if [ $((2 * mib)) -gt "$UFS_MAX_TOTAL_MIB" ]; then
      echo "ufs,$p,$mib,$WINDOW,,,,,,skipped (ROMIO would hold $((2 * mib)) MiB over the ranks)" >> "$CSV"
      continue
    fi
    lg=$OUT/ufs-P$p-$mib.log; t0=$(date +%s)
    timeout -k 15 "$TMO" mpiexec -n "$p" "$BIN" -e "$e" -w "$WINDOW" "ufs:$TMPD/view.dat" > "$lg" 2>&1
    row ufs "$p" "$mib" "$lg" $? $(( $(date +%s) - t0 ))
    rm -f "$TMPD/view.dat"
  done
done

{
  echo "# Peak RSS per rank with an 8-byte cyclic file view"
  echo
  echo "\`bench/view-memory.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, $SERVERS servers (ddio), windows of $((WINDOW / 1048576)) MiB per rank"
  echo "(collective at the view's start and end, independent in its middle; the file is sparse)."
  echo "The view: one \`MPI_Type_vector(extent/8/P, 1, P, MPI_DOUBLE)\` per rank, disp = rank x 8."
  echo "Peak = VmHWM of the rank (largest over the ranks); grew = peak minus the rank's VmHWM before"
  echo "\`MPI_File_set_view\` (the window buffers were already touched); server = largest ddio-server VmHWM;"
  echo "run = the whole job (start, 3 windows written and read back, checks). The rank peak includes the two"
  echo "window buffers (a window is at most half the rank's records: 8 MiB at 64 MiB and P = 4, 4 MiB at P = 8)."
  echo
  echo "| P | view extent | ddio: rank peak | ddio: grew | ddio: server peak | ddio: run | ufs: rank peak | ufs: grew | ufs: run |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for p in $PROCS; do
    for mib in $SIZES_MIB; do
      d=$(awk -F, -v p="$p" -v m="$mib" '$1=="ddio" && $2==p && $3==m' "$CSV")
      u=$(awk -F, -v p="$p" -v m="$mib" '$1=="ufs" && $2==p && $3==m' "$CSV")
      cell() { IFS=, read -r _ _ _ _ pk _ gr sv sec st <<<"$1"
        case $2 in peak) v=$pk ;; grew) v=$gr ;; srv) v=$sv ;; run) v=$sec ;; esac
        if [ "$2" = run ]; then [ "$st" = ok ] && echo "$v s" || echo "—"; return; fi
        if [ "$st" = ok ] && [ -n "$v" ]; then
          awk -v k="$v" 'BEGIN { if (k < 10240) printf "%d kB", k; else printf "%.0f MiB", k / 1024 }'
        else echo "${st:-—}"; fi; }
      echo "| $p | $mib MiB | $(cell "$d" peak) | $(cell "$d" grew) | $(cell "$d" srv) | $(cell "$d" run) | $(cell "$u" peak) | $(cell "$u" grew) | $(cell "$u" run) |"
    done
  done
  echo
  echo "Raw: \`view-memory.csv\`; each run's output: \`METHOD-PN-MIB.log\`."
  echo "ufs: runs while ROMIO's list (2 x extent over the ranks) stays under $UFS_MAX_TOTAL_MIB MiB (UFS_MAX_TOTAL_MIB): the machine is shared."
} > "$OUT/VIEW-MEMORY.md"
cat "$OUT/VIEW-MEMORY.md"
