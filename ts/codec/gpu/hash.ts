/// <reference types="@webgpu/types" />
/**
 * The tree hash of docs/format.md ("Tree hash": XXH32, seed 0, of every 4096-byte block, level
 * after level while a level is longer than 4096 bytes, then XXH32 of the last level) of byte
 * ranges of a GPU buffer: dispatch of shaders/codec-hash.wgsl. XXH32 is Yann Collet's 32-bit
 * xxHash (xxHash, its xxhash_spec.md); the CPU's twin is assembly/hash.ts. Buffers and
 * bindings follow the rules of ./common.ts.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import hashSource from '../../../shaders/codec-hash.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { bindWindow, checkBuffer, checkCount, checkSpan, groupBySpans, pipeline, storageWords, submitThenRead } from './common.js';

/** Bytes of a tree hash block (docs/format.md, "Tree hash"). */
export const TREE_HASH_BLOCK = 4096;

/** A byte range of a buffer. */
export interface ByteRange {
  /** Byte offset of the range's first byte (any alignment). */
  byteOffset: number;
  /** Bytes in the range (any count, 0 included). */
  byteLength: number;
}

/** Blocks a workgroup of hashTiles (codec-hash.wgsl): four invocations a block, one XXH32 lane each. */
const HASH_TILE_BLOCKS = WORKGROUP_SIZE / 4;

/** One range of one level of the tree hash: entries of the kernel's range table. */
interface HashRange {
  src: number;
  bytes: number;
  dst: number;
}

/**
 * Records the tree hashes of docs/format.md ("Tree hash": XXH32, seed 0, of every 4096-byte
 * block, level after level while a level is longer than 4096 bytes, then XXH32 of the last
 * level) of every byte range of `buffer`, into `s`. Returns a function to call after the
 * submission: it reads back one u32 per range (4 bytes each, nothing else) in range order.
 *
 * Every level of every range is planned on the host (their lengths follow from the byte
 * lengths), so the levels run as dispatches of one submission: level 1 hashes the ranges in
 * place (grouped into windows of one storage binding each), later levels hash the previous
 * level's hashes in a scratch buffer; a range's last level writes its result word. A workgroup
 * hashes 64 blocks, four invocations a block (one XXH32 lane each), staging 128 bytes of each
 * block at a time in workgroup memory with coalesced loads.
 * Example: a range of 4097 bytes -> XXH32(le32(XXH32(bytes 0..4095)) ++ le32(XXH32(byte 4096)));
 * an empty range -> 0x02CC5D05.
 * @throws ParleError INVALID_ARGUMENT (not a storage buffer, a range outside it), TOO_LARGE
 *   (a range beyond one storage binding)
 */
