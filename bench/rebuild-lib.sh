# bench/rebuild-lib.sh: what bench/rebuild.sh and bench/rebuild-beside.sh
# share, sourced by both (run inside ddio-run: DDIO_SERVERS and
# DDIO_SECRET_FILE exported by it; OUT, FILES, SIZE, THROTTLE, DDIO, SERVER
# set by the script).

# FILES files of SIZE MiB (MODE: their redundancy, default the servers'
# mirror) copied in as /f0 ... of the servers
rb_fill() {
  local i
  for ((i = 0; i < FILES; i++)); do
    head -c $((SIZE << 20)) /dev/urandom >"$OUT/tmp/src"
    "$DDIO" cp ${MODE:+-r "$MODE"} "$OUT/tmp/src" "ddio:/f$i" >/dev/null \
      || { echo "cp f$i failed" >&2; return 1; }
  done
  rm -f "$OUT/tmp/src"
}

# server 1 (listening at ADDR) SIGKILLed, its root ROOT/s1 deleted, and a
# fresh `ddio-server --replacement` started there (its disks throttled to
# THROTTLE MiB/s when set); prints the replacement's pid once it listens
rb_replace() {
  local root=$1 addr=$2 port=${2##*:} p
  p=$(ss -ltnpH "sport = :$port" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
  [ -n "$p" ] && kill -9 "$p"
  while [ -n "$p" ] && kill -0 "$p" 2>/dev/null; do sleep 0.05; done
  rm -rf "$root/s1"; mkdir -p "$root/s1"
  "$SERVER" --listen "$addr" --root "$root/s1" --secret-file "$DDIO_SECRET_FILE" \
    --redundancy mirror --replacement ${THROTTLE:+--throttle-mbps "$THROTTLE"} \
    </dev/null >/dev/null 2>>"$OUT/tmp/replacement.log" &
  p=$!
  until [ -n "$(ss -ltnH "sport = :$port")" ]; do sleep 0.05; done
  echo "$p"
}
