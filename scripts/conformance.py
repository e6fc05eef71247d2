#!/usr/bin/env python3
"""docs/CONFORMANCE.md from the claims and the logs of a `make check` run.

  scripts/conformance.py                   check that every test a claim names
                                           exists (make check runs this)
  scripts/conformance.py --report [BUILD]  write BUILD/docs/CONFORMANCE.md from
                                           the claims and the test logs in BUILD
                                           (default: $BUILD, else the source tree)
  options: --claims FILE (docs/conformance.tsv), --out FILE

The claims (docs/conformance.tsv): one line per claim, three tab-separated
fields: area, what is supported (one sentence), and the tests that show it,
separated by ";", each SUITE:NAME. SUITE is a test of make check (Makefile.am),
by its path or short name (test/mpi/run-mpi-tests.sh is `mpi`,
test/mpi/run-mpi-tests-other.sh `mpi-other`, test/unit/check_store
`check_store`, scripts/check-sanitizers.sh `sanitizers`). NAME is a case as
the suite's log names it: "PASS: NAME", "FAIL: NAME: why", "SKIP: NAME: why"
(test/lib.sh), or a Check test function of a unit test (they print each
test's result: test/unit/suite_run.h); it may be a pattern (* ? [..], as in
the shell). Tests "-": something not supported, or not tested.

A name exists when each word of it is a word of the suite's sources (the
harness and the files beside it; for a unit test, the names of the tests its
source registers), so a misspelt or removed name fails without a run. With a
run's logs (--report), a name that matches no case of a suite whose run
passed is an error too; a suite without a log is "not run".
Exit status: 0, 1 when a claim names a test that does not exist, 2 on usage.
"""
import fnmatch
import os
import re
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORD = re.compile(r'[A-Za-z0-9_]+')
GLOB = re.compile(r'\*|\?|\[[^\]]*\]')


def fail_usage(msg):
    print('conformance: ' + msg, file=sys.stderr)
    sys.exit(2)


# ---- the suites: make check's tests (Makefile.am) ---------------------------------

def makefile_tests():
    """The paths Makefile.am lists in UNIT_TESTS, QUICK_TESTS, FULL_TESTS, TESTS."""
    text = open(os.path.join(SRC, 'Makefile.am')).read().replace('\\\n', ' ')
    found = []
    for line in text.splitlines():
        m = re.match(r'\s*(UNIT_TESTS|QUICK_TESTS|FULL_TESTS|TESTS)\s*\+?=(.*)', line)
        if not m:
            continue
        for w in m.group(2).split():
            if re.match(r'(test|scripts)/', w) and w not in found:
                found.append(w)
    return found


def short_name(path):
    base = os.path.basename(path)
    base = re.sub(r'\.(sh|py)$', '', base)
    base = re.sub(r"^(run|check)-", "", base)
    return base.replace('-tests', '')


class Suite:
    def __init__(self, path):
        self.path = path
        self.name = short_name(path)
        self.unit = path.startswith('test/unit/check_')
        self._words = None
        self._registered = None
        self.cases = None          # [(status, [names])] from the log
        self.verdict = None        # the .trs result, None without one
        self.closing = None        # the log's own count line
        self.unnamed = False       # a unit test's log without its tests' names

    def source_file(self):
        return os.path.join(SRC, self.path + '.c' if self.unit else self.path)

    def registered(self):
        """A unit test's Check tests, by function name."""
        if self._registered is None:
            text = read_text(self.source_file())
            self._registered = re.findall(
                r'tcase_add_(?:loop_)?(?:test|exit_test|test_raise_signal)\s*\(\s*\w+\s*,\s*(\w+)', text)
        return self._registered

    def words(self):
        """The words of the harness and of the files beside it."""
        if self._words is None:
            files = [self.source_file()]
            d = os.path.dirname(self.source_file())
            if os.path.basename(d) != 'scripts':
                files += [os.path.join(d, f) for f in sorted(os.listdir(d))]
            words = set()
            for f in files:
                if os.path.isfile(f) and os.path.getsize(f) < 4 << 20:
                    words.update(WORD.findall(read_text(f)))
            self._words = words
        return self._words


