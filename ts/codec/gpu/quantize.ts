/// <reference types="@webgpu/types" />
/**
 * GPU kernels of the error-bounded lossy mode (docs/format.md, "Stage 5: quantize"): dispatch of
 * shaders/codec-quantize.wgsl (f32) and shaders/codec-quantize-f64.wgsl (f64, its arithmetic in
 * u32 words: shaders/soft-float64.wgsl), the WGSL twins of assembly/quantize.ts (same codes, same
 * reconstructions, same decoded bytes). quantizeOnGpu / dequantizeOnGpu take and return host
 * arrays (tests compare them with the CPU kernels on every input); encodeQuantize and
 * encodeDequantize record the kernels on buffers already on the GPU (compress from and
 * decompress to the device).
 */
import type { QuantizeParams, QuantizeParamsF64 } from '../quantize.js';
import quantizeCommonSource from '../../../shaders/codec-quantize-common.wgsl';
import quantizeSource from '../../../shaders/codec-quantize.wgsl';
import quantizeF64Source from '../../../shaders/codec-quantize-f64.wgsl';
import softFloatSource from '../../../shaders/soft-float64.wgsl';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { getPipeline } from '../../gpu/pipelines.js';

const WG = 256;
/** Workgroups per grid row (WebGPU's per-dimension limit is 65535). */
const ROW = 32768;

/** Bytes of an element: 4 (f32) or 8 (f64). */
type Width = 4 | 8;

function pipeline(ctx: GpuContext, entryPoint: 'quantize' | 'dequantize' | 'scatter', width: Width): GPUComputePipeline {
  if (width === 8) {
    return getPipeline(ctx.device, `codec-quantize-f64:${entryPoint}`, () => ({
      code: softFloatSource + quantizeCommonSource + quantizeF64Source,
      entryPoint,
    }));
  }
  return getPipeline(ctx.device, `codec-quantize:${entryPoint}`, () => ({ code: quantizeCommonSource + quantizeSource, entryPoint }));
}

/** The quantizer of a kernel: f32's parameters or f64's. */
type Quantizer = QuantizeParams | QuantizeParamsF64;

/** The element width of a quantizer's kernels. */
const widthOf = (q: Quantizer): Width => ('limBits' in q ? 4 : 8);

/** Word offsets of a kernel's operands, and (scatter) the chunk's elements. */
interface Bases {
  src?: number;
  dst?: number;
  codes?: number;
  elements?: number;
}

/**
 * Params as the kernel's struct: codec-quantize.wgsl's (8 words: n, step, inv, tol as f32, lim's
 * bits or scatter's elements, the bases) for f32; codec-quantize-f64.wgsl's (16 words: n, the
 * bases, elements, 3 reserved, then step, inv, tol and lim as f64) for f64.
 */
function paramsWords(n: number, q: Quantizer, bases: Bases = {}): number[] {
  if ('limBits' in q) {
    const view = new DataView(new ArrayBuffer(32));
    view.setUint32(0, n, true);
    view.setFloat32(4, q.step, true);
    view.setFloat32(8, q.inv, true);
    view.setFloat32(12, q.tol, true);
    view.setUint32(16, bases.elements ?? q.limBits, true);
    view.setUint32(20, bases.src ?? 0, true);
    view.setUint32(24, bases.dst ?? 0, true);
    view.setUint32(28, bases.codes ?? 0, true);
    return Array.from(new Uint32Array(view.buffer));
  }
  const view = new DataView(new ArrayBuffer(64));
  [n, bases.src ?? 0, bases.dst ?? 0, bases.codes ?? 0, bases.elements ?? 0].forEach((w, k) => view.setUint32(4 * k, w, true));
  [q.step, q.inv, q.abs, q.lim].forEach((x, k) => view.setFloat64(32 + 8 * k, x, true));
  return Array.from(new Uint32Array(view.buffer));
}

/** The quantizer that only dequantizes with `step` (the other parameters unused). */
function dequantizer(step: number, width: Width): Quantizer {
  return width === 8 ? { abs: 0, step, inv: 0, lim: 0 } : { abs: 0, step, inv: 0, tol: 0, limBits: 0 };
}

/** The bindings each entry point's 'auto' layout holds (codec-quantize-common.wgsl). */
const BINDINGS = { quantize: [0, 1, 2, 3], dequantize: [0, 1, 2, 3, 4], scatter: [0, 1, 2, 4, 5] } as const;

