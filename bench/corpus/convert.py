#!/usr/bin/python3
"""Turn files extracted from pinned Debian packages into raw little-endian arrays.

Usage: convert.py NAME ROOT OUT
  NAME  one of the corpus entries below (the file name without its type suffix)
  ROOT  directory the needed .deb packages were extracted into (dpkg-deb -x)
  OUT   output path (written to OUT.part, then renamed)

Only Debian-packaged modules are used: numpy (python3-numpy) and, for the
PNG/JPEG photos, Pillow (python3-pil). Called by fetch.sh; see SOURCE.md.
"""
import gzip
import os
import struct
import sys

import numpy as np

SKIMAGE = "usr/lib/python3/dist-packages/skimage/data"
MRICRON = "usr/share/mricron/templates"


def _rgb(path):
    from PIL import Image  # imported lazily: only the photo entries need it

    with Image.open(path) as im:
        im.load()
        if im.mode != "RGB":
            raise SystemExit(f"{path}: expected an RGB image, got {im.mode}")
        return np.asarray(im, dtype=np.uint8)


def photos_rgb(root):
    # Public-domain / CC0 photographs shipped with scikit-image, each decoded
    # to interleaved 8-bit RGB (row-major, R,G,B per pixel) and concatenated.
    parts = [
        "astronaut.png",          # 512x512, NASA, public domain
        "coffee.png",             # 400x600, CC0 (Rachel Michetti)
        "chelsea.png",            # 300x451, CC0 (Stefan van der Walt)
        "rocket.jpg",             # 427x640, SpaceX, public domain
        "ihc.png",                # 512x512, immunohistochemistry, no known restrictions
        "hubble_deep_field.jpg",  # 872x1000, NASA, public domain
    ]
    return np.concatenate([_rgb(os.path.join(root, SKIMAGE, p)).ravel() for p in parts])


def retina_rgba(root):
    # CC0 retinal fundus photograph, decoded to RGBA with opaque alpha and
    # viewed as little-endian u32 pixels (R in the low byte), the layout of a
    # canvas ImageData buffer read through a Uint32Array.
    rgb = _rgb(os.path.join(root, SKIMAGE, "retina.jpg"))
    h, w, _ = rgb.shape
    rgba = np.empty((h, w, 4), dtype=np.uint8)
    rgba[..., :3] = rgb
    rgba[..., 3] = 255
    return rgba.view("<u4").reshape(h, w)


def _nifti(path, want_dtype):
    raw = gzip.open(path, "rb").read()
    if struct.unpack_from("<i", raw, 0)[0] != 348:
        raise SystemExit(f"{path}: not a little-endian NIfTI-1 file")
    dims = struct.unpack_from("<8h", raw, 40)
    datatype = struct.unpack_from("<h", raw, 70)[0]
    vox_offset = int(struct.unpack_from("<f", raw, 108)[0])
    slope, inter = struct.unpack_from("<2f", raw, 112)
    codes = {2: "u1", 4: "<i2", 16: "<f4"}
    if codes.get(datatype) != want_dtype or dims[0] != 3 or slope not in (0.0, 1.0) or inter != 0.0:
        raise SystemExit(f"{path}: unexpected header dims={dims} datatype={datatype} scl={slope},{inter}")
    nx, ny, nz = dims[1:4]
    a = np.frombuffer(raw, dtype=want_dtype, count=nx * ny * nz, offset=vox_offset)
    return a.reshape(nz, ny, nx)  # NIfTI stores x fastest


def mri_colin27_t1(root):
    # "ch2": Colin Holmes 27-scan average T1 MRI, 181x217x181 at 1 mm, u8.
    return _nifti(os.path.join(root, MRICRON, "ch2.nii.gz"), "u1")


def macaque_atlas_labels(root):
    # INIA19 / NeuroMaps rhesus macaque label volume, stored as int16 in the
    # NIfTI file with values 0..1605; written as u16 (lossless).
    a = _nifti(os.path.join(root, MRICRON, "inia19-NeuroMaps.nii.gz"), "<i2")
    if a.min() < 0:
        raise SystemExit("negative label, cannot store as u16")
    return a.astype("<u2")


