#!/usr/bin/env bash
# ab-swap.sh: A/B of builds by swapping one installed file between launches
# (a libmpich.so.12.2.2, a ddio-server), alternating the variants round by
# round so that a machine's drift falls on all of them alike, and putting
# the original back at the end, also when interrupted. Compare the runs
# with bench/kotz_ab.py (run-bench.sh) or bench/ior_ab.py (ior.sh).
#
#   bench/ab-swap.sh [-n ROUNDS] -f TARGET LABEL=FILE [LABEL=FILE...] -- COMMAND...
#
# Before each launch TARGET is replaced by the variant's FILE, and COMMAND
# runs with AB_LABEL and AB_ROUND in its environment (write its results
# under a path made of them, e.g. -o "$OUT/k-\$AB_LABEL-\$AB_ROUND" inside
# bash -c). Its output goes to COMMAND's own files; a launch that fails is
# reported and the rounds go on.
#
# Examples: two client libraries, then two servers, on Kotz's quick run:
#   P=$(readlink -f mpich/lib/libmpich.so.12)
#   bench/ab-swap.sh -n 3 -f "$P" old=/tmp/lib-old.so new=/tmp/lib-new.so -- bash -c \
#     'bench/run-bench.sh -r 8192 --methods ddio-ucx -n 1 --no-ceiling --no-beside -o /tmp/ab/k-$AB_LABEL-$AB_ROUND'
#   bench/ab-swap.sh -n 3 -f ioserver/ddio-server old=/tmp/srv-old new=/tmp/srv-new -- bash -c \
#     'bench/run-bench.sh -r 8192 --methods ddio-tcp,ddio-ucx -n 1 --no-ceiling --no-beside -o /tmp/ab/k-$AB_LABEL-$AB_ROUND'
#   bench/kotz_ab.py /tmp/ab
# Nothing else may rebuild or install TARGET meanwhile (no make in the tree).
set -u
die() { echo "ab-swap.sh: $*" >&2; exit 2; }

rounds=3 target="" labels=() files=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) [ $# -ge 2 ] || die "-n needs a value"; rounds=$2; shift 2 ;;
    -f) [ $# -ge 2 ] || die "-f needs a value"; target=$2; shift 2 ;;
    --) shift; break ;;
    *=*) labels+=("${1%%=*}"); files+=("${1#*=}"); shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (LABEL=FILE, -f, -n, then -- COMMAND)" ;;
  esac
done
[ $# -gt 0 ] || die "no COMMAND after --"
[ -n "$target" ] && [ -f "$target" ] || die "-f TARGET: an existing file"
[ ${#labels[@]} -ge 2 ] || die "at least two LABEL=FILE variants"
case "$rounds" in ''|*[!0-9]*) die "-n: a count" ;; esac
for f in "${files[@]}"; do [ -f "$f" ] || die "no such file: $f"; done

saved=$(mktemp "${TMPDIR:-/tmp}/ab-swap.XXXXXX") || die "cannot save $target"
cp -p "$target" "$saved" || die "cannot save $target"
restore() { [ -f "$saved" ] || return 0; cp -p "$saved" "$target" && rm -f "$saved"; }
trap 'restore; exit 130' INT TERM
trap 'restore' EXIT

failed=0
for ((r = 1; r <= rounds; r++)); do
  for i in "${!labels[@]}"; do
    cp "${files[$i]}" "$target" || die "cannot install ${files[$i]} as $target"
    echo "[$(date +%T)] round $r: ${labels[$i]}"
    if ! AB_LABEL=${labels[$i]} AB_ROUND=$r "$@"; then
      echo "ab-swap.sh: round $r, ${labels[$i]}: the command failed" >&2
      failed=$((failed + 1))
    fi
  done
done
echo "ab-swap.sh: $rounds round(s) of ${labels[*]}; $failed launch(es) failed; $target restored"
[ $failed = 0 ]
