// The papers' figures, as their prose states them (read from plain-text copies, whose figure
// images were lost: the numbers survive in the text). Quoted with their hardware.

export const RUTTER = {
  cite: 'Rutter, Run-length Encoding on Graphics Hardware, MSc report, University of Alaska Fairbanks, 2011',
  hardware: {
    cpuSingle: 'single-threaded CPU of the NChilada renderer (not named)',
    cpuParallel: 'Intel Core i5-2400 3.10 GHz, 4 cores (OpenMP)',
    gpu: 'NVIDIA GeForce GTX 460M (host Intel Core i7-2630QM), CUDA',
  },
  volumeBytes: 512 ** 3,
  linkMBps: 10,
  /** His section 1.2 table: the Voxel3D volume (512^3 bytes). */
  options: [
    { method: 'uncompressed', timeMs: 0, sizeMB: 128, transferS: 12.8 },
    { method: 'RLE', timeMs: 556, sizeMB: 3, transferS: 0.3 },
    { method: 'gzip', timeMs: 1550, sizeMB: 1.5, transferS: 0.15 },
    { method: 'JPEG (lossy)', timeMs: 6400, sizeMB: 1.7, transferS: 0.17 },
  ],
  /** Section 1.3: single-threaded CPU RLE and gzip, seconds. */
  cpuSingleS: { Zero: [0.54, 1.15], Sequence254: [1.292, 1.16], Sequence255: [1.293, 1.16], 'Voxel3D-like': [0.556, 1.55] },
  /** Section 3.1: CUDA row- and column-compressed, ms; OpenMP CPU 91 ms for every file. */
  gpuMs: {
    Zero: { row: 328, column: 51 },
    Sequence254: { row: 2009, column: 1865 },
    Sequence255: { row: 2008, column: 51 },
    'Voxel3D-like': { row: 338, column: 60 },
  },
  cpuOpenMpMs: 91,
  /** GPU -> host of the compressed volume ~1.5 ms; of the raw volume (the CPU path needs it) ~32 ms. */
  transferMs: { compressed: 1.5, raw: 32 },
  totalsMs: { gpu: 61.5, cpu: 123 },
};

export const GRUBER = {
  cite: 'Gruber, GPGPU Computing with OpenCL, 2013',
  hardware: {
    cpu: 'Intel Core i5 M 480, 2 cores / 4 threads, 2.67 GHz (Windows 7 x64)',
    gpu: 'AMD Radeon HD 5650, 400 shader cores, 1 GiB (OpenCL)',
  },
  /** Scan of 2^26 u32 (256 MiB), ms. */
  scan26: {
    cpu: 225,
    gpuNaive: 1132,
    gpuWorkEfficient: 604,
    gpuRecursive: 606,
    gpuRecursiveVectorTotal: 383,
    gpuKernelOnly: 87,
    uploadMs: 154,
    downloadMs: 141,
    transferShare: 0.77,
  },
  /** Sort, seconds. GPU radix sort at 2^26 did not fit (the driver swapped GPU memory). */
  sort25: { cpuRadix: 0.449, gpuRadix: 1.884, gpuRadixLocalMem: 1.565, gpuRadixVector: 1.019 },
  sort26: { cpuRadix: 0.884, stdSort: 9.039, qsort: 14.746, gpuBitonic: 7.678, gpuBitonicFused: 3.808, gpuRadix: null },
};

export const HAUGEN = {
  cite: 'Haugen, Seismic Data Compression and GPU Memory Latency, MSc thesis, NTNU, 2009',
  hardware: 'Intel Core 2 Quad Q9550 2.83 GHz, NVIDIA Quadro FX 5800 4 GiB (CUDA); compression ratios measured with his CPU RLE encoder',
  method:
    '8-channel subband analysis (32 taps), then dead-zone scalar quantization to 8 bits, then RLE (32-bit counters, literal runs); ratio = compressed / raw float32 size',
  /** Table 5.3. */
  ratios: [
    { cube: '64^3', rawKiB: 1024, rleKiB: 75.692, rleHuffmanKiB: 36.702, rle: 0.0739, rleHuffman: 0.0358 },
    { cube: '128^3', rawKiB: 8192, rleKiB: 536.529, rleHuffmanKiB: 252.854, rle: 0.0655, rleHuffman: 0.031 },
  ],
  /** Table 5.1: copy of 8 MiB (128^3 floats) to the device, ms (page-locked). */
  uploadMs128: 1.77,
};
