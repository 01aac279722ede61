import { describe, expect, it } from 'vitest';
import { BindGroupCache } from '../ts/gpu/bind-groups.js';

/** A device that counts the bind groups it makes, and buffers that are only objects with mapAsync. */
function fakeDevice() {
  const made: GPUBindGroupDescriptor[] = [];
  const device = {
    createBindGroup: (d: GPUBindGroupDescriptor) => {
      made.push(d);
      return { made: made.length } as unknown as GPUBindGroup;
    },
  } as unknown as GPUDevice;
  return { device, made };
}
const buffer = () => ({ mapAsync: async () => undefined, size: 1024 }) as unknown as GPUBuffer;
const layout = () => ({}) as GPUBindGroupLayout;

describe('BindGroupCache', () => {
  it('gives the group made before for the same layout, buffers, offsets and sizes', () => {
    const { device, made } = fakeDevice();
    const cache = new BindGroupCache(device);
    const [a, b] = [buffer(), buffer()];
    const l = layout();
    const entries = () => [
      { binding: 0, resource: { buffer: a } },
      { binding: 1, resource: { buffer: b, offset: 256, size: 512 } },
    ];
    const first = cache.get(l, entries());
    expect(cache.get(l, entries())).toBe(first);
    expect(made.length).toBe(1);
    expect(cache.stats).toEqual({ made: 1, reused: 1 });
  });

  it('makes a new group where the layout, a buffer, the order, an offset, a size or a binding differs', () => {
    const { device, made } = fakeDevice();
    const cache = new BindGroupCache(device);
    const [a, b, c] = [buffer(), buffer(), buffer()];
    const l = layout();
    const base = cache.get(l, [
      { binding: 0, resource: { buffer: a } },
      { binding: 1, resource: { buffer: b } },
    ]);
    const variants: GPUBindGroupEntry[][] = [
      [
        { binding: 0, resource: { buffer: a } },
        { binding: 1, resource: { buffer: c } },
      ],
      [
        { binding: 0, resource: { buffer: b } },
        { binding: 1, resource: { buffer: a } },
      ],
      [
        { binding: 0, resource: { buffer: a, offset: 256 } },
        { binding: 1, resource: { buffer: b } },
      ],
      [
        { binding: 0, resource: { buffer: a, size: 64 } },
        { binding: 1, resource: { buffer: b } },
      ],
      [
        { binding: 0, resource: { buffer: a } },
        { binding: 2, resource: { buffer: b } },
      ],
      [
        { binding: 0, resource: a },
        { binding: 1, resource: { buffer: b, size: 1024 } },
      ],
    ];
    const groups = variants.map((entries) => cache.get(l, entries));
    expect(new Set([base, ...groups]).size).toBe(7);
    expect(
      cache.get(layout(), [
        { binding: 0, resource: { buffer: a } },
        { binding: 1, resource: { buffer: b } },
      ]),
    ).not.toBe(base);
    expect(made.length).toBe(8);
    // each of them is kept
    for (let i = 0; i < variants.length; i++) expect(cache.get(l, variants[i])).toBe(groups[i]);
  });

  it('makes a group each time for entries that bind anything but buffers', () => {
    const { device, made } = fakeDevice();
    const cache = new BindGroupCache(device);
    const l = layout();
    const sampler = {} as GPUSampler;
    const entries = [{ binding: 0, resource: sampler }];
    expect(cache.get(l, entries)).not.toBe(cache.get(l, entries));
    expect(made.length).toBe(2);
  });

  it('keeps a bounded number of groups for one set of buffers (windows at many offsets)', () => {
    const { device, made } = fakeDevice();
    const cache = new BindGroupCache(device);
    const a = buffer();
    const l = layout();
    const at = (offset: number) => cache.get(l, [{ binding: 0, resource: { buffer: a, offset, size: 256 } }]);
    const first = at(0);
    for (let i = 1; i < 100; i++) at(i * 256);
    expect(made.length).toBe(100);
    expect(at(0)).not.toBe(first); // dropped on the way: made again
    expect(made.length).toBe(101);
  });
});
