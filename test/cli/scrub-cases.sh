#!/usr/bin/env bash
# End-to-end checksums mended (run-cli-tests.sh runs it inside `ddio-run -s 2`,
# DDIO_SERVERS and DDIO_SECRET_FILE set): bytes of a datafile flipped behind
# its server's back, then a read that repairs from the copy, `ddio scrub`
# finding and repairing every bad sector on both servers, and a `none`
# file's bad sector reported unrepairable. Every case compares bytes: the
# data read back with the original, and each datafile with its copy.
#   scrub-cases.sh mirror   servers with --redundancy mirror (cp makes copies)
#   scrub-cases.sh none     servers with --checksums on and no copies
#   scrub-cases.sh disks    mirror, 2 disks per server, 64 KiB blocks: a
#                           datafile per disk (ROOT/s<i>/d<d>), its mirror
#                           on the holder's disk of the same number
# Needs: DDIO (tools/ddio), T (scratch dir), ROOT (ddio-run's --root: server
# i's datafiles under ROOT/s<i>, its mirrors under ROOT/s<i>/.ddio/copy1).
# Prints "PASS: name" or "FAIL: name: why" per case.
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
T_TMP=$T
mode=$1

# flip FILE OFFSET: one byte inverted in place, as rot on the disk would
flip() {
  python3 -c 'import sys
f = open(sys.argv[1], "r+b"); o = int(sys.argv[2]); f.seek(o); c = f.read(1)
f.seek(o); f.write(bytes([c[0] ^ 0xFF]))' "$1" "$2"
}
# the sum of one STATS counter over the servers
counter() { "$DDIO" stats "$1" | awk '{ s += $3 } END { print s + 0 }'; }
# same FILE1 FILE2: byte for byte, else the first difference into $T/why
same() { cmp "$1" "$2" >"$T/why" 2>&1; }

if [ "$mode" = mirror ]; then
  head -c 3000017 /dev/urandom > "$T/src"          # server 0: units 0 and 2, server 1: unit 1
  # ---- a read that meets a bad sector: right bytes, and the bad copy rewritten ----
  "$DDIO" cp "$T/src" ddio:/m1 >/dev/null || t_fail cli/scrub/setup "cp in failed"
  "$DDIO" stat /m1 | grep -q mirror || t_fail cli/scrub/setup "/m1 is not mirrored: $("$DDIO" stat /m1)"
  flip "$ROOT/s0/m1" 70000
  same "$ROOT/s0/m1" "$ROOT/s1/.ddio/copy1/m1" && t_fail cli/scrub/read-repairs "the flip did not land"
  before=$(counter sums_repaired)
  if "$DDIO" cp ddio:/m1 "$T/m1.back" >/dev/null 2>"$T/cp.err" && same "$T/src" "$T/m1.back"; then
    t_pass cli/scrub/read-right-bytes
  else t_fail cli/scrub/read-right-bytes "$(cat "$T/cp.err" "$T/why")"; fi
  after=$(counter sums_repaired)
  [ "$after" -gt "$before" ] && t_pass cli/scrub/read-counts-repaired \
    || t_fail cli/scrub/read-counts-repaired "sums_repaired $before -> $after"
  # the datafile has the good bytes again: its copy's, and the original's
  if same "$ROOT/s0/m1" "$ROOT/s1/.ddio/copy1/m1" \
     && same <(head -c 1048576 "$T/src") <(head -c 1048576 "$ROOT/s0/m1"); then
    t_pass cli/scrub/read-repairs
  else t_fail cli/scrub/read-repairs "$(cat "$T/why")"; fi
  "$DDIO" scrub /m1 >"$T/s.out" 2>"$T/s.err" && grep -qx '/m1: mirror: verified [1-9][0-9]*, unknown 0, bad 0, repaired 0, unrepairable 0' "$T/s.out" \
    && t_pass cli/scrub/read-repair-leaves-nothing || t_fail cli/scrub/read-repair-leaves-nothing "$(cat "$T/s.out" "$T/s.err")"

  # ---- ddio scrub: bad sectors on both servers, primaries and mirrors, all repaired ----
  "$DDIO" cp "$T/src" ddio:/m2 >/dev/null || t_fail cli/scrub/setup "cp in of /m2 failed"
  flip "$ROOT/s0/m2" 5000                  # server 0's units, sector 1
  flip "$ROOT/s0/m2" 1200000               # sector 292 (unit 2)
  flip "$ROOT/s1/m2" 300000                # server 1's unit, sector 73
  flip "$ROOT/s1/.ddio/copy1/m2" 900000    # the mirror of server 0's units, sector 219
  flip "$ROOT/s0/.ddio/copy1/m2" 600000    # the mirror of server 1's unit, sector 146
  rc=0; "$DDIO" scrub ddio:/m2 >"$T/s.out" 2>"$T/s.err" || rc=$?
  if [ $rc = 0 ] && grep -qx '/m2: mirror: verified [1-9][0-9]*, unknown 0, bad 5, repaired 5, unrepairable 0' "$T/s.out"; then
    t_pass cli/scrub/finds-and-repairs
  else t_fail cli/scrub/finds-and-repairs "exit $rc: $(cat "$T/s.out" "$T/s.err")"; fi
  if same "$ROOT/s0/m2" "$ROOT/s1/.ddio/copy1/m2" && same "$ROOT/s1/m2" "$ROOT/s0/.ddio/copy1/m2" \
     && "$DDIO" cp ddio:/m2 "$T/m2.back" >/dev/null && same "$T/src" "$T/m2.back"; then
    t_pass cli/scrub/repaired-bytes
  else t_fail cli/scrub/repaired-bytes "$(cat "$T/why")"; fi
  rc=0; "$DDIO" scrub /m2 >"$T/s.out" 2>"$T/s.err" || rc=$?
  [ $rc = 0 ] && grep -qx '/m2: mirror: verified [1-9][0-9]*, unknown 0, bad 0, repaired 0, unrepairable 0' "$T/s.out" \
    && t_pass cli/scrub/second-finds-nothing || t_fail cli/scrub/second-finds-nothing "exit $rc: $(cat "$T/s.out" "$T/s.err")"
  # --all: every file, one line each and a total; both copies of two files
  flip "$ROOT/s1/m1" 4096
  rc=0; "$DDIO" scrub --all >"$T/s.out" 2>"$T/s.err" || rc=$?
  if [ $rc = 0 ] && grep -qx '/m1: mirror: verified [1-9][0-9]*, unknown 0, bad 1, repaired 1, unrepairable 0' "$T/s.out" \
     && grep -qx '/m2: mirror: verified [1-9][0-9]*, unknown 0, bad 0, repaired 0, unrepairable 0' "$T/s.out" \
     && grep -qE '^scrub: 2 file\(s\), [1-9][0-9]* bytes read in [0-9.]+ s: verified [1-9][0-9]*, bad 1, repaired 1, unrepairable 0$' "$T/s.out" \
     && same "$ROOT/s1/m1" "$ROOT/s0/.ddio/copy1/m1"; then
    t_pass cli/scrub/all
  else t_fail cli/scrub/all "exit $rc: $(cat "$T/s.out" "$T/s.err" "$T/why")"; fi
  # --rate: 2 copies of 3000017 bytes at 3 MB/s take about 2 s
  t0=$(date +%s.%N)
  "$DDIO" scrub --rate 3 /m2 >"$T/s.out" 2>"$T/s.err"; rc=$?
  dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  echo "scrub --rate 3 of 6000034 bytes: $dt s"
  [ $rc = 0 ] && awk -v d="$dt" 'BEGIN { exit !(d >= 1.5) }' && t_pass cli/scrub/rate \
    || t_fail cli/scrub/rate "exit $rc, $dt s: $(cat "$T/s.out" "$T/s.err")"
  # a file that does not exist, a directory
  "$DDIO" mkdir /dir
  t_expect_fail -x 1 -2 cli/scrub/missing "no such file" "$DDIO" scrub /nothing
  t_expect_fail -x 1 -2 cli/scrub/directory "is a directory" "$DDIO" scrub /dir
