#!/usr/bin/env bash
# Thousands of t_prop cases with zero-length blocks and the rest of what MPI
# allows (t_prop -z: zero counts, parts of size 0, resized parts with a
# moved lower bound, darrays leaving a rank nothing, memory types that send
# the same bytes again), each checked by t_prop against its own model of
# the type maps (test/mpi/tmodel.h: the recipes' type maps by the MPI
# standard's definitions, not MPI's datatype engine, not ROMIO's
# flattening): every byte of the file, the file size, every stream read
# back, every position and byte offset. Where a case fails the run goes on
# with the next one (t_prop -k), so a target's failures are all counted.
#
# Targets (-t, space-separated; default all that this machine has):
#   ddio-p4-s2         this tree's MPICH, ddio: on 2 servers, 4 ranks
#   ddio-p3-s3-check   3 servers of 5000-byte stripes, 3 ranks, every
#                      descriptor and tree checked (romio_ddio_check_desc)
#   ddio-p6-s2         6 ranks on 2 servers
#   ufs-p4             the same MPICH's ROMIO on ufs: (ROMIO's flattening)
#   ompi-ddio-p4-s2    Debian's Open MPI through the ddio plug-in (needs
#                      `make ompi-romio`, mpicc.openmpi)
#   ompio-p4           Open MPI's OMPIO on a local file (its position at the
#                      end of file is its own: T_PROP_NO_EOF)
# and, on every ddio/ufs target of 4 ranks, t_prop -f (the fixed recipes).
#
# usage: bench/prop-stress.sh [-o DIR] [-n CASES] [-S "SEEDS"] [-t "TARGETS"]
#   -n cases per seed (default 300), -S seeds (default "1 2 ... 10"),
#   -o the results directory (default bench/results/DATE-prop-stress)
# Writes DIR/runs.tsv (target seed cases ran failed seconds), DIR/failures.txt
# (every failing case: target, seed, the first FAIL line), DIR/SUMMARY.md,
# DIR/logs/ (not committed). A run of the defaults takes about an hour on
# two cores.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cases=300 seeds="1 2 3 4 5 6 7 8 9 10" targets="" out=""
while getopts "o:n:S:t:" o; do
  case $o in
    o) out=$OPTARG ;; n) cases=$OPTARG ;; S) seeds=$OPTARG ;; t) targets=$OPTARG ;;
    *) sed -n '2,30p' "$0"; exit 2 ;;
  esac
done
out=${out:-$top/bench/results/$(date +%Y-%m-%d)-prop-stress}
mkdir -p "$out/logs" "$top/bench/bin"
export OMPI_MCA_rmaps_base_oversubscribe=1      # (as test/ompi/run-ompi-tests.sh)
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/prop-stress.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# the programs: t_prop with this tree's MPICH, and with Open MPI's
"$top/mpich/bin/mpicc" -O2 -g -I"$top/test/mpi" -o "$top/bench/bin/t_prop" \
  "$top/test/mpi/t_prop.c" || exit 1
have_ompi=0
if command -v mpicc.openmpi >/dev/null && [ -e "$top/ompi-romio/mca_io_romio321.so" ]; then
  mpicc.openmpi -O2 -g -I"$top/test/mpi" -o "$top/bench/bin/t_prop.openmpi" \
    "$top/test/mpi/t_prop.c" && have_ompi=1
fi
if [ -z "$targets" ]; then
  targets="ddio-p4-s2 ddio-p3-s3-check ddio-p6-s2 ufs-p4"
  [ $have_ompi = 1 ] && targets="$targets ompi-ddio-p4-s2 ompio-p4"
fi

# one t_prop run of TARGET from case K on (ARGS: t_prop's), its output in LOG
run1() {
  local target=$1 log=$2; shift 2
  local mpich=("$top/tools/ddio-run")
  export T_PROP_TRACE=1
  case $target in
    ddio-p4-s2) timeout 900 "${mpich[@]}" -s 2 --root "$tmp/srv" -- \
                  mpiexec -n 4 "$top/bench/bin/t_prop" "$@" ddio:/p ;;
    ddio-p3-s3-check) DDIO_TEST_HINTS="striping_unit=5000,romio_ddio_check_desc=enable" \
                  timeout 900 "${mpich[@]}" -s 3 --root "$tmp/srv" -- \
                  mpiexec -n 3 "$top/bench/bin/t_prop" "$@" ddio:/p ;;
    ddio-p6-s2) timeout 900 "${mpich[@]}" -s 2 --root "$tmp/srv" -- \
                  mpiexec -n 6 "$top/bench/bin/t_prop" "$@" ddio:/p ;;
    ufs-p4)     rm -f "$tmp/ufs"*; timeout 900 "$top/mpich/bin/mpiexec" -n 4 \
                  "$top/bench/bin/t_prop" "$@" "ufs:$tmp/ufs" ;;
    ompi-ddio-p4-s2) DDIO_OMPI_COMPONENT_DIR=$top/ompi-romio timeout 900 "${mpich[@]}" --ompi \
                  -s 2 --root "$tmp/srv" -- mpirun -n 4 "$top/bench/bin/t_prop.openmpi" "$@" ddio:/p ;;
    ompio-p4)   rm -f "$tmp/local"*; T_PROP_NO_EOF=1 timeout 900 mpirun.openmpi -n 4 --mca io ompio \
                  "$top/bench/bin/t_prop.openmpi" "$@" "$tmp/local" ;;
  esac > "$log" 2>&1 < /dev/null
}

