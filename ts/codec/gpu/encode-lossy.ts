/**
 * Lossy compression of an f32 or f64 DeviceArray within a pointwise bound (docs/format.md,
 * "Stage 5: quantize") with the work on the GPU, so that the elements never come to the host:
 *
 *   1. the GPU quantizes every element (shaders/codec-quantize.wgsl, f64's
 *      codec-quantize-f64.wgsl: the same codes and reconstructions as the CPU's
 *      assembly/quantize.ts), flags the exceptions and scans the flags;
 *   2. the codes are compressed as u32 by the GPU path (ts/codec/gpu/encode.ts: the chooser's or
 *      the given pipeline), in chunks of as many codes as the container's chunks hold elements
 *      (of whole slabs of the shape, where one is given: recorded, nothing predicted, as on the
 *      CPU path),
 *      their container left on the device; meanwhile (the round trips overlapping) the exception
 *      count and each chunk's first exception come back, then the exceptions listed by the GPU
 *      (index and bits, shaders/codec-exceptions.wgsl);
 *   3. each chunk becomes the quantize header, its exceptions and its codes' payload, unless, as
 *      on the CPU path (ts/codec/cpu/encode.ts encodeQuantized), it has more exceptions than half
 *      its elements, its codes were stored, or the result is not smaller than the elements: such
 *      chunks are coded losslessly (the GPU path on the elements, its container on the device
 *      too; f64's as their word planes);
 *   4. the container is laid out on the device (the prefixes uploaded in one piece, the payloads
 *      gathered from the codes' and the lossless containers), the quantized payloads and every
 *      chunk's reconstructions tree-hashed there (the elements' checksum of a quantized chunk),
 *      and read back with the hashes; the host writes the header, entries and index. (The
 *      payloads had been copied and hashed on the host a chunk at a time: 20 ms of a 64 MiB f32
 *      compress's 53 on the H200.)
 * The pipeline of the codes may differ from the CPU path's (the GPU's chooser sizes candidates
 * exactly, the CPU's encodes its best estimate): the bytes may differ, the decoded elements are
 * the same.
 */
import { quantizeHeaderBytes, writeQuantizeHeader } from '../../format/quantize.js';
import { quantizeParams, quantizeParamsF64 } from '../quantize.js';
import { encodeTreeHashes } from './hash.js';
import { composeKernel, WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext } from '../../gpu/context.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import { getPipeline } from '../../gpu/pipelines.js';
import { encodeQuantize } from './quantize.js';
import { encodeScan } from '../../gpu/scan.js';
import exceptionsSource from '../../../shaders/codec-exceptions.wgsl';
import { ENTRY_BYTES, indexBytes, makeHeader, writeEntry, writeHeader, writeIndex, type ChunkEntry } from '../../format/layout.js';
import { abortError } from '../../cpu/pool.js';
import { debug } from '../../platform/node.js';
import { readRanges, roundUp4 } from './common.js';
import { encodeGather, type GatherJob } from './gather.js';
import { checkContainerFits, encodeChunksOnDevice, placeChunkTable } from './encode.js';
import { planOnDevice } from './predict-encode.js';
import type { CompressSettings } from '../settings.js';

function exceptionsPipeline(gpu: GpuContext, entryPoint: 'exceptionFlags' | 'exceptionList'): GPUComputePipeline {
  return getPipeline(gpu.device, `codec-exceptions:${entryPoint}`, () => ({
    code: composeKernel(exceptionsSource, { subgroups: false, scalar: 'u32' }),
    entryPoint,
  }));
}

/**
 * Compresses the f32 or f64 `input` (on `gpu`) within `abs` into a container on the host (into
 * `target`'s start where given, at least compressBound bytes), or with `resident` one left on
 * the device (a u8 DeviceArray: its table written there, nothing read back but the hashes), as
 * described above. A bound below 2^-120 (f64: 2^-960) codes every chunk losslessly (as the CPU
 * path does).
 * `codec`: the codes' pipeline (one the GPU path codes: ts/codec/gpu/encode.ts
 * gpuCodablePipeline), or undefined for the chooser.
 * @throws ParleError TOO_LARGE (beyond one storage binding), DEVICE_LOST, ABORTED
 */
