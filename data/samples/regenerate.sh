#!/usr/bin/env bash
# Regenerate the parle demo samples from Debian 12 (bookworm) packages.
# Needs: apt-get (with `apt-get update` done once), dpkg-deb, node >= 18, sha256sum.
# Nothing is installed system-wide: the .deb files are only downloaded and unpacked
# into a temporary directory.
#
#   ./regenerate.sh [OUT_DIR]               # default OUT_DIR: the directory of this script
#   RUNNER_UP=1 ./regenerate.sh OTHER_DIR   # also/only build the runner-up (brodmann atlas)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"

# package=version pairs the samples were taken from. If a pinned version has left the
# archive (e.g. after a point release), the unpinned current version is tried; the
# SHA256SUMS check below then tells whether the data changed.
if [ -n "${RUNNER_UP:-}" ]; then
  PKGS=("mricron-data=1.2.20211006+dfsg-4")
else
  PKGS=("insighttoolkit5-examples=5.2.1-5+deb12u1" "python3-skimage=0.19.3-8")
fi

cd "$WORK"
for spec in "${PKGS[@]}"; do
  name="${spec%%=*}"
  apt-get download "$spec" 2>/dev/null || apt-get download "$name"
done
mkdir -p root
for deb in ./*.deb; do dpkg-deb -x "$deb" root; done

if [ -n "${RUNNER_UP:-}" ]; then
  node "$HERE/regenerate.js" root "$OUT" --runner-up
else
  node "$HERE/regenerate.js" root "$OUT"
  if [ -f "$HERE/SHA256SUMS" ]; then (cd "$OUT" && sha256sum -c "$HERE/SHA256SUMS"); fi
fi