def read_text(path):
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError:
        return ''
    if b'\0' in data[:4096]:
        return ''
    return data.decode('utf-8', 'replace')


def suites():
    out = {}
    for p in makefile_tests():
        s = Suite(p)
        if not os.path.exists(s.source_file()):
            continue
        out[s.path] = s
        if s.name in out and out[s.name].path != s.path:
            fail_usage('two make check tests are both "%s": %s, %s' % (s.name, out[s.name].path, s.path))
        out[s.name] = s
    return out


# ---- the claims --------------------------------------------------------------------

class Claim:
    def __init__(self, lineno, area, text, refs):
        self.lineno, self.area, self.text, self.refs = lineno, area, text, refs


def read_claims(path):
    claims, errors = [], []
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        line = line.rstrip('\n')
        if not line.strip() or line.startswith('#'):
            continue
        f = line.split('\t')
        if f == ['area', 'supported', 'tests']:
            continue
        if len(f) != 3 or not all(x.strip() for x in f):
            errors.append('%s:%d: want 3 tab-separated fields: area, supported, tests' % (path, n))
            continue
        area, text, tests = (x.strip() for x in f)
        refs = []
        if tests != '-':
            for r in tests.split(';'):
                r = r.strip()
                if ':' not in r:
                    errors.append('%s:%d: "%s": want SUITE:NAME' % (path, n, r))
                    continue
                suite, name = r.split(':', 1)
                refs.append((suite.strip(), name.strip()))
        claims.append(Claim(n, area, text, refs))
    return claims, errors


def pattern_words(pattern):
    """The pattern's words, each with whether a glob touches it on the left/right."""
    out = []
    pos, chunks = 0, []
    for m in GLOB.finditer(pattern):
        chunks.append((pattern[pos:m.start()], pos > 0, True))
        pos = m.end()
    chunks.append((pattern[pos:], pos > 0, False))
    for text, glob_before, glob_after in chunks:
        for m in WORD.finditer(text):
            out.append((m.group(0), glob_before and m.start() == 0,
                        glob_after and m.end() == len(text)))
    return out


def exists(suite, pattern):
    """None when the pattern can name a test of the suite, else why not."""
    if suite.unit:
        if any(fnmatch.fnmatchcase(t, pattern) for t in suite.registered()):
            return None
        return 'no test of %s.c is named so' % suite.path
    words = suite.words()
    if not pattern_words(pattern):
        return 'the name has no word to look for'
    for w, open_left, open_right in pattern_words(pattern):
        if open_left and open_right:
            ok = any(w in x for x in words)
        elif open_left:
            ok = any(x.endswith(w) for x in words)
        elif open_right:
            ok = any(x.startswith(w) for x in words)
        else:
            ok = w in words
        if not ok:
            return '"%s" is not in %s or the files beside it' % (w, suite.path)
    return None


# ---- the logs ----------------------------------------------------------------------

RESULT = re.compile(r'^(PASS|FAIL|SKIP): (.*)$')
CHECK = re.compile(r'^[^:\s]+:\d+:([PFE]):[^:]*:([^:]+):\d+:')
COUNT = re.compile(r'^(\S[^:]*): (\d+) passed, (\d+) failed(?:, (\d+) skipped)?')
CHECKS = re.compile(r'Checks: (\d+), Failures: (\d+), Errors: (\d+)')


def names_of(status, rest):
    """The names a result line may give: a PASS line's note " (..)" and a
    FAIL/SKIP line's reason ": .." are cut off at each place they may start."""
    sep = ' (' if status == 'PASS' else ': '
    out = [rest]
    i = rest.find(sep)
    while i > 0:
        out.append(rest[:i])
        i = rest.find(sep, i + 1)
    return out


