/**
 * Lossy compression of an f32 or f64 DeviceArray within a pointwise bound (docs/format.md,
 * "Stage 5: quantize") with the work on the GPU, so that the elements never come to the host:
 *
 *   1. the GPU quantizes every element (shaders/codec-quantize.wgsl, f64's
 *      codec-quantize-f64.wgsl: the same codes and reconstructions as the CPU's
 *      assembly/quantize.ts), flags the exceptions and scans the flags; the exception count and
 *      each chunk's first exception come back;
 *   2. the GPU lists the exceptions (index and bits, shaders/codec-exceptions.wgsl) and hashes
 *      each chunk's reconstructions (the elements' checksum of a quantized chunk); the lists and
 *      hashes come back;
 *   3. the codes are compressed as u32 by the GPU path (ts/codec/gpu/encode.ts: the chooser's or
 *      the given pipeline), in chunks of as many codes as the container's chunks hold elements;
 *   4. each chunk becomes the quantize header, its exceptions and its codes' payload, unless, as
 *      on the CPU path (ts/codec/cpu/encode.ts encodeQuantized), it has more exceptions than half
 *      its elements, its codes were stored, or the result is not smaller than the elements: such
 *      chunks are coded losslessly (the GPU path on the elements; f64's as their word planes).
 * The pipeline of the codes may differ from the CPU path's (the GPU's chooser sizes candidates
 * exactly, the CPU's encodes its best estimate): the bytes may differ, the decoded elements are
 * the same.
 */
import { quantizeHeaderBytes, writeQuantizeHeader } from '../../format/quantize.js';
import { quantizeParams, quantizeParamsF64 } from '../quantize.js';
import type { CpuPath } from '../../cpu/cpu-path.js';
import { treeHashes } from './hash.js';
import { composeKernel, WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext } from '../../gpu/context.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import { getPipeline } from '../../gpu/pipelines.js';
import { encodeQuantize } from './quantize.js';
import { encodeScan } from '../../gpu/scan.js';
import exceptionsSource from '../../../shaders/codec-exceptions.wgsl';
import type { EncodedChunk } from '../cpu/chunks.js';
import { assembleContainer } from '../../format/container.js';
import { readRanges } from './common.js';
import { encodeChunksOnDevice } from './encode.js';
import { planOnDevice } from './predict-encode.js';
import type { CompressSettings } from '../settings.js';

function exceptionsPipeline(gpu: GpuContext, entryPoint: 'exceptionFlags' | 'exceptionList'): GPUComputePipeline {
  return getPipeline(gpu.device, `codec-exceptions:${entryPoint}`, () => ({
    code: composeKernel(exceptionsSource, { subgroups: false, scalar: 'u32' }),
    entryPoint,
  }));
}

/**
 * Compresses the f32 or f64 `input` (on `gpu`) within `abs` into a container on the host, as
 * described above. A bound below 2^-120 (f64: 2^-960) codes every chunk losslessly (as the CPU
 * path does).
 * `codec`: the codes' pipeline (one the GPU path codes: ts/codec/gpu/encode.ts
 * gpuCodablePipeline), or undefined for the chooser.
 * @throws ParleError TOO_LARGE (beyond one storage binding), DEVICE_LOST, ABORTED, WORKER_FAILED
 */
