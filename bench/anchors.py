#!/usr/bin/env python3
"""Outside anchors for the corpus: how well (and how fast, on one thread) established
compressors do on each array of bench/corpus/index.json.

    python3 bench/anchors.py [--only NAME] [--out FILE] [--runs 3] [--skip-missing]

Anchors, per file:
  - Blosc2 (python-blosc2), codec ZSTD at clevel 9 and at clevel 1, typesize = the
    element size, nthreads 1, Blosc2's own block size, one chunk (compress2). Every
    filter pipeline below is tried; the best ratio per clevel is reported
    ("Blosc2 best, zstd 9" / "Blosc2 best, zstd 1") and its setting names the winner;
    `filterRatios` gives all four.
  - the zstd and xz command-line tools: `zstd -19 -T1` and `xz -9e -T1`, timed as
    subprocesses (process start included) between files in a temporary directory.
  - `optipng -o2`, only for arrays that are images: u8 with a last axis of 3 or 4
    (RGB / RGBA; leading axes are stacked vertically), u32 pixels (RGBA, R in the
    low byte), 2-D u8 (grayscale) and 3-D u8 volumes [z, y, x] (z grayscale slices
    stacked into one [z*y, x] image). An entry with "parts" (index.json) is one
    image per part and the PNG sizes are added up. The input PNG is written
    uncompressed (stdlib zlib, level 0); optipng picks its own filters and
    deflate settings, so only its output size matters. One run; no decoder is
    timed (decompressMBs is null).

Output: a JSON list of {file, anchor, setting, ratio, compressMBs, decompressMBs}
on stdout (and in --out FILE). ratio = input bytes / compressed bytes; speeds are
MB/s (1e6 bytes/s) of raw bytes, the median of --runs runs. Every anchor's round
trip is checked (optipng's output is not decoded). Progress goes to stderr, so
bench/corpus.mjs can read stdout as JSON.

Needs: numpy, blosc2 (pip install blosc2), and the zstd, xz and optipng commands
(apt-get install zstd xz-utils optipng). Data: bash bench/corpus/fetch.sh.
--skip-missing (bench/corpus.mjs passes it): an anchor whose module or command is
missing is left out, with a note on stderr, instead of stopping the run.
"""
import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
ELEMENT_SIZE = {"u8": 1, "u16": 2, "u32": 4, "i32": 4, "f32": 4, "i8": 1, "i16": 2, "f16": 2, "f64": 8, "i64": 8, "u64": 8}


def log(msg):
    print(f"[anchors] {msg}", file=sys.stderr, flush=True)


