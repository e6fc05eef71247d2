#!/usr/bin/env bash
# The mount's cache rule (docs/SEMANTICS.md "The mount"), run INSIDE
# `ddio-run --mount $M`. SET=bounded: the mount keeps attributes
# and names for BOUND seconds (DDIO_ATTR_TIMEOUT and DDIO_CACHE_TIMEOUT):
# the mount's own changes are seen through it at once; another client's
# (tools/ddio, a second mount on $M2) within BOUND, plus SLACK for a busy
# machine, and at once for a new name, for the size an open's fstat gives
# and for a file's bytes, and a size another mount's open file grows to
# within BOUND; and the cache is in effect (a stat repeated within BOUND
# asks no server). SET=watched: the mount's defaults but a cache timeout
# far longer than any case (DDIO_CACHE_TIMEOUT=600): every change another
# client makes (the tool, a second mount) is seen at once, because the
# servers tell the mount before the change returns; a name another client
# removed can be created again through the mount at once; and a directory
# the mount made costs no PSTAT for its creates, stats, opens and removes.
# Prints "PASS: mount/coherence/NAME (notes)" or "FAIL: ...: why" per case.
# Environment: M, M2 (mount points, M2 not mounted yet), T (scratch), TOP
# (build tree), SET, BOUND, SLACK (seconds), CASE_LIMIT.
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
# access(2)'s F_OK, which asks no stat of a name the kernel keeps (PnetCDF's
# NC_NOCLOBBER create checks it)
no_access() { python3 -c 'import os, sys; sys.exit(os.access(sys.argv[1], os.F_OK))' "$1"; }
size_is() { [ "$(stat -c %s "$1" 2>/dev/null)" = "$2" ]; }
mode_is() { [ "$(stat -c %a "$1" 2>/dev/null)" = "$2" ]; }
pstats() { reqs PSTAT; }
reqs() { "$DDIO" stats "req.$1" | awk '{s += $3} END {print s + 0}'; }
counter() { "$DDIO" stats "$1" | awk '{s += $3} END {print s + 0}'; }

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

# ---- a size the servers cannot tell: another mount's file, written and still open
open_writer() {
  mount2
  printf x > "$M/ow"
  size_is "$M/ow" 1 || die "ow: $(stat -c %s "$M/ow" 2>&1)"   # now kept
  rm -f "$T/ow.written" "$T/ow.close"
  python3 - "$M2/ow" "$T/ow.written" "$T/ow.close" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
os.pwrite(fd, b"y" * 7000, 0)
os.fsync(fd)                 # on the servers (the mount's client may buffer writes)
open(sys.argv[2], "w").close()
t0 = time.time()
while not os.path.exists(sys.argv[3]) and time.time() - t0 < 30:   # (a failed case)
    time.sleep(0.02)
os.pwrite(fd, b"z" * 9000, 0)
os.close(fd)
PY
  local py=$!
  t_wait_for -p "$py" 20 test -e "$T/ow.written" || die "the writer did not write"
  # the mount's copy (C) and the kernel's (T) stack: BOUND is both here
  BOUND=$(awk -v b="$BOUND" 'BEGIN {print 2 * b}') \
    seen_within "a size another mount's open file grew to" size_is "$M/ow" 7000
  touch "$T/ow.close"; wait "$py" || die "the writer failed"
  size_is "$M/ow" 9000 || die "closed by mount 2: size $(stat -c %s "$M/ow") not at once"
  rm "$M/ow"
}

