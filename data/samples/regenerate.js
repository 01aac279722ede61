#!/usr/bin/env node
// Rebuild the parle demo samples from files extracted out of Debian 12 packages.
// Only Node built-ins are used (node:zlib for gzip/zlib, no npm dependencies).
//
//   node regenerate.js <extracted-root> <out-dir> [--runner-up]
//
// <extracted-root> is a directory into which the .deb files were unpacked with
// `dpkg-deb -x` (see regenerate.sh). Each sample is written as a raw
// little-endian array (<name>.<u8|u16>) plus <name>.json with shape, type,
// source, license and run statistics.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const crypto = require('node:crypto');

const ITK = 'usr/share/doc/insighttoolkit5-examples/examples/Data';
const ITK_SRC = {
  package: 'insighttoolkit5-examples', version: '5.2.1-5+deb12u1', distribution: 'Debian 12 (bookworm)',
  upstream: 'Insight Toolkit (ITK) 5.2.1, Examples/Data',
  license: 'Apache-2.0', licenseFile: 'LICENSE-Apache-2.0.txt',
  copyright: 'Copyright 1999-2019 Insight Software Consortium; Copyright 2020 NumFOCUS',
};
const ITK_DESC = 'Same subject/grid as the other KmeansTest_* volumes: 128 x 128 x 62 voxels, 2 x 2 x 3 mm.';

const SAMPLES = [
  {
    name: 't1-mri', kind: 'nifti', from: `${ITK}/KmeansTest_T1UCharRaw.nii.gz`, ext: 'u16', expectDatatype: 4,
    description: 'Real T1-weighted brain MRI volume (ITK example data). Stored in the NIfTI file as int16 ' +
      'with values 0..255; all values are non-negative, so the bytes are identical read as u16. ' + ITK_DESC,
    source: ITK_SRC,
  },
  {
    name: 't1-kmeans-labels', kind: 'nifti', from: `${ITK}/KmeansTest_T1KmeansPrelimSegmentation.nii.gz`, ext: 'u8', expectDatatype: 2,
    description: 'Tissue label volume (k-means segmentation of the T1 MRI above; labels 0..6). ' + ITK_DESC,
    source: ITK_SRC,
  },
  {
    name: 't1-brain-labels', kind: 'nifti', from: `${ITK}/KmeansTest_T1RawSkullStrip.nii.gz`, ext: 'u8', expectDatatype: 2,
    description: 'Skull-stripped tissue label volume (0 = outside the brain, 4/5/6 = tissue classes). ' + ITK_DESC,
    source: ITK_SRC,
  },
  {
    name: 'camera', kind: 'png-gray8', from: 'usr/lib/python3/dist-packages/skimage/data/camera.png', ext: 'u8',
    description: 'Photograph "camera" (man with a camera on a tripod), 512 x 512 8-bit grayscale. ' +
      'Photo-like, NOT RLE-friendly: included as an honest worst case.',
    source: {
      package: 'python3-skimage', version: '0.19.3-8', distribution: 'Debian 12 (bookworm)',
      upstream: 'scikit-image 0.19.3, skimage/data/camera.png',
      license: 'CC0-1.0', licenseFile: 'LICENSE-CC0-1.0.txt',
      copyright: 'No copyright restrictions. CC0 by the photographer (Lav Varshney) ' +
        '(skimage/data/_fetchers.py, docstring of camera()); package: BSD-3-Clause, the scikit-image team',
    },
  },
];

const RUNNER_UP = [
  {
    name: 'brodmann', kind: 'nifti', from: 'usr/share/mricron/templates/brodmann.nii.gz', ext: 'u8', expectDatatype: 2,
    description: 'Brodmann-area label atlas on the ch2 (Colin27) template, 181 x 217 x 181 voxels, 1 mm; 0 = background.',
    source: {
      package: 'mricron-data', version: '1.2.20211006+dfsg-4', distribution: 'Debian 12 (bookworm)',
      upstream: 'MRIcron (Chris Rorden), templates/brodmann.nii.gz',
      license: 'BSD-3-Clause (as declared for Files: * in the Debian copyright file)', licenseFile: null,
      copyright: 'Copyright 2006-2010, Chris Rorden',
    },
  },
];

// ---------- NIfTI-1 (.nii / .nii.gz) ----------
const NIFTI_TYPES = { 2: ['u8', 1], 4: ['i16', 2], 8: ['i32', 4], 16: ['f32', 4], 256: ['i8', 1], 512: ['u16', 2], 768: ['u32', 4] };
function readNifti(file) {
  let buf = fs.readFileSync(file);
  if (file.endsWith('.gz')) buf = zlib.gunzipSync(buf);
  if (buf.readInt32LE(0) !== 348) throw new Error(`${file}: not a little-endian NIfTI-1 file`);
  const ndim = buf.readInt16LE(40);
  const dims = []; for (let i = 1; i <= ndim; i++) dims.push(buf.readInt16LE(40 + 2 * i));
  const datatype = buf.readInt16LE(70);
  const pixdim = []; for (let i = 1; i <= ndim; i++) pixdim.push(buf.readFloatLE(76 + 4 * i));
  const voxOffset = Math.round(buf.readFloatLE(108));
  const slope = buf.readFloatLE(112), inter = buf.readFloatLE(116);
  if (!NIFTI_TYPES[datatype]) throw new Error(`${file}: unsupported datatype ${datatype}`);
  const [type, size] = NIFTI_TYPES[datatype];
  const count = dims.reduce((a, b) => a * b, 1);
  const data = buf.subarray(voxOffset, voxOffset + count * size);
  if (data.length !== count * size) throw new Error(`${file}: truncated data`);
  if ((slope !== 0 && slope !== 1) || inter !== 0) throw new Error(`${file}: scaled data (scl_slope/inter) not expected`);
  return { dims, pixdim, datatype, type, size, data: Buffer.from(data) };
}

