#!/usr/bin/env bash
# What a file view costs in memory: peak RSS per rank and per
# server against the view's extent, ddio: vs ROMIO's ufs:, for three views
# (test/mpi/t_viewcost -t): the 8-byte cyclic view (one MPI_Type_vector of
# every P-th double over the whole extent) and two darrays over a 2-D array
# of doubles with 8192 columns (MPI_Type_create_darray): darray-bc (rows
# BLOCK, columns CYCLIC: 8-byte pieces) and darray-cc (block-cyclic,
# CYCLIC(2) x CYCLIC(2): 16-byte pieces), and vdarray-bc / vdarray-cc, the
# same two type maps built from vector and resized types (MPICH's darray
# itself costs 32-48 bytes a piece at commit, before any file: these go to
# 16 GiB like the cyclic view). Each run: windows of W bytes per
# rank (collective at the view's start and end, independent in its middle)
# written, read back and checked, a seek to the last record; the file is
# sparse, so the extent costs no disk.
#
# Then two full runs (t_viewcost -a: the whole view written in collective
# windows of W bytes per rank, all read back and checked):
#   - the target: FULL_MIB (16384) of the 8-byte cyclic view at P = FULL_P
#     (8), each rank's peak at most 128 MiB above its pre-view level (the
#     two window buffers are touched before it is taken);
#   - throughput: TPUT_MIB (4096) of the cyclic view at P = FULL_P with
#     8-byte records and with 8 KiB records, the same bytes, TPUT_REPS
#     times each, alternated; the report gives the medians and their ratio
#     (target: 8-byte >= 0.8 x 8 KiB).
# Files are deleted after each run.
#
# ROMIO flattens the view in set_view (16 bytes per piece: 2 x extent / P
# per rank for 8-byte pieces); ufs: runs only while that stays under
# UFS_MAX_TOTAL_MIB over all ranks (default 2048, the machine is shared),
# and the table says where it stopped.
#
# usage: bench/view-memory.sh [OUT_DIR]
#   env: SIZES_MIB (default "64 256 1024 4096 16384"), DARRAY_SIZES_MIB
#        ("64 256 1024": MPICH's own darray type costs 32 bytes per piece, see
#        below), PROCS ("4 8"),
#        VIEWS ("cyclic darray-bc darray-cc"), SERVERS (2), WINDOW (16777216),
#        UFS_MAX_TOTAL_MIB (2048), FULL_MIB (16384), FULL_P (8), TPUT_MIB (4096),
#        TPUT_REPS (3: pairs of throughput runs), FULL_MIB=0 skips the target run,
#        FULL=0 (skip the full runs), SWEEP=0 (skip the sweep), TMO (1800),
#        REPORT_ONLY=1 (rewrite VIEW-MEMORY.md from an existing OUT_DIR's csv),
#        APPEND=1 (add rows to an existing csv: the full runs and the sweep
#        run one after the other)
# Writes OUT_DIR/view-memory.csv and OUT_DIR/VIEW-MEMORY.md.
set -u
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
OUT=${1:-$here/results/$(date +%Y-%m-%d)-view-memory}
SIZES_MIB=${SIZES_MIB:-"64 256 1024 4096 16384"}
PROCS=${PROCS:-"4 8"}
VIEWS=${VIEWS:-"cyclic darray-bc darray-cc vdarray-bc vdarray-cc"}
SERVERS=${SERVERS:-2}
WINDOW=${WINDOW:-16777216}
UFS_MAX_TOTAL_MIB=${UFS_MAX_TOTAL_MIB:-2048}
FULL_MIB=${FULL_MIB:-16384}
FULL_P=${FULL_P:-8}
TPUT_MIB=${TPUT_MIB:-4096}
TPUT_REPS=${TPUT_REPS:-3}
# MPICH 4.0.2's MPI_Type_commit of a darray holds 32 bytes per contiguous
# piece in the rank (its datatype engine, before any file is opened, on any
# file system): 1 GiB of darray-bc view is 512 MiB per rank at P = 8, 4 GiB
# would be 8-16 GiB over the ranks on this 23 GiB machine
DARRAY_SIZES_MIB=${DARRAY_SIZES_MIB:-"64 256 1024"}
TMO=${TMO:-1800}
BIN=$top/test/mpi/bin/t_viewcost
export PATH="$top/mpich/bin:$PATH"
log() { echo "view-memory: $*" >&2; }
[ -n "${REPORT_ONLY:-}" ] || [ -x "$BIN" ] || { log "build first (make test/mpi/bin/t_viewcost)"; exit 1; }
mkdir -p "$OUT"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/view-memory.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
CSV=$OUT/view-memory.csv
[ -n "${REPORT_ONLY:-}" ] || { [ -n "${APPEND:-}" ] && [ -e "$CSV" ]; } || echo "method,view,rec,P,extent_MiB,window_B,mode,rank_peak_kB,rank_base_kB,rank_grew_kB,server_peak_kB,write_MBps,read_MBps,seconds,status" > "$CSV"

