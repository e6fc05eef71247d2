#!/usr/bin/env bash
# io500.sh: IO500 (the io500 tool, IOR/mdtest and pfind from their public
# repositories) on ddio and on the local file system, in the same run: the
# standard phases, every phase's figure and both scores. ddio: the IOR phases
# through MPI-IO (API = MPIIO, a plain path under the ddio mount, which
# ROMIO hands to the ddio driver), mdtest and find through the mount
# (POSIX). Local: the same on a directory on the same disk as the servers'
# stores. A reduced stonewall: the results are not submittable.
# See bench/README.md "io500.sh".
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"
# the ddio build to measure: its mpich/, tools/ and ioserver/ (default: the
# repository this script is in, after ./ddio.sh build or make)
DDIO_BUILD=${DDIO_BUILD:-$(cd "$here/.." && pwd)}
MIRRORS=${DDIO_MIRRORS:-/work/.mirror}

usage() {
  cat <<EOF
usage: bench/io500.sh [options]

sources (a git clone or a bare mirror each; nothing is fetched):
  --io500-src DIR      IO500/io500 (default $MIRRORS/IO500+io500/repo)
  --io500-commit C     (default: HEAD of --io500-src)
  --ior-src DIR        hpc/ior (default $MIRRORS/hpc+ior/repo)
  --ior-commit C       (default: IOR_HASH of io500's prepare.sh at that commit)
  --pfind-src DIR      VI4IO/pfind (default $MIRRORS/VI4IO+pfind/repo)
  --pfind-commit C     (default: PFIND_HASH of io500's prepare.sh; when the
                       source does not hold it, the source's HEAD, recorded)
  --build-only         build (or find in the cache) and stop

run:
  -w, --stonewall S    stonewall seconds of the write phases (default 30;
                       IO500's rules ask 300: below that the run is invalid
                       and not submittable, and io500 says so)
  -P, --ranks N        MPI ranks (default 4)
  -s, --servers N      ddio servers (default 2)
  -n, --rounds N       rounds; each runs both targets, the order alternating
                       (default 1: local, then ddio)
  -t, --targets LIST   local,ddio (default both)
      --easy-gib G     ior-easy's cap per rank in GiB (blockSize; default 5):
                       the stonewall ends the phase earlier on this disk
      --hard-gib G     ior-hard's cap over all ranks in GiB (default 16)
      --no-drop-caches do not drop the page cache before each phase (default:
                       drop it, as io500 asks of single-node runs, when
                       /proc/sys/vm/drop_caches is writable)
  -o, --out DIR        results (default bench/results/DATE-io500)
      --tmp DIR        scratch: the local data directory, the servers' roots
                       and the mount point (default OUT/tmp; one disk for both)
      --timeout S      limit for one target's run (default 2400)
  -h, --help

environment: DDIO_BUILD (default: this repository) is the build measured:
\$DDIO_BUILD/mpich/bin/mpicc (io500 is built with it), mpiexec,
tools/ddio-run, tools/ddio, tools/ddio-fuse, ioserver/ddio-server.
DDIO_BENCH_CACHE (default ~/.cache/ddio-bench): where the builds are kept,
one directory per io500, IOR and pfind commit and MPICH.
EOF
}

IO500_SRC=$MIRRORS/IO500+io500/repo; IOR_SRC=$MIRRORS/hpc+ior/repo; PFIND_SRC=$MIRRORS/VI4IO+pfind/repo
IO500_C=""; IOR_C=""; PFIND_C=""; BUILD_ONLY=0
STONEWALL=30; P=4; NSERV=2; ROUNDS=1; TARGETS=local,ddio; EASY_GIB=5; HARD_GIB=16; DROP=1
OUT=""; TMP=""; TO=2400
while [ $# -gt 0 ]; do
  case "$1" in
    --io500-src) IO500_SRC=$2; shift 2 ;;
    --io500-commit) IO500_C=$2; shift 2 ;;
    --ior-src) IOR_SRC=$2; shift 2 ;;
    --ior-commit) IOR_C=$2; shift 2 ;;
    --pfind-src) PFIND_SRC=$2; shift 2 ;;
    --pfind-commit) PFIND_C=$2; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    -w|--stonewall) STONEWALL=$2; shift 2 ;;
    -P|--ranks) P=$2; shift 2 ;;
    -s|--servers) NSERV=$2; shift 2 ;;
    -n|--rounds) ROUNDS=$2; shift 2 ;;
    -t|--targets) TARGETS=$2; shift 2 ;;
    --easy-gib) EASY_GIB=$2; shift 2 ;;
    --hard-gib) HARD_GIB=$2; shift 2 ;;
    --no-drop-caches) DROP=0; shift ;;
    -o|--out) OUT=$2; shift 2 ;;
    --tmp) TMP=$2; shift 2 ;;
    --timeout) TO=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "io500.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
