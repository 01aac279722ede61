/// <reference types="@webgpu/types" />
/**
 * Bind groups kept for reuse: a dispatch whose pipeline layout, buffers, offsets and sizes match
 * an earlier one's takes that dispatch's bind group instead of making one.
 *
 * Why: `createBindGroup` was the largest WebGPU call a dispatch makes, 16-22 µs on the H200's host
 * through Dawn (timed alone on 2026-11-29; a pass, its pipeline and dispatch 4-9 µs more), and a codec call
 * makes 10-30 dispatches. Between calls of one kind and size the pool hands out the same buffers
 * (ts/gpu/buffer-pool.ts: temporaries, outputs, uniforms), so the same bind groups recur.
 *
 * Kept weakly: the groups hang off a trie of WeakMaps, one level a bound buffer, so a group
 * lives no longer than every buffer in it (a caller's buffer dropped without destroy() is not held
 * by the cache, nor is its memory by the group); a destroyed buffer's groups are never asked for
 * again (the pool never hands out a destroyed buffer) and go with it. The offsets and sizes of
 * one set of buffers key at most {@link LEAVES} groups.
 */

/** A level of the trie: the next buffer's level, and at the last buffer the groups by offsets and sizes. */
interface Level {
  next: WeakMap<object, Level>;
  groups?: Map<string, GPUBindGroup>;
}

/** Groups kept for one set of buffers at most (their windows: offset and size of each binding). */
const LEAVES = 16;

/** True for a GPUBuffer (not a buffer binding, texture view or sampler). */
const isBuffer = (r: unknown): r is GPUBuffer => typeof r === 'object' && r !== null && typeof (r as GPUBuffer).mapAsync === 'function';

/** Bind groups of one device by layout and entries, kept while their buffers live. */
export class BindGroupCache {
  readonly #root = new WeakMap<object, Level>();
  /** Groups made and groups reused, for tests and benchmarks. */
  readonly stats = { made: 0, reused: 0 };

  constructor(readonly device: GPUDevice) {}

  /**
   * The bind group of `layout` with `entries`: one made before for the same layout, buffers (the
   * same objects, in the same order), bindings, offsets and sizes, else a new one. Entries that
   * bind anything but buffers get a new group each time.
   */
  get(layout: GPUBindGroupLayout, entries: readonly GPUBindGroupEntry[]): GPUBindGroup {
    let level = this.#level(this.#root, layout);
    let key = '';
    for (const e of entries) {
      const r = e.resource as GPUBufferBinding | GPUBuffer;
      const binding = isBuffer(r) ? null : r;
      const buffer = binding === null ? r : binding.buffer;
      if (!isBuffer(buffer)) return this.#make(layout, entries);
      level = this.#level(level.next, buffer);
      key += `${e.binding}:${binding?.offset ?? 0}:${binding?.size ?? ''};`;
    }
    const groups = (level.groups ??= new Map());
    let group = groups.get(key);
    if (group === undefined) {
      if (groups.size >= LEAVES) groups.clear();
      group = this.#make(layout, entries);
      groups.set(key, group);
    } else {
      this.stats.reused++;
    }
    return group;
  }

  #make(layout: GPUBindGroupLayout, entries: readonly GPUBindGroupEntry[]): GPUBindGroup {
    this.stats.made++;
    return this.device.createBindGroup({ layout, entries });
  }

  #level(map: WeakMap<object, Level>, key: object): Level {
    let level = map.get(key);
    if (level === undefined) map.set(key, (level = { next: new WeakMap() }));
    return level;
  }
}
