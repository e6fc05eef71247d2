#!/usr/bin/env bash
# Runs build-mpich.sh only when something that goes into the ddio MPICH
# changed since it was last installed into the cache: the driver and common
# sources, the build scripts, the MPICH source/device/cache settings. A no-op
# `make` then costs a hash instead of MPICH's own make + make install (~11 s),
# and no longer rewrites the installed library under programs that use it.
# The hash of the last installed inputs is kept beside the cached prefix, so
# two checkouts sharing the cache with different sources still rebuild.
# Usage: mpich-if-changed.sh PROJECT_DIR LINK
set -euo pipefail
proj=$(cd "${1:?usage: mpich-if-changed.sh PROJECT_DIR LINK}" && pwd)
link=${2:?usage: mpich-if-changed.sh PROJECT_DIR LINK}
inputs() {
  echo "source=${DDIO_MPICH_SOURCE:-} device=${DDIO_MPICH_DEVICE:-} cache=${DDIO_CACHE_DIR:-} home=$HOME"
  (cd "$proj" && find adio/ad_ddio common -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort \
     | while read -r f; do echo "$f"; cat "$f"; done
   cat scripts/build-mpich.sh scripts/overlay-driver.sh scripts/romio-register.sh \
       scripts/romio-large-count.py)
}
hash=$(inputs | sha256sum | cut -c1-64)
stamp() { echo "$(cd "$(readlink -f "$link")/.." && pwd)/.ddio-inputs"; }
if [ -L "$link" ] && [ -e "$link/lib/libmpich.so.12" ] && [ -e "$link/bin/mpicc" ] \
   && [ "$(cat "$(stamp)" 2>/dev/null)" = "$hash" ]; then
  echo "build-mpich: up to date ($(readlink "$link"))"
  exit 0
fi
# A new build tree (make distcheck's) has no link yet: a cached prefix
# installed from these very inputs only needs linking. Building it would end
# in make install, rewriting the library under the programs of a make check
# running beside it.
if [ ! -L "$link" ]; then
  for st in "${DDIO_CACHE_DIR:-$HOME/.cache/ddio}"/mpich-*/.ddio-inputs; do
    pre=$(dirname "$st")/prefix
    if [ "$(cat "$st" 2>/dev/null)" = "$hash" ] && [ -e "$pre/lib/libmpich.so.12" ]; then
      ln -sfn "$pre" "$link"
      echo "build-mpich: up to date ($pre)"
      exit 0
    fi
  done
fi
if [ -L "$link" ] && [ -d "$(readlink -f "$link")/.." ]; then rm -f "$(stamp)"; fi
"$proj/scripts/build-mpich.sh" "$proj" "$link"
echo "$hash" > "$(stamp)"
