/**
 * The GPU Huffman stages, for bench/huffman-gpu.mjs: not part of the package's API, bundled by
 * bench/internals/build.mjs into bench/internals/dist/ (git-ignored).
 */
export { createGpuContext } from '../../ts/gpu/context.js';
export { encodeHuffmanDecode, huffmanEncodeStreams, parseHuffmanStream } from '../../ts/codec/gpu/stages.js';
export { codeLengths, DEFAULT_SEGMENT_LOG2, LANES_SEGMENT_LOG2 } from '../../ts/codec/huffman.js';
