// The demo page's Zarr section (issue #46): a Zarr v3 array shipped with the repository
// (data/zarr/t1-mri.zarr, a real MRI volume written by data/zarr/write.mjs with the parle codec),
// opened over HTTP with zarrita's FetchStore and shown slice by slice on a canvas. zarrita comes
// from /vendor/zarrita.js (web/serve.mjs bundles the npm package on request); the parle codec is
// registered on the page's engine, which decodes the chunks of `zarr.get(arr, [index, null, null])`.
// Where: the engine sends a container to its workers from 2 chunks and 256 KiB of elements on
// (ts/cpu/cpu-path.ts, runChunks), so these chunks (32 KiB, one .parle chunk each) are decoded on
// the page's thread, one after another; a store of chunks of 512 KiB or more is decoded by the pool.
//
// What the section shows, it also leaves on its element for tests (test/demo-zarr.test.ts):
// data-state (`opening`, `reading`, `shown`, `failed`), data-index (the slice on the canvas),
// data-checksum (FNV-1a of that slice's elements' bytes), data-store-bytes (the store's size).
import { register } from '/dist/browser/zarr.js';

/** Where web/serve.mjs serves data/zarr/t1-mri.zarr (the store's root is the array). */
const STORE_PATH = '/zarr/t1-mri.zarr';