# all cases of one seed (or the fixed recipes: seed "fixed"), going on past
# failures; prints "CASES RAN FAILED" (RAN: the cases drawn that made a
# view and ran, named by T_PROP_TRACE; the others t_prop skips; not its
# fixed case after the random ones)
run_seed() {
  local target=$1 seed=$2 k=0 failed=0 ran=0 n c line log nf=""
  rm -rf "$tmp/srv" && mkdir -p "$tmp/srv"
  n=$cases
  [ "$seed" = fixed ] && n=16
  while [ "$k" -lt "$n" ]; do
    log="$out/logs/$target.$seed.$k.log"
    if [ "$seed" = fixed ]; then run1 "$target" "$log" -f -k "$k"
    else run1 "$target" "$log" -z -n "$cases" -k "$k" -s "$seed"; fi
    [ "$seed" = fixed ] && [ -z "$nf" ] && nf=$(sed -n 's/.* \([0-9]*\) fixed recipes.*/\1/p' "$log")
    ran=$((ran + $(awk -v n="$n" -v f="$seed" '/^  case [0-9]+:/ { c = $2 + 0;
                     if (f == "fixed" || c < n) k++ } END { print k + 0 }' "$log")))
    grep -q "^PASS" "$log" && { rm -f "$log"; break; }
    c=$(grep "^  case [0-9]*" "$log" | tail -1 | awk '{print $2}' | tr -d :)
    [ -n "$c" ] || c=$k
    line=$(grep -m1 "FAIL\|free()\|Assertion\|Fatal\|signal\|Segmentation" "$log" | cut -c1-1000)
    [ -n "$line" ] || line="exit without a message: $(tail -n 2 "$log" | tr '\n' ' ' | cut -c1-300)"
    printf '%s\t%s\t%s\t%s\n' "$target" "$seed" "$c" "$line" >> "$out/failures.txt"
    failed=$((failed + 1))
    k=$((c + 1))
  done
  [ "$seed" = fixed ] && n=${nf:-0}
  echo "$n $ran $failed"
}

: > "$out/failures.txt"
printf 'target\tseed\tcases\tran\tfailed\tseconds\n' > "$out/runs.tsv"
for t in $targets; do
  list=$seeds
  case $t in ddio-p4-s2|ufs-p4|ompi-ddio-p4-s2|ompio-p4) list="fixed $seeds" ;; esac
  for s in $list; do
    t0=$SECONDS
    read -r n r f < <(run_seed "$t" "$s")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$s" "$n" "$r" "$f" "$((SECONDS - t0))" \
      | tee -a "$out/runs.tsv"
  done
done

# SUMMARY.md: per target, the random cases and the fixed recipes
{
  echo "# t_prop -z stress: $(date -u +%Y-%m-%dT%H:%MZ), $(git -C "$top" rev-parse --short HEAD)"
  echo
  echo "$cases cases per seed, seeds: $seeds. Reproduce a failure: the target's command"
  echo "(bench/prop-stress.sh, run1) with \`-z -n $cases -s SEED -c CASE\`."
  echo
  echo "| target | random cases drawn | ran | failed | fixed recipes | failed | seconds |"
  echo "|---|---|---|---|---|---|---|"
  awk -F'\t' 'NR > 1 { if ($2 == "fixed") { fc[$1] += $3; ff[$1] += $5 }
                        else { rc[$1] += $3; rr[$1] += $4; rf[$1] += $5 }; s[$1] += $6;
                        if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
              END { for (i = 1; i <= n; i++) { t = order[i];
                      printf "| %s | %d | %d | %d | %s | %s | %d |\n", t, rc[t], rr[t], rf[t],
                        (t in fc) ? fc[t] : "-", (t in ff) ? ff[t] : "-", s[t] } }' "$out/runs.tsv"
  echo
  echo "Failures (target, seed, case, the first message): failures.txt"
} > "$out/SUMMARY.md"
cat "$out/SUMMARY.md"