def _netcdf_classic_var(path, want):
    # Minimal reader for netCDF classic (CDF-1/CDF-2) headers: returns
    # (dims, type, begin) of variable `want`.
    buf = open(path, "rb").read()
    if buf[:3] != b"CDF" or buf[3] not in (1, 2):
        raise SystemExit(f"{path}: not a netCDF classic file")
    ver = buf[3]
    pos = 4
    sizes = {1: 1, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8}

    def u32():
        nonlocal pos
        v = struct.unpack_from(">I", buf, pos)[0]
        pos += 4
        return v

    def offset():
        nonlocal pos
        if ver == 1:
            return u32()
        v = struct.unpack_from(">Q", buf, pos)[0]
        pos += 8
        return v

    def name():
        nonlocal pos
        n = u32()
        s = buf[pos:pos + n].decode()
        pos += (n + 3) // 4 * 4
        return s

    def skip_attrs():
        nonlocal pos
        u32()  # tag (NC_ATTRIBUTE or ABSENT)
        for _ in range(u32()):
            name()
            t = u32()
            n = u32()
            pos += (n * sizes[t] + 3) // 4 * 4

    u32()  # numrecs
    u32()  # NC_DIMENSION tag
    dims = [(name(), u32()) for _ in range(u32())]
    skip_attrs()
    u32()  # NC_VARIABLE tag
    for _ in range(u32()):
        vname = name()
        ids = [u32() for _ in range(u32())]
        skip_attrs()
        vtype = u32()
        u32()  # vsize
        begin = offset()
        if vname == want:
            return [dims[i] for i in ids], vtype, begin, buf
    raise SystemExit(f"{path}: no variable {want}")


def dem_trinidad(root):
    # 3-arc-second elevation grid (feet) for 37-38N, 106-104W (Trinidad,
    # Colorado area) from NCL's example data; big-endian f32 in the file.
    path = os.path.join(root, "usr/share/ncarg/data/cdf/trinidad.nc")
    dims, vtype, begin, buf = _netcdf_classic_var(path, "data")
    if vtype != 5 or [d[1] for d in dims] != [1201, 2401]:
        raise SystemExit(f"{path}: unexpected variable layout {dims} type {vtype}")
    a = np.frombuffer(buf, dtype=">f4", count=1201 * 2401, offset=begin).reshape(1201, 2401)
    return a.astype("<f4")


def _fits_image(path, extname):
    data = open(path, "rb").read()
    off = 0
    while off < len(data):
        cards = {}
        while True:
            block = data[off:off + 2880]
            off += 2880
            done = False
            for i in range(36):
                card = block[i * 80:(i + 1) * 80].decode("ascii")
                key = card[:8].strip()
                if key == "END":
                    done = True
                    break
                if card[8:10] == "= " and key not in cards:
                    cards[key] = card[10:].split("/")[0].strip().strip("'").strip()
            if done:
                break
        bitpix = int(cards["BITPIX"])
        naxis = int(cards["NAXIS"])
        shape = [int(cards[f"NAXIS{i}"]) for i in range(naxis, 0, -1)]
        size = 0 if naxis == 0 else abs(bitpix) // 8 * int(np.prod(shape))
        if cards.get("EXTNAME") == extname:
            if bitpix != -32:
                raise SystemExit(f"{path}: {extname} has BITPIX {bitpix}")
            return np.frombuffer(data, dtype=">f4", count=int(np.prod(shape)), offset=off).reshape(shape)
        off += (size + 2879) // 2880 * 2880
    raise SystemExit(f"{path}: no {extname} extension")


def hst_acs_sci(root):
    # HST ACS/HRC flat-fielded exposure j8bt06nyq (47 Tuc / NGC 104, F606W,
    # 60 s), SCI extension in electrons, 1024x1024 big-endian f32 in the file.
    path = os.path.join(root, "usr/share/python-drizzle/test_data/j8bt06nyq_flt.fits")
    return _fits_image(path, "SCI").astype("<f4")


