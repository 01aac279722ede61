import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// webpack 5 finds parle's worker and kernels by their `new URL(..., import.meta.url)` and emits
// them as a worker chunk and asset files; top-level await is on by default (webpack >= 5.83).
// The page itself is index.html, emitted as is (it loads main.js as a module).
class EmitIndexHtml {
  apply(compiler) {
    compiler.hooks.thisCompilation.tap('EmitIndexHtml', (compilation) => {
      compilation.hooks.processAssets.tap({ name: 'EmitIndexHtml', stage: compiler.webpack.Compilation.PROCESS_ASSETS_STAGE_ADDITIONAL }, () => {
        const html = readFileSync(new URL('./index.html', import.meta.url), 'utf8');
        compilation.emitAsset('index.html', new compiler.webpack.sources.RawSource(html));
      });
    });
  }
}

export default {
  mode: 'production',
  entry: './src/main.js',
  output: { path: fileURLToPath(new URL('./dist/', import.meta.url)), filename: 'main.js', module: true, clean: true },
  experiments: { outputModule: true },
  devtool: false,
  performance: { hints: false },
  plugins: [new EmitIndexHtml()],
};
