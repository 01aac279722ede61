#!/usr/bin/env bash
# Every figure of issue #14 in one device call (a GPU machine through the `device` tool: see
# ../shared/gpu/README.md), each benchmark under its own time limit so that one that hangs
# leaves the others' results. Results go to $OUT (the device tool brings them back):
#   gpu-clocks.json   the same kernels on two contexts beside the SM clock (the "slow context")
#   gpu.json          scan, sort, RLE encode / decode at 2^20..2^28 (GPU time and wall clock)
#   gpu-codec.json    Huffman decode, decompress to the device, compress from the device, CPU scaling
#                     (its log has the codec's phase timings: NODE_DEBUG=parle)
#   cost-model.json   auto over op x size x locations, cold and warm, and Rutter's and Haugen's cases
#   cuda-anchors.txt  CUB / PyTorch on the same card
#   gpu-overhead.log  where RLE's and scan's wall clock goes beyond their kernels (host phases)
#   wall-2-28.log     scan, sort, RLE encode and decode at 2^28, wall clock, with garbage collections counted
#   sort-phases.log   the sort's onesweep passes with one phase taken out at a time (GPU time)
#   scan-phases.log   the scan kernel with one phase taken out at a time, tile shapes, look-back walk and residency
#   scan-state.log    a 2^28 scan's wall clock over its GPU time by the process's state; a copy kernel's ceiling
#   sort-rank.log     ways to rank a tile's keys by digit, each checked, then timed (GPU time)
#   gpu-variants.json kernel shapes (tuning) of scan and sort at 2^28, as ratios to the default
#   compress-profile.log compress from the device (Rutter's volume, u8 runs): wall and GPU time
#                     per submission and per kernel
#   calibration-trace.log every calibration probe in order, the lines, the same probes repeated
#   auto-overhead.log the cost model's small cells: auto's route (its choice) against the fixed path's
#   readback-steady.json a 16 MiB readback call by call: steady calls, calibration's probe, new arrays
#   cost-diagnosis.json new host arrays before and after a collection; GPU sorts after idle, spin and
#                     CPU work (with the SM clock); GPU decompress in a row and after CPU calls;
#                     4 and 16 KiB readbacks and CPU calls as calibration times them and as callers do
#                     and calibration's GPU probes beside the cost-model bench's calls (probes)
#
# Before the device call, on the development machine (esbuild, which the GPU machine lacks, builds
# the GPU layers into bench/.build/):
#   npm run build && rm -rf bench/.build && node bench/gpu.mjs --build-only \
#     && node bench/gpu-codec.mjs --build-only && ../shared/gpu/pack.sh build dist bench/.build
# Device commands (carry [".gpu-carry"]); one call may run 10 minutes, so in two calls:
#   source .gpu-carry/on-device.sh && bash bench/device-14.sh gpu-clocks gpu cuda-anchors
#   source .gpu-carry/on-device.sh && bash bench/device-14.sh gpu-codec cost-model
# (no names: all of them, one after the other)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/.quick/device-14}
mkdir -p "$out"
wanted=" ${*:-gpu-clocks gpu gpu-codec cost-model cuda-anchors gpu-overhead wall-2-28 scan-phases scan-state sort-phases sort-rank gpu-variants compress-profile calibration-trace auto-overhead readback-steady cost-diagnosis} "
run() { # name limit_s command...
  local name=$1 limit=$2
  shift 2
  [[ "$wanted" == *" $name "* ]] || return 0
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  echo "$name: exit $? after $((SECONDS - t0)) s"
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$out/gpu.txt" 2>&1
run gpu-clocks 100 node bench/gpu-clocks.mjs
run gpu 300 node bench/gpu.mjs
run cuda-anchors 60 python3 .gpu-carry/cuda-anchors.py
run gpu-overhead 90 bash -c 'node bench/gpu-overhead.mjs --log2 24 && node bench/gpu-overhead.mjs --log2 28'
run wall-2-28 120 node --expose-gc bench/wall-2-28.mjs
run scan-phases 120 node bench/scan-phases.mjs
run scan-state 90 node --expose-gc bench/scan-state.mjs
run sort-phases 120 node bench/sort-phases.mjs
run sort-rank 300 node bench/sort-rank.mjs
run gpu-variants 240 node bench/gpu-variants.mjs --out "$out"
run compress-profile 150 env NODE_DEBUG=parle node bench/compress-profile.mjs
run gpu-codec 300 env NODE_DEBUG=parle node bench/gpu-codec.mjs
run cost-model 240 node bench/cost-model.mjs --gpu-machine --out "$out"
run calibration-trace 60 node bench/calibration-trace.mjs
run auto-overhead 90 node bench/auto-overhead.mjs
run readback-steady 120 node bench/readback-steady.mjs --out "$out"
run cost-diagnosis 150 node bench/cost-diagnosis.mjs --out "$out"
cp "$out/cuda-anchors.log" "$out/cuda-anchors.txt" 2>/dev/null || true
tail -n 25 "$out"/*.log
