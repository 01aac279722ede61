/// <reference types="@webgpu/types" />
/**
 * Per-device pipeline cache. Keyed by the GPUDevice in a WeakMap, so a lost or destroyed device
 * and its pipelines are released together; within a device, by a string naming the kernel and
 * its variant (element type, subgroups, override constants).
 */

const cache = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();

/** What a pipeline is built from. */
export interface PipelineSource {
  /** Full WGSL (see composeKernel). */
  code: string;
  entryPoint: string;
  /** Pipeline-overridable constants (`override` in WGSL). */
  constants?: Record<string, number>;
}

/**
 * The compute pipeline of `key` on `device`, built once by `build` (bind group layout 'auto':
 * bind exactly the bindings the entry point uses).
 */
export function getPipeline(device: GPUDevice, key: string, build: () => PipelineSource): GPUComputePipeline {
  let perDevice = cache.get(device);
  if (perDevice === undefined) {
    perDevice = new Map();
    cache.set(device, perDevice);
  }
  let pipeline = perDevice.get(key);
  if (pipeline === undefined) {
    const src = build();
    const module = device.createShaderModule({ code: src.code, label: `parle:${key}` });
    pipeline = device.createComputePipeline({
      label: `parle:${key}`,
      layout: 'auto',
      compute: { module, entryPoint: src.entryPoint, constants: src.constants },
    });
    perDevice.set(key, pipeline);
  }
  return pipeline;
}

const layouts = new WeakMap<GPUComputePipeline, GPUBindGroupLayout>();

/**
 * Bind group 0's layout of `pipeline`, asked of the pipeline once: each `getBindGroupLayout`
 * call makes a new object, and a dispatch's `createBindGroup` with it was the line of most host
 * time in recording a sparse volume's compress from the device (24 dispatches) on the H200 host.
 */
export function bindGroupLayout(pipeline: GPUComputePipeline): GPUBindGroupLayout {
  let layout = layouts.get(pipeline);
  if (layout === undefined) layouts.set(pipeline, (layout = pipeline.getBindGroupLayout(0)));
  return layout;
}
