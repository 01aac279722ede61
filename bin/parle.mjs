#!/usr/bin/env node
// The `parle` command: the bundled CLI (npm run build makes dist/node/cli.js).
import { existsSync } from 'node:fs';

const cli = new URL('../dist/node/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('parle: dist/node/cli.js is missing; run `npm run build` (npm install runs it too)\n');
  process.exit(2);
}
const { main } = await import(cli.href);
process.exitCode = await main(process.argv.slice(2));
