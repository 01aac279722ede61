import { defineConfig } from 'vitest/config';

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
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
  },
});