/** Runs one entry point of the `width` kernels over `n` invocations with (params, src, dst, aux); reads back dst and aux. */
async function run(
  ctx: GpuContext,
  entryPoint: 'quantize' | 'dequantize' | 'scatter',
  width: Width,
  n: number,
  params: number[],
  src: Uint32Array,
  dst: Uint32Array | number,
  auxWords: number,
  codes?: Uint32Array,
): Promise<{ dst: Uint32Array; aux: Uint32Array }> {
  const { device } = ctx;
  const made: GPUBuffer[] = [];
  const buffer = (size: number, usage: number, data?: Uint32Array): GPUBuffer => {
    const b = device.createBuffer({ label: `parle:quantize-${entryPoint}`, size: Math.max(16, Math.ceil(size / 4) * 4), usage });
    made.push(b);
    if (data !== undefined && data.byteLength > 0) device.queue.writeBuffer(b, 0, data.buffer, data.byteOffset, data.byteLength);
    return b;
  };
  try {
    const mark = ctx.errorMark;
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const dstWords = typeof dst === 'number' ? dst : dst.length;
    const uniform = buffer(4 * params.length, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
    device.queue.writeBuffer(uniform, 0, new Uint32Array(params));
    const srcBuf = buffer(src.byteLength, storage, src);
    const dstBuf = buffer(dstWords * 4, storage, typeof dst === 'number' ? undefined : dst);
    const auxBuf = buffer(Math.max(auxWords, 1) * 4, storage, new Uint32Array(Math.max(auxWords, 1)));
    const countsBuf = buffer(16, storage, new Uint32Array(4));
    const codesBuf = buffer(Math.max(4, codes?.byteLength ?? 0), storage, codes);
    const byBinding = [uniform, srcBuf, dstBuf, auxBuf, countsBuf, codesBuf];
    const pipe = pipeline(ctx, entryPoint, width);
    const encoder = device.createCommandEncoder();
    if (n > 0) {
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipe);
      pass.setBindGroup(
        0,
        device.createBindGroup({
          layout: pipe.getBindGroupLayout(0),
          // 'auto' layouts hold only the bindings an entry point uses
          entries: BINDINGS[entryPoint].map((binding) => ({ binding, resource: { buffer: byBinding[binding] } })),
        }),
      );
      const groups = Math.ceil(n / WG);
      pass.dispatchWorkgroups(Math.min(groups, ROW), Math.ceil(groups / ROW));
      pass.end();
    }
    const readDst = buffer(dstWords * 4, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    const readAux = buffer(Math.max(auxWords, 1) * 4, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    encoder.copyBufferToBuffer(dstBuf, 0, readDst, 0, readDst.size);
    encoder.copyBufferToBuffer(auxBuf, 0, readAux, 0, readAux.size);
    device.queue.submit([encoder.finish()]);
    // a buffer the device could not allocate fails the commands that use it, which then do not
    // run: checked before the map
    await ctx.checkErrors(mark, `quantize (${entryPoint})`);
    await ctx.guard(Promise.all([readDst.mapAsync(GPUMapMode.READ), readAux.mapAsync(GPUMapMode.READ)]));
    const out = new Uint32Array(readDst.getMappedRange().slice(0, dstWords * 4));
    const aux = new Uint32Array(readAux.getMappedRange().slice(0));
    return { dst: out, aux };
  } finally {
    for (const b of made) b.destroy();
  }
}

/**
 * Quantizes f32 or f64 elements on the GPU with the parameters of `quantizeParams(abs)` (f32) or
 * `quantizeParamsF64(abs)` (f64): their u32 codes and the bits of their reconstructions (u32
 * words, two an f64 element, low first), as assembly/quantize.ts `quantizeF32` / `quantizeF64`
 * write them (exceptions are the elements coded 0xffffffff; their reconstruction is the element).
 */
export async function quantizeOnGpu(
  ctx: GpuContext,
  elements: Float32Array | Float64Array,
  params: Quantizer,
): Promise<{ codes: Uint32Array; recon: Uint32Array }> {
  const n = elements.length;
  const width = widthOf(params);
  const words = (n * width) / 4;
  const src = new Uint32Array(elements.buffer, elements.byteOffset, words);
  const { dst, aux } = await run(ctx, 'quantize', width, n, paramsWords(n, params), src, n, words);
  return { codes: dst, recon: aux.subarray(0, words) };
}

/**
 * Dequantizes u32 codes on the GPU with quantizer `step` (an f32's for `width` 4, an f64's for
 * 8), then writes the exceptions (indices, strictly increasing and checked on the host; bits,
 * u32 words: two an f64, low first) over them: the bits of the decoded elements (u32 words), as
 * the CPU path decodes them. `invalid` is true when a code is neither a quantized value nor a
 * reserved one (the CPU path's CORRUPT).
 */
export async function dequantizeOnGpu(
  ctx: GpuContext,
  codes: Uint32Array,
  step: number,
  exceptions: { indices: Uint32Array; values: Uint32Array } = { indices: new Uint32Array(0), values: new Uint32Array(0) },
  width: Width = 4,
): Promise<{ elements: Uint32Array; invalid: boolean }> {
  const n = codes.length;
  const q = dequantizer(step, width);
  const words = (n * width) / 4;
  const { dst, aux } = await run(ctx, 'dequantize', width, n, paramsWords(n, q), codes, words, 1);
  const e = exceptions.indices.length;
  if (e === 0) return { elements: dst, invalid: aux[0] !== 0 };
  const src = new Uint32Array(e + exceptions.values.length);
  src.set(exceptions.indices, 0);
  src.set(exceptions.values, e);
  const scattered = await run(ctx, 'scatter', width, e, paramsWords(e, q, { elements: n }), src, dst, 1, codes);
  return { elements: scattered.dst, invalid: aux[0] !== 0 };
}

/** Bytes of encodeDequantize's status buffer. */
export const DEQUANTIZE_STATUS_BYTES = 512;

/**
 * Records the decode of one quantized chunk (docs/format.md, "Stage 5: quantize") whose `count`
 * u32 codes lie in `codes` at byte `codesByteOffset` (a multiple of 4): the elements' bits (f32
 * for `width` 4, the default; f64 for 8, with `step` an f64) into `out` at byte
 * `outByteOffset` (a multiple of 4), then the exceptions, `exceptionCount` u32 indices followed
 * by their bits (a u32 each for f32, two for f64, low first) in `exceptions` from byte
 * `exceptionsByteOffset` (default 0, a multiple of 4), written over them.
 * `status` ({@link DEQUANTIZE_STATUS_BYTES}, zeroed by the caller before the first chunk)
 * gathers, over every chunk recorded with it: u32 at byte 0, invalid codes (nonzero: some); at
 * byte 256, exception codes met; at byte 260, exceptions refused (an index out of range, not
 * above the one before, or not at an exception code). The caller compares the exception codes
 * with the exceptions listed (the CPU decoder's CORRUPT cases).
 * Codes and output must not overlap.
 */
export function encodeDequantize(
  ctx: GpuContext,
  s: Submission,
  job: {
    codes: GPUBuffer;
    codesByteOffset: number;
    out: GPUBuffer;
    outByteOffset: number;
    count: number;
    step: number;
    width?: Width;
    exceptions?: GPUBuffer;
    exceptionsByteOffset?: number;
    exceptionCount: number;
    status: GPUBuffer;
  },
): void {
  const width = job.width ?? 4;
  const q = dequantizer(job.step, width);
  const grid = (n: number): number => Math.ceil(n / WG);
  // two bindings of one buffer that must not overlap: the flag at 0, the counters at 256 (the
  // storage offset alignment)
  const counts: GPUBufferBinding = { buffer: job.status, offset: 256, size: 16 };
  if (job.count > 0) {
    s.dispatch(
      pipeline(ctx, 'dequantize', width),
      [
        {
          binding: 0,
          resource: { buffer: s.uniform(paramsWords(job.count, q, { src: job.codesByteOffset / 4, dst: job.outByteOffset / 4 })) },
        },
        { binding: 1, resource: { buffer: job.codes } },
        { binding: 2, resource: { buffer: job.out } },
        { binding: 3, resource: { buffer: job.status, offset: 0, size: 16 } },
        { binding: 4, resource: counts },
      ],
      grid(job.count),
      'parle:dequantize',
    );
  }
  if (job.exceptionCount > 0 && job.exceptions !== undefined) {
    const bases = {
      src: (job.exceptionsByteOffset ?? 0) / 4,
      dst: job.outByteOffset / 4,
      codes: job.codesByteOffset / 4,
      elements: job.count,
    };
    s.dispatch(
      pipeline(ctx, 'scatter', width),
      [
        { binding: 0, resource: { buffer: s.uniform(paramsWords(job.exceptionCount, q, bases)) } },
        { binding: 1, resource: { buffer: job.exceptions } },
        { binding: 2, resource: { buffer: job.out } },
        { binding: 4, resource: counts },
        { binding: 5, resource: { buffer: job.codes } },
      ],
      grid(job.exceptionCount),
      'parle:dequantize-scatter',
    );
  }
}

/**
 * Records the quantize kernel over `count` elements of `elements` (from byte 0; f32 for the
 * parameters of `quantizeParams(abs)`, f64 for `quantizeParamsF64(abs)`): their u32 codes into
 * `codes` and the bits of their reconstructions into `recon` (an element's width each; an
 * exception's is the element itself), as assembly/quantize.ts `quantizeF32` / `quantizeF64`
 * write them. The three buffers must be distinct.
 */
export function encodeQuantize(
  ctx: GpuContext,
  s: Submission,
  job: { elements: GPUBuffer; codes: GPUBuffer; recon: GPUBuffer; count: number; params: Quantizer },
): void {
  if (job.count === 0) return;
  s.dispatch(
    pipeline(ctx, 'quantize', widthOf(job.params)),
    [
      { binding: 0, resource: { buffer: s.uniform(paramsWords(job.count, job.params)) } },
      { binding: 1, resource: { buffer: job.elements } },
      { binding: 2, resource: { buffer: job.codes } },
      { binding: 3, resource: { buffer: job.recon } },
    ],
    Math.ceil(job.count / WG),
    'parle:quantize',
  );
}
