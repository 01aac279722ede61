// The demo page's server: `npm run demo:web -- [--port N] [--host H] [--no-isolation]`.
//
// Serves web/ at / and the browser build beside it (/dist/browser/*.js, /build/*.wasm), the same
// layout the package ships, so the page imports '/dist/browser/index.js' as any site would and the
// bundle finds its worker (./worker.js) and kernels (../../build/*.wasm) by URL. The repository's
// sample arrays (data/samples/*.u8, *.u16, their .json descriptions, SOURCE.md and the licences)
// are served read-only at /samples/, for the page's "try a sample" button; the Zarr store of
// data/zarr/ (t1-mri.zarr: its zarr.json and chunk files) at /zarr/, and zarrita (an npm package:
// ES modules, but with bare imports a page cannot resolve) bundled by esbuild at /vendor/zarrita.js
// on its first request, for the page's Zarr section.
//
// By default every response carries the two headers that make the page cross-origin isolated
// (SharedArrayBuffer, so the engine's workers share one WebAssembly.Memory: zero copy):
//   Cross-Origin-Opener-Policy: same-origin
//   Cross-Origin-Embedder-Policy: require-corp
// `--no-isolation` leaves them out; the engine then transfers segments to its workers instead.
//
// node:http and no dependency but esbuild (a devDependency, loaded only for /vendor/):
// the server is 200 lines with a fixed allow-list of folders, and none of the well-kept static
// servers (serve, http-server, sirv) is installed here.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { basename, dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * URL prefix -> folder under the package root, and the file names it may serve. `flat`: files
 * directly in the folder only (no subfolder).
 */
const MOUNTS = [
  { prefix: '/dist/browser/', dir: 'dist/browser', allow: /\.(js|js\.map)$/ },
  { prefix: '/build/', dir: 'build', allow: /\.wasm$/ },
  { prefix: '/samples/', dir: 'data/samples', allow: /\.(u8|u16|u32|i32|f32|json|md|txt)$/, flat: true },
  // a store's metadata and chunks (default chunk keys: c/0/1/1), nothing else of data/zarr/
  { prefix: '/zarr/', dir: 'data/zarr', allow: /[\\/][\w-]+\.zarr[\\/](zarr\.json|c([\\/]\d+)+)$/ },
  { prefix: '/', dir: 'web', allow: /\.(html|js|css|svg)$/ },
];

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** The headers that make a page cross-origin isolated (and let it use SharedArrayBuffer). */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

let vendorModules;
/**
 * zarrita for the browser, bundled once per server process (about 300 ms): its package is ES
 * modules importing `numcodecs` and `@zarrita/storage` by bare names a page cannot resolve. Split
 * at its dynamic imports, so the page loads the core (90 kB) and numcodecs' blosc, lz4 and zstd
 * (1.4 MB of inlined WebAssembly) only for an array that names them.
 * @returns {Promise<Map<string, string>>} file name under /vendor/ -> code: `zarrita.js` and its chunks
 */
function bundleVendorModules() {
  vendorModules ??= import('esbuild')
    .then(({ build }) =>
      build({
        stdin: { contents: "export * from 'zarrita';", resolveDir: root, loader: 'js', sourcefile: 'zarrita.js' },
        bundle: true,
        splitting: true,
        format: 'esm',
        platform: 'browser',
        target: 'es2022',
        outdir: join(root, 'vendor'),
        entryNames: 'zarrita',
        chunkNames: 'chunk-[hash]',
        write: false,
        logLevel: 'silent',
      }),
    )
    .then((result) => new Map(result.outputFiles.map((file) => [basename(file.path), file.text])));
  // a failed build is tried again on the next request
  vendorModules.catch(() => (vendorModules = undefined));
  return vendorModules;
}

/** The file a request path maps to, or null when it is outside the allow-list. */
function resolvePath(urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (path === '/') path = '/index.html';
  if (path.includes('\0')) return null;
  for (const { prefix, dir, allow, flat } of MOUNTS) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    if (flat && /[/\\]/.test(rest)) return null;
    const base = join(root, dir);
    const file = normalize(join(base, rest));
    if (!file.startsWith(base + sep) || !allow.test(file)) return null;
    return file;
  }
  return null;
}

/**
 * Starts the server. `port` 0 picks a free one.
 * @returns {Promise<{ url: string, isolation: boolean, close(): Promise<void> }>}
 */
export async function startServer({ port = 8080, host = '127.0.0.1', isolation = true, log = false } = {}) {
  const server = createServer(async (req, res) => {
    const headers = {
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      // Same-origin subresources need no CORP header under require-corp; it is set anyway so the
      // files can also be embedded by an isolated page of another port on this host.
      'Cross-Origin-Resource-Policy': 'same-site',
      ...(isolation ? ISOLATION_HEADERS : {}),
    };
    const send = (status, text) => {
      res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(req.method === 'HEAD' ? undefined : text);
    };
    if (log) res.on('finish', () => console.log(`${res.statusCode} ${req.method} ${req.url}`));
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (pathname.startsWith('/vendor/')) {
      let modules;
      try {
        modules = await bundleVendorModules();
      } catch (e) {
        return send(500, `could not bundle zarrita: ${e.message} (run \`npm install\`)\n`);
      }
      const name = pathname.slice('/vendor/'.length);
      if (!modules.has(name)) return send(404, 'not found\n');
      const code = Buffer.from(modules.get(name));
      res.writeHead(200, { ...headers, 'Content-Type': TYPES['.js'], 'Content-Length': code.length });
      return res.end(req.method === 'HEAD' ? undefined : code);
    }
    const file = resolvePath(pathname);
    if (!file) return send(404, 'not found\n');
    let info;
    try {
      info = await stat(file);
    } catch {
      if (file.endsWith('.wasm') || file.includes(`${sep}dist${sep}`)) return send(404, 'not built: run `npm run build`\n');
      return send(404, 'not found\n');
    }
    if (!info.isFile()) return send(404, 'not found\n');
    res.writeHead(200, { ...headers, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Length': info.size });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}/`;
  return {
    url,
    isolation,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parseArgs(argv) {
  const options = { port: 8080, host: '127.0.0.1', isolation: true, log: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--port') {
      options.port = Number(value());
      if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535)
        throw new Error('--port must be an integer from 0 to 65535');
    } else if (arg === '--host') options.host = value();
    else if (arg === '--no-isolation') options.isolation = false;
    else if (arg === '--log') options.log = true;
    else if (arg === '--help' || arg === '-h') {
      console.log('usage: npm run demo:web -- [--port N] [--host H] [--no-isolation] [--log]');
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  return options;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`demo:web: ${e.message}`);
    process.exit(2);
  }
  const { url, isolation } = await startServer(options);
  console.log(`parle demo on ${url} (${isolation ? 'cross-origin isolated: shared memory' : 'not isolated: transferred segments'})`);
  console.log(`self-test: ${url}?selftest`);
}
