#!/usr/bin/env bash
# Builds the protocol/descriptor fuzz harness with clang (libFuzzer + ASan +
# UBSan) and runs it for a bounded time.
#
#   test/fuzz/run-fuzz.sh [SECONDS]      (default $DDIO_FUZZ_SECONDS, else 60)
#
# Seeds come from test/fuzz/corpus/ (regenerate with --regen-corpus: they are
# built from real encoded messages by gen_corpus.c). New inputs found during
# the run go to a scratch directory, not into the repository; a crashing
# input is saved as test/fuzz/crash-* . Exit status is non-zero on a crash
# or a build failure. Also writes test/fuzz/fuzz.out ("fuzz: N passed, N failed")
# for scripts/test-summary.sh (the results and that closing line).
#
# A fixed seed (DDIO_FUZZ_SEED, default 1) keeps CI runs reproducible;
# DDIO_FUZZ_SEED=0 picks a random seed for longer runs by hand.
# Environment: CC (default clang), FUZZ_JOBS is not used: one process keeps
# the run bounded on small CI machines.
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
here=$SRC/test/fuzz
top=$SRC
T_TEE="$here/fuzz.out"   # not *.log: make check's own log is counted (test-summary.sh)
cc=${CC:-clang}

regen=0
secs=${DDIO_FUZZ_SECONDS:-60}
for a in "$@"; do
  case "$a" in
    --regen-corpus) regen=1 ;;
    ''|*[!0-9]*) echo "usage: $0 [SECONDS] [--regen-corpus]" >&2; exit 2 ;;
    *) secs=$a ;;
  esac
done
t_init fuzz

command -v "$cc" >/dev/null || t_unusable fuzz/build "$cc not found"
scratch=$T_TMP

srcs="$(echo "$top"/common/ddio_proto*.c "$top"/common/ddio_desc_*.c)"
cflags="-std=gnu11 -g -O1 -Wall -Wextra -I$top/common -I$here"
# shellcheck disable=SC2086 # word lists
if ! $cc $cflags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
     -o "$here/fuzz_proto" "$here/fuzz_proto.c" $srcs 2>"$scratch/build.log"; then
  cat "$scratch/build.log" >&2
  t_unusable fuzz/build "harness build failed"
fi

if [ $regen -eq 1 ] || [ -z "$(ls -A "$here/corpus" 2>/dev/null)" ]; then
  mkdir -p "$here/corpus"
  # shellcheck disable=SC2086
  $cc $cflags -o "$scratch/gen_corpus" "$here/gen_corpus.c" $srcs \
    && "$scratch/gen_corpus" "$here/corpus" || t_unusable fuzz/corpus "corpus generation failed"
fi

# Every input that ever crashed the harness stays a regression test.
if ls "$here"/regress/* >/dev/null 2>&1; then
  if ! timeout -k 10 "$T_LIMIT" "$here/fuzz_proto" "$here"/regress/* >"$scratch/regress.log" 2>&1; then
    tail -n 30 "$scratch/regress.log" >&2
    t_fail fuzz/regress "a regression input crashed"
  else
    t_pass fuzz/regress "$(find "$here/regress" -type f | wc -l) regression inputs pass"
  fi
fi

mkdir -p "$scratch/corpus"
echo "fuzz: running $here/fuzz_proto for ${secs}s"
# -max_len: payloads of interest are small; 64 KiB still allows big lists.
# -rss_limit_mb: a decoder that allocates by an unchecked count trips it.
timeout -k 10 $((secs + 120)) "$here/fuzz_proto" -seed="${DDIO_FUZZ_SEED:-1}" -max_total_time="$secs" \
  -timeout=10 -rss_limit_mb=1024 -max_len=65536 -print_final_stats=1 -artifact_prefix="$here/" \
  "$scratch/corpus" "$here/corpus" >"$scratch/run.log" 2>&1
rc=$?
tail -n 12 "$scratch/run.log"
if [ $rc -ne 0 ]; then
  grep -E "ERROR|SUMMARY|fuzz_proto:|Test unit written" "$scratch/run.log" | head -n 20 >&2
  t_fail fuzz/run "exit $rc, see test/fuzz/crash-*"
else
  t_pass fuzz/run "$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$scratch/run.log" | grep -Eo '[0-9]+$') runs"
fi
t_done
