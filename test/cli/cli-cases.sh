#!/usr/bin/env bash
# The cases of run-cli-tests.sh, run inside `ddio-run -s 2` (DDIO_SERVERS and
# DDIO_SECRET_FILE set, authentication on). Prints "PASS: name" or
# "FAIL: name: why" per case. Needs: DDIO (tools/ddio), T (scratch dir),
# XPORT (the transport the data must take: ucx or tcp).
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
T_TMP=$T            # the steps' logs (t_step: CMD must succeed; t_expect_fail -x 1 -2:
                    # CMD must exit 1 and say TEXT on stderr)
py() { python3 -c "$@"; }

# ---- namespace: mkdir, ls, stat, rm ----------------------------------------------------
t_step cli/ns/mkdir "$DDIO" mkdir ddio:/cli
t_step cli/ns/mkdir-nested "$DDIO" mkdir /cli/sub
t_expect_fail -x 1 -2 cli/ns/mkdir-exists "already exists" "$DDIO" mkdir /cli
"$DDIO" ls / >"$T/ls" 2>&1 && grep -qx cli "$T/ls" && t_pass cli/ns/ls-root || t_fail cli/ns/ls-root "$(cat "$T/ls")"
"$DDIO" ls ddio:/cli >"$T/ls" 2>&1 && [ "$(cat "$T/ls")" = sub ] && t_pass cli/ns/ls-dir || t_fail cli/ns/ls-dir "$(cat "$T/ls")"
"$DDIO" stat /cli/sub >"$T/st" 2>&1 && grep -qx "type: directory" "$T/st" && t_pass cli/ns/stat-dir \
  || t_fail cli/ns/stat-dir "$(cat "$T/st")"
t_expect_fail -x 1 -2 cli/ns/stat-missing "no such file" "$DDIO" stat /cli/nothing
t_expect_fail -x 1 -2 cli/ns/ls-missing "no such file" "$DDIO" ls /cli/nothing
# names with a newline or a quote: one line each, quoted as ls(1)'s
# shell-escape style, and a shell reads each line back as the name
ls_quoted_ok() {
  local l n=0 got=()
  [ "$(wc -l < "$T/ls")" = 3 ] && grep -qxF "'odd'\$'\\n''name'" "$T/ls" \
    && grep -qxF "'it'\\''s'" "$T/ls" && grep -qx plain "$T/ls" || return 1
  while IFS= read -r l; do eval "got+=($l)"; done < "$T/ls"
  for l in "${got[@]}"; do
    case $l in "it's"|plain|$'odd\nname') n=$((n + 1)) ;; esac
  done
  [ $n = 3 ]
}
"$DDIO" mkdir /q && "$DDIO" mkdir $'/q/odd\nname' && "$DDIO" mkdir "/q/it's" && "$DDIO" mkdir /q/plain
"$DDIO" ls /q >"$T/ls" 2>&1
if ls_quoted_ok; then t_pass cli/ns/ls-quoted; else t_fail cli/ns/ls-quoted "$(cat -A "$T/ls")"; fi

# ---- cp round trips: local -> ddio -> local, compared byte for byte ---------------------
: > "$T/f0"
printf x > "$T/f1"
head -c 3000017 /dev/urandom > "$T/f3m"            # not a multiple of the 1 MiB unit
head -c $((64 << 20)) /dev/urandom > "$T/f64m"
for f in f0 f1 f3m f64m; do
  size=$(stat -c %s "$T/$f")
  if "$DDIO" cp "$T/$f" "ddio:/cli/$f" >"$T/cp.out" 2>"$T/cp.err" \
     && "$DDIO" cp "ddio:/cli/$f" "$T/$f.back" >>"$T/cp.out" 2>>"$T/cp.err" \
     && cmp "$T/$f" "$T/$f.back"; then t_pass "cli/cp/roundtrip-$f"
  else t_fail "cli/cp/roundtrip-$f" "$(cat "$T/cp.err")"; fi
  # "N bytes in S s, R MiB/s" twice, N the size
  n=$(grep -cE "^$size bytes in [0-9.]+ s, [0-9.]+ MiB/s$" "$T/cp.out")
  [ "$n" = 2 ] && t_pass "cli/cp/report-$f" || t_fail "cli/cp/report-$f" "$(cat "$T/cp.out")"
  # stderr is not a terminal here: no progress bar
  [ ! -s "$T/cp.err" ] && t_pass "cli/cp/no-progress-when-piped-$f" || t_fail "cli/cp/no-progress-when-piped-$f" "$(head -c 200 "$T/cp.err")"
  # layout: the servers' bytes add up to the size
  if "$DDIO" layout --json "/cli/$f" >"$T/lay.json" 2>"$T/err" && py '