// ---------- PNG (non-interlaced, 8-bit grayscale only here) ----------
function decodePng(buf) {
  if (buf.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error('not a PNG');
  let off = 8, hdr = null; const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off), type = buf.toString('latin1', off + 4, off + 8);
    const body = buf.subarray(off + 8, off + 8 + len); off += 12 + len;
    if (type === 'IHDR') hdr = { w: body.readUInt32BE(0), h: body.readUInt32BE(4), depth: body[8], ctype: body[9], interlace: body[12] };
    else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
  }
  const chans = { 0: 1, 2: 3, 4: 2, 6: 4 }[hdr.ctype];
  if (hdr.depth !== 8 || !chans || hdr.interlace) throw new Error('unsupported PNG variant');
  const bpp = chans, stride = hdr.w * chans, raw = zlib.inflateSync(Buffer.concat(idat));
  const out = Buffer.alloc(stride * hdr.h); let prev = Buffer.alloc(stride);
  for (let y = 0; y < hdr.h; y++) {
    const ft = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = out.subarray(y * stride, (y + 1) * stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      let p = 0;
      if (ft === 1) p = a; else if (ft === 2) p = b; else if (ft === 3) p = (a + b) >> 1;
      else if (ft === 4) { const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c); p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      else if (ft !== 0) throw new Error('bad PNG filter ' + ft);
      cur[i] = (line[i] + p) & 255;
    }
    prev = cur;
  }
  return { width: hdr.w, height: hdr.h, channels: chans, data: out };
}

// ---------- statistics ----------
function stats(buf, ext) {
  const n = ext === 'u8' ? buf.length : buf.length / 2;
  const get = ext === 'u8' ? (i) => buf[i] : (i) => buf.readUInt16LE(2 * i);
  let runs = n ? 1 : 0, zeros = 0, prev = n ? get(0) : 0;
  for (let i = 0; i < n; i++) { const v = get(i); if (v === 0) zeros++; if (i && v !== prev) runs++; prev = v; }
  let zeroBytes = 0, byteRuns = buf.length ? 1 : 0;
  for (let i = 0; i < buf.length; i++) { if (buf[i] === 0) zeroBytes++; if (i && buf[i] !== buf[i - 1]) byteRuns++; }
  const r = (x) => Math.round(x * 1000) / 1000;
  return {
    elements: n, bytes: buf.length, runs, meanRun: r(n / runs), zeroElementFraction: r(zeros / n),
    zeroByteFraction: r(zeroBytes / buf.length), meanRunAsU8: r(buf.length / byteRuns),
  };
}

function build(sample, root, outDir) {
  const src = path.join(root, sample.from);
  let data, shape, spacing = null, axes;
  if (sample.kind === 'nifti') {
    const img = readNifti(src);
    if (img.datatype !== sample.expectDatatype) throw new Error(`${src}: datatype ${img.datatype}, expected ${sample.expectDatatype}`);
    if (sample.ext === 'u16' && img.type === 'i16') {
      for (let i = 0; i < img.data.length; i += 2) if (img.data.readInt16LE(i) < 0) throw new Error('negative int16 value: cannot relabel as u16');
    }
    data = img.data; shape = img.dims.slice().reverse(); spacing = img.pixdim.slice().reverse();
    axes = img.dims.length === 3 ? ['z', 'y', 'x'] : null;
  } else {
    const img = decodePng(fs.readFileSync(src));
    if (img.channels !== 1) throw new Error('expected grayscale PNG');
    data = img.data; shape = [img.height, img.width]; axes = ['y', 'x'];
  }
  const file = `${sample.name}.${sample.ext}`;
  fs.writeFileSync(path.join(outDir, file), data);
  const sha256 = crypto.createHash('sha256').update(data).digest('hex');
  const meta = {
    name: sample.name, file, dtype: sample.ext, endianness: 'little', shape, axes,
    order: 'C (row-major: last axis varies fastest)', spacing_mm: spacing,
    description: sample.description,
    source: { ...sample.source, pathInPackage: '/' + sample.from },
    sha256, stats: stats(data, sample.ext),
  };
  fs.writeFileSync(path.join(outDir, `${sample.name}.json`), JSON.stringify(meta, null, 2) + '\n');
  return meta;
}

function main() {
  const args = process.argv.slice(2);
  const runnerUp = args.includes('--runner-up');
  const [root, outDir] = args.filter((a) => !a.startsWith('--'));
  if (!root || !outDir) { console.error('usage: node regenerate.js <extracted-root> <out-dir> [--runner-up]'); process.exit(2); }
  fs.mkdirSync(outDir, { recursive: true });
  for (const s of runnerUp ? RUNNER_UP : SAMPLES) {
    const m = build(s, root, outDir);
    const st = m.stats;
    console.log(`${m.file}: ${m.dtype} [${m.shape.join('x')}] ${st.elements} elements, ${st.bytes} bytes, ` +
      `mean run ${st.meanRun}, zero fraction ${st.zeroElementFraction}, sha256 ${m.sha256}`);
  }
}
main();
