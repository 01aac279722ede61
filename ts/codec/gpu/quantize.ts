/// <reference types="@webgpu/types" />
/**
 * GPU kernels of the error-bounded lossy mode (docs/format.md, "Stage 5: quantize"): dispatch of
 * shaders/codec-quantize.wgsl, the WGSL twin of assembly/quantize.ts (same codes, same
 * reconstructions, same decoded bytes). quantizeOnGpu / dequantizeOnGpu take and return host
 * arrays (tests compare them with the CPU kernels on every input); encodeDequantize records the
 * decode of a quantized chunk whose codes are already on the GPU (decompress to the device).
 */
import type { QuantizeParams } from '../quantize.js';
import quantizeSource from '../../../shaders/codec-quantize.wgsl';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { getPipeline } from '../../gpu/pipelines.js';

const WG = 256;
/** Workgroups per grid row (WebGPU's per-dimension limit is 65535). */
const ROW = 32768;

function pipeline(ctx: GpuContext, entryPoint: 'quantize' | 'dequantize' | 'scatter'): GPUComputePipeline {
  return getPipeline(ctx.device, `codec-quantize:${entryPoint}`, () => ({ code: quantizeSource, entryPoint }));
}

/** Params as codec-quantize.wgsl's struct (8 words); bases are word offsets. */
function paramsWords(
  n: number,
  p: Pick<QuantizeParams, 'step' | 'inv' | 'tol' | 'limBits'>,
  bases: { src?: number; dst?: number; codes?: number } = {},
): ArrayBuffer {
  const buf = new ArrayBuffer(32);
  const view = new DataView(buf);
  view.setUint32(0, n, true);
  view.setFloat32(4, p.step, true);
  view.setFloat32(8, p.inv, true);
  view.setFloat32(12, p.tol, true);
  view.setUint32(16, p.limBits, true);
  view.setUint32(20, bases.src ?? 0, true);
  view.setUint32(24, bases.dst ?? 0, true);
  view.setUint32(28, bases.codes ?? 0, true);
  return buf;
}

/** The bindings each entry point's 'auto' layout holds (codec-quantize.wgsl). */
const BINDINGS = { quantize: [0, 1, 2, 3], dequantize: [0, 1, 2, 3, 4], scatter: [0, 1, 2, 4, 5] } as const;

