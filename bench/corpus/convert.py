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


ENTRIES = {
    "photos_rgb": (photos_rgb, np.uint8),
    "retina_rgba": (retina_rgba, np.uint32),
    "mri_colin27_t1": (mri_colin27_t1, np.uint8),
    "macaque_atlas_labels": (macaque_atlas_labels, np.uint16),
    "dem_trinidad": (dem_trinidad, np.float32),
    "hst_acs_sci": (hst_acs_sci, np.float32),
    "soundfont_audio": (soundfont_audio, np.float32),
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