# inside ddio-run: the MPI program, then the servers' (our parent's children) peak RSS
probe='mpiexec "$@"; st=$?
for p in $(pgrep -P "$PPID" -x ddio-server); do echo "SRVHWM $(awk "/^VmHWM/ {print \$2}" /proc/$p/status)"; done
exit $st'

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }

row() {  # method view rec P mib mode log rc seconds
  local m=$1 v=$2 r=$3 p=$4 mib=$5 mode=$6 lg=$7 rc=$8 s=$9 line srv status=ok
  line=$(grep '^viewcost ' "$lg" | tail -1)
  srv=$(awk '/^SRVHWM/ { if ($2 > m) m = $2 } END { print m + 0 }' "$lg")
  [ "$m" = ufs ] && srv=
  [ "$rc" = 0 ] || status="FAIL(rc=$rc)"; [ "$rc" = 124 ] && status=TIMEOUT
  echo "$m,$v,$r,$p,$mib,$WINDOW,$mode,$(field peak_kB "$line"),$(field base_kB "$line"),$(field grew_kB "$line"),$srv,$(field write_MBps "$line"),$(field read_MBps "$line"),$s,$status" >> "$CSV"
  log "$m $v rec $r P=$p $mib MiB $mode: $(tail -1 "$CSV" | cut -d, -f8-)"
}

# one ddio run: view rec P mib mode(window|full) [extra t_viewcost args]
ddio_run() {
  local v=$1 r=$2 p=$3 mib=$4 mode=$5 root=$TMPD/srv lg t0; shift 5
  lg=$OUT/ddio-$v-r$r-P$p-$mib-$mode.log
  rm -rf "$root"; mkdir -p "$root"; t0=$(date +%s)
  timeout -k 15 "$TMO" "$top/tools/ddio-run" -s "$SERVERS" --root "$root" -- bash -c "$probe" \
    probe -n "$p" "$BIN" -t "$v" -r "$r" -e $((mib * 1048576)) -w "$WINDOW" "$@" ddio:/view.dat \
    > "$lg" 2>&1
  row ddio "$v" "$r" "$p" "$mib" "$mode" "$lg" $? $(( $(date +%s) - t0 ))
  rm -rf "$root"
}

ufs_run() {  # view P mib
  local v=$1 p=$2 mib=$3 lg=$OUT/ufs-$1-P$2-$3.log t0
  if [ $((2 * mib)) -gt "$UFS_MAX_TOTAL_MIB" ]; then
    echo "ufs,$v,8,$p,$mib,$WINDOW,window,,,,,,,,skipped (ROMIO would hold up to $((2 * mib)) MiB over the ranks)" >> "$CSV"
    return
  fi
  t0=$(date +%s)
  timeout -k 15 "$TMO" mpiexec -n "$p" "$BIN" -t "$v" -e $((mib * 1048576)) -w "$WINDOW" \
    "ufs:$TMPD/view.dat" > "$lg" 2>&1
  row ufs "$v" 8 "$p" "$mib" window "$lg" $? $(( $(date +%s) - t0 ))
  rm -f "$TMPD/view.dat"
}

if [ -z "${REPORT_ONLY:-}" ] && [ "${SWEEP:-1}" != 0 ]; then
  for v in $VIEWS; do
    sizes=$SIZES_MIB; case $v in darray*) sizes=$DARRAY_SIZES_MIB ;; esac
    for p in $PROCS; do
      for mib in $sizes; do
        ddio_run "$v" 8 "$p" "$mib" window
        ufs_run "$v" "$p" "$mib"
      done
    done
  done
fi
if [ -z "${REPORT_ONLY:-}" ] && [ "${FULL:-1}" != 0 ]; then
  [ "$FULL_MIB" = 0 ] || ddio_run cyclic 8 "$FULL_P" "$FULL_MIB" full -a -m 131072
  for _ in $(seq "$TPUT_REPS"); do    # alternated, so drift hits both alike
    ddio_run cyclic 8 "$FULL_P" "$TPUT_MIB" full -a
    ddio_run cyclic 8192 "$FULL_P" "$TPUT_MIB" full -a
  done
fi

