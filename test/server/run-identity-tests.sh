#!/usr/bin/env bash
# Identity (--auth munge) against live ddio-servers: a private munged per
# run (its own key from mungekey, its own socket; no systemd), servers that
# prove every connection's user with it, and what must be refused:
#   - a server that cannot reach munged does not start; --auth munge with a
#     secret file is refused;
#   - tools/ddio as root and as nobody (setpriv): the server logs the uid
#     and gid munged vouched for, and the bytes copied in come back;
#   - owners, modes and POSIX permissions for users A, B, C and an admin,
#     supplementary groups from the server's own name service (nss_wrapper),
#     the same-host shortcut checked, the mount acting for each caller;
#   - a client without munged fails at once, with the reason;
#   - test/server/munge_probe's forged (one character changed), replayed,
#     expired (1 s time-to-live), other-connection and shared-secret AUTHs
#     are refused with munged's reason, and logged;
#   - a credential made on another host: the probe in a network namespace
#     (10.215.X.2) with the host's credential is refused ("encoded on ...,
#     connection from ..."), and with one from a munged of that namespace
#     (same key, --origin its address) accepted;
#   - an MPI job under ddio-run --auth munge (its own munged when the
#     system has none), its file compared with the same job's on ufs:.
# Ends with "identity: N passed, N failed".
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init identity
PROBE=$BUILD/test/server/munge_probe
TOOL=$T_DDIO
T_LIMIT=${DDIO_IDENTITY_TEST_TIMEOUT:-120}
unset DDIO_SECRET_FILE DDIO_CONFIG DDIO_MUNGE_SOCKET
W=$T_TMP
chmod 711 "$W"                     # other users reach the munge socket inside
O=$W/out; mkdir -p "$O"; chmod 1777 "$O"   # where every user writes its copies
for p in "$T_SERVER_BIN" "$PROBE" "$TOOL"; do [ -x "$p" ] || t_unusable identity/build "$p missing: run make"; done
for p in munged mungekey munge unmunge setpriv; do
  command -v "$p" >/dev/null || t_unusable identity/tools "$p not found (scripts/install-deps.sh installs munge)"
done