import json,sys
l=json.load(open(sys.argv[1])); size=int(sys.argv[2])
assert l["size"]==size, l
assert l["stripe_count"]==2 and l["stripe_unit"]==1<<20, l
assert len(l["stripes"])==2 and all(s["server"] for s in l["stripes"]), l
assert sum(s["bytes"] for s in l["stripes"])==size==l["total"], l
assert all(s["bytes"]==s["expected"] for s in l["stripes"]), l
' "$T/lay.json" "$size"; then t_pass "cli/layout/adds-up-$f"; else t_fail "cli/layout/adds-up-$f" "$(cat "$T/lay.json" "$T/err")"; fi
done
# the cp data went the way DDIO_TRANSPORT says ($XPORT): by UCX both ways
# (at least f64m's 64 MiB each way), or not at all
read -r up ug < <("$DDIO" stats ucx_put_bytes ucx_get_bytes \
  | awk '$2=="ucx_put_bytes"{p+=$3} $2=="ucx_get_bytes"{g+=$3} END{print p+0, g+0}')
# (reads and writes: on this host in the servers' datafiles, unless
# DDIO_LOCAL_READ=0 / DDIO_LOCAL_WRITE=0)
local_reads=1; [ "${DDIO_LOCAL_READ:-1}" = 0 ] && local_reads=0
local_writes=1; [ "${DDIO_LOCAL_WRITE:-1}" = 0 ] && local_writes=0
up_want=$((64 << 20)); [ $local_reads = 1 ] && up_want=0
ug_want=$((64 << 20)); [ $local_writes = 1 ] && ug_want=0
if [ $local_reads = 1 ] || [ $local_writes = 1 ]; then
  h=$("$DDIO" stats local_handovers | awk '{s+=$3} END{print s+0}')
  [ $((local_reads * up + local_writes * ug)) = 0 ] && [ "$h" -gt 0 ] && t_pass cli/cp/same-host-io \
    || t_fail cli/cp/same-host-io "$up bytes read and $ug written by UCX, $h handovers"
fi
if [ "$XPORT" = ucx ]; then
  [ "$up" -ge $up_want ] && [ "$ug" -ge $ug_want ] && t_pass cli/cp/transport-ucx \
    || t_fail cli/cp/transport-ucx "only $up bytes read and $ug written by UCX"
else
  [ "$up" = 0 ] && [ "$ug" = 0 ] && t_pass cli/cp/transport-tcp || t_fail cli/cp/transport-tcp "$up / $ug bytes by UCX"
fi
# the text form's total line is the size too
"$DDIO" layout ddio:/cli/f3m >"$T/lay" 2>&1 && awk '$1=="total"{t=$2} END{exit t!=3000017}' "$T/lay" \
  && t_pass cli/layout/text-total || t_fail cli/layout/text-total "$(cat "$T/lay")"
# a stripe unit of our own; DST a directory takes SRC's name
if "$DDIO" cp -u 64K "$T/f3m" ddio:/cli/sub/ >/dev/null 2>"$T/err" \
   && "$DDIO" layout --json /cli/sub/f3m >"$T/lay.json" 2>>"$T/err" \
   && py 'import json,sys; l=json.load(open(sys.argv[1])); assert l["stripe_unit"]==65536 and l["total"]==3000017, l' "$T/lay.json" \
   && mkdir -p "$T/back" && "$DDIO" cp ddio:/cli/sub/f3m "$T/back" >/dev/null 2>>"$T/err" \
   && cmp "$T/f3m" "$T/back/f3m"; then
  t_pass cli/cp/stripe-unit-and-dirs
