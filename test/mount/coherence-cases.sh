#!/usr/bin/env bash
# The mount's cache rule (docs/SEMANTICS.md "The mount"), run INSIDE a
# `ddio-run --mount $M` session whose mount keeps attributes and names for
# BOUND seconds (DDIO_ATTR_TIMEOUT): the mount's own changes are seen through
# it at once; another client's (tools/ddio, a second mount on $M2) within
# BOUND, plus SLACK for a busy machine, and at once for a new name, for the
# size an open's fstat gives and for a file's bytes; and the cache is in
# effect (a stat repeated within BOUND asks no server). Prints
# "PASS: mount/coherence/NAME (notes)" or "FAIL: ...: why" per case.
# Environment: M, M2 (mount points, M2 not mounted yet), T (scratch), TOP
# (build tree), BOUND, SLACK (seconds), CASE_LIMIT.
set -u
export LC_ALL=C
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
T_TMP=$T
export DDIO="$TOP/tools/ddio"
check() {
  t_step -t "${CASE_LIMIT:-120}" -w 8 -v "mount/coherence/$1" bash -c "set -eu -o pipefail; $(declare -f); $2"
}
die() { echo "$*" >&2; exit 1; }
now() { echo "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.2f", b - a}'; }
# seen_within WHAT CMD...: poll CMD until it succeeds; fail past BOUND +
# SLACK seconds from now (the change it waits for has just returned)
seen_within() {
  local what=$1; shift
  local t0 t; t0=$(now)
  until "$@"; do
    t=$(since "$t0")
    awk -v t="$t" -v b="$BOUND" -v s="$SLACK" 'BEGIN {exit !(t > b + s)}' \
      && die "$what: not seen ${t}s after the change (bound ${BOUND}s + ${SLACK}s)"
    sleep 0.02
  done
  echo "$what: $(since "$t0")s" >&2
}
absent() { [ ! -e "$1" ]; }
size_is() { [ "$(stat -c %s "$1" 2>/dev/null)" = "$2" ]; }
mode_is() { [ "$(stat -c %a "$1" 2>/dev/null)" = "$2" ]; }
pstats() { "$DDIO" stats req.PSTAT | awk '{s += $3} END {print s + 0}'; }

# ---- the mount's own changes: seen through it at once --------------------------------
own_changes() {
  mkdir "$M/own"
  absent "$M/own/f"                              # an absent name, now cached
  printf abc > "$M/own/f"
  size_is "$M/own/f" 3 || die "create: $(stat -c %s "$M/own/f" 2>&1)"
  head -c 1000 /dev/zero >> "$M/own/f"
  size_is "$M/own/f" 1003 || die "append: size $(stat -c %s "$M/own/f")"
  truncate -s 10 "$M/own/f"
  size_is "$M/own/f" 10 || die "truncate: size $(stat -c %s "$M/own/f")"
  chmod 600 "$M/own/f"
  mode_is "$M/own/f" 600 || die "chmod: mode $(stat -c %a "$M/own/f")"
  mv "$M/own/f" "$M/own/g"
  absent "$M/own/f" || die "rename: old name still there"
  size_is "$M/own/g" 10 || die "rename: new name $(stat -c %s "$M/own/g" 2>&1)"
  rm "$M/own/g"
  absent "$M/own/g" || die "unlink: still there"
  mkdir "$M/own/d"; [ -d "$M/own/d" ] || die "mkdir: not there"
  rmdir "$M/own/d"; absent "$M/own/d" || die "rmdir: still there"
  rmdir "$M/own"
}

# ---- another client's changes: new names at once, opened files at once, the rest
# within the bound ------------------------------------------------------------------
# the size fstat gives right after an open through the mount
open_size() { python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); print(os.fstat(fd).st_size)' "$1"; }
others_tool() {   # created, resized and removed by tools/ddio
  head -c 100 /dev/urandom > "$T/s100"; head -c 300000 /dev/urandom > "$T/s300k"
  "$DDIO" mkdir /oth
  absent "$M/oth/f"                              # looked up absent (never kept)
  "$DDIO" cp "$T/s100" ddio:/oth/f >/dev/null
  size_is "$M/oth/f" 100 || die "create by ddio: not seen at once"
  "$DDIO" cp "$T/s300k" ddio:/oth/f >/dev/null   # the size 100 is kept
  seen_within "grown by ddio (stat)" size_is "$M/oth/f" 300000
  "$DDIO" cp "$T/s100" ddio:/oth/f >/dev/null
  [ "$(open_size "$M/oth/f")" = 100 ] || die "shrunk by ddio: open+fstat gave $(open_size "$M/oth/f")"
  "$DDIO" cp "$T/s300k" ddio:/oth/f >/dev/null
  cmp "$M/oth/f" "$T/s300k" || die "bytes: not the new ones at once"
  "$DDIO" cp "$T/s100" ddio:/oth/g >/dev/null
  size_is "$M/oth/g" 100 || die "create by ddio: not seen at once"   # looked up just now
  "$DDIO" rm ddio:/oth/g
  seen_within "removed by ddio" absent "$M/oth/g"
  "$DDIO" rm ddio:/oth/f
}
others_mount() {  # the same through a second mount of the same servers
  "$TOP/tools/ddio-fuse" -f --servers="$DDIO_SERVERS" "$M2" 2>"$T/m2.log" &
  local pid=$!
  trap 'fusermount3 -u "$M2" 2>/dev/null || fusermount3 -uz "$M2"; wait '"$pid" EXIT
  t_wait_for -p "$pid" 20 mountpoint -q "$M2" || die "second mount: $(cat "$T/m2.log")"
  mkdir -p "$M/m2"
  absent "$M/m2/f"
  printf hello > "$M2/m2/f"
  size_is "$M/m2/f" 5 || die "create by mount 2: not seen at once"
  truncate -s 5000 "$M2/m2/f"
  seen_within "resize by mount 2" size_is "$M/m2/f" 5000
  chmod 640 "$M2/m2/f"
  seen_within "chmod by mount 2" mode_is "$M/m2/f" 640
  mv "$M2/m2/f" "$M2/m2/g"
  seen_within "rename by mount 2 (old name)" absent "$M/m2/f"
  size_is "$M/m2/g" 5000 || die "rename by mount 2: new name not seen at once"
  rm "$M2/m2/g"
  seen_within "remove by mount 2" absent "$M/m2/g"
  rmdir "$M2/m2"
  seen_within "rmdir by mount 2" absent "$M/m2"
}

# ---- the cache is in effect: a stat repeated within the bound asks no server -----------
cached() {
  printf x > "$M/cached"
  stat "$M/cached" >/dev/null
  local before after i t0
  t0=$(now); before=$(pstats)
  for i in $(seq 20); do stat "$M/cached" >/dev/null; done
  after=$(pstats)
  # a machine stalled past the bound may refill once: one PSTAT per server
  local nsrv; nsrv=$(echo "$DDIO_SERVERS" | tr ',' '\n' | wc -l)
  [ $((after - before)) -le "$nsrv" ] \
    || die "20 stats within $(since "$t0")s sent $((after - before)) PSTATs (attributes not cached)"
  echo "20 stats: $((after - before)) PSTATs" >&2
  rm "$M/cached"
}

check own own_changes
check others/tool others_tool
check others/mount others_mount
if [ "$BOUND" = 0 ]; then echo "SKIP: mount/coherence/cached: nothing is cached with a bound of 0"
else check cached cached; fi
