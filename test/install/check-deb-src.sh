#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2317  # apt's $(FIELD) formats; the cases run by name
# scripts/deb-src.sh (install-deps.sh's deb-src entries) on sample apt
# directories, without apt-get update or any install: one-line sources,
# deb822 sources, both, sources that already have their deb-src entries
# (whole or in part), a disabled stanza and cdrom: entries, the fixed-mirror
# ddio-src.sources an older install-deps.sh wrote, and a second run that
# changes nothing. Each case compares the files written and the lines
# printed; where apt-get is installed, apt also reads the result (apt-get
# indextargets, offline) and must find a deb-src target for every deb one.
# Closes with "deb-src: N passed, N failed".
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init deb-src
script=$SRC/scripts/deb-src.sh
[ -f "$script" ] || t_unusable deb-src/script "$script missing"
H1="# Written by ddio's scripts/install-deps.sh (scripts/deb-src.sh):"
H2="# deb-src entries derived from this machine's deb entries; rewritten there."
OLD='Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'
DEBIAN='Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
# http://snapshot.debian.org/archive/debian-security/20250520T000000Z
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'

# sample NAME: a fresh apt directory $T_TMP/NAME (D), sources.list.d in it
sample() { D=$T_TMP/$1; mkdir -p "$D/sources.list.d"; }
# expect FILE [CONTENT]: FILE holds our header and CONTENT (no CONTENT: FILE absent)
expect() {
  if [ $# -lt 2 ]; then
    [ ! -e "$1" ] || { t_why "${1#"$T_TMP"/} should not exist:"; sed 's/^/      /' "$1"; return 1; }
    return 0
  fi
  printf '%s\n%s\n%s\n' "$H1" "$H2" "$2" >"$1.want"
  diff -u "$1.want" "$1" >"$1.diff" 2>&1 && return 0
  t_why "${1#"$T_TMP"/} differs from what it should hold:"; sed 's/^/      /' "$1.diff"; return 1
}
# said WANT: what the run printed ($T_TMP/said) is WANT (lines, in order)
said() {
  [ "$(cat "$T_TMP/said")" = "$1" ] && return 0
  t_why "it printed:"; sed 's/^/      /' "$T_TMP/said"; echo "    instead of:"; printf '%s\n' "$1" | sed 's/^/      /'
  return 1
}
run() { "$script" "$D" >"$T_TMP/said" 2>&1 || { t_why "exit $?"; cat "$T_TMP/said"; return 1; }; }
# apt_reads: apt, offline, lists a deb-src target for every deb target
# (cdrom: ones aside)
apt_reads() {
  command -v apt-get >/dev/null || return 0
  mkdir -p "$D.lists/partial"
  apt-get -o Dir::Etc::SourceList="$D/sources.list" -o Dir::Etc::SourceParts="$D/sources.list.d" \
    -o Dir::State::Lists="$D.lists" indextargets --no-release-info \
    --format '$(TARGET_OF) $(REPO_URI) $(RELEASE) $(COMPONENT)' >"$D.targets" 2>&1 ||
    { t_why "apt-get indextargets failed:"; sed 's/^/      /' "$D.targets"; return 1; }
  if grep -q '^[EW]:' "$D.targets"; then t_why "apt says:"; grep '^[EW]:' "$D.targets"; return 1; fi
  awk '$2 ~ /^cdrom:/ { next }
       $1 == "deb" { d[$2 " " $3 " " $4] = 1 } $1 == "deb-src" { s[$2 " " $3 " " $4] = 1 }
       END { for (k in d) if (!(k in s)) { print "    no deb-src for " k; bad = 1 } exit bad }' "$D.targets" ||
    { t_why "apt finds deb entries without deb-src"; return 1; }
}

# ---- one-line entries -------------------------------------------------------------
c_oneline() {
  sample oneline
  cat >"$D/sources.list" <<'EOF'
# a comment
deb http://mirror.example.org/debian bookworm main contrib
# deb http://commented.example.org/debian bookworm main
deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_ - Official amd64 DVD Binary-1]/ bookworm contrib main
EOF
  cat >"$D/sources.list.d/extra.list" <<'EOF'
deb [arch=amd64 signed-by=/usr/share/keyrings/extra.gpg] https://extra.example.org/apt stable main # trailing
deb [ trusted=yes ] file:/srv/repo ./
EOF
  echo "deb http://ignored.example.org/debian bookworm main" >"$D/sources.list.d/off.list.disabled"
  run || return 1
  said "deb-src: wrote $D/sources.list.d/ddio-src.list (3 entries, derived)" &&
  expect "$D/sources.list.d/ddio-src.list" "# from $D/sources.list
deb-src http://mirror.example.org/debian bookworm main contrib
# from $D/sources.list.d/extra.list
deb-src [arch=amd64 signed-by=/usr/share/keyrings/extra.gpg] https://extra.example.org/apt stable main
# from $D/sources.list.d/extra.list
deb-src [ trusted=yes ] file:/srv/repo ./" &&
  expect "$D/sources.list.d/ddio-src.sources" && apt_reads
}

