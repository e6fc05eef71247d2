#!/usr/bin/env bash
# deb-src entries for `apt-get source` (the MPICH build), derived from the
# deb entries this machine's apt already has, so a site's own mirror serves
# the sources too.
#
#   scripts/deb-src.sh [--dry-run] [APT_DIR]
#
# APT_DIR (default $DDIO_APT_DIR, else /etc/apt): its sources.list and
# sources.list.d/*.list (one-line entries) and sources.list.d/*.sources
# (deb822 stanzas). Every enabled deb entry whose (URI, suite) pairs do not
# all have a deb-src entry already gets one:
#   deb [opts] URI suite comps...   ->  deb-src [opts] URI suite comps...
#     in sources.list.d/ddio-src.list
#   a stanza with Types: deb        ->  the same stanza (URIs, Suites,
#     Components, Signed-By and its other fields), Types: deb-src, in
#     sources.list.d/ddio-src.sources
# (cdrom: entries are left alone.) Those two files are this script's own:
# it leaves them out of what it reads and rewrites them each time (removed
# when nothing is missing); a ddio-src.sources written by an older
# install-deps.sh (a fixed Debian mirror) is replaced that way too.
#
# Prints one line per file it wrote or removed (nothing when apt's sources
# were already complete: the caller runs apt-get update only then).
# --dry-run: prints the files it would write, and writes nothing.
# Writes run as $SUDO (e.g. SUDO=sudo). Needs bash and awk only (install-deps
# runs it before anything is installed).
set -euo pipefail
dry=0
[ "${1:-}" = --dry-run ] && { dry=1; shift; }
dir=${1:-${DDIO_APT_DIR:-/etc/apt}}
SUDO=${SUDO:-}
parts=$dir/sources.list.d
own_list=$parts/ddio-src.list
own_sources=$parts/ddio-src.sources
MARK="# Written by ddio's scripts/install-deps.sh (scripts/deb-src.sh):"

