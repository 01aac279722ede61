import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Debian's chromium ships SwiftShader, a software Vulkan driver Dawn accepts: use it when it is
// installed and no driver was chosen, so `npm test` runs the GPU tests without a GPU.
const swiftshader = '/usr/lib/chromium/vk_swiftshader_icd.json';
const env: Record<string, string> = {};
if (!process.env.VK_ICD_FILENAMES && existsSync(swiftshader)) env.VK_ICD_FILENAMES = swiftshader;

export default defineConfig({
  plugins: [
    {
      // shaders/*.wgsl are imported as strings, as esbuild's `text` loader does in the bundles.
      name: 'wgsl-as-text',
      transform(code, id) {
        if (id.endsWith('.wgsl')) return { code: `export default ${JSON.stringify(code)};`, map: null };
        return undefined;
      },
    },
  ],
  test: {
    env,
    include: ['test/**/*.test.ts'],
    // a fresh temporary calibration cache for each test file and its child processes
    // (PARLE_CACHE_DIR), removed after the run: test/support/global-setup.ts, setup-file.ts
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup-file.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
  },
});
