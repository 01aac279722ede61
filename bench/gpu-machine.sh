#!/usr/bin/env bash
# The benchmarks on the GPU machine: the device tool's machine, an NVIDIA H100 or H200 with its
# Vulkan driver and a 16-core host, but no Node, no Vulkan loader and no network. The tool copies
# this working tree there (with the git-ignored folders named in its `carry`, 64 MiB in all), runs
# one command from the repository root and returns the files under $OUT (at most 8).
#
# 1. Here, after `npm ci`:
#      bash bench/gpu-machine.sh pack [--corpus] [--baseline DIR] [--cpu-only] [--no-build]
#    builds dist/ and build/*.wasm (--no-build: takes them as they are) and bench/.build/
#    (bench/lib/internals.mjs), then puts into bench/.gpu-machine/ (git-ignored): this machine's
#    Node (x86-64), the Vulkan loader's Debian packages, the node_modules the benchmarks load (no
#    build tools) and the built folders; --corpus: bench/corpus/data (17 MiB packed) and the
#    version-2 writer of bench/corpus.mjs (bench/.baseline-v2, where built); --baseline DIR: a
#    built checkout of the baseline (its dist/ and build/*.wasm) for gpu-codec-ab; --cpu-only: no
#    webgpu (for the CPU benchmarks).
# 2. The device tool: carry ["bench/.gpu-machine"], timeout 600, command
#      bash bench/gpu-machine.sh run BENCH... [-- ARGS]
#    BENCH: gpu-layer, gpu-corpus, gpu-lossy, gpu-codec-profile, gpu-codec-ab, cost-model, cuda-anchors,
#    suite; CPU only: corpus, corpus-scaling, service-load (the --processes sweep;
#    SECONDS_A_PHASE=30, PROCESSES="1 2 4 8 16"), service-clients (polite clients with and
#    without Expect, clients that never back off; 20 s a phase) and service-hostile (the load
#    beside idle sockets, bombs and tricklers; 20 s a phase), zarr (bench/zarr.mjs on every
#    core; pack --corpus, or a corpus.tar.xz of its arrays). All but gpu-layer, cuda-anchors and suite read
#    the corpus (pack --corpus). ARGS go to every BENCH named. Results go to $OUT/<machine>/
#    (bench/lib/results.mjs: nvidia-h200 for a GPU benchmark, nvidia-h200-host for a CPU one),
#    all that is printed to $OUT/run.log. A call must end within 10 minutes and returns 8 files:
#    two or three benchmarks a call.
# 3. Here again, with the folder the tool put the files in:
#      bash bench/gpu-machine.sh store FILES_AT
#    copies FILES_AT/<machine>/* into bench/results/<machine>/, replacing the older results.
set -euo pipefail
self=$(readlink -f "$0")
called_from=$PWD
cd "$(dirname "$self")/.."
carry=bench/.gpu-machine
# a path as given on the command line, from where the script was called
given() { case "$1" in /*) echo "$1" ;; *) echo "$called_from/$1" ;; esac; }

pack() {
  local corpus=0 baseline="" cpu_only=0 build=1
  while [ $# -gt 0 ]; do
    case "$1" in
      --corpus) corpus=1 ;;
      --baseline) baseline=$(given "$2"); shift ;;
      --cpu-only) cpu_only=1 ;;
      --no-build) build=0 ;;
      *) echo "pack: unknown option $1" >&2; exit 2 ;;
    esac
    shift
  done
  [ "$(uname -m)" = x86_64 ] || { echo "pack: this machine's Node is $(uname -m); the GPU machine needs x86-64" >&2; exit 1; }
  [ "$build" = 0 ] || node build/build.mjs --quiet --no-types
  node bench/lib/internals.mjs >/dev/null
  mkdir -p "$carry/debs"
  # the Vulkan loader, and the GL dispatch libraries the NVIDIA driver's Vulkan ICD needs beside it
  if ! ls "$carry"/debs/libvulkan1_*.deb >/dev/null 2>&1; then
    local lists=/tmp/gpu-machine-apt
    mkdir -p "$lists/partial"
    local o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
    apt-get "${o[@]}" update -qq
    (cd "$carry/debs" && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null)
  fi
  [ -f "$carry/node.xz" ] || xz -T0 -6 -c "$(readlink -f "$(command -v node)")" >"$carry/node.xz"
  # node_modules: the packages the benchmarks load and their dependencies; webgpu for linux-x64 only
  local wanted="comlink xxhash-wasm commander cli-progress tinybench fflate lz4-wasm-nodejs @bokuweb/zstd-wasm @thi.ng/rle-pack fastify prom-client zarrita @zarrita/storage"
  [ "$cpu_only" = 1 ] || wanted="$wanted webgpu"
  node -e '
    const fs = require("fs"), path = require("path"), seen = new Set();
    const visit = (name) => {
      const file = path.join("node_modules", name, "package.json");
      if (seen.has(name) || !fs.existsSync(file)) return;
      seen.add(name);
      const p = JSON.parse(fs.readFileSync(file, "utf8"));
      for (const d of Object.keys({ ...p.dependencies, ...p.optionalDependencies })) visit(d);
    };
    process.argv.slice(1).forEach(visit);
    console.log([...seen].map((n) => "node_modules/" + n).join("\n"));
  ' $wanted >/tmp/gpu-machine-modules
  tar -cJf "$carry/node_modules.tar.xz" --exclude='node_modules/webgpu/dist/darwin-*' --exclude='node_modules/webgpu/dist/win32-*' \
    --exclude='node_modules/webgpu/dist/linux-arm64' -T /tmp/gpu-machine-modules
  local built=(dist build/*.wasm build/*.wat bench/.build)
  if [ "$corpus" = 1 ] && [ -f bench/.baseline-v2/dist/node/index.js ]; then
    built+=(bench/.baseline-v2/dist bench/.baseline-v2/build bench/.baseline-v2/package.json bench/.baseline-v2/node_modules)
  fi
  tar -cJf "$carry/built.tar.xz" "${built[@]}"
  rm -rf "$carry/baseline" "$carry/corpus.tar.xz"
  if [ -n "$baseline" ]; then
    mkdir -p "$carry/baseline/build"
    cp -r "$baseline/dist" "$carry/baseline/"
    cp "$baseline"/build/*.wasm "$carry/baseline/build/"
  fi
  [ "$corpus" = 0 ] || tar -C bench/corpus -cJf "$carry/corpus.tar.xz" data
  du -sh "$carry"/* | sed 's/^/  /'
  echo "$carry: $(du -sh "$carry" | cut -f1); the device tool carries at most 64 MiB with the working tree"
}

# Unpacks what pack put in the carry (once a machine) and points Vulkan at the NVIDIA driver.
setup() {
  [ -f "$carry/node.xz" ] || { echo "no $carry/node.xz: run \`bash bench/gpu-machine.sh pack\` here and carry $carry" >&2; exit 1; }
  for f in "$carry"/debs/*.deb; do dpkg -x "$f" /; done
  ldconfig
  mkdir -p /opt/gpu-node/bin
  [ -x /opt/gpu-node/bin/node ] || { xz -dc "$carry/node.xz" >/opt/gpu-node/bin/node; chmod +x /opt/gpu-node/bin/node; }
  export PATH=/opt/gpu-node/bin:$PATH
  # a worktree whose node_modules is a link carries it dangling
  [ ! -L node_modules ] || rm -f node_modules
  [ -d node_modules ] || tar -xJf "$carry/node_modules.tar.xz"
  tar -xJf "$carry/built.tar.xz"
  [ ! -f "$carry/corpus.tar.xz" ] || [ -d bench/corpus/data ] || tar -xJf "$carry/corpus.tar.xz" -C bench/corpus
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export VK_ICD_FILENAMES=$VK_DRIVER_FILES
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# One benchmark on the device; "$@": the extra arguments.
bench() {
  local what=$1
  shift
  local gpu host
  gpu=$(node bench/lib/results.mjs machine --gpu)
  host=$(node bench/lib/results.mjs machine)
  echo "== $what $*"
  case "$what" in
    gpu-layer | gpu-corpus | gpu-lossy | corpus | corpus-scaling) ;;
    gpu-codec-profile) set -- --cpu-profile "$@" ;;
    gpu-codec-ab) set -- --baseline "$carry/baseline/dist" "$@" ;;
    cost-model) set -- --gpu-machine --real "$@" ;;
    cuda-anchors)
      mkdir -p "$OUT/$gpu"
      python3 bench/cuda-anchors.py "$@" >"$OUT/$gpu/cuda-anchors.txt"
      cat "$OUT/$gpu/cuda-anchors.txt"
      return ;;
    suite)
      rm -rf /tmp/suite && mkdir -p /tmp/suite "$OUT/$gpu"
      [ ! -f "$OUT/$gpu/cuda-anchors.txt" ] || cp "$OUT/$gpu/cuda-anchors.txt" /tmp/suite/
      node bench/suite/index.mjs --gpu-machine --out /tmp/suite "$@"
      cp "/tmp/suite/$gpu/suite.json" "$OUT/$gpu/"
      return ;;
    service-load)
      for p in ${PROCESSES:-1 2 4 8 16}; do
        node bench/service-load.mjs --processes "$p" --workers "$(nproc)" --seconds "${SECONDS_A_PHASE:-30}" \
          --loads compress:photos,decompress:photos --out "$OUT" "$@" | grep -v '^{"benchmark'
      done
      return ;;
    service-clients)
      # the three kinds of client of issue #47 on `parle serve --processes 2`, each its own file
      local kind expect backoff
      for kind in polite-expect:1:1 polite:0:1 never-back-off:0:0; do
        IFS=: read -r kind expect backoff <<<"$kind"
        node bench/service-load.mjs --processes 2 --workers "$(nproc)" --seconds "${SECONDS_A_PHASE:-20}" \
          --loads compress:photos,decompress:photos --expect-continue "$expect" --backoff "$backoff" --out "$OUT" "$@" | grep -v '^{"benchmark'
        mv "$OUT/$host/service-load-processes-2.json" "$OUT/$host/service-load-clients-$kind.json"
      done
      return ;;
    zarr)
      # Zarr arrays through zarrita, parle on every core against numcodecs (issue #46)
      node bench/zarr.mjs --workers "$(nproc)" --out "$OUT" "$@"
      return ;;
    service-hostile)
      # the load alone, then beside 10,000 idle sockets, 100 bombs and 32 tricklers (issue #47)
      mkdir -p "$OUT/$host"
      node bench/service-load.mjs --hostile-only --workers "$(nproc)" --bad-seconds "${SECONDS_A_PHASE:-20}" "$@" >/tmp/hostile.out
      cat /tmp/hostile.out
      grep '^{' /tmp/hostile.out >"$OUT/$host/service-load-hostile.json"
      return ;;
    *) echo "unknown benchmark $what (gpu-layer, gpu-corpus, gpu-lossy, gpu-codec-profile, gpu-codec-ab, cost-model, cuda-anchors, suite, corpus, corpus-scaling, service-load, service-clients, service-hostile, zarr)" >&2; return 2 ;;
  esac
  case "$what" in
    corpus) node bench/corpus.mjs --workers "1,$(nproc)" --out "$OUT" "$@" ;;
    corpus-scaling) node bench/corpus-scaling.mjs --workers "1,4,$(nproc)" --out "$OUT" "$@" ;;
    *) node "bench/$what.mjs" --out "$OUT" "$@" ;;
  esac
  echo "(results in \$OUT/$gpu or \$OUT/$host)"
}

run() {
  : "${OUT:?run is for the GPU machine of the device tool, which sets OUT}"
  local benches=() args=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then
      shift
      args=("$@")
      break
    fi
    benches+=("$1")
    shift
  done
  [ ${#benches[@]} -gt 0 ] || { echo "run: name a benchmark" >&2; exit 2; }
  exec > >(tee -a "$OUT/run.log") 2>&1
  setup
  local status=0
  for b in "${benches[@]}"; do
    bench "$b" ${args[@]+"${args[@]}"} || status=1
  done
  local n
  n=$(find "$OUT" -type f | wc -l)
  [ "$n" -le 8 ] || echo "warning: $n files under \$OUT, the device tool returns 8: run fewer benchmarks a call"
  return $status
}

store() {
  local from
  from=$(given "${1:?store FILES_AT: the folder the device tool put the files in}")
  local any=0
  for dir in "$from"/*/; do
    [ -d "$dir" ] || continue
    local machine
    machine=$(basename "$dir")
    mkdir -p "bench/results/$machine"
    cp -v "$dir"* "bench/results/$machine/"
    any=1
  done
  [ "$any" = 1 ] || { echo "store: no <machine>/ folder in $from" >&2; exit 1; }
}

case "${1:-}" in
  pack | run | store)
    cmd=$1
    shift
    "$cmd" "$@"
    ;;
  *)
    sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'
    exit 2
    ;;
esac