export async function compressLossyOnDevice(
  gpu: GpuContext,
  input: DeviceArray,
  settings: CompressSettings,
  { target, resident = false }: { target?: Uint8Array; resident?: boolean } = {},
): Promise<Uint8Array | DeviceArray> {
  const { errorBound, signal } = settings;
  const abs = errorBound!;
  const n = input.length;
  const width = input.type === 'f64' ? 8 : 4;
  const q = width === 8 ? quantizeParamsF64(abs) : quantizeParams(abs);
  if (q === undefined || n === 0) {
    const lossless = await encodeChunksOnDevice(gpu, input, settings, { target, resident });
    return resident ? lossless.device! : lossless.container;
  }
  const codesBuf = gpu.acquireStorage(n * 4, 'lossy codes');
  const reconBuf = gpu.acquireStorage(n * width, 'lossy reconstructions');
  const posBuf = gpu.acquireStorage(n * 4, 'lossy exception positions');
  const scratch: GPUBuffer[] = [];
  /** The codes' container and the lossless one, on the device. */
  const owned: DeviceArray[] = [];
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
    // 2. the exception count, each chunk's first exception and the exceptions listed by the GPU
    // (their round trips overlap the codes' compress below)
    const { chunkLength: C } = await planOnDevice(gpu, input, settings);
    const chunkCount = Math.ceil(n / C);
    const listing = (async () => {
      const starts = await readRanges(gpu, [
        { buffer: totalBuf, offset: 0, length: 4 },
        ...Array.from({ length: chunkCount }, (_, c) => ({ buffer: posBuf, offset: c * C * 4, length: 4 })),
      ]);
      const word = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, 4).getUint32(0, true);
      const total = word(starts[0]);
      const first = [...starts.slice(1).map(word), total];
      if (total === 0) return { total, first, indices: new Uint32Array(0), values: new Uint32Array(0) };
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
      return {
        total,
        first,
        indices: new Uint32Array(ib.buffer, ib.byteOffset, total),
        values: new Uint32Array(vb.buffer, vb.byteOffset, (total * width) / 4),
      };
    })();
    // the codes in chunks of the container's chunk length (f64: twice the codes' bytes), their
    // container left on the device (a failure waits for the listing, whose buffers the finally
    // gives back)
    let coded: Awaited<ReturnType<typeof encodeChunksOnDevice>>;
    try {
      coded = await encodeChunksOnDevice(gpu, codes, { ...settings, shape: undefined, gpuChunkBytes: 4 * C }, { resident: true });
    } catch (e) {
      await listing.catch(() => undefined);
      throw e;
    }
    owned.push(coded.device!);
    if (coded.header.chunkLength !== C)
      throw new Error(`internal: the codes' chunks of ${coded.header.chunkLength}, the container's of ${C}`);
    // the container's header: the elements' type and the shape, where given (the codes' have neither)
    const header = makeHeader(input.type, n, C, settings.level, settings.shape);
    const { total, first, indices, values } = await listing;
    // 3. each chunk quantized (its prefix: the quantize header and the exception lists, then its
    // codes' payload) or coded losslessly where quantizing does not pay (the CPU's rule)
    const headerBytes = quantizeHeaderBytes(width);
    const words = width / 4;
    const prefixes = coded.encoded.map(({ entry }, c) => {
      const count = Math.min(C, n - c * C);
      const e = first[c + 1] - first[c];
      if (entry.stages === undefined || entry.stages.length === 0 || e > Math.floor(count / 2)) return undefined;
      const prefix = new Uint8Array(headerBytes + (4 + width) * e);
      if (prefix.length + entry.payloadBytes >= count * width) return undefined;
      writeQuantizeHeader(prefix, abs, q.step, e, width);
      // the indices in the chunk, then the elements' bits (an f64's two words)
      const list = new Uint32Array(prefix.buffer, headerBytes, ((4 + width) * e) / 4);
      for (let k = 0; k < e; k++) list[k] = indices[first[c] + k] - c * C;
      list.set(values.subarray(first[c] * words, (first[c] + e) * words), e);
      return prefix;
    });
    const lossless = prefixes.some((x) => x === undefined)
      ? await encodeChunksOnDevice(gpu, input, settings, { resident: true })
      : undefined;
    if (lossless !== undefined) owned.push(lossless.device!);
    // 4. the container laid out on the device: the prefixes (one upload), the codes' payloads
    // and the lossless chunks' payloads gathered after their entries; the quantized payloads'
    // and the reconstructions' tree hashes, then the container read back and its header,
    // entries and index written on the host
    const prefixBytes = prefixes.reduce((a, x) => a + (x?.length ?? 0), 0);
    const patch = new Uint8Array(roundUp4(Math.max(4, prefixBytes)));
    const fromPatch: GatherJob[] = [];
    const fromCodes: GatherJob[] = [];
    const fromLossless: GatherJob[] = [];
    const entryAt: number[] = [];
    const quantized: { at: number; bytes: number }[] = [];
    const head = writeHeader(header);
    let at = head.length;
    let patchAt = 0;
    for (let c = 0; c < chunkCount; c++) {
      entryAt.push(at);
      const prefix = prefixes[c];
      const payloadAt = at + ENTRY_BYTES;
      if (prefix === undefined) {
        const bytes = lossless!.encoded[c].entry.payloadBytes;
        fromLossless.push({ srcByteOffset: lossless!.payloadOffsets![c], dstByteOffset: payloadAt, byteLength: bytes });
        at = payloadAt + bytes;
        continue;
      }
      patch.set(prefix, patchAt);
      fromPatch.push({ srcByteOffset: patchAt, dstByteOffset: payloadAt, byteLength: prefix.length });
      patchAt += prefix.length;
      const bytes = coded.encoded[c].entry.payloadBytes;
      fromCodes.push({ srcByteOffset: coded.payloadOffsets![c], dstByteOffset: payloadAt + prefix.length, byteLength: bytes });
      quantized.push({ at: payloadAt, bytes: prefix.length + bytes });
      at = payloadAt + prefix.length + bytes;
    }
    const index = indexBytes(header) > 0 ? writeIndex(entryAt) : new Uint8Array(0);
    const containerBytes = at + index.length;
    checkContainerFits(gpu, containerBytes);
    const layout = gpu.acquireStorage(Math.max(4, containerBytes), 'lossy container');
    const patchBuf = gpu.acquireStorage(patch.length, 'lossy prefixes');
    scratch.push(layout, patchBuf);
    gpu.device.queue.writeBuffer(patchBuf, 0, patch);
    let readPayloadHashes: () => Promise<Uint32Array> = async () => new Uint32Array(0);
    let readReconHashes: () => Promise<Uint32Array> = async () => new Uint32Array(0);
    await gpu.submit('lossy payloads', (s) => {
      s.encoder.clearBuffer(layout);
      if (fromPatch.length > 0) encodeGather(gpu, s, patchBuf, layout, fromPatch);
      if (fromCodes.length > 0) encodeGather(gpu, s, coded.device!.buffer, layout, fromCodes);
      if (fromLossless.length > 0) encodeGather(gpu, s, lossless!.device!.buffer, layout, fromLossless);
      readPayloadHashes = encodeTreeHashes(
        gpu,
        s,
        layout,
        quantized.map((x) => ({ byteOffset: x.at, byteLength: x.bytes })),
      );
      readReconHashes = encodeTreeHashes(
        gpu,
        s,
        reconBuf,
        Array.from({ length: chunkCount }, (_, c) => ({ byteOffset: c * C * width, byteLength: Math.min(C, n - c * C) * width })),
      );
    });
    if (signal?.aborted) throw abortError(signal);
    const container = resident
      ? new Uint8Array(0)
      : target === undefined
        ? new Uint8Array(containerBytes)
        : target.subarray(0, containerBytes);
    const [payloadHashes, reconHashes] = await Promise.all([
      readPayloadHashes(),
      readReconHashes(),
      resident ? undefined : gpu.download(gpu.wrap(layout, 'u8', containerBytes), { into: container }),
    ]);
    let k = 0;
    const entries = prefixes.map((prefix, c): ChunkEntry =>
      prefix === undefined
        ? lossless!.encoded[c].entry
        : {
            ...coded.encoded[c].entry,
            quantize: true,
            payloadBytes: quantized[k].bytes,
            payloadChecksum: BigInt(payloadHashes[k++]),
            elementsChecksum: BigInt(reconHashes[c]),
          },
    );
    debug(
      () =>
        `compress lossy on the GPU: ${chunkCount} chunks, ${k} quantized (abs ${abs}, step ${q.step}, ${total} exceptions); ` +
        `first chunk: ${prefixes[0] === undefined ? `coded losslessly: ${lossless!.encoded[0].reason}` : `codes ${coded.encoded[0].reason}`}`,
    );
    if (resident) {
      // the table written into the container's buffer, which is the result's
      await placeChunkTable(gpu, layout, { head, entries, entryAt, index, indexAt: at });
      scratch.splice(scratch.indexOf(layout), 1);
      return gpu.owned(layout, 'u8', containerBytes);
    }
    container.set(head, 0);
    container.set(index, at);
    entries.forEach((entry, c) => writeEntry(entry, container, entryAt[c]));
    return container;
  } finally {
    gpu.releaseStorage(codesBuf);
    gpu.releaseStorage(reconBuf);
    gpu.releaseStorage(posBuf);
    for (const b of scratch) gpu.releaseStorage(b);
    for (const d of owned) d.destroy();
  }
}