else t_fail cli/cp/stripe-unit-and-dirs "$(cat "$T/err")"; fi
# DDIO_CONFIG's striping_unit and striping_factor make the stripe of a
# file cp creates, as they do an MPI_File_open's
printf 'striping_unit = 128k\nstriping_factor = 1\n' > "$T/stripe.conf"
if DDIO_CONFIG="$T/stripe.conf" "$DDIO" cp "$T/f3m" ddio:/cli/sub/conf >/dev/null 2>"$T/err" \
   && "$DDIO" layout --json /cli/sub/conf >"$T/lay.json" 2>>"$T/err" \
   && py 'import json,sys; l=json.load(open(sys.argv[1])); assert (l["stripe_unit"], l["stripe_count"], l["total"]) == (131072, 1, 3000017), l' "$T/lay.json" \
   && "$DDIO" rm /cli/sub/conf 2>>"$T/err"; then
  t_pass cli/cp/config-striping
else t_fail cli/cp/config-striping "$(cat "$T/err" "$T/lay.json")"; fi
# out of ddio: through the page cache with the writeback started piece by
# piece, then fdatasync, and the copy dropped from the page cache (nothing
# of it left there); --buffered (as cp(1)) leaves it cached; the bytes the
# same either way (the page cache looked at before cmp reads the copies in)
if "$DDIO" cp "$T/f3m" ddio:/cli/sub/direct >/dev/null 2>"$T/err" \
   && "$DDIO" cp ddio:/cli/sub/direct "$T/f3m.d" >/dev/null 2>>"$T/err" \
   && "$DDIO" cp --buffered ddio:/cli/sub/direct "$T/f3m.b" >/dev/null 2>>"$T/err"; then
  d=$(fincore --bytes --noheadings --output RES "$T/f3m.d" 2>/dev/null || echo none)
  b=$(fincore --bytes --noheadings --output RES "$T/f3m.b" 2>/dev/null || echo none)
  if ! cmp "$T/f3m" "$T/f3m.d" || ! cmp "$T/f3m" "$T/f3m.b"; then
    t_fail cli/cp/out-stream "the copies differ from the source"
  elif [ "$d" = none ]; then
    t_skip cli/cp/out-stream "fincore (util-linux) missing"
  else
    [ "$d" -le 8192 ] && [ "$b" -ge 2990000 ] && t_pass cli/cp/out-stream \
      || t_fail cli/cp/out-stream "bytes in the page cache: streamed copy $d, buffered $b"
  fi
else t_fail cli/cp/out-stream "$(cat "$T/err")"; fi
"$DDIO" rm ddio:/cli/sub/direct >/dev/null 2>&1
# an existing ddio file is replaced, not merged (shorter copy over a longer file)
"$DDIO" cp "$T/f1" ddio:/cli/f3m >/dev/null 2>"$T/err" && "$DDIO" stat --json /cli/f3m >"$T/st.json" \
  && py 'import json,sys; assert json.load(open(sys.argv[1]))["size"]==1' "$T/st.json" \
  && t_pass cli/cp/truncates || t_fail cli/cp/truncates "$(cat "$T/err" "$T/st.json")"
t_expect_fail -x 1 -2 cli/cp/missing-source "no such file" "$DDIO" cp ddio:/cli/none "$T/none"
t_expect_fail -x 1 -2 cli/cp/missing-local "No such file" "$DDIO" cp "$T/none" ddio:/cli/none
# forced bar (--progress): on stderr, with a rate; a terminal gets it by itself
"$DDIO" cp --progress "$T/f3m" ddio:/cli/p >/dev/null 2>"$T/err" && grep -q "MiB/s" "$T/err" \
  && t_pass cli/cp/progress-forced || t_fail cli/cp/progress-forced "$(cat "$T/err")"
if command -v script >/dev/null; then
  script -qec "$DDIO cp $T/f64m ddio:/cli/tty" /dev/null >"$T/tty.out" 2>&1
  grep -q "100%" "$T/tty.out" && t_pass cli/cp/progress-on-terminal || t_fail cli/cp/progress-on-terminal "$(tail -c 300 "$T/tty.out")"
fi

# ---- stat, ls -l, ls --json ----------------------------------------------------------------
if "$DDIO" stat --json ddio:/cli/f64m >"$T/st.json" 2>"$T/err" && py '
import json,sys
s=json.load(open(sys.argv[1]))
assert s["type"]=="file" and s["size"]==64<<20 and s["stripe_count"]==2 and s["mode"]=="0644", s
assert s["mtime_ns"] > 1.6e18, s
' "$T/st.json"; then t_pass cli/stat/json; else t_fail cli/stat/json "$(cat "$T/st.json" "$T/err")"; fi
"$DDIO" stat /cli/f64m >"$T/st" 2>&1 && grep -qx "size: 67108864" "$T/st" && grep -qx "stripe_count: 2" "$T/st" \
  && t_pass cli/stat/text || t_fail cli/stat/text "$(cat "$T/st")"