def soundfont_audio(root):
    # The 16-bit PCM sample pool ("smpl" chunk) of the public-domain
    # "GM GS Bank" SoundFont shipped with Csound, scaled to [-1, 1) f32.
    path = os.path.join(root, "usr/share/sounds/sf2/sf_GMbank.sf2")
    buf = open(path, "rb").read()
    if buf[:4] != b"RIFF" or buf[8:12] != b"sfbk":
        raise SystemExit(f"{path}: not a SoundFont 2 file")

    def find(start, end, want):
        p = start
        while p + 8 <= end:
            cid = buf[p:p + 4]
            size = struct.unpack_from("<I", buf, p + 4)[0]
            if cid == b"LIST" and buf[p + 8:p + 12] == b"sdta":
                return find(p + 12, p + 8 + size, want)
            if cid == want:
                return p + 8, size
            p += 8 + size + (size & 1)
        raise SystemExit(f"{path}: no {want!r} chunk")

    start, size = find(12, len(buf), b"smpl")
    pcm = np.frombuffer(buf, dtype="<i2", count=size // 2, offset=start)
    return (pcm.astype(np.float32) / np.float32(32768)).astype("<f4")


def soundfont_pcm(root):
    # The same sample pool as soundfont_audio in its own type: 16-bit PCM.
    return (soundfont_audio(root) * np.float32(32768)).astype("<i2")


def emoji_rgba(root):
    # Noto Color Emoji (Apache-2.0): the colour glyphs are PNG images embedded
    # in the font's CBDT table, all 136x128 with transparent backgrounds. Every
    # 13th PNG in table order (0, 13, 26, ...) is decoded to RGBA (most are
    # palette PNGs with a tRNS chunk; Pillow expands them) and stacked.
    from PIL import Image
    import io

    path = os.path.join(root, "usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")
    buf = open(path, "rb").read()
    ntables = struct.unpack_from(">H", buf, 4)[0]
    tables = {}
    for i in range(ntables):
        tag, _, off, length = struct.unpack_from(">4sIII", buf, 12 + 16 * i)
        tables[tag] = (off, length)
    off, length = tables[b"CBDT"]
    cbdt = buf[off:off + length]
    sig = b"\x89PNG\r\n\x1a\n"
    pngs, pos = [], 0
    while (start := cbdt.find(sig, pos)) >= 0:
        end = start + 8
        while True:  # walk the PNG chunks to IEND
            n, ctype = struct.unpack_from(">I4s", cbdt, end)
            end += 12 + n
            if ctype == b"IEND":
                break
        pngs.append(cbdt[start:end])
        pos = end
    if len(pngs) != 3926:
        raise SystemExit(f"{path}: expected 3926 PNG glyphs, found {len(pngs)}")
    out = []
    for png in pngs[::13]:
        with Image.open(io.BytesIO(png)) as im:
            a = np.asarray(im.convert("RGBA"), dtype=np.uint8)
        if a.shape != (128, 136, 4):
            raise SystemExit(f"{path}: glyph image of shape {a.shape}")
        out.append(a)
    return np.stack(out)


def _pdb_rows(root):
    # Atom records of the 427 Protein Data Bank files shipped as THESEUS
    # examples (public domain), files sorted by path, records in file order.
    # One row per ATOM/HETATM record: x, y, z (PDB columns 31-54, three
    # decimals, angstrom), occupancy (55-60) and B-factor (61-66, two decimals),
    # each decimal text parsed to its nearest double.
    base = os.path.join(root, "usr/share/doc/theseus/examples")
    paths = sorted(
        os.path.relpath(os.path.join(d, f), base)
        for d, _, fs in os.walk(base) for f in fs if f.endswith(".pdb.gz")
    )
    if len(paths) != 427:
        raise SystemExit(f"{base}: expected 427 .pdb.gz files, found {len(paths)}")
    rows = []
    for rel in paths:
        for line in gzip.open(os.path.join(base, rel), "rt", encoding="ascii"):
            if line.startswith(("ATOM  ", "HETATM")):
                rows.append((line[30:38], line[38:46], line[46:54], line[54:60], line[60:66]))
    return np.array(rows, dtype="<f8")


def pdb_atoms(root):
    # The records as f32 (decimal text -> nearest double -> f32).
    return _pdb_rows(root).astype("<f4")


def pdb_atoms_f64(root):
    # The records as f64, the array a PDB reader (numpy, Biopython) holds.
    return _pdb_rows(root)


def chessboards_gray(root):
    # OpenCV's stereo-calibration sample photographs: 26 grayscale 640x480
    # JPEGs of a chessboard (left01..left14 and right01..right14; 10 is not
    # shipped), decoded to 8-bit and stacked in that order.
    from PIL import Image

    data = os.path.join(root, "usr/share/doc/opencv-doc/examples/data")
    out = []
    for side in ("left", "right"):
        for i in (1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14):
            path = os.path.join(data, f"{side}{i:02d}.jpg")
            with Image.open(path) as im:
                im.load()
                if im.mode != "L" or im.size != (640, 480):
                    raise SystemExit(f"{path}: expected 640x480 grayscale, got {im.mode} {im.size}")
                out.append(np.asarray(im, dtype=np.uint8))
    return np.stack(out)


ENTRIES = {
    "photos_rgb": (photos_rgb, np.uint8),
    "retina_rgba": (retina_rgba, np.uint32),
    "mri_colin27_t1": (mri_colin27_t1, np.uint8),
    "macaque_atlas_labels": (macaque_atlas_labels, np.uint16),
    "dem_trinidad": (dem_trinidad, np.float32),
    "hst_acs_sci": (hst_acs_sci, np.float32),
    "soundfont_audio": (soundfont_audio, np.float32),
    "emoji_rgba": (emoji_rgba, np.uint8),
    "pdb_atoms": (pdb_atoms, np.float32),
    "chessboards_gray": (chessboards_gray, np.uint8),
    "soundfont_pcm": (soundfont_pcm, np.int16),
    "pdb_atoms_f64": (pdb_atoms_f64, np.float64),
}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ENTRIES:
        raise SystemExit(__doc__ + "\nentries: " + ", ".join(ENTRIES))
    name, root, out = sys.argv[1:]
    fn, dtype = ENTRIES[name]
    a = np.ascontiguousarray(fn(root))
    if a.dtype.type is not np.dtype(dtype).type or a.dtype.byteorder == ">":
        raise SystemExit(f"{name}: produced {a.dtype}, expected little-endian {np.dtype(dtype)}")
    with open(out + ".part", "wb") as f:
        f.write(a.tobytes(order="C"))
    os.replace(out + ".part", out)
    print(f"{name}: shape {list(a.shape)} {a.dtype} {a.nbytes} bytes")


if __name__ == "__main__":
    main()
