#!/usr/bin/env bash
# MPI integration tests: each program runs on ddio: (servers started by
# ddio-run) and on ROMIO's ufs:, and the files they leave are compared byte
# for byte through MPI-IO (filecmp). Closes with "N passed, N failed".
# usage: run-mpi-tests.sh [-k] [TEST...]   (run from anywhere; -k keeps temp dirs)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${DDIO_BUILD_DIR:-$(cd "$here/../.." && pwd)}
bin="$top/test/mpi/bin"
run="$top/tools/ddio-run"
mpi="$top/mpich"
keep=0
[ "${1:-}" = "-k" ] && { keep=1; shift; }
[ -x "$mpi/bin/mpiexec" ] || { echo "run-mpi-tests: $mpi/bin/mpiexec missing: run make first" >&2; exit 2; }
export PATH="$(cd "$mpi" && pwd -P)/bin:$PATH"
export LD_LIBRARY_PATH="$(cd "$mpi" && pwd -P)/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DDIO_TIMEOUT=${DDIO_TIMEOUT:-30}
# Hydra on a machine without a resolvable host name: stay on loopback.
export HYDRA_IFACE=${HYDRA_IFACE:-lo}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-mpitest.XXXXXX")
cleanup() { [ $keep = 1 ] && echo "kept $tmp" || rm -rf "$tmp"; }
trap cleanup EXIT
pass=0; fail=0; failed=()
T_LIMIT=${DDIO_TEST_LIMIT:-300}   # seconds per step: a hang is a failure

step() {  # step NAME CMD... : run with a time limit, log, count
  local name=$1; shift
  local log="$tmp/${name//\//_}.log"
  if timeout -k 10 "$T_LIMIT" "$@" >"$log" 2>&1; then
    pass=$((pass + 1)); echo "PASS: $name"
  else
    fail=$((fail + 1)); failed+=("$name"); echo "FAIL: $name (log follows)"; sed 's/^/    /' "$log" | tail -n 40
  fi
}

# ddio_vs_ufs NAME SERVERS NP PROG ARGS... : run PROG on ddio:/NAME and on
# ufs:, then compare the two files.
prog_path() { [ -x "$bin/$1" ] && echo "$bin/$1" || echo "$top/examples/bin/$1"; }
ddio_vs_ufs() {
  local name=$1 ns=$2 np=$3 prog; prog=$(prog_path "$4"); shift 4
  local root="$tmp/srv-$name" u="$tmp/ufs"
  mkdir -p "$root" "$u"
  step "$name/ddio" "$run" -s "$ns" --root "$root" -- mpiexec -n "$np" "$prog" "$@" "ddio:/$name"
  step "$name/ufs" mpiexec -n "$np" "$prog" "$@" "ufs:$u/$name"
  step "$name/cmp" "$run" -s "$ns" --root "$root" -- mpiexec -n 1 "$bin/filecmp" "ddio:/$name" "ufs:$u/$name"
}

# only ddio (programs that leave no file, or whose check is internal)
ddio_only() {
  local name=$1 ns=$2 np=$3 prog; prog=$(prog_path "$4"); shift 4
  local root="$tmp/srv-$name"
  mkdir -p "$root"
  step "$name" "$run" -s "$ns" --root "$root" -- mpiexec -n "$np" "$prog" "$@" "ddio:/$name"
}

