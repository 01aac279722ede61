// The page's self-test (`/?selftest`): a round trip of every op on the CPU workers and, when the
// engine has a WebGPU adapter, on the GPU, each checked against a few lines of plain JavaScript.
// The summary it returns is what the page writes into #selftest:
//   { "status": "pass" | "fail", "results": [{ "op", "path": "cpu" | "gpu", "ok", "ms", "error"? }], "env": {...} }

/** Ops with a GPU kernel; compress and decompress are built on the CPU. */
const GPU_OPS = ['rleEncode', 'rleDecode', 'sort', 'scan'];

/** mulberry32: a small seeded generator, so a failure can be replayed from its seed. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `length` elements of `Type` in runs of mean length `meanRun` (random bit patterns for floats too). */
export function makeRuns(Type, length, meanRun, random) {
  const bits = new (Type.BYTES_PER_ELEMENT === 1 ? Uint8Array : Type.BYTES_PER_ELEMENT === 2 ? Uint16Array : Uint32Array)(length);
  let value = 0;
  for (let i = 0; i < length;) {
    const run = 1 + Math.floor(random() * 2 * meanRun);
    value = Math.floor(random() * 4294967296);
    bits.fill(value, i, Math.min(length, i + run));
    i += run;
  }
  return new Type(bits.buffer);
}

// ---- references: plain JavaScript, on bit patterns ------------------------------------------

function bitsOf(array) {
  const size = array.BYTES_PER_ELEMENT;
  const Bits = size === 1 ? Uint8Array : size === 2 ? Uint16Array : Uint32Array;
  return new Bits(array.buffer, array.byteOffset, array.length);
}

function referenceRle(array) {
  const bits = bitsOf(array);
  const values = [];
  const lengths = [];
  for (let i = 0; i < bits.length; i++) {
    if (i > 0 && bits[i] === bits[i - 1]) lengths[lengths.length - 1]++;
    else {
      values.push(bits[i]);
      lengths.push(1);
    }
  }
  return { values, lengths };
}

/** Sort key of a 32-bit pattern: unsigned order of the result is u32, i32 or f32 totalOrder. */
function orderKey(kind, u) {
  if (kind === 'u32') return u;
  if (kind === 'i32') return (u ^ 0x80000000) >>> 0;
  return u & 0x80000000 ? ~u >>> 0 : (u | 0x80000000) >>> 0;
}

function referenceSort(keys, kind) {
  const bits = Array.from(bitsOf(keys), (u, i) => [orderKey(kind, u), i, u]);
  bits.sort((a, b) => a[0] - b[0] || a[1] - b[1]); // stable
  return bits;
}

function sameBits(a, b) {
  const x = bitsOf(a);
  const y = bitsOf(b);
  if (x.length !== y.length) return `length ${x.length}, expected ${y.length}`;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return `element ${i}: ${x[i]}, expected ${y[i]}`;
  return null;
}

function check(problem, what) {
  if (problem) throw new Error(`${what}: ${problem}`);
}

// ---- the checks -------------------------------------------------------------------------------

const TYPES = [
  ['u8', Uint8Array],
  ['u16', Uint16Array],
  ['u32', Uint32Array],
  ['i32', Int32Array],
  ['f32', Float32Array],
];