kb() { awk -v k="$1" 'BEGIN { if (k == "") print "—"; else if (k < 10240) printf "%d kB", k; else printf "%.0f MiB", k / 1024 }'; }
{
  echo "# Peak RSS per rank with a file view, against its extent"
  echo
  echo "\`bench/view-memory.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, $SERVERS servers (ddio), windows of $((WINDOW / 1048576)) MiB per rank."
  echo "Views: \`cyclic\`, one \`MPI_Type_vector(extent/8/P, 1, P, MPI_DOUBLE)\` per rank, disp = rank x 8;"
  echo "\`darray-bc\` and \`darray-cc\`, \`MPI_Type_create_darray\` over a 2-D array of doubles with 8192 columns on"
  echo "an \`MPI_Dims_create(P, 2)\` grid: rows BLOCK x columns CYCLIC (8-byte pieces), and block-cyclic"
  echo "CYCLIC(2) x CYCLIC(2) (16-byte pieces). The darrays stop at $(echo $DARRAY_SIZES_MIB | awk '{print $NF}') MiB: MPICH 4.0.2's \`MPI_Type_commit\` of a darray"
  echo "holds 32 bytes per contiguous piece in every rank (before any file is opened, on any file system: it is the"
  echo "base below, not the growth), 512 MiB per rank at 1 GiB and P = 8; 4 GiB would need 8-16 GiB over the ranks."
  echo "\`vdarray-bc\` and \`vdarray-cc\`: the same two type maps built from \`MPI_Type_vector\`, \`MPI_Type_create_resized\`"
  echo "and one \`MPI_Type_create_hindexed_block\` (checked against the darray's with \`MPI_Pack\` up to 64 MiB), so"
  echo "MPICH holds nothing per piece and the view is measured alone, up to $(echo $SIZES_MIB | awk '{print $NF}') MiB."
  echo
  echo "## Sweep: windows in a sparse file"
  echo
  echo "Collective windows at the view's start and end, an independent one in its middle, each written, read"
  echo "back and checked. Peak = VmHWM of the rank (largest over the ranks); grew = peak minus the rank's"
  echo "VmHWM before \`MPI_File_set_view\` (the window buffers and the datatype already made); server ="
  echo "largest ddio-server VmHWM; run = the whole job."
  echo
  echo "| view | P | extent | ddio: rank peak | ddio: grew | ddio: server peak | ddio: run | ufs: rank peak | ufs: grew | ufs: run |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  awk -F, '$1=="ddio" && $7=="window" { print $2, $4, $5 }' "$CSV" | while read -r v p mib; do
    IFS=, read -r _ _ _ _ _ _ _ pk _ gr sv _ _ sec st <<<"$(awk -F, -v v="$v" -v p="$p" -v m="$mib" '$1=="ddio" && $2==v && $4==p && $5==m && $7=="window"' "$CSV" | tail -1)"
    u=$(awk -F, -v v="$v" -v p="$p" -v m="$mib" '$1=="ufs" && $2==v && $4==p && $5==m' "$CSV" | tail -1)
    IFS=, read -r _ _ _ _ _ _ _ upk _ ugr _ _ _ usec ust <<<"$u"
    if [ "$st" = ok ]; then d="$(kb "$pk") | $(kb "$gr") | $(kb "$sv") | $sec s"; else d="$st | | | "; fi
    if [ "${ust:-}" = ok ]; then uu="$(kb "$upk") | $(kb "$ugr") | $usec s"; else uu="${ust:-—} | | "; fi
    echo "| $v | $p | $mib MiB | $d | $uu |"
  done
  echo
  echo "## Full runs: every byte of the view written and read back"
  echo
  echo "The whole view in collective windows of $((WINDOW / 1048576)) MiB per rank, then read back the same way and"
  echo "every byte checked; MB/s over all ranks (10^6 bytes), each pass between barriers."
  echo
  echo "| view | record | P | file | rank peak | grew (beyond the buffers) | server peak | write MB/s | read MB/s | run | status |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F, '$1=="ddio" && $7=="full"' "$CSV" | while IFS=, read -r _ v r p mib _ _ pk _ gr sv wb rb sec st; do
    echo "| $v | $r B | $p | $mib MiB | $(kb "$pk") | $(kb "$gr") | $(kb "$sv") | $wb | $rb | $sec s | $st |"
  done
  echo
  med() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
  # every file size with runs of both record sizes (the target run counts
  # among the 8-byte ones of its size)
  for m in $(awk -F, '$1=="ddio" && $7=="full" && $3==8192 { print $5 }' "$CSV" | sort -un); do
    for dir in write read; do
      col=12; [ $dir = read ] && col=13
      a=$(awk -F, -v m="$m" -v c=$col '$1=="ddio" && $7=="full" && $3==8 && $5==m && $15=="ok" { print $c }' "$CSV" | med)
      b=$(awk -F, -v m="$m" -v c=$col '$1=="ddio" && $7=="full" && $3==8192 && $5==m && $15=="ok" { print $c }' "$CSV" | med)
      [ -n "$a" ] && [ -n "$b" ] && echo "Throughput, $m MiB, $dir: 8-byte records $a MB/s, 8 KiB records $b MB/s (medians): $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')x (target >= 0.8x)."
    done
  done
  echo
  echo "Raw: \`view-memory.csv\`; each run's output: \`METHOD-VIEW-...log\` (the last of each name)."
  echo "ufs: runs only while ROMIO's flattened list (up to 2 x extent over the ranks) stays under UFS_MAX_TOTAL_MIB: the machine is shared (the skipped rows say where it stopped)."
} > "$OUT/VIEW-MEMORY.md"
cat "$OUT/VIEW-MEMORY.md"