selected() { [ ${#sel[@]} -eq 0 ] && return 0; local t; for t in "${sel[@]}"; do [ "$t" = "$1" ] && return 0; done; return 1; }
sel=("$@")

if selected indep; then
  ddio_vs_ufs indep-s1 1 4 t_indep
  DDIO_TEST_HINTS="striping_unit=4096" ddio_vs_ufs indep-s2-u4k 2 3 t_indep
  DDIO_TEST_HINTS="striping_unit=65536" ddio_vs_ufs indep-s3-u64k 3 4 t_indep
  DDIO_TEST_HINTS="striping_unit=3000,striping_factor=2" ddio_vs_ufs indep-s3-u3000-f2 3 2 t_indep
fi
if selected size; then ddio_vs_ufs size 2 4 t_size; fi
if selected sameblock; then
  ddio_vs_ufs sameblock 1 4 t_sameblock
  ddio_vs_ufs sameblock-s2 2 3 t_sameblock
fi
if selected self; then ddio_vs_ufs self 2 3 t_self; fi
if selected excl; then ddio_only excl 2 4 t_excl; ddio_only excl-s3 3 3 t_excl; fi
if selected delclose; then ddio_only delclose 2 4 t_delclose; fi
if selected patterns; then
  ddio_vs_ufs patterns8 2 4 ddio-patterns -q -r 8 -m 2
  ddio_vs_ufs patterns8k 2 4 ddio-patterns -q -r 8192 -m 16
  ddio_vs_ufs patterns-p3 3 3 ddio-patterns -q -r 24 -m 3 -H striping_unit=5000
fi
if selected driver; then
  ddio_only driver-basic-s1 1 4 driver_basic
  ddio_only driver-basic-s3 3 4 driver_basic
  ddio_only driver-strided-s2 2 4 driver_strided
  ddio_only driver-hints-s2 2 3 driver_hints
fi
if selected errors; then
  mkdir -p "$tmp/srv-escape"
  step errors-escape "$run" -s 2 --root "$tmp/srv-escape" -- mpiexec -n 2 "$bin/t_errors" escape ddio:/../../escape
  small="$tmp/small"; mkdir -p "$small"
  if mount -t tmpfs -o size=3m tmpfs "$small" 2>/dev/null; then
    step errors-nospace "$run" -s 1 --root "$small" -- mpiexec -n 2 "$bin/t_errors" nospace ddio:/big
    step errors-readonly "$run" -s 1 --root "$small" -- sh -c \
      "mount -o remount,ro '$small' && mpiexec -n 2 '$bin/t_errors' readonly ddio:/ro"
    umount "$small"
  else
    echo "SKIP: errors-nospace, errors-readonly (cannot mount a small tmpfs here: not root?)"
  fi
fi
if selected durable; then
  # write + sync, SIGKILL every server (no clean shutdown), restart on the
  # same roots, read back: every synced byte must be there
  root="$tmp/srv-durable"; mkdir -p "$root"
  step durable-write-kill "$run" -s 2 --root "$root" -- sh -c \
    "mpiexec -n 3 '$bin/t_durable' write ddio:/durable && pkill -KILL -P \$PPID -x ddio-server && sleep 0.5"
  step durable-restart-check "$run" -s 2 --root "$root" -- mpiexec -n 3 "$bin/t_durable" check ddio:/durable
fi
if selected missing; then
  # nothing listens on the second port: refused at once
  step missing-refused env DDIO_SERVERS=127.0.0.1:1 DDIO_TIMEOUT=3 \
    mpiexec -n 2 "$bin/t_missing" ddio:/m 10
  # a listener that never answers: the deadline must fire
  python3 -c 'import socket,time,sys
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(16)
open(sys.argv[1],"w").write(str(s.getsockname()[1])); time.sleep(120)' "$tmp/bh.port" &
  bh=$!
  for _ in $(seq 50); do [ -s "$tmp/bh.port" ] && break; sleep 0.1; done
  step missing-silent env DDIO_SERVERS=127.0.0.1:$(cat "$tmp/bh.port") DDIO_TIMEOUT=2 \
    mpiexec -n 2 "$bin/t_missing" ddio:/m 10
  kill $bh 2>/dev/null; wait $bh 2>/dev/null
fi
if selected abi; then
  if [ -x "$bin/t_abi.debian" ]; then
    root="$tmp/srv-abi"; mkdir -p "$root"
    step abi-debian-mpicc env DDIO_EXPECT_LIB="ch3:nemesis" \
      "$run" -s 2 --root "$root" -- mpiexec -n 3 "$bin/t_abi.debian" ddio:/abi
  else
    fail=$((fail + 1)); failed+=(abi-debian-mpicc); echo "FAIL: abi-debian-mpicc (t_abi.debian not built: Debian's mpicc.mpich missing?)"
  fi
fi

echo
[ $fail -gt 0 ] && echo "failed: ${failed[*]}"
echo "mpi: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