die() { echo "io500.sh: $*" >&2; exit 2; }
log() { echo "io500.sh: $*" >&2; }

MPICC=$DDIO_BUILD/mpich/bin/mpicc; MPIEXEC=$DDIO_BUILD/mpich/bin/mpiexec
RUN=$DDIO_BUILD/tools/ddio-run; DDIO=$DDIO_BUILD/tools/ddio
for f in "$MPICC" "$MPIEXEC" "$RUN" "$DDIO" "$DDIO_BUILD/tools/ddio-fuse" "$DDIO_BUILD/ioserver/ddio-server"; do
  [ -x "$f" ] || die "$f missing: build ddio first (./ddio.sh build) or set DDIO_BUILD"
done

# ---- the sources: commits resolved, pins read from io500's prepare.sh ------------
gitc() { git -C "$1" "${@:2}"; }
resolve() {   # resolve SRC COMMIT -> full hash, or nothing
  gitc "$1" rev-parse -q --verify "$2^{commit}" 2>/dev/null
}
for s in "$IO500_SRC" "$IOR_SRC" "$PFIND_SRC"; do
  gitc "$s" rev-parse --git-dir >/dev/null 2>&1 || die "$s is not a git repository (clone or mirror)"
done
IO500_C=$(resolve "$IO500_SRC" "${IO500_C:-HEAD}") || die "io500 commit not in $IO500_SRC"
PREP=$(gitc "$IO500_SRC" show "$IO500_C:prepare.sh") || die "no prepare.sh in io500 $IO500_C"
IOR_PIN=$(sed -n 's/^IOR_HASH=\([0-9a-fA-F]*\).*/\1/p' <<<"$PREP")
PFIND_PIN=$(sed -n 's/^PFIND_HASH=\([0-9a-fA-F]*\).*/\1/p' <<<"$PREP")
NOTES=""
pick() {   # pick NAME SRC GIVEN PIN -> full hash on stdout, a note in NOTES_FILE
  local name=$1 src=$2 given=$3 pin=$4 c
  if [ -n "$given" ]; then
    c=$(resolve "$src" "$given") || die "$name commit $given not in $src"
    [ "${c:0:${#pin}}" = "$pin" ] || echo "$name: $c given (io500's prepare.sh pins $pin)" >>"$NOTES_FILE"
  elif c=$(resolve "$src" "$pin"); then :
  else
    c=$(resolve "$src" HEAD) || die "$name: no HEAD in $src"
    echo "$name: io500's prepare.sh pins $pin, which $src does not hold; used its HEAD $c ($(gitc "$src" log -1 --format='%cs %s' "$c"))" >>"$NOTES_FILE"
  fi
  echo "$c"
}
NOTES_FILE=$(mktemp); trap 'rm -f "$NOTES_FILE"' EXIT
IOR_C=$(pick ior "$IOR_SRC" "$IOR_C" "$IOR_PIN") || exit 2
PFIND_C=$(pick pfind "$PFIND_SRC" "$PFIND_C" "$PFIND_PIN") || exit 2
NOTES=$(cat "$NOTES_FILE")
[ -z "$NOTES" ] || log "$NOTES"

