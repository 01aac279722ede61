import { defineConfig } from 'vite';

// What an application needs for parle: targets with top-level await (parle's modules instantiate
// xxHash's WebAssembly as they load) for the page and for its module workers, and the
// cross-origin isolation headers in the dev and preview servers.
const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

export default defineConfig({
  build: { target: 'es2022' },
  worker: { format: 'es' },
  optimizeDeps: { exclude: ['parle-codec'] },
  server: { headers: isolation },
  preview: { headers: isolation },
});
