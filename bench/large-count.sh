#!/usr/bin/env bash
# MPI-4 large counts, every `_c` family: each of 2 ranks moves MIB MiB of
# MPI_BYTE (a count beyond INT_MAX from 2048 MiB on) in ONE write call and
# ONE read call of the family (test/mpi/t_lcount.c checks every word, the
# status counts and the file size), on ddio: (2 servers) and on ROMIO's
# ufs: with the same MPICH.
#
# usage: bench/large-count.sh [-o DIR] [-m MIB] [-f "at_all i ..."] [-R]
# Writes DIR/large-count.csv (family,method,exit,write_s,read_s) and
# DIR/large-count.md (-R: only the table again, from DIR's csv). Needs
# `./ddio.sh build` and `make test/mpi/bin/t_lcount`.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/bench/results/$(date +%F)-large-count mib=2304
fams="indep at all at_all i i_at i_all i_at_all all_begin at_all_begin shared ordered ordered_begin"
report_only=0
while getopts "o:m:f:R" o; do
  case $o in o) out=$OPTARG ;; m) mib=$OPTARG ;; f) fams=$OPTARG ;; R) report_only=1 ;;
    *) sed -n 2,12p "$0"; exit 2 ;; esac
done
csv=$out/large-count.csv
run_all() {
  prog=$top/test/mpi/bin/t_lcount
  [ -x "$prog" ] || { echo "large-count: $prog missing: make test/mpi/bin/t_lcount" >&2; exit 1; }
  mkdir -p "$out"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-lcount.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "family,method,exit,write_s,read_s" > "$csv"
  export PATH="$top/mpich/bin:$PATH" LD_LIBRARY_PATH="$top/mpich/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  for f in $fams; do
    for m in ddio ufs; do
      rm -rf "$tmp"/*; mkdir -p "$tmp/srv" "$tmp/ufs"
      if [ $m = ddio ]; then
        cmd=("$top/tools/ddio-run" -s 2 --root "$tmp/srv" -- mpiexec -n 2 "$prog" "$f" "$mib" ddio:/lc)
      else
        cmd=(mpiexec -n 2 "$prog" "$f" "$mib" "ufs:$tmp/ufs/lc")
      fi
      rc=0; log=$("${cmd[@]}" 2>&1) || rc=$?
      line=$(grep -h 'rank 0:' <<< "$log" || true)
      w=$(sed -n 's/.*written in \([0-9.]*\) s.*/\1/p' <<< "$line"); r=$(sed -n 's/.*read in \([0-9.]*\) s.*/\1/p' <<< "$line")
      echo "$f,$m,$rc,${w:--},${r:--}" | tee -a "$csv"
      [ $rc = 0 ] || printf '%s\n' "$log" > "$out/failed-$f-$m.log"
    done
  done
}
[ $report_only = 1 ] || run_all
{
  echo "Each of 2 ranks: ONE call of $mib MiB of MPI_BYTE (count $((mib * 1048576))) per direction; bytes, status and size checked."
  echo
  echo "| family | ddio: | write s | read s | ufs: | write s | read s |"
  echo "|---|---|---|---|---|---|---|"
  awk -F, 'NR>1{k=$1; if(!(k in seen)){seen[k]=1; order[++n]=k}
    w[k,$2]=$4; r[k,$2]=$5; ok[k,$2]=($3==0) ? "passed" : "FAILED"}
    END{for(i=1;i<=n;i++){k=order[i]; printf "| %s | %s | %s | %s | %s | %s | %s |\n", k,
      ok[k,"ddio"], w[k,"ddio"], r[k,"ddio"], ok[k,"ufs"], w[k,"ufs"], r[k,"ufs"]}}' "$csv"
  echo
  echo "A failed run's output: failed-FAMILY-METHOD.log beside this file."
} | tee "$out/large-count.md"
