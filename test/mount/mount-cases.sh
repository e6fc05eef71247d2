#!/usr/bin/env bash
# The cases of run-mount-tests.sh, one group per call, run INSIDE a
# `ddio-run --mount $M` session (DDIO_SERVERS set, the namespace on $M).
# Prints "PASS: mount/NAME" or "FAIL: mount/NAME: why" per case; every case
# runs under a time limit. Environment from the harness: M (mount point),
# T (scratch dir), TOP (build tree), TMOUNT (t_mount), TH5 (t_h5), PAT
# (ddio-patterns), FILECMP (filecmp), XPORT (the transport the mount's data
# must take: ucx or tcp), CASE_LIMIT (seconds), BOUND (the mount's
# DDIO_ATTR_TIMEOUT, seconds).
# usage: mount-cases.sh posix|mpi|errors
set -u
group=${1:?usage: mount-cases.sh posix|mpi|errors}
export LC_ALL=C

# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
T_TMP=$T   # the cases' logs
# check NAME FUNCTION: run a case function (errexit on) under the time limit;
# a failure's reason carries the last 8 lines of its output
check() {
  t_step -t "${CASE_LIMIT:-120}" -w 8 "mount/$1" bash -c "set -eu -o pipefail; $(declare -f); $2"
}
die() { echo "$*" >&2; exit 1; }
# sum of a counter over every server
stats_sum() { "$TOP/tools/ddio" stats "$1" | awk -v k="$1" '$2==k{s+=$3} END{print s+0}'; }

