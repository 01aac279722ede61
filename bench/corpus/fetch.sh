#!/usr/bin/env bash
# Build the benchmark corpus of real arrays in bench/corpus/data/ from pinned
# Debian 12 (bookworm) packages, then verify it against bench/corpus/SHA256SUMS.
#
#   bash bench/corpus/fetch.sh                # build what is missing or wrong, verify all
#   bash bench/corpus/fetch.sh --update-sums  # (maintainers) rebuild, rewrite SHA256SUMS
#
# Needs: apt-get (Debian's archive), dpkg-deb, sha256sum, and /usr/bin/python3
# with python3-numpy and python3-pil (installed with apt-get when missing and
# running as root). Nothing else is downloaded. See SOURCE.md for the data.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DATA="$HERE/data"
SUMS="$HERE/SHA256SUMS"
PY=/usr/bin/python3

UPDATE_SUMS=0
case "${1:-}" in
  "") ;;
  --update-sums) UPDATE_SUMS=1 ;;
  *) echo "usage: $0 [--update-sums]" >&2; exit 2 ;;
esac

# Pinned packages: name, version, SHA-256 of the .deb (from bookworm's Packages index).
declare -A PKG_VERSION=(
  [python3-skimage]="0.19.3-8"
  [mricron-data]="1.2.20211006+dfsg-4"
  [libncarg-data]="6.6.2.dfsg.1-1"
  [python-drizzle-testdata]="1.13.4-1"
  [csound-soundfont]="1:6.18.1+dfsg-1"
  [fonts-noto-color-emoji]="2.042-0+deb12u1"
  [theseus-examples]="3.3.0-14"
  [opencv-doc]="4.6.0+dfsg-12"
)
declare -A PKG_SHA256=(
  [python3-skimage]="728d88c3e3440f1f3712de0805dc834d29248ff07e1eec8c0f3da07606f752f9"
  [mricron-data]="d40aa0ed66cf89bf6cafa049ad3884703c9d975c2ee2737525b7196528df9d6f"
  [libncarg-data]="52b4f825c6ab75d8f324185b96defab7a2b746ab15850a047198ee3f6da3bb3d"
  [python-drizzle-testdata]="a54d820772e51d5e19467913f7a445a7de775386258cc997848f63f517c9bb78"
  [csound-soundfont]="0d05bec0cff2486f4537dd0236fece99f3565b62959717f82e975be8e0cf1393"
  [fonts-noto-color-emoji]="a5ab0f69c7938423862320d9aca5dd187b3fd879d6a9a57dd52e17c3fa8d2751"
  [theseus-examples]="28edee17ca89b2d75d34c022cb8dd8ed60d4b0597a2f26f3c655f497eb776978"
  [opencv-doc]="4b12681df35878207ac7097dc66184b2ae552e4bf4ddd2af04a0f03ed0b8682a"
)

# Corpus files: output file -> "package member member ..." (members are paths
# inside the package that convert.py reads).
SK=./usr/lib/python3/dist-packages/skimage/data
MRI=./usr/share/mricron/templates
CV=./usr/share/doc/opencv-doc/examples/data
CV_BOARDS=$(for side in left right; do for i in 01 02 03 04 05 06 07 08 09 11 12 13 14; do
  printf '%s ' "$CV/$side$i.jpg"; done; done)
FILES=(
  photos_rgb.u8
  retina_rgba.u32
  mri_colin27_t1.u8
  macaque_atlas_labels.u16
  dem_trinidad.f32
  hst_acs_sci.f32
  soundfont_audio.f32
  emoji_rgba.u8
  pdb_atoms.f32
  chessboards_gray.u8
  soundfont_pcm.i16
  pdb_atoms_f64.f64
)
declare -A SOURCE=(
  [photos_rgb.u8]="python3-skimage $SK/astronaut.png $SK/coffee.png $SK/chelsea.png $SK/rocket.jpg $SK/ihc.png $SK/hubble_deep_field.jpg"
  [retina_rgba.u32]="python3-skimage $SK/retina.jpg"
  [mri_colin27_t1.u8]="mricron-data $MRI/ch2.nii.gz"
  [macaque_atlas_labels.u16]="mricron-data $MRI/inia19-NeuroMaps.nii.gz"
  [dem_trinidad.f32]="libncarg-data ./usr/share/ncarg/data/cdf/trinidad.nc"
  [hst_acs_sci.f32]="python-drizzle-testdata ./usr/share/python-drizzle/test_data/j8bt06nyq_flt.fits"
  [soundfont_audio.f32]="csound-soundfont ./usr/share/sounds/sf2/sf_GMbank.sf2"
  [emoji_rgba.u8]="fonts-noto-color-emoji ./usr/share/fonts/truetype/noto/NotoColorEmoji.ttf"
  [pdb_atoms.f32]="theseus-examples ./usr/share/doc/theseus/examples"
  [chessboards_gray.u8]="opencv-doc $CV_BOARDS"
  [soundfont_pcm.i16]="csound-soundfont ./usr/share/sounds/sf2/sf_GMbank.sf2"
  [pdb_atoms_f64.f64]="theseus-examples ./usr/share/doc/theseus/examples"
)