const $ = (id) => document.getElementById(id);

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1 << 20)).toFixed(2)} MiB`;
}

/**
 * FNV-1a (32 bits) of `bytes`, as 8 hex digits: the checksum the section publishes of the slice
 * it shows. `fnv1a32(new Uint8Array([0x61]))` is `'e40c292c'` ("a").
 */
export function fnv1a32(bytes) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i], 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/**
 * A zarrita store that keeps what another fetched (each key's bytes, as a promise): a slice's
 * chunks are fetched before it is decoded, so the decode time shown is the codec's and not the
 * network's, and a slice seen before is not fetched again (the store is 372 KiB).
 */
class CachingStore {
  #inner;
  #values = new Map();

  constructor(inner) {
    this.#inner = inner;
  }

  /** The bytes of `key` (undefined where the store has none), fetched on the first call only. */
  get(key, options) {
    let value = this.#values.get(key);
    if (value === undefined) {
      value = this.#inner.get(key, options);
      this.#values.set(key, value);
      // a failed fetch is tried again on the next call
      value.catch(() => this.#values.delete(key));
    }
    return value;
  }

  /** Whether `key` was fetched (or is being fetched) already. */
  isCached(key) {
    return this.#values.has(key);
  }
}

/**
 * The store key of a chunk, by the array's `chunk_key_encoding` (Zarr v3 core spec): `default`
 * gives `/c/3/0/1` for chunk [3, 0, 1] (separator `/`), `v2` gives `/3.0.1`.
 * @throws Error for another encoding
 */
function chunkKey(encoding, coords) {
  if (encoding.name === 'default') return `/${['c', ...coords].join(encoding.configuration?.separator ?? '/')}`;
  if (encoding.name === 'v2') return `/${coords.join(encoding.configuration?.separator ?? '.') || '0'}`;
  throw new Error(`chunk key encoding ${encoding.name}: the demo knows 'default' and 'v2'`);
}

/**
 * Every chunk coordinate of a grid of `counts` chunks along each axis whose first coordinate is
 * `first` (all of them when `first` is undefined), in C order: counts [2, 2, 2], first 1 ->
 * [1,0,0], [1,0,1], [1,1,0], [1,1,1].
 */
function chunkCoords(counts, first) {
  let coords = first === undefined ? Array.from({ length: counts[0] }, (_, c) => [c]) : [[first]];
  for (const count of counts.slice(1)) coords = coords.flatMap((head) => Array.from({ length: count }, (_, c) => [...head, c]));
  return coords;
}

/**
 * Draws a 2-D slice (`height` x `width` elements, C order, row 0 on top) on `canvas` in grey:
 * `range.min` and below black, `range.max` and above white, linear between
 * (grey = round((v - min) * 255 / (max - min))).
 */
function drawSlice(canvas, data, height, width, range) {
  canvas.width = width;
  canvas.height = height;
  // willReadFrequently: a canvas kept in memory, whose pixels read back as drawn
  const context = canvas.getContext('2d', { willReadFrequently: true });
  const image = context.createImageData(width, height);
  const scale = 255 / Math.max(1, range.max - range.min);
  for (let p = 0; p < data.length; p++) {
    const grey = Math.min(255, Math.max(0, Math.round((Number(data[p]) - range.min) * scale)));
    image.data[4 * p] = image.data[4 * p + 1] = image.data[4 * p + 2] = grey;
    image.data[4 * p + 3] = 255;
  }
  context.putImageData(image, 0, 0);
}

/**
 * Opens the store over HTTP, registers the parle codec on `engine` (the page's, which decodes
 * the chunks), shows the store's size and the volume's middle slice, and wires the
 * slider to show the others. Failures are shown in the section (and on the console), never thrown.
 */
export async function openZarrView(engine) {
  const section = $('zarr');
  const fail = (e) => {
    section.dataset.state = 'failed';
    $('zarr-error').textContent = `could not read ${STORE_PATH}: ${e?.code ? `${e.code}: ` : ''}${e?.message ?? String(e)}`;
    $('zarr-error').hidden = false;
    console.error('parle demo, Zarr section:', e);
  };
  try {
    section.dataset.state = 'opening';
    const zarr = await import('/vendor/zarrita.js');
    register(zarr.registry, { engine });
    const storeUrl = new URL(STORE_PATH, location.href).href;
    const store = new CachingStore(new zarr.FetchStore(storeUrl));
    // version 3 directly: zarr.open would first ask for version 2's .zarray (a 404 on the console)
    const arr = await zarr.open.v3(store, { kind: 'array' });
    if (arr.shape.length !== 3) throw new Error(`a volume has 3 axes; this array has shape [${arr.shape}]`);
    const metadata = JSON.parse(new TextDecoder().decode(await store.get('/zarr.json')));
    const [depth, height, width] = arr.shape;
    const counts = arr.shape.map((n, d) => Math.ceil(n / arr.chunks[d]));
    const axis = arr.dimensionNames?.[0] ?? 'axis 0';
    const codec = metadata.codecs.find((c) => c.name === 'parle');
    const attrs = arr.attrs ?? {};

    // the store's size: its metadata and every chunk, each asked for by HEAD (no chunk is read)
    const keys = ['/zarr.json', ...chunkCoords(counts).map((c) => chunkKey(metadata.chunk_key_encoding, c))];
    const sizes = await Promise.all(
      keys.map(async (key) => {
        const response = await fetch(new URL(key.slice(1), `${storeUrl}/`), { method: 'HEAD' });
        if (!response.ok) throw new Error(`HEAD ${key}: HTTP ${response.status}`);
        return Number(response.headers.get('Content-Length'));
      }),
    );
    const storeBytes = sizes.reduce((a, n) => a + n, 0);
    const elementBytes = Number(/\d+$/.exec(arr.dtype)?.[0] ?? 8) / 8;
    const arrayBytes = depth * height * width * elementBytes;
    section.dataset.storeBytes = String(storeBytes);
    $('zarr-store').textContent =
      `${STORE_PATH.split('/').pop()}: ${arr.dtype}, ${arr.shape.join(' × ')} (${(arr.dimensionNames ?? []).join(', ')}) ` +
      `in ${keys.length - 1} chunks of ${arr.chunks.join(' × ')}, codec parle${codec?.configuration?.level ? ` level ${codec.configuration.level}` : ''}: ` +
      `${formatBytes(storeBytes)} for ${formatBytes(arrayBytes)} of elements, ${(arrayBytes / storeBytes).toFixed(2)}× smaller.`;
    if (attrs.source?.license) $('zarr-source').textContent = `${attrs.source.upstream ?? 'data'}, ${attrs.source.license}`;

    // the display window the writer recorded (the volume's range), else the data type's
    const range = attrs.window ?? { min: 0, max: 2 ** (8 * elementBytes) - 1 };
    const slider = $('zarr-slice');
    slider.max = String(depth - 1);
    slider.value = String(Math.floor(depth / 2));

    /** Fetches slice `index`'s chunks, decodes them (zarr.get, the codec on the page's engine), draws the slice. */
    const readSlice = async (index) => {
      const chunkFirst = Math.floor(index / arr.chunks[0]);
      const sliceKeys = chunkCoords(counts, chunkFirst).map((c) => chunkKey(metadata.chunk_key_encoding, c));
      const fresh = sliceKeys.filter((key) => !store.isCached(key)).length;
      const t0 = performance.now();
      const chunkBytes = (await Promise.all(sliceKeys.map((key) => store.get(key)))).reduce((a, b) => a + (b?.length ?? 0), 0);
      const fetchMs = performance.now() - t0;
      const t1 = performance.now();
      const slice = await zarr.get(arr, [index, null, null]);
      const decodeMs = performance.now() - t1;
      drawSlice($('zarr-canvas'), slice.data, height, width, range);
      const bytes = new Uint8Array(slice.data.buffer, slice.data.byteOffset, slice.data.byteLength);
      $('zarr-index').textContent = `${axis} = ${index} of ${depth - 1}`;
      $('zarr-timing').textContent =
        `${sliceKeys.length} chunks, ${formatBytes(chunkBytes)}: ` +
        `${fresh > 0 ? `fetched in ${fetchMs.toFixed(1)} ms (${fresh} over HTTP)` : 'fetched before'}, ` +
        `decoded in ${decodeMs.toFixed(1)} ms`;
      section.dataset.index = String(index);
      section.dataset.checksum = fnv1a32(bytes);
      section.dataset.decodeMs = decodeMs.toFixed(2);
    };

    // one read at a time; a slider moved during a read shows where it ended, once the read is done
    let shown = -1;
    let wanted = Number(slider.value);
    let reading = false;
    const show = async () => {
      if (reading) return;
      reading = true;
      section.dataset.state = 'reading';
      try {
        while (wanted !== shown) {
          const index = wanted;
          await readSlice(index);
          shown = index;
        }
        section.dataset.state = 'shown';
      } catch (e) {
        fail(e);
      } finally {
        reading = false;
      }
    };
    slider.addEventListener('input', () => {
      wanted = Number(slider.value);
      $('zarr-error').hidden = true;
      void show();
    });
    slider.disabled = false;
    await show();
  } catch (e) {
    fail(e);
  }
}
