#!/usr/bin/env bash
# Issue #31 on the device tool's machine (16-core host and an H100/H200): carry .gpu-carry/
# (../shared/gpu/pack.sh, plus corpus.tar.xz: bench/corpus/data packed with tar + xz) and run
#   bash bench/device-31.sh scaling|gpu|corpus
# Results go to $OUT. scaling: bench/corpus-scaling.mjs over 1, 4 and 16 workers (CPU only);
# gpu: bench/gpu-corpus.mjs (version 3 on the GPU, both paths, byte-identical checks);
# corpus: bench/corpus.mjs with 1 and 16 workers beside the peers.
source .gpu-carry/on-device.sh
mkdir -p bench/corpus && [ -d bench/corpus/data ] || tar -xJf .gpu-carry/corpus.tar.xz -C bench/corpus
echo "cores: $(nproc)"
for what in "$@"; do
  case "$what" in
    scaling) node bench/corpus-scaling.mjs --workers 1,4,16 --out "$OUT" 2>&1 | tee "$OUT/corpus-scaling.log" ;;
    gpu) node bench/gpu-corpus.mjs --out "$OUT" 2>&1 | tee "$OUT/gpu-corpus.log" ;;
    corpus) node bench/corpus.mjs --workers 1,16 --out "$OUT" 2>&1 | tee "$OUT/corpus.log" ;;
  esac
done