export function encodeTreeHashes(
  ctx: GpuContext,
  s: Submission,
  buffer: GPUBuffer,
  ranges: readonly ByteRange[],
): () => Promise<Uint32Array> {
  checkBuffer(buffer, 'buffer');
  if (!Array.isArray(ranges)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'ranges must be an array');
  const size = buffer.size;
  ranges.forEach((r, i) => {
    checkCount(r?.byteOffset, `ranges[${i}].byteOffset`);
    checkCount(r?.byteLength, `ranges[${i}].byteLength`);
    checkSpan(size, r.byteOffset, r.byteLength, `ranges[${i}]`);
  });
  const m = ranges.length;
  if (m === 0) return async () => new Uint32Array(0);

  // Plan: scratch words [0, m) are the results, then each non-final level's hashes.
  let next = m;
  const place = (bytes: number, chunk: number): { dst: number; blocks: number } => {
    const blocks = Math.max(1, Math.ceil(bytes / TREE_HASH_BLOCK));
    if (blocks === 1) return { dst: chunk, blocks };
    const dst = next;
    next += blocks;
    return { dst, blocks };
  };
  const first: HashRange[] = [];
  let active: { chunk: number; src: number; bytes: number }[] = [];
  ranges.forEach((r, c) => {
    const { dst, blocks } = place(r.byteLength, c);
    first.push({ src: r.byteOffset, bytes: r.byteLength, dst });
    if (blocks > 1) active.push({ chunk: c, src: dst * 4, bytes: blocks * 4 });
  });
  const later: HashRange[][] = [];
  while (active.length > 0) {
    const level: HashRange[] = [];
    const still: typeof active = [];
    for (const a of active) {
      const { dst, blocks } = place(a.bytes, a.chunk);
      level.push({ src: a.src, bytes: a.bytes, dst });
      if (blocks > 1) still.push({ chunk: a.chunk, src: dst * 4, bytes: blocks * 4 });
    }
    later.push(level);
    active = still;
  }

  const scratch = s.temp(next * 4, 'tree-hash');
  const hashPipe = pipeline(ctx, 'codec-hash', hashSource, 'hashTiles');
  const dispatch = (level: HashRange[], input: GPUBufferBinding | null, srcBase: number): void => {
    const table = new Uint32Array(level.length * 4);
    let blocks = 0;
    level.forEach((r, i) => {
      // an empty range reads nothing: its offset may lie outside the window
      table.set([r.bytes === 0 ? 0 : r.src - srcBase, r.bytes, blocks, r.dst], i * 4);
      blocks += Math.max(1, Math.ceil(r.bytes / TREE_HASH_BLOCK));
    });
    const tableBuf = storageWords(ctx, s, table, 'tree-hash-ranges');
    s.dispatch(
      hashPipe,
      [
        { binding: 0, resource: { buffer: s.uniform([blocks, level.length, input === null ? 1 : 0, 0]) } },
        { binding: 1, resource: { buffer: tableBuf } },
        // later levels read `scratch`; the range table stands in for the unused input
        { binding: 2, resource: input ?? { buffer: tableBuf } },
        { binding: 3, resource: { buffer: scratch } },
      ],
      Math.ceil(blocks / HASH_TILE_BLOCKS),
      'parle:tree-hash',
    );
  };
  const groups = groupBySpans(
    ctx,
    m,
    (i) => [ranges[i].byteLength > 0 ? [ranges[i].byteOffset, ranges[i].byteOffset + ranges[i].byteLength] : null],
    'tree hash',
  );
  for (const group of groups) {
    const w = group.windows[0];
    const level = group.items.map((i) => first[i]);
    if (w === null)
      dispatch(level, null, 0); // only empty ranges: nothing is read
    else dispatch(level, bindWindow(ctx, buffer, w, 'tree hash'), w.base);
  }
  for (const level of later) dispatch(level, null, 0);
  return s.readAfter(scratch, m * 4);
}

/**
 * Tree hashes of many byte ranges of `buffer` (e.g. every chunk's decoded elements), in one
 * submission; only the hashes are read back (4 bytes a range). See {@link encodeTreeHashes}.
 * @returns one u32 per range, in range order.
 * @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function treeHashes(ctx: GpuContext, buffer: GPUBuffer, ranges: readonly ByteRange[]): Promise<Uint32Array> {
  if (Array.isArray(ranges) && ranges.length === 0) return new Uint32Array(0);
  return submitThenRead(ctx, 'tree-hash', (s) => encodeTreeHashes(ctx, s, buffer, ranges));
}

/**
 * The tree hash (docs/format.md) of `byteLength` bytes of `buffer` from `byteOffset` (any
 * alignment), computed on the GPU; only the final u32 is read back.
 * Example: 0 bytes -> 0x02CC5D05; up to 4096 bytes -> their XXH32 (seed 0).
 * @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function treeHash(ctx: GpuContext, buffer: GPUBuffer, byteOffset: number, byteLength: number): Promise<number> {
  return (await treeHashes(ctx, buffer, [{ byteOffset, byteLength }]))[0];
}
