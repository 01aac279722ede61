// An application that uses WebGPU itself (tsconfig.webgpu.json: DOM lib and @webgpu/types):
// parle's GPUBuffer is the full one, so a buffer of the application's device wraps without a
// cast and a DeviceArray's buffer has every member.
import { createEngine, type DeviceArray } from 'parle-codec';

export async function wrapOwnBuffer(device: GPUDevice): Promise<void> {
  const engine = await createEngine({ gpu: 'require', calibration: 'skip' });
  const buffer: GPUBuffer = device.createBuffer({ size: 1024, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const array: DeviceArray = engine.wrap(buffer, 'u32', 256);
  const sorted = await engine.sort(array);
  const size: number = sorted.buffer.size; // a member only @webgpu/types declares
  const host = await engine.download(sorted, { into: new Uint32Array(256) });
  const u32: Uint32Array = host;
  console.log(size, u32.length);
  sorted.destroy();
  buffer.destroy();
  await engine.destroy();
}