def load_log(suite, build):
    base = os.path.join(build, suite.path)
    log, trs = base + '.log', base + '.trs'
    if not os.path.exists(log):
        return False
    suite.cases = []
    text = read_text(log)
    for line in text.splitlines():
        if suite.unit:
            m = CHECK.match(line)
            if m:
                suite.cases.append(('pass' if m.group(1) == 'P' else 'fail', [m.group(2)]))
            continue
        m = RESULT.match(line)
        if m:
            suite.cases.append(({'PASS': 'pass', 'FAIL': 'fail', 'SKIP': 'skip'}[m.group(1)],
                                names_of(m.group(1), m.group(2))))
    if suite.unit:
        c = CHECKS.findall(text)
        if c:
            n, f, e = (int(x) for x in c[-1])
            suite.closing = (n - f - e, f + e, 0)
            if n and not suite.cases:      # printed without CK_VERBOSE
                suite.unnamed = True
    else:
        for line in text.splitlines():
            m = COUNT.match(line)
            if m:
                suite.closing = (int(m.group(2)), int(m.group(3)), int(m.group(4) or 0))
    t = read_text(trs)
    m = re.search(r'^:test-result: (\S+)', t, re.M)
    suite.verdict = m.group(1) if m else None
    suite.mtime = os.path.getmtime(log)
    return True


def matches(suite, pattern):
    """The log's cases the pattern names: (index, status)."""
    return [(i, st) for i, (st, names) in enumerate(suite.cases)
            if any(fnmatch.fnmatchcase(n, pattern) for n in names)]


# ---- the report --------------------------------------------------------------------

def counts_text(p, f, s):
    parts = ['%d passed' % p] if p or not (f or s) else []
    if f:
        parts.append('%d failed' % f)
    if s:
        parts.append('%d skipped' % s)
    return ', '.join(parts)


def cell(text):
    return text.replace('|', '\\|')


def ref_text(suite_name, pattern):
    return '%s: `%s`' % (suite_name, pattern.replace('|', '\\|'))


def ref_result(suite, pat):
    """A named test's result: its cases' counts in the suite's log, or why none."""
    if suite.cases is None:
        return 'not run', False
    if suite.unnamed:
        return 'ran; its log names no test', False
    p = f = k = 0
    for _, st in matches(suite, pat):
        p += st == 'pass'
        f += st == 'fail'
        k += st == 'skip'
    if p + f + k == 0:
        # a suite that passed without running it: the name is wrong
        return 'not in the log', suite.verdict == 'PASS'
    return counts_text(p, f, k), False


def git_commit():
    try:
        c = subprocess.run(['git', '-C', SRC, 'rev-parse', '--short', 'HEAD'],
                           capture_output=True, text=True, timeout=30)
        if c.returncode != 0:
            return None
        d = subprocess.run(['git', '-C', SRC, 'status', '--porcelain', '--untracked-files=no'],
                           capture_output=True, text=True, timeout=30)
        return c.stdout.strip() + (' with uncommitted changes' if d.stdout.strip() else '')
    except (OSError, subprocess.SubprocessError):
        return None


VERDICT = {'PASS': 'passed', 'FAIL': 'failed', 'SKIP': 'skipped', 'ERROR': 'error',
           'XFAIL': 'failed as expected', 'XPASS': 'passed unexpectedly'}

INTRO = """# Conformance

What ddio supports, the tests that show it, and their last results.

This file is generated: `scripts/conformance.py --report` reads the claims
in [conformance.tsv](conformance.tsv) and the logs a `make check` run leaves
in the build tree. To change a claim, edit conformance.tsv; to refresh the
results, run the suites and regenerate:

    ./ddio.sh test                      # every suite, then this file
    scripts/conformance.py --report     # from the logs already in the tree

`make check` runs `scripts/conformance.py`, which fails when a claim names a
test that does not exist; `./ddio.sh test` also fails when a suite passed
without running a test that a claim names.

A test is written SUITE: `NAME`. SUITE is a test of `make check` (the
table below); NAME is how that suite's log names the case (`PASS: NAME`; for
the Check unit tests, the test function), or a pattern of such names (`*`
any characters). The result column counts the cases the names match in the
suites' last logs; "not run": the suite left no log.
"""


