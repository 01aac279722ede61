// Summaries of V8 CPU profiles (node --cpu-prof) for bench/codec-profile.mjs: self time per
// function within a time window, WebAssembly functions named from the module's text format
// (build/*.wat, checked against the binary's export section), parle's bundled JavaScript
// (dist/) located in its TypeScript sources through the source maps, and every function put in
// a category of the codec's work. Node's standard library only.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// ---------------------------------------------------------------------------------------------
// WebAssembly function names

/** Reads an unsigned LEB128 at `at`: [value, next offset]. */
function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) return [value, at];
  }
}

/** The binary's imported function count, defined function count and exported functions (name -> index). */
export function wasmFunctionTable(bytes) {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d)
    throw new Error('not a WebAssembly binary');
  let at = 8;
  let imported = 0;
  let defined = 0;
  const exports = new Map();
  const name = (p) => {
    const [len, q] = leb(bytes, p);
    return [new TextDecoder().decode(bytes.subarray(q, q + len)), q + len];
  };
  while (at < bytes.length) {
    const id = bytes[at];
    const [size, body] = leb(bytes, at + 1);
    const end = body + size;
    if (id === 2) {
      let [count, p] = leb(bytes, body);
      for (let i = 0; i < count; i++) {
        [, p] = name(p);
        [, p] = name(p);
        const kind = bytes[p++];
        if (kind === 0) {
          imported++;
          [, p] = leb(bytes, p);
        } else if (kind === 1) {
          p++; // reftype
          const flags = bytes[p++];
          [, p] = leb(bytes, p);
          if (flags & 1) [, p] = leb(bytes, p);
        } else if (kind === 2) {
          const flags = bytes[p++];
          [, p] = leb(bytes, p);
          if (flags & 1) [, p] = leb(bytes, p);
        } else if (kind === 3) p += 2;
        else if (kind === 4) p += 2;
        else throw new Error(`unknown import kind ${kind}`);
      }
    } else if (id === 3) {
      [defined] = leb(bytes, body);
    } else if (id === 7) {
      let [count, p] = leb(bytes, body);
      for (let i = 0; i < count; i++) {
        let n;
        [n, p] = name(p);
        const kind = bytes[p++];
        let index;
        [index, p] = leb(bytes, p);
        if (kind === 0) exports.set(n, index);
      }
    }
    at = end;
  }
  return { imported, defined, exports };
}

/**
 * Function names by index from a module's text format (binaryen's print: imported functions
 * first, `(import "m" "n" (func $name ...))`, then one `(func $name` line a defined function),
 * verified against the binary: the counts must agree and every exported function's index must
 * land on a name ending in its export name. Returns { names, problems }: names[i] is the short
 * name (the part after the last '/'), problems lists what did not check out.
 */
