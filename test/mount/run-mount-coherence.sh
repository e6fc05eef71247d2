#!/usr/bin/env bash
# The mount's cache rule (docs/SEMANTICS.md "The mount"), in two runs of
# test/mount/coherence-cases.sh inside `ddio-run -s 2 --mount DIR`. bounded: the
# mount keeps attributes and names for BOUND seconds (DDIO_ATTR_TIMEOUT and
# DDIO_CACHE_TIMEOUT, default 2 here): the mount's own changes are seen at
# once, another client's (tools/ddio, a second mount) within BOUND plus SLACK
# (DDIO_COHERENCE_SLACK, default 1 s, for a busy machine), and the cache is
# in effect. watched: the mount's defaults with a cache timeout of 600 s:
# every other client's change at once (the servers' INVAL), and no PSTAT for
# what the mount made itself. No MPI needed. Closes with "mount-coherence: N
# passed, N failed".
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init mount-coherence
for p in "$T_SERVER_BIN" "$T_DDIO" "$BUILD/tools/ddio-fuse"; do
  [ -x "$p" ] || t_unusable mount-coherence/build "$p missing: run make"
done
t_have_fuse || t_unusable mount-coherence/fuse "FUSE unavailable (fusermount3 from fuse3, /dev/fuse): scripts/install-deps.sh"
RUN=$T_RUN
if [ ! -x "$RUN" ]; then   # a VPATH build: the source's ddio-run, the built server
  printf '#!/usr/bin/env bash\nexec %q --server %q "$@"\n' "$SRC/tools/ddio-run" "$T_SERVER_BIN" > "$T_TMP/ddio-run"
  chmod +x "$T_TMP/ddio-run"; RUN="$T_TMP/ddio-run"
fi
tmp=$T_TMP
unset DDIO_SERVERS DDIO_SECRET_FILE DDIO_CONFIG
M="$tmp/mnt" M2="$tmp/mnt2"; mkdir -p "$M" "$M2" "$tmp/t"
is_mounted() { grep -q " $1 fuse" /proc/self/mounts; }
for m in "$M" "$M2"; do
  t_defer bash -c 'grep -q " $0 fuse" /proc/self/mounts && { fusermount3 -u "$0" 2>/dev/null || fusermount3 -uz "$0"; }; true' "$m"
done
BOUND=${DDIO_ATTR_TIMEOUT:-2}
run_set() {   # run_set SET: that set of cases inside one ddio-run --mount
  local set=$1 log="$tmp/cases-$1.log" rc
  rm -rf "$tmp/srv"
  if [ "$set" = bounded ]; then
    echo "mount-coherence: attributes and names kept ${BOUND}s (DDIO_ATTR_TIMEOUT, DDIO_CACHE_TIMEOUT)"
    export DDIO_ATTR_TIMEOUT=$BOUND DDIO_CACHE_TIMEOUT=$BOUND
  else
    echo "mount-coherence: the mount's defaults, its cache kept 600s (DDIO_CACHE_TIMEOUT)"
    unset DDIO_ATTR_TIMEOUT; export DDIO_CACHE_TIMEOUT=600
  fi
  timeout -k 10 "$T_LIMIT" "$RUN" -s 2 --root "$tmp/srv" --mount "$M" -- \
    env M="$M" M2="$M2" T="$tmp/t" TOP="$BUILD" BOUND="$BOUND" SET="$set" \
    SLACK="${DDIO_COHERENCE_SLACK:-1}" CASE_LIMIT="${DDIO_CASE_LIMIT:-120}" \
    bash "$SRC/test/mount/coherence-cases.sh" >"$log" 2>&1
  rc=$?
  t_relay "$log"
  grep -E ': [0-9.]+s$|PSTATs|OPENs$' "$log" | sed 's/^/    seen after: /'   # the delays measured
  if [ "$T_RELAYED" -eq 0 ] || { [ $rc -ne 0 ] && [ "$T_RELAYED_FAIL" -eq 0 ]; }; then
    t_fail "mount-coherence/run-$set" "exit $rc"; t_indent "$log" 20
  fi
  for m in "$M" "$M2"; do
    if is_mounted "$m"; then t_fail "mount-coherence/unmounted" "$m still mounted"; fi
  done
}
run_set bounded
run_set watched
t_done