/** One check per op: runs it on `path` over the inputs and throws on the first difference. */
function checksFor(engine, inputs) {
  const path = (p) => ({ path: p });
  return {
    async rleEncode(p) {
      for (const [type, input] of inputs.rle) {
        const runs = await engine.rleEncode(input, path(p));
        const ref = referenceRle(input);
        check(sameBits(runs.values, new (bitsOf(input).constructor)(ref.values)), `${type} values`);
        check(sameBits(runs.lengths, Uint32Array.from(ref.lengths)), `${type} lengths`);
      }
    },
    async rleDecode(p) {
      for (const [type, input] of inputs.rle) {
        // Decode runs made by the CPU encoder: the GPU decoder reads what the CPU wrote.
        const runs = await engine.rleEncode(input, path('cpu'));
        const back = await engine.rleDecode(runs, path(p));
        check(back.constructor === input.constructor ? null : `type ${back.constructor.name}`, type);
        check(sameBits(back, input), type);
      }
    },
    async sort(p) {
      for (const [kind, keys] of inputs.sort) {
        const values = Uint32Array.from(keys, (_, i) => i);
        const sorted = await engine.sort(keys, { ...path(p), values });
        const ref = referenceSort(keys, kind);
        check(
          sameBits(
            sorted.keys,
            Uint32Array.from(ref, (r) => r[2]),
          ),
          `${kind} keys`,
        );
        check(
          sameBits(
            sorted.values,
            Uint32Array.from(ref, (r) => r[1]),
          ),
          `${kind} values (stability)`,
        );
      }
    },
    async scan(p) {
      for (const [kind, input] of inputs.scan) {
        for (const inclusive of [false, true]) {
          const out = await engine.scan(input, { ...path(p), inclusive });
          const ref = new input.constructor(input.length);
          let sum = 0;
          for (let i = 0; i < input.length; i++) {
            if (inclusive) sum = (sum + input[i]) | 0;
            ref[i] = sum;
            if (!inclusive) sum = (sum + input[i]) | 0;
          }
          check(sameBits(out, ref), `${kind} ${inclusive ? 'inclusive' : 'exclusive'}`);
        }
      }
    },
    async compress(p) {
      for (const [type, input] of inputs.rle) {
        const packed = await engine.compress(input, { ...path(p), chunkBytes: 64 << 10 });
        check(packed.length <= input.byteLength + 32 + 32 * Math.ceil(input.byteLength / (64 << 10)) ? null : 'grew', type);
        inputs.packed.set(type, packed);
      }
    },
    async decompress(p) {
      for (const [type, input] of inputs.rle) {
        const packed = inputs.packed.get(type) ?? (await engine.compress(input, { path: 'cpu' }));
        const back = await engine.decompress(packed, path(p));
        check(back.constructor === input.constructor ? null : `type ${back.constructor.name}`, type);
        check(sameBits(back, input), type);
      }
    },
  };
}

/** Inputs of every check: runs of each type, sort keys and scan inputs (seeded). */
function makeInputs(seed, length) {
  const random = seededRandom(seed);
  const rle = TYPES.map(([type, Type]) => [type, makeRuns(Type, length, 6, random)]);
  const randomBits = () => {
    const u = new Uint32Array(length);
    for (let i = 0; i < length; i++) u[i] = Math.floor(random() * 4294967296);
    return u;
  };
  const floats = new Float32Array(randomBits().buffer);
  floats.set([NaN, -0, 0, Infinity, -Infinity, -NaN], 0);
  const sort = [
    ['u32', randomBits()],
    ['i32', new Int32Array(randomBits().buffer)],
    ['f32', floats],
    ['u32', makeRuns(Uint32Array, length, 3, random)], // many equal keys: stability shows
  ];
  const scan = [
    ['u32', randomBits()],
    ['i32', new Int32Array(randomBits().buffer)],
  ];
  return { rle, sort, scan, packed: new Map() };
}

/**
 * Runs the self-test on `engine`. Every op runs on the CPU workers (the engine is made with
 * inlineBytes 0, so even small inputs go to a worker) and, with an adapter, the GPU ops on WebGPU:
 * GPU RLE decode reads runs the CPU encoded, and every result is compared with the references.
 */
export async function runSelfTest(engine, { seed = 20240611, length = 40_000, gpuLength = 4096, onResult } = {}) {
  const results = [];
  const paths = engine.adapter ? ['cpu', 'gpu'] : ['cpu'];
  for (const path of paths) {
    // Smaller inputs on the GPU: a software adapter (SwiftShader) sorts some 50k keys a second.
    const checks = checksFor(engine, makeInputs(seed, path === 'gpu' ? gpuLength : length));
    for (const op of Object.keys(checks)) {
      if (path === 'gpu' && !GPU_OPS.includes(op)) continue;
      const t0 = performance.now();
      const result = { op, path, ok: true, ms: 0 };
      try {
        await checks[op](path);
      } catch (e) {
        result.ok = false;
        result.error = `${e?.code ? `${e.code}: ` : ''}${e?.message ?? String(e)} (seed ${seed})`;
      }
      result.ms = Math.round((performance.now() - t0) * 10) / 10;
      results.push(result);
      onResult?.(result);
    }
  }
  const probe = engine.alloc('u8', 1);
  const sharedMemory = typeof SharedArrayBuffer === 'function' && probe.buffer instanceof SharedArrayBuffer;
  engine.free(probe);
  return {
    status: results.every((r) => r.ok) ? 'pass' : 'fail',
    results,
    env: {
      crossOriginIsolated: globalThis.crossOriginIsolated === true,
      sharedMemory,
      workers: engine.workers,
      adapter: engine.adapter,
      elements: { cpu: length, gpu: gpuLength },
      seed,
    },
  };
}