export function wasmNames(watPath, wasmPath) {
  const wat = readFileSync(watPath, 'utf8');
  const imported = [];
  const defined = [];
  for (const line of wat.split('\n')) {
    let m = /^\s*\(import\s+"[^"]*"\s+"[^"]*"\s+\(func\s+\$([^\s()]+)/.exec(line);
    if (m) {
      imported.push(m[1]);
      continue;
    }
    m = /^\s*\(func\s+\$([^\s()]+)/.exec(line);
    if (m) defined.push(m[1]);
  }
  const full = [...imported, ...defined];
  const problems = [];
  if (wasmPath && existsSync(wasmPath)) {
    const table = wasmFunctionTable(readFileSync(wasmPath));
    if (table.imported !== imported.length)
      problems.push(`${watPath}: ${imported.length} imported functions, the binary ${table.imported}`);
    if (table.defined !== defined.length) problems.push(`${watPath}: ${defined.length} defined functions, the binary ${table.defined}`);
    for (const [name, index] of table.exports) {
      const got = full[index];
      if (got === undefined || !(got === name || got.endsWith('/' + name)))
        problems.push(`export ${name} is function ${index}, the text format's ${index}th is ${got}`);
    }
  } else problems.push(`${wasmPath}: missing, names not verified`);
  return { names: full.map((n) => n.slice(n.lastIndexOf('/') + 1)), fullNames: full, problems };
}

// ---------------------------------------------------------------------------------------------
// Source maps (esbuild's v3 maps next to dist/ files)

const B64 = new Map([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].map((c, i) => [c, i]));

function decodeMappings(mappings) {
  const lines = [];
  let src = 0;
  let oLine = 0;
  let oCol = 0;
  let nameIdx = 0;
  for (const lineText of mappings.split(';')) {
    const segs = [];
    let gCol = 0;
    if (lineText.length > 0) {
      for (const seg of lineText.split(',')) {
        const vals = [];
        let value = 0;
        let shift = 0;
        for (const ch of seg) {
          const d = B64.get(ch);
          value += (d & 31) << shift;
          if (d & 32) shift += 5;
          else {
            vals.push(value & 1 ? -(value >>> 1) : value >>> 1);
            value = 0;
            shift = 0;
          }
        }
        gCol += vals[0];
        if (vals.length >= 4) {
          src += vals[1];
          oLine += vals[2];
          oCol += vals[3];
          if (vals.length >= 5) nameIdx += vals[4];
          segs.push([gCol, src, oLine, oCol, vals.length >= 5 ? nameIdx : -1]);
        }
      }
    }
    lines.push(segs);
  }
  return lines;
}

/** Looks up generated positions of dist/ files in their TypeScript sources. */
export class SourceMaps {
  constructor() {
    this.cache = new Map();
    this.texts = new Map();
  }

  /**
   * The top-level function or class (esbuild writes them at column 0) around a 0-based line of a
   * generated file: the frame's enclosing function, to tell closures apart.
   */
  outer(url, line) {
    if (!url.startsWith('file://')) return undefined;
    let text = this.texts.get(url);
    if (text === undefined) {
      try {
        text = readFileSync(fileURLToPath(url), 'utf8').split('\n');
      } catch {
        text = null;
      }
      this.texts.set(url, text);
    }
    if (text === null) return undefined;
    for (let i = Math.min(line, text.length - 1); i >= 0; i--) {
      const m =
        /^(?:export\s+)?(?:async\s+)?function\*?\s+([\w$]+)/.exec(text[i]) ??
        /^(?:export\s+)?(?:var|let|const)\s+([\w$]+)\s*=\s*(?:class\b|function\b|async\b|\()/.exec(text[i]) ??
        /^(?:export\s+)?class\s+([\w$]+)/.exec(text[i]);
      if (m) return m[1];
      if (/^[}\]);]/.test(text[i]) && i < line) continue;
    }
    return undefined;
  }

  /** { source: 'ts/...', line (1-based) } of a 0-based generated line and column, or undefined. */
  lookup(url, line, col) {
    if (!url.startsWith('file://')) return undefined;
    let map = this.cache.get(url);
    if (map === undefined) {
      map = null;
      try {
        const path = fileURLToPath(url);
        if (existsSync(path + '.map')) {
          const raw = JSON.parse(readFileSync(path + '.map', 'utf8'));
          map = { sources: raw.sources.map((s) => s.replace(/^(\.\.\/)+/, '')), lines: decodeMappings(raw.mappings) };
        }
      } catch {
        map = null;
      }
      this.cache.set(url, map);
    }
    if (map === null) return undefined;
    const segs = map.lines[line];
    if (!segs || segs.length === 0) return undefined;
    let best = segs[0];
    for (const s of segs) {
      if (s[0] <= col) best = s;
      else break;
    }
    return { source: map.sources[best[1]], line: best[2] + 1 };
  }
}

// ---------------------------------------------------------------------------------------------
// Categories

/**
 * Ordered rules: the first whose test matches a frame names its category. A frame is
 * { name, kind: 'wasm' | 'js' | 'wrapper' (V8's js-to-wasm call wrappers) | 'meta' (V8's (idle),
 *   (program), (garbage collector), (root)),
 *   module: 'parle' | 'xxhash' | undefined (wasm), source: 'ts/...' (dist/ JS) or undefined,
 *   url }.
 */
export const CATEGORIES = [
  ['idle', (f) => f.kind === 'meta' && f.name === '(idle)'],
  ['garbage collector', (f) => f.kind === 'meta' && f.name === '(garbage collector)'],
  ['program (native, outside JS)', (f) => f.kind === 'meta'],
  ['js-to-wasm call wrappers', (f) => f.kind === 'wrapper'],
  ['statistics', (f) => f.kind === 'wasm' && /^codecStats/.test(f.name)],
  ['transforms', (f) => f.kind === 'wasm' && /^(delta|shuffle|unshuffle|quantize|dequantize|scatterExceptions)/.test(f.name)],
  ['rle', (f) => f.kind === 'wasm' && /^(rleEncode|rleDecode|varint|sumLengths)/.test(f.name)],
  [
    'entropy coding',
    (f) =>
      (f.kind === 'wasm' &&
        /^(huffman|histogram|addSubHistograms|decode4|decodeLanes|finishSegment|decodeTail|encodeSegment|decodeSegment)/.test(f.name)) ||
      (f.kind === 'js' && (f.source === 'ts/codec/huffman.ts' || /^(encodeHuffmanStream|decodeHuffmanStream)$/.test(f.name))),
  ],
  // the bit-packing stage (assembly/pack.ts): its block plans, encode, decode and sizing
  ['bit packing', (f) => f.kind === 'wasm' && /^(pack|planBlock|unpack)/.test(f.name)],
  [
    'hashing',
    (f) =>
      (f.kind === 'wasm' && (f.module === 'xxhash' || /^(xxh32|xxh64|treeHash)/.test(f.name))) ||
      (f.kind === 'js' && (/xxhash-wasm/.test(f.url) || f.source === 'ts/format/checksum.ts' || /^(treeHashAt|xxh64)$/.test(f.name))),
  ],
  [
    'copies',
    (f) =>
      (f.kind === 'wasm' && /^(copyBytes|copyRanges)/.test(f.name)) ||
      (f.kind === 'js' && /^(writeBytes|readBytes|copyOfBytes)$/.test(f.name)) ||
      // the batch callbacks of encodeChunkRun / decodeChunkRun (ts/codec/cpu/chunks.ts): their
      // self time is mostly the TypedArray set() of the input (compress) or the payloads
      // (decompress) into the kernels' memory and of the elements out of it (decompress)
      (f.kind === 'js' && /^(encodeChunkRun|decodeChunkRun)$/.test(f.outer ?? '') && f.name !== f.outer),
  ],
  // the kernels of the other primitives (sort, scan, reduce): not part of the codec
  ['other kernels', (f) => f.kind === 'wasm' && /^(radix|sortRange|scan|reduce|merge|heapBase|simdEnabled)/.test(f.name)],
  // a kernel these rules do not know yet (a new one in assembly/): add it above
  ['unmapped wasm', (f) => f.kind === 'wasm'],
  [
    'chooser JS',
    (f) =>
      f.kind === 'js' &&
      (f.source === 'ts/codec/chooser.ts' ||
        (f.source === 'ts/codec/cpu/encode.ts' && /^(gatherStats|encodeBest|effortOf)$/.test(f.name))),
  ],
  [
    'codec driver JS',
    (f) =>
      f.kind === 'js' &&
      /^ts\/(codec\/cpu\/pipeline\.ts|codec\/cpu\/|codec\/stages\.ts|codec\/quantize\.ts|cpu\/procedures\.ts)/.test(f.source ?? ''),
  ],
  ['container JS', (f) => f.kind === 'js' && /^ts\/format\//.test(f.source ?? '')],
  [
    'messages',
    (f) =>
      f.kind === 'js' &&
      (/comlink/.test(f.url) ||
        /^ts\/(cpu\/pool\.ts|cpu\/worker-entry\.ts|cpu\/protocol\.ts|platform\/)/.test(f.source ?? '') ||
        /^node:internal\/(worker|per_context\/messageport|event_target)/.test(f.url) ||
        /postMessage|structuredClone|serialize|deserialize/i.test(f.name)),
  ],
  ['engine JS', (f) => f.kind === 'js' && /^ts\//.test(f.source ?? '')],
  ['benchmark loop', (f) => f.kind === 'js' && /bench\/codec-profile\.mjs$/.test(f.url)],
  ['promises, timers (node internals)', (f) => f.kind === 'js' && /^node:internal\/(process\/task_queues|timers|async_hooks)/.test(f.url)],
  ['other JS', () => true],
];

/** Categories whose time is not attributed to a known part of the work (the mapping's gaps). */
export const UNMAPPED = new Set(['other JS', 'unmapped wasm']);

export function categoryOf(frame) {
  for (const [name, test] of CATEGORIES) if (test(frame)) return name;
  return 'other JS';
}

// ---------------------------------------------------------------------------------------------
// Profiles

/** V8's generated call wrappers between JavaScript and WebAssembly (no url). */
export function isWrapper(cf) {
  return (
    cf.url === '' &&
    /^(GenericJSToWasmWrapper|GenericWasmToJSWrapper|js-to-wasm|wasm-to-js|JSToWasmWrapper|WasmToJSWrapper)/.test(cf.functionName)
  );
}

/** Thread of a --cpu-prof file name (CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile): 0 is the main thread. */
export function threadOfFile(name) {
  const m = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.(\d+)\.cpuprofile$/.exec(name);
  return m ? { pid: Number(m[1]), thread: Number(m[2]) } : undefined;
}

/**
 * Self time per function of one profile within [fromUs, toUs) (V8's clock: process.hrtime in
 * µs): each sample counts for the time up to the next sample (as DevTools counts), but at most
 * `capUs`; what lies beyond the cap is spread over all the window's samples in proportion, so
 * the functions still sum to the window. Why: where the cores are busy (2 vCPUs, a main thread,
 * workers, and one sampler thread per thread) V8's sampler thread runs late, gaps of 3-40 ms
 * between samples appear (a third of the time on the 2-core dev VM), and DevTools' rule would
 * give a whole gap to the one function sampled before it (typically the last one before a
 * thread hands over: a copy before postMessage). `capUs: Infinity` is DevTools' rule.
 * `wasm` names a parle module (`names`: the names by index).
 * Returns { sampledUs, samples, gapShare (time beyond 2 intervals / window), functions: Map(key -> {frame, us, samples}), wasmUrls }.
 */
export function summarizeProfile(profile, { fromUs = -Infinity, toUs = Infinity, wasm, maps, capUs = Infinity }) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // which wasm module each wasm:// url is: by the JavaScript that calls into it (xxhash-wasm's
  // wrapper or parle's dist/), counted over the tree's nodes
  const votes = new Map();
  for (const n of profile.nodes) {
    const { url, functionName } = n.callFrame;
    if (!url.startsWith('wasm://')) continue;
    let p = parent.get(n.id);
    while (p !== undefined && (nodes.get(p).callFrame.url.startsWith('wasm://') || isWrapper(nodes.get(p).callFrame))) p = parent.get(p);
    const caller = p === undefined ? '' : nodes.get(p).callFrame.url;
    const v = votes.get(url) ?? { parle: 0, xxhash: 0, maxIndex: -1 };
    if (/xxhash-wasm/.test(caller)) v.xxhash++;
    else if (/\/dist\/|worker/.test(caller) || caller.startsWith('file://')) v.parle++;
    const m = /^wasm-function\[(\d+)\]$/.exec(functionName);
    if (m) v.maxIndex = Math.max(v.maxIndex, Number(m[1]));
    votes.set(url, v);
  }
  const moduleOf = (url) => {
    const v = votes.get(url);
    if (!v) return undefined;
    if (v.xxhash > v.parle) return 'xxhash';
    if (v.parle > 0) return 'parle';
    return undefined;
  };

  const frameCache = new Map();
  const frameOf = (node) => {
    let frame = frameCache.get(node.id);
    if (frame) return frame;
    const cf = node.callFrame;
    const raw = cf.functionName;
    if (raw.startsWith('(') && cf.url === '') {
      frame = { kind: 'meta', name: raw, url: '' };
    } else if (isWrapper(cf)) {
      frame = { kind: 'wrapper', name: raw, url: '' };
    } else if (cf.url.startsWith('wasm://')) {
      const module = moduleOf(cf.url);
      const m = /^wasm-function\[(\d+)\]$/.exec(raw);
      let name = raw.replace(/^\$/, '').replace(/^.*\//, '');
      if (m && module === 'parle' && wasm?.names[Number(m[1])] !== undefined) name = wasm.names[Number(m[1])];
      else if (m && module === 'xxhash') name = `xxhash-wasm ${raw}`;
      frame = { kind: 'wasm', name, module, url: cf.url, raw };
    } else {
      const at = maps?.lookup(cf.url, cf.lineNumber, cf.columnNumber);
      const file = at
        ? `${at.source}:${at.line}`
        : cf.url
          ? `${cf.url.replace(/^.*\/(node_modules\/)/, '$1').replace(/^file:\/\/.*\/(bench\/)/, '$1')}:${cf.lineNumber + 1}`
          : '';
      const outer = at ? maps.outer(cf.url, cf.lineNumber) : undefined;
      frame = { kind: 'js', name: raw || '(anonymous)', outer, url: cf.url, source: at?.source, where: file };
    }
    frame.category = categoryOf(frame);
    frame.key =
      frame.kind === 'js'
        ? `${frame.name}${frame.outer && frame.outer !== frame.name ? ` (in ${frame.outer})` : ''} ${frame.where}`.trim()
        : frame.name;
    frameCache.set(node.id, frame);
    return frame;
  };

  const functions = new Map();
  let sampledUs = 0;
  let samples = 0;
  let t = profile.startTime;
  const times = new Array(profile.samples.length);
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    times[i] = t;
  }
  let cappedUs = 0;
  let lateUs = 0; // time beyond 2 intervals, whatever the cap
  const nominalUs = Number.isFinite(capUs) ? capUs / 2 : (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length);
  for (let i = 0; i < profile.samples.length; i++) {
    const start = times[i];
    if (start < fromUs || start >= toUs) continue;
    const end = Math.min(i + 1 < times.length ? times[i + 1] : profile.endTime, toUs);
    const dt = Math.max(0, end - start);
    const weight = Math.min(dt, capUs);
    const frame = frameOf(nodes.get(profile.samples[i]));
    const entry = functions.get(frame.key) ?? { frame, us: 0, samples: 0 };
    entry.us += weight;
    entry.samples++;
    functions.set(frame.key, entry);
    sampledUs += dt;
    cappedUs += weight;
    lateUs += Math.max(0, dt - 2 * nominalUs);
    samples++;
  }
  // the time beyond the cap (the sampler thread was late) spread over all samples in proportion
  if (cappedUs > 0 && cappedUs < sampledUs) for (const e of functions.values()) e.us *= sampledUs / cappedUs;
  const wasmUrls = [...votes].map(([url, v]) => ({ url, module: moduleOf(url), maxIndex: v.maxIndex }));
  return { sampledUs, samples, gapShare: sampledUs > 0 ? lateUs / sampledUs : 0, functions, wasmUrls };
}

/** Sums function tables (Map key -> {frame, us, samples}) into `into`. */
export function addFunctions(into, functions) {
  for (const [key, e] of functions) {
    const have = into.get(key);
    if (have) {
      have.us += e.us;
      have.samples += e.samples;
    } else into.set(key, { ...e });
  }
  return into;
}

/** Microseconds per category of a function table. */
export function byCategory(functions) {
  const out = new Map(CATEGORIES.map(([name]) => [name, 0]));
  for (const { frame, us } of functions.values()) out.set(frame.category, out.get(frame.category) + us);
  return out;
}