"$DDIO" ls -l /cli >"$T/ls" 2>&1 && grep -qE '^-rw-r--r-- +67108864 .* f64m$' "$T/ls" \
  && grep -qE '^drwx.* sub$' "$T/ls" && t_pass cli/ls/long || t_fail cli/ls/long "$(cat "$T/ls")"
# options may follow the operands
"$DDIO" ls /cli -l >"$T/ls2" 2>&1 && cmp -s "$T/ls" "$T/ls2" && t_pass cli/ls/option-after-operand \
  || t_fail cli/ls/option-after-operand "$(cat "$T/ls2")"
if "$DDIO" ls --json /cli >"$T/ls.json" 2>"$T/err" && py '
import json,sys
l={e["name"]:e for e in json.load(open(sys.argv[1]))}
assert set(l)=={"f0","f1","f3m","f64m","p","sub","tty"} or set(l)=={"f0","f1","f3m","f64m","p","sub"}, l
assert l["f1"]["size"]==1 and l["f0"]["size"]==0 and l["sub"]["type"]=="dir", l
' "$T/ls.json"; then t_pass cli/ls/json; else t_fail cli/ls/json "$(cat "$T/ls.json" "$T/err")"; fi

# ---- status ----------------------------------------------------------------------------
if "$DDIO" status --json --interval 0.2 >"$T/status.json" 2>"$T/err" && py '
import json,sys,os
s=json.load(open(sys.argv[1]))["servers"]
assert len(s)==2 and [x["server"] for x in s]==os.environ["DDIO_SERVERS"].split(","), s
written=0
local_w=os.environ.get("DDIO_LOCAL_WRITE")!="0"
for x in s:
    assert x["ok"] and x["uptime_s"]>0 and x["connections"]>=1 and x["inflight"]==0, x
    assert x["interval_s"]==0.2 and len(x["disks"])==1 and len(x["roots"])==1, x
    r=x["roots"][0]; assert 0<r["free_bytes"]<=r["total_bytes"], x
    d=x["disks"][0]; assert d["queue"]==0 and (d["ops"]>0 or local_w) and 0<=d["busy_pct"]<=100, x
    assert d["read_mibps"]>=0 and d["write_mibps"]>=0, x
    written+=d["bytes_written"]
    # reads and writes on this host go to the datafiles, not the server
    assert x["bytes_written"]>0 or local_w, x
    assert x["bytes_read"]>0 or os.environ.get("DDIO_LOCAL_READ")!="0", x
# every copy above went to the disks (64 MiB twice, plus the small ones)
assert written >= 2*(64<<20) or local_w, written
' "$T/status.json"; then t_pass cli/status/json; else t_fail cli/status/json "$(cat "$T/status.json" "$T/err")"; fi
"$DDIO" status -i 0 >"$T/status" 2>"$T/err" && [ "$(grep -c '^server .* up .* connections .* calls in flight' "$T/status")" = 2 ] \
  && [ "$(grep -cE '^  disk 0  read +[0-9.]+ MiB/s  write +[0-9.]+ MiB/s  queue [0-9]+  busy' "$T/status")" = 2 ] \
  && [ "$(grep -cE '^  root 0  free ' "$T/status")" = 2 ] && t_pass cli/status/text || t_fail cli/status/text "$(cat "$T/status" "$T/err")"
# a copy in flight shows on the disks' rates (status samples during it,
# again while it runs until a sample has it: a slow start, as under the
# sanitizers, can leave a first window before its first write; through the
# servers: a same-host copy never reaches their disks' counters)
busy_seen() {
  py '
import json,sys
s=json.load(open(sys.argv[1]))["servers"]
assert all(x["ok"] for x in s), s
assert sum(d["write_mibps"] for x in s for d in x["disks"]) > 0, s
' "$T/busy.json"
}
DDIO_LOCAL_WRITE=0 "$DDIO" cp "$T/f64m" ddio:/cli/busy >/dev/null 2>&1 &
cpid=$!
seen=1
for _ in $(seq 20); do
  "$DDIO" status --json -i 0.5 >"$T/busy.json" 2>"$T/err" && busy_seen 2>/dev/null && { seen=0; break; }
  kill -0 $cpid 2>/dev/null || break