# the configured files, ours left out
inputs=()
[ -f "$dir/sources.list" ] && inputs+=("$dir/sources.list")
for f in "$parts"/*.list "$parts"/*.sources; do
  [ -f "$f" ] || continue
  [ "$f" = "$own_list" ] || [ "$f" = "$own_sources" ] || inputs+=("$f")
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-deb-src.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/list"; : >"$tmp/sources"

# derive_entries FILES...: the missing deb-src entries, one-line ones into
# $tmp/list, deb822 stanzas into $tmp/sources
derive_entries() {
  [ $# -gt 0 ] || return 0
  awk -v listout="$tmp/list" -v srcout="$tmp/sources" '
    function key(u, s) { sub(/\/+$/, "", u); return u " " s }
    # ---- one-line entries: type [opts] uri suite [comps...] ----
    function oneline(line,    n, t, i, uri, suite, rest) {
      sub(/^[ \t]+/, "", line)
      if (line ~ /^#/ || line == "") return
      sub(/[ \t]+#.*$/, "", line)
      n = split(line, t, /[ \t]+/)
      if (t[1] != "deb" && t[1] != "deb-src") return
      i = 2
      if (substr(t[i], 1, 1) == "[") { while (i <= n && t[i] !~ /\]$/) i++; i++ }
      uri = t[i]; suite = t[i + 1]
      if (uri == "" || suite == "" || uri ~ /^cdrom:/) return
      if (t[1] == "deb-src") { have[key(uri, suite)] = 1; return }
      rest = line; sub(/^deb[ \t]+/, "", rest)
      nl++; lfile[nl] = FILENAME; lline[nl] = "deb-src " rest; lkey[nl] = key(uri, suite)
    }
    # ---- deb822 stanzas ----
    function stanza_end(    types, i, j, nu, ns, u, s, k, keys, enabled) {
      if (sn == 0) return
      types = " " tolower(f["types"]) " "; gsub(/[ \t]+/, " ", types)
      enabled = tolower(f["enabled"]); gsub(/[ \t]/, "", enabled)
      nu = split(f["uris"], u, /[ \t]+/); ns = split(f["suites"], s, /[ \t]+/)
      keys = ""
      for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
        if (u[i] != "" && s[j] != "" && u[i] !~ /^cdrom:/) keys = keys SUBSEP key(u[i], s[j])
      if (enabled != "no" && keys != "") {
        if (index(types, " deb-src ")) {
          k = split(substr(keys, 2), u, SUBSEP); for (i = 1; i <= k; i++) have[u[i]] = 1
        } else if (index(types, " deb ")) {
          ns822++; sfile[ns822] = stfile; skeys[ns822] = substr(keys, 2); stext[ns822] = ""
          for (i = 1; i <= sn; i++) {
            if (sname[i] != "types") stext[ns822] = stext[ns822] sl[i] "\n"
            else if (!scont[i]) stext[ns822] = stext[ns822] "Types: deb-src\n"
          }
        }
      }
      sn = 0; split("", f); cur = ""
    }
    FNR == 1 { stanza_end(); deb822 = (FILENAME ~ /\.sources$/) }
    !deb822 { oneline($0); next }
    /^[ \t]*#/ { next }
    /^[ \t]*$/ { stanza_end(); next }
    /^[ \t]/ { if (cur != "") { f[cur] = f[cur] " " $0; sl[++sn] = $0; sname[sn] = cur; scont[sn] = 1 } next }
    {
      if (sn == 0) stfile = FILENAME
      cur = tolower(substr($0, 1, index($0, ":") - 1)); v = substr($0, index($0, ":") + 1)
      f[cur] = v; sl[++sn] = $0; sname[sn] = cur; scont[sn] = 0
    }
    END {
      stanza_end()
      for (i = 1; i <= nl; i++) {
        if (lkey[i] in have || lline[i] in done) continue
        done[lline[i]] = 1
        print "# from " lfile[i] > listout
        print lline[i] > listout
      }
      for (i = 1; i <= ns822; i++) {
        k = split(skeys[i], u, SUBSEP); miss = 0
        for (j = 1; j <= k; j++) if (!(u[j] in have)) miss = 1
        if (!miss) continue
        if (out822++) print "" > srcout
        print "# from " sfile[i] > srcout
        printf "%s", stext[i] > srcout
      }
    }' "$@"
}
derive_entries "${inputs[@]+"${inputs[@]}"}"

# put FILE DERIVED: FILE holds our header and DERIVED, or is gone when
# DERIVED is empty; one line said per change
put() {
  local file=$1 derived=$2 want=$tmp/want.$RANDOM what n
  if [ -s "$derived" ]; then
    { echo "$MARK"; echo "# deb-src entries derived from this machine's deb entries; rewritten there."
      cat "$derived"; } >"$want"
  else
    : >"$want"
  fi
  if [ $dry = 1 ]; then
    [ -s "$want" ] && { echo "== $file"; cat "$want"; }
    return 0
  fi
  if [ ! -s "$want" ]; then
    [ -e "$file" ] || return 0
    if grep -qsF "$MARK" "$file"; then what="no deb-src entry missing"
    else what="written by an older install-deps.sh"; fi
    $SUDO rm -f "$file"
    echo "deb-src: removed $file ($what)"
    return 0
  fi
  cmp -s "$want" "$file" && return 0
  if [ -e "$file" ] && ! grep -qsF "$MARK" "$file"; then
    what="replaces the one an older install-deps.sh wrote"
  else
    what="derived"
  fi
  $SUDO tee "$file" <"$want" >/dev/null
  $SUDO chmod 644 "$file"
  n=$(grep -c '^deb-src\|^Types: deb-src' "$want")
  echo "deb-src: wrote $file ($n $([ "$n" = 1 ] && echo entry || echo entries), $what)"
}
[ -d "$parts" ] || [ $dry = 1 ] || $SUDO mkdir -p "$parts"
put "$own_list" "$tmp/list"
put "$own_sources" "$tmp/sources"