def timed(fn):
    """Run fn once; return (seconds, result)."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def mbs(nbytes, seconds):
    return nbytes / seconds / 1e6


def record(entry, anchor, setting, nbytes, packed, ctimes, dtimes, **extra):
    row = {
        "file": entry["file"],
        "anchor": anchor,
        "setting": setting,
        "ratio": nbytes / packed,
        "compressMBs": mbs(nbytes, statistics.median(ctimes)) if ctimes else None,
        "decompressMBs": mbs(nbytes, statistics.median(dtimes)) if dtimes else None,
    }
    row.update(extra)
    log(f"  {anchor:22s} ratio {row['ratio']:8.3f}  {setting}")
    return row


# ---------------------------------------------------------------- Blosc2

def blosc2_anchors(entry, data, runs):
    import blosc2

    blosc2.set_nthreads(1)
    F = blosc2.Filter
    pipelines = {  # filters run in list order; BYTEDELTA works on shuffled bytes
        "NOFILTER": [F.NOFILTER],
        "SHUFFLE": [F.SHUFFLE],
        "BITSHUFFLE": [F.BITSHUFFLE],
        "SHUFFLE+BYTEDELTA": [F.SHUFFLE, F.BYTEDELTA],
    }
    typesize = ELEMENT_SIZE[entry["type"]]
    version = f"python-blosc2 {blosc2.__version__} (C-Blosc2 {blosc2.blosclib_version.split()[0]})"
    dparams = {"nthreads": 1}
    rows = []
    for clevel in (9, 1):
        def cparams(filters):
            return {
                "codec": blosc2.Codec.ZSTD,
                "clevel": clevel,
                "typesize": typesize,
                "nthreads": 1,
                "blocksize": 0,  # 0: Blosc2 chooses the block size
                "filters": filters,
                "filters_meta": [0] * len(filters),
            }

        # One timed compression per pipeline picks the winner by ratio ...
        tried = {}
        for name, filters in pipelines.items():
            t, packed = timed(lambda: blosc2.compress2(data, cparams=cparams(filters)))
            tried[name] = (len(packed), t, packed)
        best = min(tried, key=lambda n: tried[n][0])
        size, t0, packed = tried[best]
        # ... which then gets runs-1 more compressions and `runs` decompressions.
        ctimes = [t0] + [timed(lambda: blosc2.compress2(data, cparams=cparams(pipelines[best])))[0]
                         for _ in range(runs - 1)]
        dtimes = []
        for _ in range(runs):
            t, back = timed(lambda: blosc2.decompress2(packed, dparams=dparams))
            dtimes.append(t)
            if bytes(back) != data:
                raise SystemExit(f"{entry['file']}: Blosc2 {best} clevel {clevel} does not round-trip")
        rows.append(record(
            entry, f"Blosc2 best, zstd {clevel}",
            f"{version}, ZSTD clevel {clevel}, {best}, typesize {typesize}, nthreads 1, default blocksize",
            len(data), size, ctimes, dtimes,
            filter=best,
            filterRatios={n: len(data) / tried[n][0] for n in pipelines},
        ))
    return rows


# ---------------------------------------------------------------- zstd and xz

def tool_version(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    return out.strip().splitlines()[0] if out.strip() else cmd[0]


def cli_anchor(entry, src, data, tmp, runs, anchor, compress, decompress, version):
    """compress(src, dst) and decompress(dst) give argv lists; both read/write files."""
    dst = os.path.join(tmp, "packed")
    ctimes = []
    for _ in range(runs):
        with open(dst, "wb") as out:
            t, _ = timed(lambda: subprocess.run(compress(src), stdout=out, check=True))
        ctimes.append(t)
    size = os.path.getsize(dst)
    back = subprocess.run(decompress(dst), capture_output=True, check=True).stdout
    if back != data:
        raise SystemExit(f"{entry['file']}: {anchor} does not round-trip")
    dtimes = [timed(lambda: subprocess.run(decompress(dst), stdout=subprocess.DEVNULL, check=True))[0]
              for _ in range(runs)]
    return record(entry, anchor, version, len(data), size, ctimes, dtimes)


def cli_anchors(entry, src, data, tmp, runs, have=None):
    """zstd -19 and xz -9e (those of the two that `have` marks present; both by default)."""
    rows = []
    if have is None or have["zstd"]:
        zv = tool_version(["zstd", "--version"]).replace("*** ", "").split(",")[0]
        rows.append(cli_anchor(entry, src, data, tmp, runs, "zstd -19",
                               lambda s: ["zstd", "-19", "-T1", "-q", "-c", s],
                               lambda d: ["zstd", "-d", "-q", "-c", d], f"{zv}: zstd -19 -T1"))
    if have is None or have["xz"]:
        xv = tool_version(["xz", "--version"])
        rows.append(cli_anchor(entry, src, data, tmp, runs, "xz -9e",
                               lambda s: ["xz", "-9e", "-T1", "-c", s],
                               lambda d: ["xz", "-d", "-T1", "-c", d], f"{xv}: xz -9e -T1"))
    return rows


# ---------------------------------------------------------------- optipng

def as_images(entry, data):
    """The arrays optipng gets, as (uint8 array [h, w] or [h, w, 3|4], label); [] if not an image."""
    kind = entry["type"]
    parts = entry.get("parts") or [{"name": entry["file"], "shape": entry["shape"], "offset": 0}]
    out = []
    for p in parts:
        shape = list(p["shape"])
        n = int(np.prod(shape))
        if kind == "u8" and len(shape) >= 3 and shape[-1] in (3, 4):
            a = np.frombuffer(data, np.uint8, n, p["offset"]).reshape(-1, shape[-2], shape[-1])
        elif kind == "u8" and len(shape) in (2, 3):
            a = np.frombuffer(data, np.uint8, n, p["offset"]).reshape(-1, shape[-1])
        elif kind == "u32" and len(shape) in (2, 3):
            a = np.frombuffer(data, "<u4", n, p["offset"]).view(np.uint8).reshape(-1, shape[-1], 4)
        else:
            return []
        out.append((a, p["name"]))
    return out


def write_png(path, img):
    """Minimal uncompressed PNG (8-bit gray, RGB or RGBA; filter 0, zlib level 0)."""
    h, w = img.shape[:2]
    channels = 1 if img.ndim == 2 else img.shape[2]
    color_type = {1: 0, 3: 2, 4: 6}[channels]
    rows = np.zeros((h, 1 + w * channels), np.uint8)  # leading 0 = filter type None
    rows[:, 1:] = img.reshape(h, w * channels)

    def chunk(tag, body):
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(rows.tobytes(), 0)))
        f.write(chunk(b"IEND", b""))


def optipng_anchor(entry, data, tmp):
    images = as_images(entry, data)
    if not images:
        return []
    version = tool_version(["optipng", "--version"]).split(":")[0]
    total, seconds, shapes = 0, 0.0, []
    for i, (img, _) in enumerate(images):
        src, dst = os.path.join(tmp, f"in{i}.png"), os.path.join(tmp, f"out{i}.png")
        write_png(src, img)
        t, _ = timed(lambda: subprocess.run(["optipng", "-o2", "-quiet", "-clobber", "-out", dst, src], check=True))
        seconds += t
        total += os.path.getsize(dst)
        kind = {2: "gray"}.get(img.ndim) or {3: "RGB", 4: "RGBA"}[img.shape[2]]
        shapes.append(f"{img.shape[0]}x{img.shape[1]} {kind}")
        os.remove(src)
        os.remove(dst)
    setting = f"{version}: optipng -o2 on {len(images)} PNG ({', '.join(shapes)})"
    return [record(entry, "optipng -o2", setting, len(data), total, [seconds], [])]


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="run one file (name with or without its type suffix)")
    ap.add_argument("--out", help="also write the JSON here")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per speed (median), default 3")
    ap.add_argument("--skip-missing", action="store_true",
                    help="leave out (with a note) the anchors whose module or command is missing")
    args = ap.parse_args()

    have = {tool: shutil.which(tool) is not None for tool in ("zstd", "xz", "optipng")}
    try:
        import blosc2  # noqa: F401
        have["blosc2"] = True
    except ImportError:
        have["blosc2"] = False
    for name, ok in have.items():
        if ok:
            continue
        fix = "pip install blosc2" if name == "blosc2" else "apt-get install -y zstd xz-utils optipng"
        if not args.skip_missing:
            raise SystemExit(f"{name} not found: {fix}")
        log(f"note: {name} not found ({fix}): its anchors are left out")
    entries = json.load(open(os.path.join(CORPUS, "index.json")))
    if args.only:
        entries = [e for e in entries if args.only in (e["file"], e["file"].rsplit(".", 1)[0])]
        if not entries:
            raise SystemExit(f"no corpus file {args.only}")

    # Temporary files on tmpfs where there is one, so disk speed stays out of the timings.
    tmp = tempfile.mkdtemp(prefix="parle-anchors.", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    rows = []
    try:
        for e in entries:
            src = os.path.join(CORPUS, "data", e["file"])
            with open(src, "rb") as f:
                data = f.read()
            want = int(np.prod(e["shape"])) * ELEMENT_SIZE[e["type"]]
            if len(data) != want:
                raise SystemExit(f"{src}: {len(data)} bytes, index.json says {want}")
            log(f"{e['file']} ({len(data):,} bytes)")
            if have["blosc2"]:
                rows += blosc2_anchors(e, data, args.runs)
            rows += cli_anchors(e, src, data, tmp, args.runs, have)
            if have["optipng"]:
                rows += optipng_anchor(e, data, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    text = json.dumps(rows, indent=2)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