# ---- POSIX tools on the mount ------------------------------------------------------
posix_mkdir_ls() {
  mkdir -p "$M/p/a/b"
  [ "$(ls "$M/p/a")" = b ] || die "ls: $(ls -la "$M/p/a")"
  [ "$(stat -c %F "$M/p/a/b")" = directory ] || die "not a directory"
}
posix_cp_in() {   # 3 MB over 2 servers, 1 MiB stripes: every server holds some
  cp "$T/rand" "$M/p/a/rand"
  cmp "$T/rand" "$M/p/a/rand"
  [ "$(stat -c %s "$M/p/a/rand")" = 3000017 ] || die "size $(stat -c %s "$M/p/a/rand")"
}
posix_cp_out() {
  cp "$M/p/a/rand" "$T/rand.out"
  cmp "$T/rand" "$T/rand.out"
  cat "$M/p/a/rand" | cmp - "$T/rand"
}
posix_ls_l() {
  ls -l "$M/p/a" | grep -q " 3000017 .* rand$" || die "ls -l: $(ls -l "$M/p/a")"
}
posix_mv() {
  mv "$M/p/a/rand" "$M/p/a/b/moved"
  [ ! -e "$M/p/a/rand" ] || die "old name still there"
  cmp "$T/rand" "$M/p/a/b/moved"
  mv "$M/p/a/b" "$M/p/c"                  # a directory with a file in it
  cmp "$T/rand" "$M/p/c/moved"
  [ "$(ls "$M/p/a")" = "" ] || die "p/a not empty: $(ls "$M/p/a")"
}
posix_truncate() {
  cp "$T/rand" "$T/local"
  truncate -s 1000 "$M/p/c/moved"; truncate -s 1000 "$T/local"
  cmp "$T/local" "$M/p/c/moved"
  truncate -s 5000000 "$M/p/c/moved"; truncate -s 5000000 "$T/local"   # grows with zeros
  cmp "$T/local" "$M/p/c/moved"
}
posix_overwrite() {   # writes at offsets inside, across stripes, and appends
  cp "$T/rand" "$M/p/w"; cp "$T/rand" "$T/w"
  for off in 0 1048570 2097151 2999999; do
    printf 'ddio-%s' "$off" | dd of="$M/p/w" bs=1 seek="$off" conv=notrunc status=none
    printf 'ddio-%s' "$off" | dd of="$T/w" bs=1 seek="$off" conv=notrunc status=none
  done
  echo appended >> "$M/p/w"; echo appended >> "$T/w"
  cmp "$T/w" "$M/p/w"
}
posix_python() {
  python3 - "$M/p/w" "$T/w" <<'PY'
import hashlib, os, sys
a, b = sys.argv[1], sys.argv[2]
with open(a, "rb") as f, open(b, "rb") as g:
    assert hashlib.sha256(f.read()).digest() == hashlib.sha256(g.read()).digest(), "sha256 differs"
    f.seek(1048570); g.seek(1048570)
    assert f.read(4096) == g.read(4096), "seek+read differs"
assert os.path.getsize(a) == os.path.getsize(b)
assert sorted(os.listdir(os.path.dirname(a))) == ["a", "c", "w"], os.listdir(os.path.dirname(a))
PY
}
posix_xattr() {
  [ "$(getfattr --only-values -n user.ddio.servers "$M/p/w")" = "$DDIO_SERVERS" ] || die "servers xattr"
  [ "$(getfattr --only-values -n user.ddio.path "$M/p/c/moved")" = /p/c/moved ] || die "path xattr"
  [ "$(getfattr --only-values -n user.ddio.path "$M")" = / ] || die "root path xattr"
}
posix_transport() {   # the mount's data went the way DDIO_TRANSPORT says ($XPORT)
  local p0 g0 p1 g1
  p0=$(stats_sum ucx_put_bytes); g0=$(stats_sum ucx_get_bytes)
  dd if="$T/rand" of="$M/p/x" bs=1M status=none
  dd if="$M/p/x" bs=1M status=none | cmp - "$T/rand"
  p1=$(stats_sum ucx_put_bytes); g1=$(stats_sum ucx_get_bytes)
  # reads and writes: on this host in the servers' datafiles (same-host
  # I/O), or with DDIO_LOCAL_READ=0 / DDIO_LOCAL_WRITE=0 (the second pass)
  # by the transport
  local p_want=2000000 g_want=2000000
  [ "${DDIO_LOCAL_READ:-1}" = 0 ] || p_want=0
  [ "${DDIO_LOCAL_WRITE:-1}" = 0 ] || g_want=0
  if [ "$XPORT" = ucx ]; then   # FUSE's requests (128 KiB) reach DDIO_UCX_MIN_STREAM
    [ $((p1 - p0)) -ge $p_want ] && [ $((g1 - g0)) -ge $g_want ] \
      || die "ucx: only $((p1 - p0)) bytes read and $((g1 - g0)) written by UCX of 3000017"
  else
    [ "$p1" = "$p0" ] && [ "$g1" = "$g0" ] || die "tcp, yet $((p1 - p0)) / $((g1 - g0)) bytes by UCX"
  fi
  if [ "${DDIO_LOCAL_READ:-1}" != 0 ]; then
    [ "$p1" = "$p0" ] && [ "$(stats_sum local_handovers)" -gt 0 ] \
      || die "same-host reads: $((p1 - p0)) bytes read by UCX, $(stats_sum local_handovers) handovers"
  fi
  rm "$M/p/x"
}
posix_sync_counted() {   # a file held open shows in the counters at each fsync
  python3 - "$M/p/s" "$T/rand" "${DDIO_LOCAL_WRITE:-1}" <<'PY'
import os, subprocess, sys
path, src, lw = sys.argv[1], sys.argv[2], sys.argv[3] != "0"
keys = ["local_write_bytes", "bytes_written"]
def sums():
    out = subprocess.run([os.environ["TOP"] + "/tools/ddio", "stats"] + keys, check=True,
                         capture_output=True, text=True).stdout.split("\n")
    return {k: sum(int(l.split()[2]) for l in out if l.split()[1:2] == [k]) for k in keys}
data = open(src, "rb").read()
fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
try:
    b = sums()
    os.write(fd, data)
    os.fsync(fd)             # the same-host writes are reported with the SYNC
    a = sums()
    d = {k: a[k] - b[k] for k in keys}
    if lw:
        assert d["local_write_bytes"] >= len(data), d
    else:
        assert d["bytes_written"] >= len(data) and d["local_write_bytes"] == 0, d
finally:
    os.close(fd)
    os.unlink(path)
PY
}
posix_rm() {
  rm "$M/p/w" "$M/p/c/moved"
  rmdir "$M/p/c" "$M/p/a" "$M/p"
  [ -z "$(ls -A "$M")" ] || die "mount not empty: $(ls -A "$M")"
}