# munged_start DIR [NETNS ORIGIN]: a munged on DIR/sock with the run's key
# (in namespace NETNS, naming ORIGIN as its host); waits until it answers
MUNGEDS=()
munged_start() {
  local d=$1 ns=() origin=()
  [ $# -ge 3 ] && ns=(ip netns exec "$2") origin=(--origin="$3")
  mkdir -p "$d" && chmod 755 "$d"
  "${ns[@]}" munged -F -f -S "$d/sock" --key-file="$W/munge.key" --pid-file="$d/pid" \
    --seed-file="$d/seed" --log-file="$d/log" "${origin[@]}" 2>>"$d/log" &
  MUNGEDS+=($!)
  t_wait_for -p $! 10 sh -c 'munge -n -S "$1" 2>/dev/null | unmunge -S "$1" >/dev/null 2>&1' _ "$d/sock"
}
stop_mungeds() { local p; for p in "${MUNGEDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
t_defer stop_mungeds
mungekey -c -k "$W/munge.key" || t_unusable identity/munge "mungekey failed"
M=$W/munged
munged_start "$M" || t_unusable identity/munge "munged did not start: $(tail -n 3 "$M/log" 2>/dev/null)"
export DDIO_MUNGE_SOCKET=$M/sock

# ---- the server's own checks ---------------------------------------------------------------
mkdir -p "$W/root"
t_expect_fail -x 1 identity/server-needs-munged "munged does not answer" \
  "$T_SERVER_BIN" --listen 127.0.0.1:auto --root "$W/root" --auth munge --munge-socket "$W/none"
t_secret "$W/key"
t_expect_fail -x 2 identity/munge-or-secret "--auth munge excludes --secret-file" \
  "$T_SERVER_BIN" --listen 127.0.0.1:auto --root "$W/root" --auth munge --secret-file "$W/key"
t_expect_fail -x 1 identity/server-needs-owner-caps "or with CAP_CHOWN, CAP_DAC_OVERRIDE" \
  setpriv --reuid=65534 --regid=65534 --clear-groups \
  "$T_SERVER_BIN" --listen 127.0.0.1:auto --root "$W/root" --auth munge --munge-socket "$M/sock"
t_expect_fail -x 2 identity/bad-mode "is not one of secret|munge|none" \
  "$T_SERVER_BIN" --listen 127.0.0.1:auto --root "$W/root" --auth kerberos

t_mpi_env 30
ADMIN=4200
t_server_start "$W/srv" --root "$W/root" --auth munge --munge-socket "$M/sock" --admin-uid $ADMIN \
  --mount-hosts 127.0.0.1 \
  || t_unusable identity/server "$T_SRV_WHY"
SRV=$T_SRV_ADDR SRVLOG=$T_SRV_LOG SRVPID=$T_SRV_PID

# as USER (uid = gid = USER, no other groups); as_in USER GID: primary group GID
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
as_in() { local u=$1 g=$2; shift 2; setpriv --reuid="$u" --regid="$g" --clear-groups "$@"; }

# ---- who is calling, as munged says ---------------------------------------------------------
head -c 300000 /dev/urandom > "$W/data"
chmod 644 "$W/data"
# the namespace's root as /tmp: by the admin (root is squashed)
t_expect_fail identity/root-squashed-chmod "permission denied" "$TOOL" -s "$SRV" chmod 1777 /
t_step identity/admin-chmod-root as $ADMIN "$TOOL" -s "$SRV" chmod 1777 /
copy_back() {   # copy_back USER...: cp in and out as that user, compare
  local as=("$@")
  "${as[@]}" "$TOOL" -s "$SRV" cp "$W/data" "ddio:/$1.bin" || t_why "cp in failed" || return
  "${as[@]}" "$TOOL" -s "$SRV" cp "ddio:/$1.bin" "$O/back.$1" || t_why "cp out failed" || return
  cmp "$W/data" "$O/back.$1" || t_why "the bytes differ" || return
}
t_case identity/root-cp "300000 bytes in and back" copy_back env
grep -q "authenticated as uid 65534 gid 65534 (MUNGE), root squashed" "$SRVLOG" \
  && t_pass identity/root-logged-squashed \
  || t_fail identity/root-logged-squashed "no 'uid 65534 ... root squashed' in the server's log"
t_case identity/nobody-cp "as uid 65534" copy_back setpriv --reuid=65534 --regid=65534 --clear-groups
grep -q "authenticated as uid 65534 gid 65534 (MUNGE)" "$SRVLOG" && t_pass identity/nobody-logged \
  || t_fail identity/nobody-logged "no 'authenticated as uid 65534 gid 65534' in the server's log"
t_expect_fail identity/client-without-munged "authenticates users with MUNGE" \
  env DDIO_MUNGE_SOCKET="$W/none" "$TOOL" -s "$SRV" -t 5 ls /

# ---- ownership and permissions: users A, B, C (C in A's group), the admin ---------------
A=4201 B=4202 C=4203
perm_owner() {   # A's file, made with umask 077: owner A, mode 0600
  as $A sh -c 'umask 077; exec "$@"' _ "$TOOL" -s "$SRV" cp "$W/data" ddio:/a.bin >/dev/null \
    || t_why "A's cp failed" || return
  "$TOOL" -s "$SRV" stat /a.bin >"$W/st" || t_why "stat failed" || return
  grep -q "^mode: 0600" "$W/st" && grep -q "^owner: $A$" "$W/st" && grep -q "^group: $A$" "$W/st" \
    || t_why "$(tr '\n' ' ' <"$W/st")"
}
t_case identity/perm-owner-mode "owner $A, mode 0600 from the umask" perm_owner
t_expect_fail identity/perm-b-read "permission denied: /a.bin: uid $B may not read" \
  as $B "$TOOL" -s "$SRV" cp ddio:/a.bin "$O/b.out"
handovers() { "$TOOL" -s "$SRV" stats local_handovers | awk '{ s += $3 } END { print s + 0 }'; }
shortcut() {     # the same-host shortcut hands descriptors only after the check
  local h0 h1 h2
  h0=$(handovers)
  ! as $B "$TOOL" -s "$SRV" cp ddio:/a.bin "$O/b.sc" >/dev/null 2>&1 || t_why "B read A's file" || return
  h1=$(handovers)
  [ "$h1" = "$h0" ] || t_why "B's refused open was handed $((h1 - h0)) descriptor sets" || return
  as $A "$TOOL" -s "$SRV" cp ddio:/a.bin "$O/a.sc" >/dev/null || t_why "A's read failed" || return
  h2=$(handovers)
  [ "$h2" -gt "$h1" ] || t_why "A's read took no shortcut: the test shows nothing" || return
  cmp -s "$W/data" "$O/a.sc" || t_why "A read other bytes"
  T_NOTE="B: none handed; A: $((h2 - h1)) handed, bytes equal"
}
t_case identity/shortcut-checked "" shortcut
t_expect_fail identity/perm-b-overwrite "may not read and write" \
  as $B "$TOOL" -s "$SRV" cp "$W/data" ddio:/a.bin
t_expect_fail identity/perm-b-remove-sticky "from a sticky directory" as $B "$TOOL" -s "$SRV" rm /a.bin
t_expect_fail identity/perm-b-chmod "another user's entry" as $B "$TOOL" -s "$SRV" chmod 0666 /a.bin
t_expect_fail identity/perm-b-chown "another user's entry" as $B "$TOOL" -s "$SRV" chown $B /a.bin
t_expect_fail identity/perm-root-squashed-read "uid 65534 may not read" \
  "$TOOL" -s "$SRV" cp ddio:/a.bin "$O/root.out"
t_expect_fail identity/perm-a-give-away "give it away" as $A "$TOOL" -s "$SRV" chown $B /a.bin
# an MPI job of squashed root: MPI_ERR_ACCESS on every rank, with the reason
t_step identity/perm-mpi-access env DDIO_SERVERS="$SRV" mpiexec -n 2 \
  "$BUILD/test/mpi/bin/t_badname" ddio:/a.bin r ACCESS "uid 65534 may not read" 10
perm_shared() {   # A: chmod 644: B reads the bytes, still may not write
  as $A "$TOOL" -s "$SRV" chmod 644 /a.bin || t_why "A's chmod failed" || return
  as $B "$TOOL" -s "$SRV" cp ddio:/a.bin "$O/b.out" >/dev/null || t_why "B's read failed" || return
  cmp -s "$W/data" "$O/b.out" || t_why "B read other bytes" || return
  ! as $B "$TOOL" -s "$SRV" cp "$W/data" ddio:/a.bin >/dev/null 2>&1 || t_why "B wrote A's 0644 file"
}
t_case identity/perm-chmod-644 "B reads, may not write" perm_shared
perm_group() {   # 0640: C (A's group) reads, B does not
  as $A "$TOOL" -s "$SRV" chmod 640 /a.bin || t_why "A's chmod failed" || return
  as_in $C $A "$TOOL" -s "$SRV" cp ddio:/a.bin "$O/c.out" >/dev/null || t_why "C (group $A) could not read" || return
  cmp -s "$W/data" "$O/c.out" || t_why "C read other bytes" || return
  ! as $B "$TOOL" -s "$SRV" cp ddio:/a.bin "$O/b2.out" >/dev/null 2>&1 || t_why "B (other) read a 0640 file"
}
t_case identity/perm-group "group $A reads a 0640 file, others do not" perm_group
perm_dir() {     # a 0700 directory: B may not look inside
  as $A "$TOOL" -s "$SRV" mkdir /priv || t_why "A's mkdir failed" || return
  as $A "$TOOL" -s "$SRV" cp "$W/data" ddio:/priv/x >/dev/null || t_why "A's cp failed" || return
  as $A "$TOOL" -s "$SRV" chmod 700 /priv || t_why "A's chmod failed" || return
  as $B "$TOOL" -s "$SRV" stat /priv/x >"$O/bst" 2>&1 && t_why "B stats /priv/x" && return 1
  grep -q "uid $B may not search this directory" "$O/bst" || t_why "$(cat "$O/bst")" || return
  ! as $B "$TOOL" -s "$SRV" ls /priv >/dev/null 2>&1 || t_why "B lists /priv"
}
t_case identity/perm-dir-search "B may not stat /priv/x nor list /priv (0700)" perm_dir
perm_sticky() {  # in a 1777 directory B removes its own file, A (not the dir's owner) does not
  as $B "$TOOL" -s "$SRV" cp "$W/data" ddio:/b.bin >/dev/null || t_why "B's cp failed" || return
  ! as $A "$TOOL" -s "$SRV" rm /b.bin >/dev/null 2>&1 || t_why "A removed B's file" || return
  as $B "$TOOL" -s "$SRV" rm /b.bin || t_why "B could not remove its own file"
}
t_case identity/perm-sticky "only the owner removes in /" perm_sticky
perm_admin() {   # the admin gives A's file to B, who may then remove it
  as $ADMIN "$TOOL" -s "$SRV" chown $B:$B /a.bin || t_why "admin chown failed" || return
  "$TOOL" -s "$SRV" stat /a.bin | grep -q "^owner: $B$" || t_why "owner not $B" || return
  as $B "$TOOL" -s "$SRV" rm /a.bin || t_why "B could not remove its file"
}
t_case identity/perm-admin-chown "admin uid $ADMIN chowns; the new owner removes" perm_admin

audit() {        # every refusal counted (ddio status) and logged with the connection
  "$TOOL" -s "$SRV" status >"$O/status" || t_why "status failed" || return
  local a d; read -r a d < <(sed -n 's/^  refused: \([0-9]*\) authentications, \([0-9]*\) requests.*/\1 \2/p' "$O/status")
  [ "${d:-0}" -ge 10 ] || t_why "status: ${d:-no} permission refusals, wanted >= 10: $(head -3 "$O/status" | tr '\n' ' ')" || return
  grep -q "connection [0-9]* from .*: permission denied: /a.bin: uid $B may not read" "$SRVLOG" \
    || t_why "no logged refusal of uid $B"
  T_NOTE="$d refusals counted, logged with peer and uid"
}
t_case identity/audit "" audit

# ---- supplementary groups come from the server's name service ------------------------------
# A server whose passwd and group databases (nss_wrapper) put B in group
# proj (4300): B, whose process claims no such group (setpriv
# --clear-groups), reads a proj 0640 file; C, not in proj, does not.
# (Without DEEPBIND, which the sanitizer runtime refuses; the link-order
# check off, as nss_wrapper is preloaded before it.)
NW=$W/nss; mkdir -p "$NW"
printf 'usera:x:%s:%s::/tmp:/bin/sh\nuserb:x:%s:%s::/tmp:/bin/sh\nuserc:x:%s:%s::/tmp:/bin/sh\n' \
  $A $A $B $B $C $C >"$NW/passwd"
printf 'usera:x:%s:\nuserb:x:%s:\nuserc:x:%s:\nproj:x:4300:userb\n' $A $B $C >"$NW/group"
groups_case() {
  local lib; lib=$(ls /usr/lib/*/libnss_wrapper.so 2>/dev/null | head -1)
  [ -n "$lib" ] || t_why "libnss_wrapper.so not installed (scripts/install-deps.sh)" || return
  mkdir -p "$W/root3"
  t_server_start -e LD_PRELOAD="$lib" -e NSS_WRAPPER_PASSWD="$NW/passwd" -e NSS_WRAPPER_GROUP="$NW/group" \
    -e NSS_WRAPPER_DISABLE_DEEPBIND=1 \
    -e ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    "$W/srv3" --root "$W/root3" --auth munge --munge-socket "$M/sock" --admin-uid $ADMIN \
    || t_why "server with nss_wrapper: $T_SRV_WHY" || return
  local s3=$T_SRV_ADDR rc=0
  { as $ADMIN "$TOOL" -s "$s3" chmod 1777 / \
    && as $A sh -c 'umask 077; exec "$@"' _ "$TOOL" -s "$s3" cp "$W/data" ddio:/g.bin >/dev/null \
    && as $ADMIN "$TOOL" -s "$s3" chown $A:4300 /g.bin && as $A "$TOOL" -s "$s3" chmod 640 /g.bin; } \
    || { t_why "setting up /g.bin (owner $A, group proj, 0640) failed"; rc=1; }
  [ $rc = 0 ] && { as $B "$TOOL" -s "$s3" cp ddio:/g.bin "$O/g.b" >/dev/null && cmp -s "$W/data" "$O/g.b"; } \
    || { [ $rc = 0 ] && t_why "B (in proj by the server's groups) could not read"; rc=1; }
  [ $rc = 0 ] && as $C "$TOOL" -s "$s3" cp ddio:/g.bin "$O/g.c" >/dev/null 2>&1 \
    && { t_why "C (not in proj) read the 0640 file"; rc=1; }
  t_server_stop
  return $rc
}
t_case identity/groups-from-server "B in proj by the server's group database reads; C does not" groups_case

# ---- the mount: root on a trusted host acts for each caller (ddio-fuse --as-caller) --------
t_step identity/actas-root-trusted "$PROBE" "$SRV" actas
t_expect_fail -x 1 identity/actas-not-root "needs a connection proven as root" \
  as $B "$PROBE" "$SRV" actas
mount_case() {
  local mnt=$W/mnt f
  mkdir -p "$mnt"
  "$BUILD/tools/ddio-fuse" -f --as-caller --servers="$SRV" "$mnt" 2>"$O/fuse.log" &
  FUSEPID=$!
  t_wait_for -p $FUSEPID 10 mountpoint -q "$mnt" || t_why "no mount: $(cat "$O/fuse.log")" || return
  f=$mnt/m.bin
  as $A sh -c 'umask 077; cat "$1" > "$2"' _ "$W/data" "$f" || t_why "A's write failed" || return
  [ "$(stat -c '%u %a' "$f")" = "$A 600" ] || t_why "stat: $(stat -c '%u %a' "$f"), wanted $A 600" || return
  ! as $B cat "$f" >/dev/null 2>&1 || t_why "B read A's 0600 file through the mount" || return
  ! as $B rm -f "$f" 2>/dev/null || t_why "B removed A's file" || return
  ! cat "$f" >/dev/null 2>&1 || t_why "root (squashed) read A's 0600 file" || return
  as $A chmod 644 "$f" || t_why "A's chmod through the mount failed" || return
  as $B cat "$f" | cmp -s - "$W/data" || t_why "B did not read A's bytes after chmod 644" || return
  ! as $B sh -c 'echo x >> "$1"' _ "$f" 2>/dev/null || t_why "B appended to A's 0644 file" || return
  grep -q "acts for uid $A gid $A (mount)" "$SRVLOG" || t_why "no 'acts for uid $A' in the log"
}
unmount() { [ -n "${FUSEPID:-}" ] && { fusermount3 -u "$W/mnt" 2>/dev/null; t_wait_pid "$FUSEPID" 10; FUSEPID=""; }; return 0; }
if t_have_fuse; then
  t_case identity/mount-as-caller "owners, modes and refusals per calling user" mount_case
  unmount
else
  t_fail identity/mount-as-caller "no FUSE here (/dev/fuse, fusermount3)"
fi

# ---- forged credentials ---------------------------------------------------------------------
t_step identity/probe-good "$PROBE" "$SRV" good
t_expect_fail -x 1 identity/forged "Invalid credential" "$PROBE" "$SRV" tamper
t_expect_fail -x 1 identity/replayed "Replayed credential" "$PROBE" "$SRV" replay
t_expect_fail -x 1 identity/expired "Expired credential" "$PROBE" "$SRV" stale
t_expect_fail -x 1 identity/other-connection "is not for this connection" "$PROBE" "$SRV" other
t_expect_fail -x 1 identity/shared-secret-auth "sent no MUNGE credential" "$PROBE" "$SRV" hmac
n=$(grep -c "refused: \(munge\|credential\|its AUTH\)" "$SRVLOG")
a=$("$TOOL" -s "$SRV" stats auth_refused | awk '{ s += $3 } END { print s + 0 }')
[ "$n" -ge 5 ] && [ "$a" -ge 5 ] && t_pass identity/refusals-logged "$n refusals in the server's log, $a counted" \
  || t_fail identity/refusals-logged "$n refusals logged, $a counted, wanted 5 each"

# ---- a credential from another host: a network namespace -----------------------------------
other_host() {
  t_other_host 10.215 || return
  ns=$T_NS hostip=$T_HOSTIP nsip=$T_NSIP
  t_server_start -n "$T_HNS" "$W/srv2" --root "$W/root" --listen "$hostip:auto" --auth munge \
    --munge-socket "$M/sock" || t_why "server on $hostip: $T_SRV_WHY" || return
}
if t_case identity/other-host-setup "a namespace on a veth pair" other_host; then
  t_expect_fail -x 1 identity/other-host-refused "credential encoded on" \
    ip netns exec "$ns" "$PROBE" "$T_SRV_ADDR" good
  if munged_start "$W/munged-ns" "$ns" "$nsip"; then
    t_step identity/other-host-own-munged env DDIO_MUNGE_SOCKET="$W/munged-ns/sock" \
      ip netns exec "$ns" "$PROBE" "$T_SRV_ADDR" good
  else
    t_fail identity/other-host-own-munged "munged in $ns did not start: $(tail -n 2 "$W/munged-ns/log")"
  fi
  t_expect_fail -x 1 identity/actas-untrusted-host "not a trusted mount host" \
    env DDIO_MUNGE_SOCKET="$W/munged-ns/sock" ip netns exec "$ns" "$PROBE" "$T_SRV_ADDR" actas
  t_server_stop
fi
rc=0; t_server_stop "$SRVPID" || rc=$?; t_result identity/server-stops $rc

# ---- an MPI job on servers in MUNGE mode -----------------------------------------------------
PAT=$BUILD/examples/bin/ddio-patterns CMP=$BUILD/test/mpi/bin/filecmp U=$W/ufs
mkdir -p "$U"
if [ -x "$PAT" ] && [ -x "$CMP" ] && mpiexec -n 4 "$PAT" -q -r 8192 -m 8 "ufs:$U/p" >/dev/null; then
  # the file MPI-IO created has 0666 less the umask (022 here): 0644
  t_step identity/mpi-ddio-run-munge env -u DDIO_MUNGE_SOCKET "$T_RUN" --auth munge -s 2 -r "$W/dr" -- \
    bash -c 'umask 022 && mpiexec -n 4 "$1" -q -r 8192 -m 8 ddio:/p && mpiexec -n 1 "$2" ddio:/p "ufs:$3/p" \
      && "$4" stat /p | grep -x "mode: 0644 (-rw-r--r--)"' _ "$PAT" "$CMP" "$U" "$TOOL"
else
  t_fail identity/mpi-ddio-run-munge "ddio-patterns or filecmp missing, or its ufs: run failed"
fi
t_done
