#!/usr/bin/env bash
# Issue #32 on the device tool's machine (16-core host and an H100/H200): carry .gpu-carry/
# (../shared/gpu/pack.sh dist build, plus corpus.tar.xz: bench/corpus/data packed with tar + xz)
# and run
#   bash bench/device-32.sh profile|corpus [extra arguments for the profile]
# Results go to $OUT. profile: bench/gpu-codec-profile.mjs (per-stage GPU time, submissions,
# readbacks, the main thread's profile) at 4, 64 and 256 MiB; corpus: bench/gpu-corpus.mjs.
source .gpu-carry/on-device.sh
mkdir -p bench/corpus && tar -xJf .gpu-carry/corpus.tar.xz -C bench/corpus --skip-old-files
what=$1
shift
case "$what" in
  profile) node bench/gpu-codec-profile.mjs --cpu-profile --out "$OUT" "$@" 2>&1 | tee "$OUT/gpu-codec-profile.log" ;;
  corpus) node bench/gpu-corpus.mjs --out "$OUT" "$@" 2>&1 | tee "$OUT/gpu-corpus.log" ;;
esac
