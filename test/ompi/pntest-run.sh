#!/usr/bin/env bash
# PnetCDF's own test programs (the pntest group of run-ompi-tests.sh), one
# list of them in one session: each program run with MPIRUN in its own
# directory OUT/NAME, bounded by LIMIT seconds; with CTL set (a directory of
# the control's runs), each file the control left in CTL/NAME compared with
# the one here, byte for byte (cmp: both are plain paths, the ddio ones
# under the mount). Appends "NAME RC SECS CMP" to RESULTS (CMP: "-" without
# CTL, else "same" or what differed); the program's output in LOGS/NAME.out
# (LOGS: a directory outside the mount, which ends with the session).
# usage: MPIRUN="mpirun ..." LOGS=DIR [CTL=DIR] [PREFIX=ufs:] pntest-run.sh BIN OUT RESULTS LIMIT SPEC...
#   SPEC: DIR/PROG:NP (a program of PnetCDF's test/DIR, built into BIN/DIR/PROG)
set -u
bin=$1 out=$2 res=$3 limit=$4; shift 4
read -r -a mpirun <<<"$MPIRUN"
for spec in "$@"; do
  dp=${spec%:*} np=${spec##*:}; p=${dp#*/}; name=${dp//\//-}
  d=$out/$name; rm -rf "$d"; mkdir -p "$d"
  # PnetCDF's seq_runs.sh and parallel_run.sh: a directory for nc_test and
  # nf_test (they write test.nc, scratch.nc there), else the output file
  # (PREFIX: "ufs:" for the ROMIO control)
  case $p in nc_test|nf_test) args=(-d "${PREFIX:-}$d") ;; *) args=("${PREFIX:-}$d/$p.nc") ;; esac
  t0=$(date +%s.%N)
  (cd "$d" && timeout -k 5 "$limit" "${mpirun[@]}" -n "$np" "$bin/$dp" "${args[@]}") > "$LOGS/$name.out" 2>&1
  rc=$?
  secs=$(echo "$(date +%s.%N) - $t0" | bc | xargs printf '%.1f')
  c=-
  if [ -n "${CTL:-}" ]; then
    c=same
    for f in "$CTL/$name"/*; do
      [ -e "$f" ] || continue
      if [ ! -e "$d/${f##*/}" ]; then c="missing:${f##*/}"; break; fi
      cmp -s "$f" "$d/${f##*/}" || { c="differs:${f##*/}"; break; }
    done
  fi
  echo "$name $rc $secs $c" >> "$res"
done
exit 0
