#!/usr/bin/env bash
# The repository's house rules, each one test:
#
#   house/c-lines   no C file over 1,000 lines outside test/
#   house/diary     README.md, NEWS, docs/ and bench/ speak of the product,
#                   not of the rounds of work that made it: no ordinal
#                   (first ... twentieth, 1st, 13th) or "this", "previous",
#                   "last", "next" followed by "session" or "sprint" (any
#                   case, across a line break too) in their text files
#                   (*.md, *.txt, NEWS, the scripts and programs, comments
#                   included)
#   house/subjects  commit subjects of at most 72 characters, in the commits
#                   after the one .ci/subject-base names first (skipped
#                   outside a git checkout, or when that commit is not in
#                   the history, as in a shallow clone); the commits it
#                   names after that one are let pass (history is not
#                   rewritten)
#
#   scripts/check-house.sh [SRC_DIR]      (make check runs it as it is)
#
# The files are git's tracked ones in a git checkout whose top is the
# source tree, else those under the source tree (make distcheck's
# tarball: its build and install directories left out). Each failure names
# the file and line, or the commit. Closes with "house: N passed, N failed".
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../test/lib.sh"
[ -n "${1:-}" ] && SRC=$(cd "$1" && pwd)
t_init house
command -v python3 >/dev/null || t_unusable house/python3 "python3 missing"

# the source tree's files, one per line, relative to it
git_top=$(git -C "$SRC" rev-parse --show-toplevel 2>/dev/null) || git_top=
if [ -n "$git_top" ] && [ "$(cd "$git_top" && pwd -P)" = "$(cd "$SRC" && pwd -P)" ]; then
  in_git=1
  git -C "$SRC" ls-files >"$T_TMP/files"
  from="git's tracked files"
else
  in_git=0
  # leave out build trees (a config.status in them: make distcheck's
  # _build/sub) and distcheck's install tree
  ( cd "$SRC" && find . -mindepth 2 -name config.status -printf '%h\n' | sed 's|^\./||' ) >"$T_TMP/builds"
  ( cd "$SRC" && find . \( -name .git -o -path ./_build -o -path ./_inst -o -path ./autom4te.cache \) -prune \
      -o -type f -print | sed 's|^\./||' ) |
    awk 'NR == FNR { b[$0] = 1; next }
         { n = split($0, p, "/"); d = ""; for (i = 1; i < n; i++) { d = d (i > 1 ? "/" : "") p[i]; if (d in b) next } print }' \
      "$T_TMP/builds" - >"$T_TMP/files"
  from="the files under $SRC (not a git checkout)"
fi

python3 - "$SRC" "$T_TMP/files" "$T_TMP/results" <<'PY'
import os, re, sys

src, files_list, results = sys.argv[1:4]
files = [f for f in open(files_list).read().split("\n") if f]
out = open(results, "w")
def result(line):
    out.write(line + "\n")

# ---- C files over 1,000 lines outside test/ -------------------------------------
LIMIT = 1000
long_files, n = [], 0
for f in sorted(files):
    if not f.endswith(".c") or f.startswith("test/"):
        continue
    path = os.path.join(src, f)
    if not os.path.isfile(path):
        continue
    n += 1
    with open(path, "rb") as fh:
        lines = fh.read().count(b"\n")
    if lines > LIMIT:
        long_files.append((lines, f))
if long_files:
    result("FAIL: house/c-lines: %d C file%s over %d lines outside test/: %s" % (
        len(long_files), "" if len(long_files) == 1 else "s", LIMIT,
        ", ".join("%s (%d)" % (f, l) for l, f in sorted(long_files, reverse=True))))
    for l, f in sorted(long_files, reverse=True):
        result("    %s: %d lines, over %d: split it by job" % (f, l, LIMIT))
else:
    result("PASS: house/c-lines (%d C files outside test/, none over %d lines)" % (n, LIMIT))