export async function compressLossyOnDevice(
  cpu: CpuPath,
  gpu: GpuContext,
  input: DeviceArray,
  settings: CompressSettings,
  target?: Uint8Array,
): Promise<Uint8Array> {
  const { errorBound, signal } = settings;
  const abs = errorBound!;
  const n = input.length;
  const width = input.type === 'f64' ? 8 : 4;
  const q = width === 8 ? quantizeParamsF64(abs) : quantizeParams(abs);
  if (q === undefined || n === 0) return (await encodeChunksOnDevice(gpu, input, settings, { target })).container;
  const codesBuf = gpu.acquireStorage(n * 4, 'lossy codes');
  const reconBuf = gpu.acquireStorage(n * width, 'lossy reconstructions');
  const posBuf = gpu.acquireStorage(n * 4, 'lossy exception positions');
  const scratch: GPUBuffer[] = [];
  const codes = gpu.wrap(codesBuf, 'u32', n);
  try {
    // 1. codes, reconstructions, exception positions
    const totalBuf = gpu.acquireStorage(16, 'lossy exceptions');
    scratch.push(totalBuf);
    await gpu.submit('lossy quantize', (s) => {
      const flags = s.temp(n * 4, 'lossy exception flags');
      s.encoder.clearBuffer(totalBuf);
      encodeQuantize(gpu, s, { elements: input.buffer, codes: codesBuf, recon: reconBuf, count: n, params: q });
      s.dispatch(
        exceptionsPipeline(gpu, 'exceptionFlags'),
        [
          { binding: 0, resource: { buffer: s.uniform([n, 0, 0, 0]) } },
          { binding: 1, resource: { buffer: codesBuf } },
          { binding: 2, resource: { buffer: flags } },
        ],
        Math.ceil(n / WORKGROUP_SIZE),
        'parle:lossy-exception-flags',
      );
      encodeScan(gpu, s, flags, posBuf, n, 'u32', false, totalBuf);
    });
    // the codes in chunks of the container's chunk length (f64: twice the codes' bytes)
    const { chunkLength } = await planOnDevice(gpu, input, settings);
    const { header, encoded: codeChunks } = await encodeChunksOnDevice(gpu, codes, { ...settings, gpuChunkBytes: 4 * chunkLength });
    const C = header.chunkLength;
    const chunkCount = header.chunkCount;
    const starts = await readRanges(gpu, [
      { buffer: totalBuf, offset: 0, length: 4 },
      ...Array.from({ length: chunkCount }, (_, c) => ({ buffer: posBuf, offset: c * C * 4, length: 4 })),
    ]);
    const word = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, 4).getUint32(0, true);
    const total = word(starts[0]);
    const first = [...starts.slice(1).map(word), total];
    // 2. the exception lists, and the reconstructions' hashes
    let indices: Uint32Array = new Uint32Array(0);
    let values: Uint32Array = new Uint32Array(0);
    if (total > 0) {
      const indexBuf = gpu.acquireStorage(total * 4, 'lossy exception indices');
      const valueBuf = gpu.acquireStorage(total * width, 'lossy exception values');
      scratch.push(indexBuf, valueBuf);
      await gpu.submit('lossy exception lists', (s) => {
        s.dispatch(
          exceptionsPipeline(gpu, 'exceptionList'),
          [
            { binding: 0, resource: { buffer: s.uniform([n, width / 4, 0, 0]) } },
            { binding: 1, resource: { buffer: codesBuf } },
            { binding: 3, resource: { buffer: posBuf } },
            { binding: 4, resource: { buffer: input.buffer } },
            { binding: 5, resource: { buffer: indexBuf } },
            { binding: 6, resource: { buffer: valueBuf } },
          ],
          Math.ceil(n / WORKGROUP_SIZE),
          'parle:lossy-exception-list',
        );
      });
      const [ib, vb] = await readRanges(gpu, [
        { buffer: indexBuf, offset: 0, length: total * 4 },
        { buffer: valueBuf, offset: 0, length: total * width },
      ]);
      indices = new Uint32Array(ib.buffer, ib.byteOffset, total);
      values = new Uint32Array(vb.buffer, vb.byteOffset, (total * width) / 4);
    }
    const reconHashes = await treeHashes(
      gpu,
      reconBuf,
      Array.from({ length: chunkCount }, (_, c) => ({ byteOffset: c * C * width, byteLength: Math.min(C, n - c * C) * width })),
    );
    // 4. quantized chunks, or the lossless ones where quantizing does not pay (the CPU's rule)
    const out: (EncodedChunk | undefined)[] = await Promise.all(
      codeChunks.map(async (coded, c) => {
        const count = Math.min(C, n - c * C);
        const e = first[c + 1] - first[c];
        if (coded.entry.stages === undefined || coded.entry.stages.length === 0 || e > Math.floor(count / 2)) return undefined;
        const headerBytes = quantizeHeaderBytes(width);
        const prefix = headerBytes + (4 + width) * e;
        const payload = new Uint8Array(prefix + coded.payload.length);
        if (payload.length >= count * width) return undefined;
        writeQuantizeHeader(payload, abs, q.step, e, width);
        // the indices in the chunk, then the elements' bits (an f64's two words)
        const words = width / 4;
        const list = new Uint32Array(((4 + width) * e) / 4);
        for (let k = 0; k < e; k++) list[k] = indices[first[c] + k] - c * C;
        list.set(values.subarray(first[c] * words, (first[c] + e) * words), e);
        payload.set(new Uint8Array(list.buffer), headerBytes);
        payload.set(coded.payload, prefix);
        return {
          entry: {
            ...coded.entry,
            quantize: true,
            payloadBytes: payload.length,
            payloadChecksum: BigInt(await cpu.treeHash(payload, signal, true)),
            elementsChecksum: BigInt(reconHashes[c]),
          },
          payload,
          reason: `GPU: quantize (abs ${abs}, step ${q.step}, ${e} exceptions); codes ${coded.reason}`,
        };
      }),
    );
    if (out.some((x) => x === undefined)) {
      const { encoded: lossless } = await encodeChunksOnDevice(gpu, input, settings);
      out.forEach((x, c) => {
        if (x === undefined) out[c] = { ...lossless[c], reason: `GPU: quantizing does not pay: coded losslessly: ${lossless[c].reason}` };
      });
    }
    return assembleContainer({ ...header, type: input.type }, out as EncodedChunk[], target);
  } finally {
    gpu.releaseStorage(codesBuf);
    gpu.releaseStorage(reconBuf);
    gpu.releaseStorage(posBuf);
    for (const b of scratch) gpu.releaseStorage(b);
  }
}