log() { printf '[corpus] %s\n' "$*" >&2; }

expected_sum() { # file -> expected sha256 from SHA256SUMS (empty if none)
  [[ -f "$SUMS" ]] || return 0
  awk -v f="$1" '$2 == f || $2 == "*" f { print $1 }' "$SUMS"
}

is_good() { # file -> 0 when present with the expected hash
  local want have
  want=$(expected_sum "$1")
  [[ -n "$want" && -f "$DATA/$1" ]] || return 1
  have=$(sha256sum "$DATA/$1" | cut -d' ' -f1)
  [[ "$have" == "$want" ]]
}

mkdir -p "$DATA"

# 1. What needs building?
TODO=()
for f in "${FILES[@]}"; do
  if [[ $UPDATE_SUMS == 1 ]] || ! is_good "$f"; then TODO+=("$f"); fi
done
if [[ ${#TODO[@]} == 0 ]]; then
  log "all ${#FILES[@]} files present with the expected SHA-256, nothing to do"
  (cd "$DATA" && sha256sum --quiet -c "$SUMS")
  exit 0
fi
log "to build: ${TODO[*]}"

# 2. Tools: Debian's python3 with numpy and Pillow.
if ! "$PY" -c 'import numpy, PIL' 2>/dev/null; then
  if [[ $(id -u) == 0 ]]; then
    log "installing python3-numpy python3-pil with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q python3-numpy python3-pil >/dev/null ||
      { apt-get update -q >/dev/null && apt-get install -y -q python3-numpy python3-pil >/dev/null; }
  else
    echo "need $PY with numpy and PIL: apt-get install python3-numpy python3-pil" >&2
    exit 1
  fi
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/parle-corpus.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/debs" "$WORK/root"

# 3. Download each needed package once, check its pinned SHA-256.
declare -A HAVE_DEB=()
fetch_deb() { # package -> path of the verified .deb
  local pkg=$1 ver=${PKG_VERSION[$1]} deb
  if [[ -z "${HAVE_DEB[$pkg]:-}" ]]; then
    log "apt-get download $pkg=$ver"
    if ! (cd "$WORK/debs" && apt-get download -q "$pkg=$ver" >/dev/null 2>"$WORK/apt.err"); then
      if [[ $(id -u) == 0 ]]; then
        log "download failed, running apt-get update and retrying"
        apt-get update -q >/dev/null
        (cd "$WORK/debs" && apt-get download -q "$pkg=$ver" >/dev/null 2>"$WORK/apt.err") ||
          { cat "$WORK/apt.err" >&2; echo "cannot download $pkg=$ver" >&2; exit 1; }
      else
        cat "$WORK/apt.err" >&2; echo "cannot download $pkg=$ver (try apt-get update)" >&2; exit 1
      fi
    fi
    deb=$(ls "$WORK/debs/${pkg}_"*.deb)
    echo "${PKG_SHA256[$pkg]}  $deb" | sha256sum --quiet -c - ||
      { echo "$deb: SHA-256 differs from the pinned ${PKG_SHA256[$pkg]}" >&2; exit 1; }
    HAVE_DEB[$pkg]=$deb
  fi
}

# 4. Extract the needed members and convert.
for f in "${TODO[@]}"; do
  read -r pkg members <<<"${SOURCE[$f]}"
  fetch_deb "$pkg"
  # shellcheck disable=SC2086 # members is a space-separated list of paths
  dpkg-deb --fsys-tarfile "${HAVE_DEB[$pkg]}" | tar -x -C "$WORK/root" $members
  "$PY" "$HERE/convert.py" "${f%.*}" "$WORK/root" "$DATA/$f" | sed 's/^/[corpus] /' >&2
done

# 5. Verify (or, for maintainers, record) the hashes.
if [[ $UPDATE_SUMS == 1 ]]; then
  (cd "$DATA" && sha256sum "${FILES[@]}") >"$SUMS"
  log "wrote $SUMS"
fi
(cd "$DATA" && sha256sum -c "$SUMS") | sed 's/^/[corpus] /' >&2
for f in "${FILES[@]}"; do
  is_good "$f" || { echo "$f: not verified" >&2; exit 1; }
done
log "ok: ${#FILES[@]} files in $DATA ($(du -cb "${FILES[@]/#/$DATA/}" | tail -1 | cut -f1) bytes)"