# ---- the build: cached per commits and MPICH, made without the network --------------
# The MPICH is named by its compile line (its prefix under ~/.cache/ddio carries
# the hash of its build) and version; a rebuilt ddio driver keeps the ABI.
MPICH_ID=$( { "$MPICC" -show; "$DDIO_BUILD/mpich/bin/mpichversion" 2>/dev/null; } | sha256sum | cut -c1-10)
CACHE=${DDIO_BENCH_CACHE:-$HOME/.cache/ddio-bench}
BDIR=$CACHE/io500-${IO500_C:0:12}-ior-${IOR_C:0:12}-pfind-${PFIND_C:0:12}-mpich-$MPICH_ID
IO500_DIR=$BDIR/io500
build() {
  local blog=$BDIR/build.log mpibin
  mpibin=$(dirname "$MPICC")
  log "building io500 into $BDIR (log: $blog)"
  rm -rf "$BDIR" && mkdir -p "$IO500_DIR/build/ior" "$IO500_DIR/build/pfind" || die "cannot make $BDIR"
  {
    set -e
    # the sources, from the given repositories at the given commits
    gitc "$IO500_SRC" archive "$IO500_C" | tar -x -C "$IO500_DIR"
    gitc "$IOR_SRC" archive "$IOR_C" | tar -x -C "$IO500_DIR/build/ior"
    gitc "$PFIND_SRC" archive "$PFIND_C" | tar -x -C "$IO500_DIR/build/pfind"
    export PATH=$mpibin:$PATH CC=$MPICC MPICC=$MPICC
    # IOR as prepare.sh's build_ior does: bootstrap, configure, make install in src
    (cd "$IO500_DIR/build/ior" && ./bootstrap && ./configure --prefix="$BDIR/prefix" \
       && cd src && flock /tmp/ddio-make.lock make -j2 && make install)
    # pfind as build_pfind does, but without its prepare.sh (which clones lz4 from
    # the network; compile.sh uses lz4 only when ./lz4 exists)
    (cd "$IO500_DIR/build/pfind" && ./compile.sh)
    # io500 itself: its Makefile as is. VERSION_GIT/VERSION_TREE given here: the
    # tree is an archive, not a clone. (Its CFLAGS carry -lefence, but only on
    # -c compile lines, where no library is linked: electric-fence is not needed.)
    (cd "$IO500_DIR" && flock /tmp/ddio-make.lock make -j2 CC="$MPICC" \
       VERSION_GIT="${IO500_C:0:12}" VERSION_TREE="")
    [ -x "$IO500_DIR/io500" ]
  } >"$blog" 2>&1 || die "the build failed: $blog"
  {
    echo "io500 $IO500_C from $IO500_SRC"
    echo "ior $IOR_C from $IOR_SRC"
    echo "pfind $PFIND_C from $PFIND_SRC"
    echo "mpicc $MPICC: $("$MPICC" -show)"
    [ -z "$NOTES" ] || echo "$NOTES"
  } >"$BDIR/commits.txt"
  touch "$BDIR/.built"
}
[ -f "$BDIR/.built" ] || build
log "io500: $IO500_DIR/io500"
[ "$BUILD_ONLY" = 0 ] || exit 0

# ---- the run ---------------------------------------------------------------------
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-io500"
[ -n "$TMP" ] || TMP="$OUT/tmp"
mkdir -p "$OUT/logs" "$OUT/io500" "$TMP" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd); TMP=$(cd "$TMP" && pwd)
DEV=$(df --output=source "$TMP" | tail -1); DEVNAME=$(basename "$(readlink -f "$DEV")")
grep -qw "$DEVNAME" /proc/diskstats || DEVNAME=""
NEED_GIB=$((P * EASY_GIB + HARD_GIB + 4))
FREE_GIB=$(( $(df --output=avail -k "$TMP" | tail -1) / 1048576 ))
[ "$FREE_GIB" -ge "$NEED_GIB" ] || die "$TMP has $FREE_GIB GiB free, the caps need $NEED_GIB (--easy-gib, --hard-gib)"
if [ "$DROP" = 1 ] && ! [ -w /proc/sys/vm/drop_caches ]; then
  log "cannot drop the page cache here: running without (drop-caches = FALSE)"; DROP=0
fi
# ior-hard: segments of 47,008 bytes per rank, capped at HARD_GIB over the ranks
HARD_SEGS=$(( HARD_GIB * 1073741824 / (47008 * P) ))

{
  echo "command: $CMDLINE"
  echo "date: $(date -u +%FT%TZ)"
  echo "ddio: $(git -C "$DDIO_BUILD" rev-parse --short HEAD 2>/dev/null)$(git -C "$DDIO_BUILD" diff --quiet 2>/dev/null || echo ' (modified)') ($DDIO_BUILD)"
  echo "io500: $IO500_C"
  echo "ior: $IOR_C (io500's prepare.sh pins $IOR_PIN)"
  echo "pfind: $PFIND_C (io500's prepare.sh pins $PFIND_PIN)"
  [ -z "$NOTES" ] || echo "note: $NOTES"
  echo "build: $BDIR"
  echo "mpich: $("$DDIO_BUILD/mpich/bin/mpichversion" 2>/dev/null | head -1 | tr -s ' \t' ' ')"
  echo "ranks $P, servers $NSERV, stonewall $STONEWALL s, rounds $ROUNDS, targets $TARGETS"
  echo "ior-easy: 2 MiB transfers, file per process, at most $EASY_GIB GiB per rank; ior-hard: 47,008 B, one shared file, at most $HARD_SEGS segments ($HARD_GIB GiB)"
  echo "drop caches before each phase: $([ $DROP = 1 ] && echo yes || echo no)"
  echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), $(uname -r), local fs: $(df -T "$TMP" | awk 'NR==2 {print $2, $1}') ($DEVNAME)"
  echo "not submittable: reduced stonewall ($STONEWALL s against IO500's 300 s)"
} >"$OUT/env.txt"
cat "$OUT/env.txt"