# ---- MPI-IO on plain paths under the mount ------------------------------------------------
# DDIO_SERVERS is removed for the MPI runs on plain paths: the servers must
# come from the mount (user.ddio.servers), with no prefix and no variable.
mpi_plain_coll() {
  mkdir -p "$M/mpi" "$T/ufs"
  local before; before=$(stats_sum coll_xfers)
  env -u DDIO_SERVERS mpiexec -n 4 "$PAT" -q -r 8192 -m 4 -p wc,wbc,rc,rcc "$M/mpi/pat.out"
  # the disk-directed collective ran on EVERY server
  "$TOP/tools/ddio" stats coll_xfers | awk '$3 == 0 {print "no collective on " $1; bad=1} END {exit bad}'
  [ "$(stats_sum coll_xfers)" -gt "$before" ] || die "coll_xfers did not grow"
  mpiexec -n 4 "$PAT" -q -r 8192 -m 4 -p wc,wbc,rc,rcc "ufs:$T/ufs/pat.out"
  cmp "$M/mpi/pat.out" "$T/ufs/pat.out"
}
mpi_nonblock() {   # every nonblocking form on a plain path: the progress thread opens it too
  mkdir -p "$M/mpi" "$T/ufs"
  local nb="$TOP/test/mpi/bin/t_nonblock" before; before=$(stats_sum xfers)
  env -u DDIO_SERVERS mpiexec -n 2 "$nb" "$M/mpi/nb.out"
  [ "$(stats_sum xfers)" -gt "$before" ] || die "the plain-path calls did not reach the servers"
  mpiexec -n 2 "$nb" "ufs:$T/ufs/nb.out"
  cmp "$M/mpi/nb.out" "$T/ufs/nb.out" && cmp "$M/mpi/nb.out.2" "$T/ufs/nb.out.2"
}
mpi_relative() {   # a relative name under the mount's working directory
  mkdir -p "$M/mpi/sub" "$T/ufs"
  (cd "$M/mpi/sub" && env -u DDIO_SERVERS mpiexec -n 2 "$PAT" -q -r 8 -m 1 -p wc,wbc rel.out)
  [ -e "$M/mpi/sub/rel.out" ] || die "rel.out not in the namespace at /mpi/sub"
  mpiexec -n 2 "$PAT" -q -r 8 -m 1 -p wc,wbc "ufs:$T/ufs/rel.out"
  cmp "$M/mpi/sub/rel.out" "$T/ufs/rel.out"
}
mpi_read_cp() {   # cp into the mount, MPI-IO reads it by plain path and by ddio:
  mkdir -p "$M/mpi"
  cp "$T/rand" "$M/mpi/cp.bin"
  local before h0; before=$(stats_sum xfers); h0=$(stats_sum local_handovers)
  env -u DDIO_SERVERS mpiexec -n 1 "$FILECMP" "$M/mpi/cp.bin" "ufs:$T/rand"
  # through the servers, or (same-host reads) from the files they handed over
  [ "$(stats_sum xfers)" -gt "$before" ] || [ "$(stats_sum local_handovers)" -gt "$h0" ] \
    || die "the plain-path read did not reach the servers"
  mpiexec -n 1 "$FILECMP" "ddio:/mpi/cp.bin" "ufs:$T/rand"
}
mpi_delete() {
  mkdir -p "$M/mpi"
  cp "$T/rand" "$M/mpi/del.bin"
  stat "$M/mpi/del.bin" >/dev/null                 # kept by the mount and the kernel
  env -u DDIO_SERVERS mpiexec -n 1 "$TMOUNT" delete "$M/mpi/del.bin"
  # another client's removal: the servers told the mount before it returned
  [ ! -e "$M/mpi/del.bin" ] || die "still there right after MPI_File_delete"
  env -u DDIO_SERVERS mpiexec -n 1 "$TMOUNT" missing "$M/mpi/del.bin"
  printf again > "$M/mpi/del.bin" || die "the name MPI deleted cannot be created through the mount"
  [ "$(cat "$M/mpi/del.bin")" = again ] || die "bytes: $(cat "$M/mpi/del.bin")"
  rm "$M/mpi/del.bin"
}
mpi_force() {   # ROMIO_FSTYPE_FORCE=ddio: on a plain name outside any mount
  mkdir -p "$T/ufs"
  ROMIO_FSTYPE_FORCE=ddio: mpiexec -n 2 "$PAT" -q -r 8 -m 1 -p wc,wbc /forced.out
  [ -e "$T/ufs/rel.out" ] || mpiexec -n 2 "$PAT" -q -r 8 -m 1 -p wc,wbc "ufs:$T/ufs/rel.out"
  cmp "$M/forced.out" "$T/ufs/rel.out"
}
# an MPI-IO write is another client's change: once the job closed the file
# the mount shows the new size at once (the servers tell it at the close:
# docs/SEMANTICS.md "The mount"), and an existing file's new bytes too (no
# page cache)
mpi_posix_sees_mpi() {
  mkdir -p "$M/mpi" "$T/ufs"
  [ ! -e "$M/mpi/fresh.out" ] || die "fresh.out exists"    # a negative lookup first
  local want mib
  for mib in 2 3; do                                       # created, then grown
    mpiexec -n 2 "$PAT" -q -r 8 -m $mib -p wc "ddio:/mpi/fresh.out"
    mpiexec -n 2 "$PAT" -q -r 8 -m $mib -p wc "ufs:$T/ufs/fresh.out"
    want=$(stat -c %s "$T/ufs/fresh.out")
    [ "$(stat -c %s "$M/mpi/fresh.out")" = "$want" ] \
      || die "size $(stat -c %s "$M/mpi/fresh.out") right after the job, not $want"
    cmp "$M/mpi/fresh.out" "$T/ufs/fresh.out"
  done
}
mpi_hdf5() {   # parallel HDF5 on a plain path, then h5dump through the mount
  mkdir -p "$M/h5" "$T/ufs"
  local before; before=$(stats_sum coll_xfers)
  # (through the servers: a collective's small plain-range parts are
  # same-host writes, which the servers' coll_xfers would not count)
  env -u DDIO_SERVERS DDIO_LOCAL_WRITE=0 mpiexec -n 4 "$TH5" "$M/h5/grid.h5"
  [ "$(stats_sum coll_xfers)" -gt "$before" ] || die "HDF5's collective write was not disk-directed"
  mpiexec -n 4 "$TH5" "$T/ufs/grid.h5"
  # the same dump but for the file name in its first line (HDF5 stores
  # object times, so the bytes differ)
  diff <(h5dump "$M/h5/grid.h5" | tail -n +2) <(h5dump "$T/ufs/grid.h5" | tail -n +2)
  h5dump -d /grid -s "255,990" -c "1,10" "$M/h5/grid.h5" | grep -q "255999" || die "last values missing"
}

