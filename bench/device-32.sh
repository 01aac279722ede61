#!/usr/bin/env bash
# Issue #32 on the device tool's machine (16-core host and an H100/H200): carry .gpu-carry/
# (../shared/gpu/pack.sh dist build, plus corpus.tar.xz: bench/corpus/data packed with tar + xz)
# and run
#   bash bench/device-32.sh profile|corpus|cost|ab [extra arguments]
# Results go to $OUT. profile: bench/gpu-codec-profile.mjs (per-stage GPU time, submissions,
# readbacks, the main thread's profile) at 4, 64 and 256 MiB; corpus: bench/gpu-corpus.mjs;
# cost: bench/cost-model.mjs on the GPU machine with the real-data cells; ab: bench/gpu-codec-ab.mjs
# against the build carried in bench/.before/dist (carry that folder too).
# The carry must stay under 64 MiB with the tree: a node_modules of the runtime packages only
# (webgpu for linux-x64, comlink, xxhash-wasm, and the CLI's commander and cli-progress with its
# dependencies) is about 5 MiB packed, the corpus 17 MiB.
source .gpu-carry/on-device.sh
mkdir -p bench/corpus && tar -xJf .gpu-carry/corpus.tar.xz -C bench/corpus --skip-old-files
what=$1
shift
case "$what" in
  profile) node bench/gpu-codec-profile.mjs --cpu-profile --out "$OUT" "$@" 2>&1 | tee "$OUT/gpu-codec-profile.log" ;;
  corpus) node bench/gpu-corpus.mjs --out "$OUT" "$@" 2>&1 | tee "$OUT/gpu-corpus.log" ;;
  cost) node bench/cost-model.mjs --gpu-machine --real --out "$OUT" "$@" 2>&1 | tee "$OUT/cost-model.log" ;;
  ab) node bench/gpu-codec-ab.mjs --baseline bench/.before/dist --out "$OUT" "$@" 2>&1 | tee "$OUT/gpu-codec-ab.log" ;;
esac