done
wait $cpid
[ $seen = 0 ] && t_pass cli/status/during-copy || t_fail cli/status/during-copy "$(cat "$T/busy.json" "$T/err")"
# same-host copies are counted too: the client reports at close what its own
# descriptors wrote and read (LOCALSTAT), and status adds it to the totals
same_host_counted() {
  local w0 r0 w1 r1 sum='{ s += $3 } END { print s + 0 }'
  w0=$("$DDIO" stats local_write_bytes | awk "$sum"); r0=$("$DDIO" stats local_read_bytes | awk "$sum")
  DDIO_LOCAL_WRITE=1 DDIO_LOCAL_READ=1 "$DDIO" cp "$T/f64m" ddio:/cli/local >/dev/null 2>&1 \
    && DDIO_LOCAL_READ=1 "$DDIO" cp ddio:/cli/local "$T/local.back" >/dev/null 2>&1 \
    && cmp -s "$T/f64m" "$T/local.back" || { echo "copies failed"; return 1; }
  w1=$("$DDIO" stats local_write_bytes | awk "$sum"); r1=$("$DDIO" stats local_read_bytes | awk "$sum")
  [ $((w1 - w0)) = $((64 << 20)) ] && [ $((r1 - r0)) = $((64 << 20)) ] \
    || { echo "same-host bytes counted: written $((w1 - w0)), read $((r1 - r0)), wanted $((64 << 20)) each"; return 1; }
  "$DDIO" status -i 0 | grep -q "^  of which same-host clients read .* and wrote .* themselves" \
    || { echo "no same-host line in status"; return 1; }
  "$DDIO" rm /cli/local
}
if out=$(same_host_counted); then t_pass cli/status/same-host-counted; else t_fail cli/status/same-host-counted "$out"; fi
# a 5 MB copy in and out, as issue 45 found it: with the shortcuts at their
# default (on) the same-host counters take it and status shows it; with both
# off the servers' own counters take it and the same-host ones stay still
sums() {   # "bytes_written bytes_read local_write_bytes local_read_bytes", over servers
  "$DDIO" status --json -i 0 | py '
import json,sys
s=json.load(sys.stdin)["servers"]
assert s and all(x["ok"] for x in s), s
print(*(sum(x[k] for x in s) for k in ("bytes_written","bytes_read","local_write_bytes","local_read_bytes")))'
}
copy_5m() {   # ENV...: cp in and out with that environment, compared
  env "$@" "$DDIO" cp "$T/f5m" ddio:/cli/f5m >/dev/null 2>&1 \
    && env "$@" "$DDIO" cp ddio:/cli/f5m "$T/f5m.back" >/dev/null 2>&1 \
    && cmp -s "$T/f5m" "$T/f5m.back" && "$DDIO" rm /cli/f5m
}
counted_5m() {   # MODE: same-host (the default) or servers (shortcuts off)
  local b a n=5000000
  b=($(sums)) || { echo "status --json failed"; return 1; }
  if [ "$1" = same-host ]; then
    copy_5m -u DDIO_LOCAL_WRITE -u DDIO_LOCAL_READ || { echo "copies failed"; return 1; }
  else
    copy_5m DDIO_LOCAL_WRITE=0 DDIO_LOCAL_READ=0 || { echo "copies failed"; return 1; }
  fi
  a=($(sums)) || { echo "status --json failed"; return 1; }
  local dw=$((a[0] - b[0])) dr=$((a[1] - b[1])) lw=$((a[2] - b[2])) lr=$((a[3] - b[3]))
  echo "servers wrote $dw read $dr; same-host wrote $lw read $lr"
  if [ "$1" = same-host ]; then
    [ "$lw" -ge $n ] && [ "$lr" -ge $n ]
  else
    [ "$dw" -ge $n ] && [ "$dr" -ge $n ] && [ "$lw" = 0 ] && [ "$lr" = 0 ]
  fi
}
head -c 5000000 /dev/urandom >"$T/f5m"
for mode in same-host servers; do
  if out=$(counted_5m $mode); then t_pass cli/status/counted-5m-$mode; else t_fail cli/status/counted-5m-$mode "$out"; fi