# ---- deb822 stanzas: this machine's kind of debian.sources, and more fields ------------
c_deb822() {
  sample deb822
  printf '%s\n' "$DEBIAN" >"$D/sources.list.d/debian.sources"
  cat >"$D/sources.list.d/vendor.sources" <<'EOF'
Types: deb
URIs: https://vendor.example.com/apt
Suites: nodistro
Components: main
Architectures: amd64
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mDMEZabcdefghijkl
 -----END PGP PUBLIC KEY BLOCK-----

Types: deb
Enabled: no
URIs: http://disabled.example.com/apt
Suites: stable
Components: main
EOF
  run || return 1
  said "deb-src: wrote $D/sources.list.d/ddio-src.sources (3 entries, derived)" &&
  expect "$D/sources.list.d/ddio-src.sources" "# from $D/sources.list.d/debian.sources
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

# from $D/sources.list.d/debian.sources
Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

# from $D/sources.list.d/vendor.sources
Types: deb-src
URIs: https://vendor.example.com/apt
Suites: nodistro
Components: main
Architectures: amd64
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mDMEZabcdefghijkl
 -----END PGP PUBLIC KEY BLOCK-----" &&
  expect "$D/sources.list.d/ddio-src.list" && apt_reads
}

# ---- both kinds, and a second run that changes nothing ---------------------------------
c_mixed() {
  sample mixed
  echo "deb http://local.mirror.lan/debian bookworm main" >"$D/sources.list"
  printf 'Types: deb\nURIs: http://local.mirror.lan/debian-security/\nSuites: bookworm-security\nComponents: main\n' \
    >"$D/sources.list.d/security.sources"
  run || return 1
  said "deb-src: wrote $D/sources.list.d/ddio-src.list (1 entry, derived)
deb-src: wrote $D/sources.list.d/ddio-src.sources (1 entry, derived)" &&
  expect "$D/sources.list.d/ddio-src.list" "# from $D/sources.list
deb-src http://local.mirror.lan/debian bookworm main" &&
  expect "$D/sources.list.d/ddio-src.sources" "# from $D/sources.list.d/security.sources
Types: deb-src
URIs: http://local.mirror.lan/debian-security/
Suites: bookworm-security
Components: main" && apt_reads || return 1
  if ! run || ! said ""; then t_why "a second run: $T_WHY"; return 1; fi
}