# ---- diary wording in README.md, NEWS, docs/, bench/ ----------------------------
ORD = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
       "twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|"
       "nineteenth|twentieth|[0-9]+(?:st|nd|rd|th)")
DIARY = re.compile(r"\b(?:%s|this|previous|last|next)[\s*_\-]+(?:session|sprint)s?\b" % ORD,
                   re.IGNORECASE)
TEXT = (".md", ".txt", ".sh", ".bash", ".py", ".awk", ".c", ".h")
def diary_file(f):
    if f in ("README.md", "NEWS", "NEWS.md"):
        return True
    return f.startswith(("docs/", "bench/")) and f.endswith(TEXT)
hits, n = {}, 0
for f in sorted(files):
    if not diary_file(f):
        continue
    path = os.path.join(src, f)
    if not os.path.isfile(path):
        continue
    n += 1
    text = open(path, encoding="utf-8", errors="replace").read()
    for m in DIARY.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        hits.setdefault(f, []).append((line, " ".join(m.group(0).split())))
if hits:
    total = sum(len(h) for h in hits.values())
    result("FAIL: house/diary: %d file%s narrate rounds of work (%d place%s): %s" % (
        len(hits), "" if len(hits) == 1 else "s", total, "" if total == 1 else "s",
        " ".join(sorted(hits))))
    for f in sorted(hits):
        for line, words in hits[f]:
            result("    %s:%d: \"%s\"" % (f, line, words))
else:
    result("PASS: house/diary (%d files of README.md, NEWS, docs/, bench/)" % n)
PY
rc=$?

# ---- commit subjects after .ci/subject-base ----------------------------------------
subjects() {
  local base_file=$SRC/.ci/subject-base base long
  if [ $in_git = 0 ]; then
    t_skip house/subjects "not a git checkout: no commits to read"; return
  fi
  [ -f "$base_file" ] || { t_fail house/subjects ".ci/subject-base missing"; return; }
  base=$(grep -Eo '^[0-9a-f]{7,40}' "$base_file" | head -n1)
  [ -n "$base" ] || { t_fail house/subjects ".ci/subject-base names no commit"; return; }
  if ! git -C "$SRC" cat-file -e "$base^{commit}" 2>/dev/null ||
     ! git -C "$SRC" merge-base --is-ancestor "$base" HEAD 2>/dev/null; then
    t_skip house/subjects "commit $base (.ci/subject-base) is not in this history (a shallow clone?)"
    return
  fi
  # characters, not bytes; the commits listed after the base are let pass
  git -C "$SRC" log -z --format='%H %s' "$base..HEAD" >"$T_TMP/subjects"
  long=$(python3 - "$T_TMP/subjects" "$base_file" <<'PY'
import re, sys
log, base_file = sys.argv[1:3]
hashes = [m.group(0) for m in (re.match(r"^[0-9a-f]{7,40}", l) for l in open(base_file)) if m]
excused = hashes[1:]
for entry in open(log, "rb").read().decode("utf-8", "replace").split("\0"):
    if not entry:
        continue
    h, _, subject = entry.partition(" ")
    if len(subject) > 72 and not any(h.startswith(e) for e in excused):
        print("    %s: %d characters: %s..." % (h[:12], len(subject), subject[:72]))
PY
)
  if [ -n "$long" ]; then
    t_fail house/subjects "$(printf '%s\n' "$long" | wc -l) commit subject(s) after ${base:0:12} over 72 characters: $(printf '%s\n' "$long" | awk '{ printf "%s%s", sep, substr($1, 1, length($1) - 1); sep = " " }')"
    t_say "$long"
  else
    t_pass house/subjects "$(git -C "$SRC" rev-list --count "$base..HEAD") commits after ${base:0:12}, none over 72 characters"
  fi
}

# the results, each failure followed by its indented details
t_results "$T_TMP/results"; n=$T_NRESULTS
if [ $rc -ne 0 ] || [ $n -eq 0 ]; then t_fail house/run "the file checks failed (exit $rc)"; fi
subjects
t_say "house: read $from"
t_done