# ---- errors -------------------------------------------------------------------------
errors_errno() {
  python3 - "$M" <<'PY'
import errno, os, sys
m = sys.argv[1]
def expect(code, fn, *args):
    try:
        fn(*args)
    except OSError as e:
        assert e.errno == code, "%s%r: %s, expected %s" % (fn.__name__, args, errno.errorcode.get(e.errno), errno.errorcode[code])
        return
    raise AssertionError("%s%r succeeded, expected %s" % (fn.__name__, args, errno.errorcode[code]))
os.mkdir(m + "/e")
open(m + "/e/f", "wb").write(b"x" * 10)
expect(errno.ENOENT, open, m + "/nope")
expect(errno.ENOENT, os.stat, m + "/e/nope")
expect(errno.ENOENT, os.rmdir, m + "/nodir")
expect(errno.ENOENT, os.unlink, m + "/e/nope")
expect(errno.ENOENT, os.rename, m + "/e/nope", m + "/e/x")
expect(errno.ENOTEMPTY, os.rmdir, m + "/e")
expect(errno.EEXIST, os.mkdir, m + "/e")
expect(errno.EEXIST, os.open, m + "/e/f", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
expect(errno.ENOTDIR, os.listdir, m + "/e/f")
expect(errno.EISDIR, open, m + "/e", "wb")
os.unlink(m + "/e/f"); os.rmdir(m + "/e")
PY
}
# the pid of the server listening on the i-th port of DDIO_SERVERS
server_pid() {
  local port; port=$(echo "$DDIO_SERVERS" | tr ',' '\n' | sed -n "$1p" | sed 's/.*://')
  ss -ltnpH "sport = :$port" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1
}
# SIGSTOP, then wait until every thread of $1 has stopped: kill() only flags
# one thread, which stops the others when it next runs, so on a busy machine
# another thread could still answer a request sent right after kill returns
stop_server() {
  kill -STOP "$1"
  local i t s all
  for i in $(seq 500); do
    all=1
    for t in /proc/"$1"/task/*/stat; do
      s=$(cat "$t" 2>/dev/null) || continue; s=${s##*) }
      case ${s%% *} in T|t) ;; *) all=0 ;; esac
    done
    [ $all = 1 ] && return 0
    sleep 0.01
  done
  kill -CONT "$1"; die "server $1 not stopped 5 s after SIGSTOP"
}
# a stopped server: EIO within the deadline, then recovery. Twice: with the
# name's attributes kept (the open asks the servers), and past the bound,
# where the kernel looks the name up, and after an error looks it up again
# (two stats, on two of the mount's clients: two timeouts at most; each
# stat waiting the timeout at every step of its dial made it 18 s, CI)
errors_hung_server() {
  local pid; pid=$(server_pid 2); [ -n "$pid" ] || die "no pid for server 2"
  local pause rc took t0
  for pause in 0 "$BOUND"; do
    echo data > "$M/hung"
    sleep "$pause"; sleep 0.5
    stop_server "$pid"
    t0=$(date +%s%N) rc=0
    cat "$M/hung" >/dev/null 2>"$T/hung.err" || rc=$?
    took=$(( ($(date +%s%N) - t0) / 1000000 ))
    kill -CONT "$pid"
    [ $rc -ne 0 ] || die "cat of a file on a stopped server succeeded"
    grep -q "Input/output error" "$T/hung.err" || die "not EIO: $(cat "$T/hung.err")"
    [ $took -le $((2 * DDIO_TIMEOUT * 1000 + 3000)) ] \
      || die "took ${took} ms after ${pause} s (two timeouts at most: DDIO_TIMEOUT=${DDIO_TIMEOUT}s)"
    echo "EIO after ${took} ms, attributes ${pause} s old (DDIO_TIMEOUT=${DDIO_TIMEOUT}s)" >&2
    [ "$(cat "$M/hung")" = data ] || die "no recovery after SIGCONT"
    echo "$pause: ${took} ms" >>"$T/hung.times"
  done
}
errors_reopen() {   # a file open across a lost connection: EIO, then it works again (also by UCX)
  head -c 3000000 /dev/urandom > "$T/ro"; cp "$T/ro" "$M/ro"
  local pid; pid=$(server_pid 2); [ -n "$pid" ] || die "no pid for server 2"
  python3 - "$M/ro" "$T/ro" "$pid" "$DDIO_TIMEOUT" <<'PY'
import errno, os, signal, subprocess, sys
path, ref, pid, timeout = sys.argv[1], open(sys.argv[2], "rb").read(), int(sys.argv[3]), int(sys.argv[4])
fd = os.open(path, os.O_RDWR)
def stopped(what, fn, *args):   # fn fails with EIO while server 2 is stopped
    try:   # the shell's stop_server: SIGSTOP, then every thread stopped
        subprocess.run(["bash", "-c", 'stop_server "$0"', str(pid)], check=True)
        fn(*args)
        raise AssertionError("%s with server 2 stopped succeeded" % what)
    except OSError as e:
        assert e.errno == errno.EIO, e
    finally:
        os.kill(pid, signal.SIGCONT)
# server 2's stripe, with a small transfer (TCP) and a big one (by UCX where
# XPORT is ucx); the same descriptor works again after each failure (its
# handle is renewed on a new connection)
for n in (4096, 256 << 10):
    want = ref[1 << 20:(1 << 20) + n]
    assert os.pread(fd, n, 1 << 20) == want, "read %d" % n
    stopped("read of %d" % n, os.pread, fd, n, 1 << 20)
    assert os.pread(fd, n, 1 << 20) == want, "read %d after recovery" % n
    # the same bytes: whether the failed write reached the disk does not matter
    stopped("write of %d" % n, os.pwrite, fd, want, 1 << 20)
    assert os.pwrite(fd, want, 1 << 20) == n, "write %d after recovery" % n
os.pwrite(fd, b"after", 1 << 20)
assert os.fstat(fd).st_size == len(ref)
os.fsync(fd)
os.close(fd)
data = open(path, "rb").read()
assert data == ref[:1 << 20] + b"after" + ref[(1 << 20) + 5:], "content after recovery"
PY
}
errors_dead_server() {   # a killed server: EIO once recovery (DDIO_RECOVER_TIMEOUT) gives up, no hang
  echo data > "$M/dead"
  local pid; pid=$(server_pid 2); [ -n "$pid" ] || die "no pid for server 2"
  kill -KILL "$pid"
  sleep "${BOUND:-1}"; sleep 0.1     # what the mount keeps (its bound) answers without the servers
  local t0=$SECONDS rc=0
  stat "$M/dead" >/dev/null 2>"$T/dead.err" || rc=$?
  [ $rc -ne 0 ] || die "stat with a dead server succeeded"
  grep -q "Input/output error" "$T/dead.err" || die "not EIO: $(cat "$T/dead.err")"
  [ $((SECONDS - t0)) -le 5 ] || die "took $((SECONDS - t0))s"
}

export M T TOP TMOUNT TH5 PAT FILECMP DDIO_SERVERS XPORT BOUND
export -f die stop_server   # errors_reopen's Python calls stop_server
case "$group" in
  posix)
    for c in mkdir_ls cp_in cp_out ls_l mv truncate overwrite python xattr transport sync_counted rm; do
      check "posix/$c" "posix_$c"
    done ;;
  mpi)
    for c in plain_coll relative nonblock read_cp delete force posix_sees_mpi hdf5; do check "mpi/$c" "mpi_$c"; done ;;
  errors)
    for c in errno hung_server reopen dead_server; do check "errors/$c" "errors_$c"; done ;;
  *) echo "mount-cases: unknown group $group" >&2; exit 2 ;;
esac