done
# the status text says which part was same-host: its totals include it
"$DDIO" status -i 0 >"$T/status" 2>"$T/err" && py '
import re,sys
t=open(sys.argv[1]).read()
tot=re.findall(r"^  read (\S+ \S+)  written (\S+ \S+)  xfers", t, re.M)
loc=re.findall(r"^  of which same-host clients read (\S+ \S+) and wrote (\S+ \S+) themselves$", t, re.M)
assert len(tot) == 2 and len(loc) == 2, t
assert all(l[1] != "0 B" and l[0] != "0 B" for l in loc), loc
' "$T/status" && t_pass cli/status/same-host-line || t_fail cli/status/same-host-line "$(cat "$T/status" "$T/err")"
# stats: the raw counters as before, now with the new keys
"$DDIO" stats uptime_ms disk.0.bytes_written root.0.free_bytes inflight >"$T/stats" 2>&1 \
  && [ "$(wc -l <"$T/stats")" = 8 ] && t_pass cli/stats/new-keys || t_fail cli/stats/new-keys "$(cat "$T/stats")"
"$DDIO" stats xfers >"$T/stats" 2>&1 && [ "$(grep -cE '^127\.0\.0\.1:[0-9]+ xfers [0-9]+$' "$T/stats")" = 2 ] \
  && t_pass cli/stats/format || t_fail cli/stats/format "$(cat "$T/stats")"

# ---- rm ----------------------------------------------------------------------------------
t_expect_fail -x 1 -2 cli/rm/non-empty-dir "not empty" "$DDIO" rm /cli/sub
t_step cli/rm/file "$DDIO" rm ddio:/cli/sub/f3m
t_step cli/rm/empty-dir "$DDIO" rm /cli/sub
t_expect_fail -x 1 -2 cli/rm/gone "no such file" "$DDIO" stat /cli/sub
t_expect_fail -x 1 -2 cli/rm/missing "no such file" "$DDIO" rm /cli/sub

# ---- a stopped server: each call fails after one timeout, and works again ------------------
# A call dials a server several times (the membership's view of who is
# out, then the recovery); each dial waiting the whole timeout again made
# a stat on a stopped server take 4-5 timeouts. Once one dial had waited
# the timeout, the others only probe it, so a call costs one timeout; and
# the server answers the next call as soon as it runs again.
hung_calls() {
  local port pid; port=$(echo "$DDIO_SERVERS" | cut -d, -f2 | sed 's/.*://')
  pid=$(ss -ltnpH "sport = :$port" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)
  [ -n "$pid" ] || { echo "no pid for server 2"; return 1; }
  "$DDIO" mkdir /hung && echo data > "$T/hung.src" && "$DDIO" cp "$T/hung.src" ddio:/hung/f >/dev/null || return 1
  kill -STOP "$pid"; sleep 0.2
  local c t0 ms rc=0
  for c in "stat /hung/f" "ls /hung"; do
    t0=$(date +%s%N)
    if DDIO_TIMEOUT=3 DDIO_RECOVER_TIMEOUT=1 "$DDIO" $c >"$T/hung.out" 2>&1; then
      echo "ddio $c with server 2 stopped succeeded"; rc=1; break
    fi
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "ddio $c: failed after $ms ms: $(tail -n 1 "$T/hung.out")"
    grep -q "before the deadline (3 s" "$T/hung.out" || { echo "not the timeout's message"; rc=1; break; }
    [ "$ms" -le 4500 ] || { echo "took $ms ms: one timeout (3 s) at most"; rc=1; break; }
  done
  kill -CONT "$pid"
  [ $rc = 0 ] || return 1
  DDIO_TIMEOUT=3 "$DDIO" stat /hung/f >/dev/null && "$DDIO" rm /hung/f && "$DDIO" rm /hung
}
if out=$(hung_calls 2>&1); then t_pass cli/hung/one-timeout; echo "$out"; else t_fail cli/hung/one-timeout "$out"; fi

# ---- authentication is on: no secret, no service ---------------------------------------------
t_expect_fail -x 1 -2 cli/auth/no-secret "requires authentication" env -u DDIO_SECRET_FILE -u DDIO_CONFIG "$DDIO" ls /
(umask 077; head -c 32 /dev/urandom | base64 >"$T/other")
t_expect_fail -x 1 -2 cli/auth/wrong-secret "authentication failed" "$DDIO" --secret-file "$T/other" ls /
exit 0
