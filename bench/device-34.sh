#!/usr/bin/env bash
# Issue #34 on the device tool's machine (its 16-core host, CPU only): `parle serve` under load
# with --processes 1, 2, 4, 8 and 16 over the 16 workers, real bodies (photos_rgb.u8 repeated to
# 16 MiB), compress and decompress routes; then the synthetic body on compress with 8 processes.
# Each run also measures the engine alone (one engine, 16 workers, 8 calls at once) on the same
# bodies, so every ratio is against the same machine in the same call.
#
# Packing (on the dev machine, from the project root):
#   node build/build.mjs --quiet --no-types && node bench/service-load.mjs --bundle-only
#   ../shared/gpu/pack.sh dist build/parle.wasm build/parle-scalar.wasm build/parle-unshared.wasm bench/.build
#   tar -C bench/corpus -chJf .gpu-carry/corpus.tar.xz data/photos_rgb.u8
# CPU only, so node_modules.tar.xz may leave out webgpu and the build tools (pack.sh's is 35 MiB
# with webgpu's linux-x64 binary; 19 MiB without): see the tar command in this report.
# Run (device tool): carry [".gpu-carry"], command `bash bench/device-34.sh [SECONDS [PROCESSES]]`
# (default 30 s a load phase and "1 2 4 8 16": about 7.5 minutes in all; the targets are
# for 60 s: rerun the best count alone, e.g. `bash bench/device-34.sh 60 8`, which skips the
# synthetic body). Results (JSON and logs) go to $OUT.
# a worktree whose node_modules is a symlink carries it dangling: on-device.sh unpacks the real one
[ ! -L node_modules ] || rm -f node_modules
source .gpu-carry/on-device.sh
mkdir -p bench/corpus && [ -f bench/corpus/data/photos_rgb.u8 ] || tar -xJf .gpu-carry/corpus.tar.xz -C bench/corpus
seconds=${1:-30}
counts=${2:-1 2 4 8 16}
echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $counts; do
  node bench/service-load.mjs --processes "$p" --workers 16 --seconds "$seconds" \
    --loads compress:photos,decompress:photos --out "$OUT" 2>&1 | grep -v '^{"benchmark' | tee "$OUT/service-load-processes-$p.log"
done
[ -z "$2" ] || exit 0
mkdir -p "$OUT/synthetic"
node bench/service-load.mjs --processes 8 --workers 16 --seconds "$seconds" --loads compress:runs --out "$OUT/synthetic" 2>&1 |
  grep -v '^{"benchmark' | tee "$OUT/synthetic/service-load-processes-8.log"