# ---- deb-src already configured (whole, in part, the other kind) -------------------------
c_present() {
  sample present
  cat >"$D/sources.list" <<'EOF'
deb http://mirror.example.org/debian bookworm main
deb-src http://mirror.example.org/debian/ bookworm main
deb http://mirror.example.org/debian bookworm-updates main
EOF
  printf 'Types: deb deb-src\nURIs: http://mirror.example.org/debian-security\nSuites: bookworm-security\nComponents: main\n' \
    >"$D/sources.list.d/security.sources"
  printf 'Types: deb\nURIs: http://mirror.example.org/debian-security\nSuites: bookworm-security\nComponents: main\n' \
    >"$D/sources.list.d/again.sources"
  run || return 1
  # only bookworm-updates lacks its deb-src
  said "deb-src: wrote $D/sources.list.d/ddio-src.list (1 entry, derived)" &&
  expect "$D/sources.list.d/ddio-src.list" "# from $D/sources.list
deb-src http://mirror.example.org/debian bookworm-updates main" &&
  expect "$D/sources.list.d/ddio-src.sources" || return 1
  # the site adds it itself: ours goes
  echo "deb-src http://mirror.example.org/debian bookworm-updates main" >>"$D/sources.list"
  run && said "deb-src: removed $D/sources.list.d/ddio-src.list (no deb-src entry missing)" &&
    expect "$D/sources.list.d/ddio-src.list" || return 1
  run && said ""
}

# ---- the fixed-mirror ddio-src.sources of an older install-deps.sh ------------------------
c_old() {
  sample old-mirror       # a site whose own mirror is the only one it reaches
  printf '%s\n' "$OLD" >"$D/sources.list.d/ddio-src.sources"
  echo "deb http://mirror.site.lan/debian bookworm main" >"$D/sources.list"
  run || return 1
  said "deb-src: wrote $D/sources.list.d/ddio-src.list (1 entry, derived)
deb-src: removed $D/sources.list.d/ddio-src.sources (written by an older install-deps.sh)" &&
  expect "$D/sources.list.d/ddio-src.list" "# from $D/sources.list
deb-src http://mirror.site.lan/debian bookworm main" &&
  expect "$D/sources.list.d/ddio-src.sources" && apt_reads || return 1
  sample old-deb822       # this machine's case: debian.sources and the old file
  printf '%s\n' "$DEBIAN" >"$D/sources.list.d/debian.sources"
  printf '%s\n' "$OLD" >"$D/sources.list.d/ddio-src.sources"
  run || return 1
  said "deb-src: wrote $D/sources.list.d/ddio-src.sources (2 entries, replaces the one an older install-deps.sh wrote)" &&
  if ! grep -qxF "# from $D/sources.list.d/debian.sources" "$D/sources.list.d/ddio-src.sources" ||
     ! grep -qxF "URIs: http://deb.debian.org/debian-security" "$D/sources.list.d/ddio-src.sources"; then
    t_why "the derived ddio-src.sources lacks the security stanza"; return 1
  fi
  apt_reads
}

# ---- nothing configured at all; --dry-run writes nothing -----------------------------------
c_empty() {
  sample empty
  run && said "" && expect "$D/sources.list.d/ddio-src.list" && expect "$D/sources.list.d/ddio-src.sources"
}
c_dry() {
  sample dry
  echo "deb http://mirror.example.org/debian bookworm main" >"$D/sources.list"
  "$script" --dry-run "$D" >"$T_TMP/said" 2>&1 || { t_why "exit $?"; return 1; }
  grep -qxF "deb-src http://mirror.example.org/debian bookworm main" "$T_TMP/said" ||
    { t_why "--dry-run did not print the entry"; return 1; }
  expect "$D/sources.list.d/ddio-src.list"
}
# ---- DDIO_APT_DIR names the directory --------------------------------------------------
c_env() {
  sample env
  echo "deb http://mirror.example.org/debian bookworm main" >"$D/sources.list"
  DDIO_APT_DIR=$D "$script" >"$T_TMP/said" 2>&1 || { t_why "exit $?"; return 1; }
  said "deb-src: wrote $D/sources.list.d/ddio-src.list (1 entry, derived)"
}

for c in oneline deb822 mixed present old empty dry env; do
  T_WHY=""
  if "c_$c" >"$T_TMP/$c.out" 2>&1; then t_pass "deb-src/$c"
  else t_fail "deb-src/$c" "$T_WHY"; t_indent "$T_TMP/$c.out"; fi
done
t_done
