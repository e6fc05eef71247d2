#!/usr/bin/env bash
# debian-source.sh PKG: prints the path of Debian's source package PKG's
# .dsc (its tarballs beside it), fetched once with `apt-get source
# --download-only` into ${DDIO_CACHE_DIR:-~/.cache/ddio}/debian-source, the
# directory scripts/build-*.sh fetch into; DDIO_<PKG>_DSC (e.g.
# DDIO_PNETCDF_DSC, as build-pnetcdf.sh reads it) names another .dsc.
# The same lookup as scripts/build-pnetcdf.sh's, for the runners that
# build from a source package without building the package itself (test/
# ompi: PnetCDF's examples and test programs, netCDF-C's nc_test4).
# build-pnetcdf.sh keeps its own copy for now: its text is its cache key.
set -euo pipefail
pkg=${1:?usage: debian-source.sh PKG}
var=DDIO_$(echo "$pkg" | tr 'a-z-' 'A-Z_')_DSC
dsc=${!var:-}
if [ -z "$dsc" ]; then
  dl="${DDIO_CACHE_DIR:-$HOME/.cache/ddio}/debian-source"
  dsc=$(ls "$dl/${pkg}"_*.dsc 2>/dev/null | head -n1 || true)
  if [ -z "$dsc" ]; then
    command -v apt-get >/dev/null || { echo "debian-source: apt-get is unavailable: set $var" >&2; exit 1; }
    echo "debian-source: fetching Debian's $pkg source (apt-get source $pkg)" >&2
    mkdir -p "$dl"
    (cd "$dl" && apt-get source --download-only "$pkg") >&2 \
      || { echo "debian-source: apt-get source $pkg failed: run scripts/install-deps.sh (it adds deb-src entries)" >&2; exit 1; }
    dsc=$(ls "$dl/${pkg}"_*.dsc | head -n1)
  fi
fi
[ -f "$dsc" ] || { echo "debian-source: $pkg source package '$dsc' not found" >&2; exit 1; }
echo "$(cd "$(dirname "$dsc")" && pwd)/$(basename "$dsc")"