# one io500 configuration per target: the standard phases, IOR through MPI-IO
write_ini() {   # write_ini DATADIR RESDIR > ini
  cat <<EOF
# generated by bench/io500.sh: not submittable (stonewall $STONEWALL s, IO500 asks 300)
[global]
datadir = $1
timestamp-datadir = FALSE
resultdir = $2
timestamp-resultdir = FALSE
api = POSIX
drop-caches = $([ $DROP = 1 ] && echo TRUE || echo FALSE)
drop-caches-cmd = bash -c "sync && echo 3 > /proc/sys/vm/drop_caches"
verbosity = 1

[debug]
stonewall-time = $STONEWALL

[ior-easy]
API = MPIIO
transferSize = 2m
blockSize = $((EASY_GIB * 1024))m
filePerProc = TRUE

[ior-hard]
API = MPIIO
segmentCount = $HARD_SEGS

[mdtest-easy]
API = POSIX

[mdtest-hard]
API = POSIX

[find]
EOF
}

# each target's run: io500 under mpiexec, the sampler beside it
SAMPLER=$here/io500_sample.py
cat >"$TMP/session.sh" <<'EOS'
set -u
# inside ddio-run for ddio (DDIO_SERVERS set, the mount on $DATA's parent)
stats=""
[ "$TARGET" = ddio ] && stats="--ddio $DDIO"
python3 "$SAMPLER" --root-pid "$ROOTPID" --dev "$DEVNAME" --interval 0.5 $stats --out "$RES/samples.jsonl" &
sp=$!
uptime >"$RES/uptime-before.txt"
mkdir -p "$DATA" && cd "$IO500_DIR" && "$MPIEXEC" -n "$P" ./io500 "$INI"
rc=$?
uptime >"$RES/uptime-after.txt"
[ "$TARGET" != ddio ] || "$DDIO" stats >"$RES/ddio-stats-end.txt" 2>&1
kill "$sp"; wait "$sp" 2>/dev/null
exit $rc
EOS

run_target() {   # run_target TARGET ROUND
  local tgt=$1 r=$2 res data ini rc
  res=$OUT/io500/$tgt$([ "$ROUNDS" -gt 1 ] && echo "-r$r")
  rm -rf "$res" && mkdir -p "$res"
  ini=$res/config-generated.ini
  case $tgt in
    local) data=$TMP/local/io500; rm -rf "$TMP/local" ;;
    ddio) data=$TMP/mnt/io500; rm -rf "$TMP/srv"; mkdir -p "$TMP/mnt" ;;
  esac
  write_ini "$data" "$res" >"$ini"
  log "round $r: $tgt (datadir $data), $(uptime | sed 's/.*load/load/')"
  local envs=(env TARGET="$tgt" SAMPLER="$SAMPLER" DEVNAME="$DEVNAME" DDIO="$DDIO" RES="$res"
              DATA="$data" IO500_DIR="$IO500_DIR" MPIEXEC="$MPIEXEC" P="$P" INI="$ini")
  if [ "$tgt" = ddio ]; then
    # ROOTPID: ddio-run's shell, so its servers and the mount daemon are counted
    timeout -k 20 "$TO" "$RUN" -s "$NSERV" --root "$TMP/srv" --mount "$TMP/mnt" -- \
      bash -c 'ROOTPID=$PPID exec "$@"' _ "${envs[@]}" bash "$TMP/session.sh" \
      >"$OUT/logs/$tgt-r$r.log" 2>&1
  else
    timeout -k 20 "$TO" bash -c 'ROOTPID=$$ exec "$@"' _ "${envs[@]}" bash "$TMP/session.sh" \
      >"$OUT/logs/$tgt-r$r.log" 2>&1
  fi
  rc=$?
  grep -E '^\[(RESULT|SCORE|      )\]' "$OUT/logs/$tgt-r$r.log" >&2
  [ $rc = 0 ] || log "$tgt round $r: exit $rc (see $OUT/logs/$tgt-r$r.log)"
  # keep io500's own result files, not the data
  rm -rf "$TMP/local" "$TMP/srv"
  return 0
}

uptime >"$OUT/uptime-before.txt"
IFS=, read -r -a TLIST <<<"$TARGETS"
for ((r = 1; r <= ROUNDS; r++)); do
  if [ $((r % 2)) = 1 ]; then order=("${TLIST[@]}"); else
    order=(); for ((i = ${#TLIST[@]} - 1; i >= 0; i--)); do order+=("${TLIST[$i]}"); done; fi
  for t in "${order[@]}"; do run_target "$t" "$r"; done
done
uptime >"$OUT/uptime-after.txt"
rm -rf "$TMP"

python3 "$here/io500_report.py" "$OUT" || die "the report failed"
log "report: $OUT/REPORT.md"
