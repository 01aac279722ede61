#!/usr/bin/env bash
# Every figure of issue #14 in one device call (a GPU machine through the `device` tool: see
# ../shared/gpu/README.md), each benchmark under its own time limit so that one that hangs
# leaves the others' results. Results go to $OUT (the device tool brings them back):
#   gpu-clocks.json   the same kernels on two contexts beside the SM clock (the "slow context")
#   gpu.json          scan, sort, RLE encode / decode at 2^20..2^28 (GPU time and wall clock)
#   gpu-codec.json    Huffman decode, decompress to the device, compress from the device, CPU scaling
#   cost-model.json   auto over op x size x locations, cold and warm, and Rutter's and Haugen's cases
#   cuda-anchors.txt  CUB / PyTorch on the same card
#
# Before the device call, on the development machine (esbuild, which the GPU machine lacks, builds
# the GPU layers into bench/.build/):
#   npm run build && rm -rf bench/.build && node bench/gpu.mjs --build-only \
#     && node bench/gpu-codec.mjs --build-only && ../shared/gpu/pack.sh build dist bench/.build
# Device command (carry [".gpu-carry"]; the whole takes about 8 of the 10 minutes one call may run):
#   source .gpu-carry/on-device.sh && bash bench/device-14.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/.quick/device-14}
mkdir -p "$out"
run() { # name limit_s command...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  echo "$name: exit $? after $((SECONDS - t0)) s"
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$out/gpu.txt" 2>&1
run gpu-clocks 90 node bench/gpu-clocks.mjs
run gpu 150 node bench/gpu.mjs
run gpu-codec 150 node bench/gpu-codec.mjs
run cost-model 120 node bench/cost-model.mjs --gpu-machine --out "$out"
run cuda-anchors 45 python3 .gpu-carry/cuda-anchors.py
cp "$out/cuda-anchors.log" "$out/cuda-anchors.txt" 2>/dev/null || true
tail -n 25 "$out"/*.log