# ---- with the servers watched: every other client's change at once ----------------
# at_once WHAT CMD...: CMD must hold right now (the change has just returned)
at_once() { local what=$1; shift; "$@" || die "$what: not seen at once"; }
mount2() {   # the second mount, unmounted when the case ends
  "$TOP/tools/ddio-fuse" -f --servers="$DDIO_SERVERS" "$M2" 2>"$T/m2.log" &
  local pid=$!
  trap 'fusermount3 -u "$M2" 2>/dev/null || fusermount3 -uz "$M2"; wait '"$pid" EXIT
  t_wait_for -p "$pid" 20 mountpoint -q "$M2" || die "second mount: $(cat "$T/m2.log")"
}
watched_tool() {
  head -c 100 /dev/urandom > "$T/s100"; head -c 300000 /dev/urandom > "$T/s300k"
  "$DDIO" mkdir /wt
  absent "$M/wt/f"
  "$DDIO" cp "$T/s100" ddio:/wt/f >/dev/null
  at_once "created by ddio" size_is "$M/wt/f" 100
  "$DDIO" cp "$T/s300k" ddio:/wt/f >/dev/null                 # the size 100 was kept
  at_once "grown by ddio" size_is "$M/wt/f" 300000
  "$DDIO" cp "$T/s100" ddio:/wt/f >/dev/null
  at_once "shrunk by ddio" size_is "$M/wt/f" 100
  cmp "$M/wt/f" "$T/s100" || die "bytes: not the new ones"
  "$DDIO" mkdir /wt/d
  at_once "mkdir by ddio" test -d "$M/wt/d"
  "$DDIO" rm ddio:/wt/f
  at_once "removed by ddio (access)" no_access "$M/wt/f"
  at_once "removed by ddio" absent "$M/wt/f"
}
watched_mount() {
  mount2
  mkdir "$M/wm"; : > "$M/wm/keep"; stat "$M/wm" "$M/wm/keep" >/dev/null    # kept
  absent "$M/wm/f"
  printf hello > "$M2/wm/f"
  at_once "created by mount 2" size_is "$M/wm/f" 5
  truncate -s 5000 "$M2/wm/f"
  at_once "resized by mount 2" size_is "$M/wm/f" 5000
  chmod 640 "$M2/wm/f"
  at_once "chmod by mount 2" mode_is "$M/wm/f" 640
  mv "$M2/wm/f" "$M2/wm/g"
  at_once "renamed by mount 2 (old name)" absent "$M/wm/f"
  at_once "renamed by mount 2 (new name)" size_is "$M/wm/g" 5000
  mkdir "$M2/wm/sub"; printf abc > "$M2/wm/sub/x"
  at_once "a file in a directory mount 2 made" size_is "$M/wm/sub/x" 3
  mv "$M2/wm/sub" "$M2/wm/sub2"
  at_once "directory renamed by mount 2 (old)" absent "$M/wm/sub/x"
  at_once "directory renamed by mount 2 (new)" size_is "$M/wm/sub2/x" 3
  rm -r "$M2/wm/sub2" "$M2/wm/g" "$M2/wm/keep"
  at_once "removed by mount 2 (access)" no_access "$M/wm/g"
  at_once "removed by mount 2" absent "$M/wm/g"
  rmdir "$M2/wm"
  at_once "rmdir by mount 2" absent "$M/wm"
}
watched_recreate() {   # a name the kernel kept, removed by another client, made again here
  mkdir -p "$M/wr"; printf one > "$M/wr/f"; size_is "$M/wr/f" 3 || die "f"
  "$DDIO" rm ddio:/wr/f
  printf second > "$M/wr/f" || die "create over a name another client removed failed"
  at_once "created again" size_is "$M/wr/f" 6
  [ "$(cat "$M/wr/f")" = second ] || die "bytes: $(cat "$M/wr/f")"
  "$DDIO" rm ddio:/wr/f
  mkdir "$M/wr/f" || die "mkdir over a name another client removed failed"
  rmdir "$M/wr/f" "$M/wr"
}
watched_cached() {   # 20 creates, stats, open-closes and removes: no PSTAT
  mkdir "$M/wc"
  local before after opens0 opens1 hand0 hand1
  before=$(pstats); opens0=$(reqs OPEN); hand0=$(counter local_handovers)
  python3 - "$M/wc" <<'PY'
import os, sys
for i in range(20):
    os.close(os.open("%s/f%d" % (sys.argv[1], i), os.O_CREAT | os.O_WRONLY, 0o644))
for i in range(20):
    assert os.stat("%s/f%d" % (sys.argv[1], i)).st_size == 0
for i in range(20):
    os.close(os.open("%s/f%d" % (sys.argv[1], i), os.O_RDONLY))
for i in range(20):
    os.unlink("%s/f%d" % (sys.argv[1], i))
PY
  after=$(pstats); opens1=$(reqs OPEN); hand1=$(counter local_handovers)
  local nsrv; nsrv=$(echo "$DDIO_SERVERS" | tr ',' '\n' | wc -l)
  [ $((after - before)) = 0 ] || die "80 operations sent $((after - before)) PSTATs"
  # the creates ask the servers; a read-only open of a kept file does not
  [ $((opens1 - opens0)) = $((20 * nsrv)) ] || die "20 creates and 20 opens sent $((opens1 - opens0)) OPENs"
  # a read-only open that reads nothing hands no descriptors over; a read does
  [ "$hand1" = "$hand0" ] || die "20 read-only opens made $((hand1 - hand0)) same-host handovers"
  head -c 70000 /dev/urandom > "$T/wc.ref"; cp "$T/wc.ref" "$M/wc/r"
  hand0=$(counter local_handovers)
  cmp "$M/wc/r" "$T/wc.ref" || die "read back: not the bytes written"
  hand1=$(counter local_handovers)
  [ "$hand1" -gt "$hand0" ] || die "a read-only open's read was handed nothing"
  rm "$M/wc/r"
  echo "80 operations: 0 PSTATs, $((opens1 - opens0)) OPENs, no handover until a read" >&2
  rmdir "$M/wc"
}
# an open the mount defers (ddio_fuse_file.h) asks the servers at its first
# read or write; this mount's own unlink, rename and chmod of the file make
# it first, so the handle keeps its file and its access; another client's
# removal before the first read gives ESTALE there, as NFS
watched_deferred() {
  mkdir "$M/wd"
  head -c 100000 /dev/urandom > "$T/wd.ref"
  cp "$T/wd.ref" "$M/wd/a"; cp "$T/wd.ref" "$M/wd/b"; cp "$T/wd.ref" "$M/wd/c"
  cp "$T/wd.ref" "$M/wd/d"; stat "$M/wd/a" "$M/wd/b" "$M/wd/c" "$M/wd/d" >/dev/null
  local opens0 opens1
  python3 - "$M/wd" "$T/wd.ref" "$DDIO" <<'PY'
import errno, os, subprocess, sys
d, ref, tool = sys.argv[1], open(sys.argv[2], "rb").read(), sys.argv[3]
def fail(why):
    sys.exit("deferred: " + why)
# open, unlink through this mount, read: the bytes are still there
fd = os.open(d + "/a", os.O_RDONLY)
os.unlink(d + "/a")
if os.path.exists(d + "/a"): fail("a: still there after unlink")
if os.pread(fd, len(ref), 0) != ref: fail("a: read after unlink: not the bytes")
os.close(fd)
# open for writing, rename through this mount, write: the renamed file has it
fd = os.open(d + "/b", os.O_RDWR)
os.rename(d + "/b", d + "/b2")
os.pwrite(fd, b"XYZ", 10)
os.close(fd)
want = ref[:10] + b"XYZ" + ref[13:]
if open(d + "/b2", "rb").read() != want: fail("b2: the write through the old handle is not in it")
if os.path.exists(d + "/b"): fail("b: a write recreated the old name")
# open, chmod 000 through this mount, read: the handle keeps its access
fd = os.open(d + "/c", os.O_RDONLY)
os.chmod(d + "/c", 0)
if os.pread(fd, 100, 0) != ref[:100]: fail("c: read after chmod 000")
os.close(fd)
os.chmod(d + "/c", 0o644)
# open, removed by another client before the first read: ESTALE
fd = os.open(d + "/d", os.O_RDONLY)
subprocess.run([tool, "rm", "ddio:/wd/d"], check=True)
try:
    os.pread(fd, 100, 0)
    fail("d: read of a file another client removed since the open succeeded")
except OSError as e:
    if e.errno != errno.ESTALE: fail("d: %s, not ESTALE" % e)
os.close(fd)
PY
  # opens and closes that move no byte ask no server
  opens0=$(reqs OPEN)
  python3 -c 'import os, sys
for i in range(50): os.close(os.open(sys.argv[1], os.O_RDONLY)); os.close(os.open(sys.argv[1], os.O_RDWR))' "$M/wd/c"
  opens1=$(reqs OPEN)
  [ $((opens1 - opens0)) = 0 ] || die "100 opens that moved no byte sent $((opens1 - opens0)) OPENs"
  echo "deferred opens: 100 opens and closes, $((opens1 - opens0)) OPENs" >&2
  rm -f "$M/wd/b2" "$M/wd/c"; rmdir "$M/wd"
}

if [ "${SET:-bounded}" = watched ]; then
  check watched/tool watched_tool
  check watched/mount watched_mount
  check watched/recreate watched_recreate
  check watched/cached watched_cached
  check watched/deferred watched_deferred
else
  check own own_changes
  check others/tool others_tool
  check others/mount others_mount
  check others/open-writer open_writer
  if [ "$BOUND" = 0 ]; then echo "SKIP: mount/coherence/cached: nothing is cached with a bound of 0"
  else check cached cached; fi
fi
