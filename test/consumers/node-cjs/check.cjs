// A CommonJS consumer: require('parle-codec') gives load(), createEngine() and isParleError() (the
// library is an ES module with top-level await; see the README, "CommonJS").
const parle = require('parle-codec');
const assert = require('node:assert/strict');

function check(condition, what) {
  assert.ok(condition, what);
  console.log(`  ok  ${what}`);
}

async function main() {
  check(typeof parle.createEngine === 'function' && typeof parle.load === 'function', "require('parle-codec') exports createEngine and load");
  check(require('parle-codec/package.json').name === 'parle-codec', "require('parle-codec/package.json') works");
  const engine = await parle.createEngine({ workers: 2, inlineBytes: 0, calibration: 'skip' });
  try {
    const data = new Uint32Array(200_000).map((_, i) => (i >> 4) * 3);
    const packed = await engine.compress(data);
    const back = await engine.decompress(packed);
    check(back instanceof Uint32Array && Buffer.compare(Buffer.from(back.buffer, back.byteOffset, back.byteLength), Buffer.from(data.buffer)) === 0, 'compress / decompress round-trip on 2 workers');
    const { ParleError, ErrorCodes, VERSION } = await parle.load();
    check(typeof VERSION === 'string', `load() gives the ES module (VERSION ${VERSION})`);
    let caught;
    try {
      await engine.decompress(new Uint8Array(64));
    } catch (e) {
      caught = e;
    }
    check(caught instanceof ParleError && parle.isParleError(caught, ErrorCodes.NOT_PARLE), 'errors are the ES module\'s ParleError; isParleError(e, code) works');
  } finally {
    await engine.destroy();
  }
  console.log('node-cjs: pass');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
