#!/usr/bin/env bash
# PnetCDF's TESTSEQRUN / TESTMPIRUN for run-pnetcdf-tests.sh: runs one
# command of PnetCDF's test scripts under mpiexec (1 rank, or -n NP) with a
# time limit, and appends its result to $PN_LOG as one line
#   RC SECONDS NP DIR COMMAND...
# which the harness counts (every command a test: program runs, ncvalidator,
# ncmpidiff). With PN_KEEP_GOING=1 it then returns 0, so PnetCDF's `set -e`
# scripts (parallel_run.sh stops a whole directory at its first failure) run
# every command and the harness can name every failure; the harness judges
# from the log, never from this exit status.
# usage: pn-run.sh [-n NP] COMMAND [ARGS...]
set -u
np=1
if [ "${1:-}" = -n ]; then np=$2; shift 2; fi
[ $# -gt 0 ] || { echo "pn-run: no command" >&2; exit 2; }
: "${PN_LOG:?pn-run: PN_LOG not set}"
# PN_SKIP="np4:prog ...": commands the harness knows hang on ufs: too
# (not ddio's); logged with status 77 and not run, so they cost no timeout.
case " ${PN_SKIP:-} " in *" np$np:$(basename "$1") "*)
  echo "pn-run: SKIP (PN_SKIP) np$np: $*" >&2
  echo "77 0 $np $(basename "$PWD") $*" >> "$PN_LOG"; exit 0 ;;
esac
start=$(date +%s)
# A serial program not linked with MPI (ncvalidator) runs as users run it,
# without mpiexec: a CI run had two 0-1 s ncvalidator runs end with 141
# (SIGPIPE) from the launcher around a program that never speaks PMI.
launch=(mpiexec -n "$np")
if [ "$np" = 1 ] && [ -x "$1" ] && ! ldd "$1" 2>/dev/null | grep -q 'libmpi'; then launch=(); fi
# The command's output goes through a file, so a failure's last lines can be
# shown by the harness (PN_LOG.failout) as well as in make's output.
out=$(mktemp "${TMPDIR:-/tmp}/pn-run.XXXXXX")
timeout -k 10 "${PN_LIMIT:-180}" "${launch[@]}" "$@" > "$out" 2>&1
rc=$?
cat "$out"
[ $rc -eq 124 ] && echo "pn-run: TIMEOUT after ${PN_LIMIT:-180}s: $*" | tee -a "$out" >&2
if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
  { echo "---- exit $rc: $np $(basename "$PWD") $*"; tail -n 25 "$out"; } >> "$PN_LOG.failout"
fi
rm -f "$out"
echo "$rc $(( $(date +%s) - start )) $np $(basename "$PWD") $*" >> "$PN_LOG"
[ "${PN_KEEP_GOING:-0}" = 1 ] && exit 0
exit $rc