def report(claims, by_name, all_suites, out):
    ran = [s for s in all_suites if s.cases is not None]
    lines = [INTRO]
    if ran:
        when = time.strftime('%Y-%m-%d', time.gmtime(max(s.mtime for s in ran)))
        commit = git_commit()
        lines.append('Results: the logs of %d of the %d suites (the newest of %s)%s.\n'
                     % (len(ran), len(all_suites), when,
                        '; generated at commit ' + commit if commit else ''))
    else:
        lines.append('Results: no suite has run in this tree; every result is "not run".\n')
    lines.append('## Suites\n')
    lines.append('| suite | make check test | last result |')
    lines.append('|---|---|---|')
    for s in all_suites:
        if s.cases is None:
            r = 'not run'
        elif s.verdict is None:
            r = 'did not finish' + (' (%s)' % counts_text(*s.closing) if s.closing else '')
        else:
            r = VERDICT.get(s.verdict, s.verdict)
            if s.closing:
                r = counts_text(*s.closing) + ('' if s.verdict == 'PASS' else ' (%s)' % r)
        lines.append('| %s | `%s` | %s |' % (s.name, s.path, r))
    lines.append('')
    stale_all, areas = [], []
    for c in claims:
        if c.area not in areas:
            areas.append(c.area)
    for area in areas:
        lines.append('## %s\n' % area)
        rows = [c for c in claims if c.area == area and c.refs]
        unsupported = [c for c in claims if c.area == area and not c.refs]
        if rows:
            lines.append('| supported | test(s) | last result |')
            lines.append('|---|---|---|')
            for c in rows:
                results = []
                for sn, p in c.refs:
                    r, stale = ref_result(by_name[sn], p)
                    results.append(r)
                    if stale:
                        stale_all.append((c, '%s:%s' % (by_name[sn].name, p)))
                tests = '<br>'.join(ref_text(by_name[sn].name, p) for sn, p in c.refs)
                lines.append('| %s | %s | %s |' % (cell(c.text), tests, '<br>'.join(results)))
            lines.append('')
        if unsupported:
            lines.append('Not supported, or not tested:\n')
            for c in unsupported:
                lines.append('- ' + c.text)
            lines.append('')
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines).rstrip('\n') + '\n')
    os.replace(tmp, out)
    return stale_all


def main(argv):
    mode, build, claims_path, out = 'check', None, os.path.join(SRC, 'docs', 'conformance.tsv'), None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == '--report':
            mode = 'report'
            if args and not args[0].startswith('-'):
                build = args.pop(0)
        elif a == '--check':
            mode = 'check'
        elif a == '--claims' and args:
            claims_path = args.pop(0)
        elif a == '--out' and args:
            out = args.pop(0)
        elif a in ('-h', '--help'):
            print(__doc__.strip())
            return 0
        else:
            fail_usage('unknown argument "%s" (--help)' % a)
    table = suites()
    claims, errors = read_claims(claims_path)
    shown = os.path.relpath(claims_path, SRC)
    if shown.startswith('..'):
        shown = claims_path
    for c in claims:
        for sname, pat in c.refs:
            where = '%s:%d' % (shown, c.lineno)
            if sname not in table:
                errors.append('%s: %s:%s: no make check test "%s" (Makefile.am)' % (where, sname, pat, sname))
                continue
            why = exists(table[sname], pat)
            if why:
                errors.append('%s: %s:%s: no such test: %s' % (where, sname, pat, why))
    if mode == 'check':
        for e in errors:
            print('conformance: ' + e, file=sys.stderr)
        nrefs = sum(len(c.refs) for c in claims)
        if errors:
            print('conformance: %d errors in the claims (above)' % len(errors))
            return 1
        print('conformance: %d claims, %d tests named, each exists' % (len(claims), nrefs))
        return 0
    build = os.path.abspath(build or os.environ.get('BUILD') or SRC)
    out = out or os.path.join(build, 'docs', 'CONFORMANCE.md')
    all_suites = []
    for k, s in table.items():
        if k == s.path:
            load_log(s, build)
            all_suites.append(s)
    # claims with unknown suites or tests are reported, not rendered
    bad = {c.lineno for c in claims for sn, p in c.refs if sn not in table or exists(table[sn], p)}
    stale = report([c for c in claims if c.lineno not in bad], table, all_suites, out)
    for e in errors:
        print('conformance: ' + e, file=sys.stderr)
    for c, ref in stale:
        print('conformance: %s:%d: %s: no such case in the log of its suite, which passed'
              % (shown, c.lineno, ref), file=sys.stderr)
    print('conformance: wrote %s' % out)
    return 1 if errors or stale else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