elif [ "$mode" = disks ]; then
  # ---- two disks per server: the sector found and mended on the right disk ----
  R=$ROOT
  head -c 5000017 /dev/urandom > "$T/src"
  "$DDIO" cp "$T/src" ddio:/f >/dev/null || t_fail cli/scrub/setup "cp in failed"
  flip "$R/s0/d1/f" 70000
  if "$DDIO" cp ddio:/f "$T/f.back" >/dev/null 2>"$T/cp.err" && same "$T/src" "$T/f.back" \
     && same "$R/s0/d1/f" "$R/s1/d1/.ddio/copy1/f"; then t_pass cli/scrub/disks-read-repairs
  else t_fail cli/scrub/disks-read-repairs "$(cat "$T/cp.err" "$T/why")"; fi
  flip "$R/s0/d0/f" 5000; flip "$R/s1/d0/.ddio/copy1/f" 200000
  flip "$R/s1/d1/f" 300000; flip "$R/s0/d1/.ddio/copy1/f" 4097
  rc=0; "$DDIO" scrub /f >"$T/s.out" 2>"$T/s.err" || rc=$?
  ok=1
  for d in d0 d1; do
    same "$R/s0/$d/f" "$R/s1/$d/.ddio/copy1/f" && same "$R/s1/$d/f" "$R/s0/$d/.ddio/copy1/f" || ok=0
  done
  if [ $rc = 0 ] && [ $ok = 1 ] && grep -qx '/f: mirror: verified [1-9][0-9]*, unknown 0, bad 4, repaired 4, unrepairable 0' "$T/s.out"; then
    t_pass cli/scrub/disks-finds-and-repairs
  else t_fail cli/scrub/disks-finds-and-repairs "exit $rc: $(cat "$T/s.out" "$T/s.err" "$T/why")"; fi
else
  # ---- redundancy none, checksums on: a bad sector is reported, not mended ----
  head -c 3000017 /dev/urandom > "$T/src"
  "$DDIO" cp "$T/src" ddio:/n1 >/dev/null || t_fail cli/scrub/setup "cp in failed"
  cp "$ROOT/s0/n1" "$T/n1.before"
  flip "$ROOT/s0/n1" 70000
  rc=0; "$DDIO" scrub /n1 >"$T/s.out" 2>"$T/s.err" || rc=$?
  if [ $rc = 1 ] && grep -qx '/n1: none: verified [1-9][0-9]*, unknown 0, bad 1, repaired 0, unrepairable 1' "$T/s.out" \
     && grep -q 'could not be repaired (redundancy none' "$T/s.err"; then
    t_pass cli/scrub/none-unrepairable
  else t_fail cli/scrub/none-unrepairable "exit $rc: $(cat "$T/s.out" "$T/s.err")"; fi
  # nothing was written: the flipped byte is still there, the rest as before
  cmp -l "$T/n1.before" "$ROOT/s0/n1" >"$T/why" 2>&1
  [ "$(wc -l <"$T/why")" = 1 ] && grep -q '^ *70001 ' "$T/why" && t_pass cli/scrub/none-untouched \
    || t_fail cli/scrub/none-untouched "$(head -c 300 "$T/why")"
  t_expect_fail -x 1 -2 cli/scrub/none-read-fails "data integrity error" "$DDIO" cp ddio:/n1 "$T/n1.back"
fi