/** Runs one entry point over `n` invocations with (params, src, dst, aux); reads back dst and aux. */
async function run(
  ctx: GpuContext,
  entryPoint: 'quantize' | 'dequantize' | 'scatter',
  n: number,
  params: ArrayBuffer,
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
    const uniform = buffer(32, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
    device.queue.writeBuffer(uniform, 0, params);
    const srcBuf = buffer(src.byteLength, storage, src);
    const dstBuf = buffer(dstWords * 4, storage, typeof dst === 'number' ? undefined : dst);
    const auxBuf = buffer(Math.max(auxWords, 1) * 4, storage, new Uint32Array(Math.max(auxWords, 1)));
    const countsBuf = buffer(16, storage, new Uint32Array(4));
    const codesBuf = buffer(Math.max(4, codes?.byteLength ?? 0), storage, codes);
    const byBinding = [uniform, srcBuf, dstBuf, auxBuf, countsBuf, codesBuf];
    const pipe = pipeline(ctx, entryPoint);
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
 * Quantizes f32 elements on the GPU with the parameters of `quantizeParams(abs)`: their u32
 * codes and the bits of their reconstructions, as assembly/quantize.ts `quantizeF32` writes
 * them (exceptions are the elements coded 0xffffffff; their reconstruction is the element).
 */
export async function quantizeOnGpu(
  ctx: GpuContext,
  elements: Float32Array,
  params: QuantizeParams,
): Promise<{ codes: Uint32Array; recon: Uint32Array }> {
  const n = elements.length;
  const src = new Uint32Array(elements.buffer, elements.byteOffset, n);
  const { dst, aux } = await run(ctx, 'quantize', n, paramsWords(n, params), src, n, n);
  return { codes: dst, recon: aux.subarray(0, n) };
}

/**
 * Dequantizes u32 codes on the GPU with quantizer `step`, then writes the exceptions (indices,
 * strictly increasing and checked on the host; bits) over them: the bits of the decoded f32
 * elements, as the CPU path decodes them. `invalid` is true when a code is neither a quantized
 * value nor a reserved one (the CPU path's CORRUPT).
 */
export async function dequantizeOnGpu(
  ctx: GpuContext,
  codes: Uint32Array,
  step: number,
  exceptions: { indices: Uint32Array; values: Uint32Array } = { indices: new Uint32Array(0), values: new Uint32Array(0) },
): Promise<{ elements: Uint32Array; invalid: boolean }> {
  const n = codes.length;
  const p = { step, inv: 0, tol: 0, limBits: 0 };
  const { dst, aux } = await run(ctx, 'dequantize', n, paramsWords(n, p), codes, n, 1);
  const e = exceptions.indices.length;
  if (e === 0) return { elements: dst, invalid: aux[0] !== 0 };
  const src = new Uint32Array(2 * e);
  src.set(exceptions.indices, 0);
  src.set(exceptions.values, e);
  const scattered = await run(ctx, 'scatter', e, paramsWords(e, { ...p, limBits: n }), src, dst, 1, codes);
  return { elements: scattered.dst, invalid: aux[0] !== 0 };
}

/** Bytes of encodeDequantize's status buffer. */
export const DEQUANTIZE_STATUS_BYTES = 512;

/**
 * Records the decode of one quantized chunk (docs/format.md, "Stage 5: quantize") whose `count`
 * u32 codes lie in `codes` at byte `codesByteOffset` (a multiple of 4): the f32 elements' bits
 * into `out` at byte `outByteOffset` (a multiple of 4), then the exceptions, `exceptionCount`
 * u32 indices followed by as many u32 bits in `exceptions` from byte `exceptionsByteOffset`
 * (default 0, a multiple of 4), written over them.
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
    exceptions?: GPUBuffer;
    exceptionsByteOffset?: number;
    exceptionCount: number;
    status: GPUBuffer;
  },
): void {
  const p = { step: job.step, inv: 0, tol: 0, limBits: 0 };
  const words = (a: ArrayBuffer) => Array.from(new Uint32Array(a));
  const grid = (n: number): number => Math.ceil(n / WG);
  // two bindings of one buffer that must not overlap: the flag at 0, the counters at 256 (the
  // storage offset alignment)
  const counts: GPUBufferBinding = { buffer: job.status, offset: 256, size: 16 };
  if (job.count > 0) {
    s.dispatch(
      pipeline(ctx, 'dequantize'),
      [
        {
          binding: 0,
          resource: { buffer: s.uniform(words(paramsWords(job.count, p, { src: job.codesByteOffset / 4, dst: job.outByteOffset / 4 }))) },
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
    s.dispatch(
      pipeline(ctx, 'scatter'),
      [
        {
          binding: 0,
          resource: {
            buffer: s.uniform(
              words(
                paramsWords(
                  job.exceptionCount,
                  { ...p, limBits: job.count },
                  { src: (job.exceptionsByteOffset ?? 0) / 4, dst: job.outByteOffset / 4, codes: job.codesByteOffset / 4 },
                ),
              ),
            ),
          },
        },
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
 * Records the quantize kernel over `count` f32 elements of `elements` (from byte 0): their u32
 * codes into `codes` and the bits of their reconstructions into `recon` (an exception's is the
 * element itself), as assembly/quantize.ts `quantizeF32` writes them, for the parameters of
 * `quantizeParams(abs)`. The three buffers must be distinct.
 */
export function encodeQuantize(
  ctx: GpuContext,
  s: Submission,
  job: { elements: GPUBuffer; codes: GPUBuffer; recon: GPUBuffer; count: number; params: QuantizeParams },
): void {
  if (job.count === 0) return;
  s.dispatch(
    pipeline(ctx, 'quantize'),
    [
      { binding: 0, resource: { buffer: s.uniform(Array.from(new Uint32Array(paramsWords(job.count, job.params)))) } },
      { binding: 1, resource: { buffer: job.elements } },
      { binding: 2, resource: { buffer: job.codes } },
      { binding: 3, resource: { buffer: job.recon } },
    ],
    Math.ceil(job.count / WG),
    'parle:quantize',
  );
}
