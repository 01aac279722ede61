// A CommonJS module of the same application: require('parle-codec') resolves its "require"
// types (dist/types/index.d.cts), the async bridge to the ES module.
import parle = require('parle-codec');

export async function viaRequire(): Promise<void> {
  const engine = await parle.createEngine({ workers: 1, gpu: 'off' });
  const { ContainerReader, ErrorCodes } = await parle.load();
  try {
    await engine.compress(new Uint8Array(4), { level: 0 });
  } catch (e) {
    if (parle.isParleError(e, ErrorCodes.INVALID_OPTION)) console.log(e.option, ContainerReader.name);
  }
  // @ts-expect-error misspelt engine option
  await parle.createEngine({ wokers: 1 });
  await engine.destroy();
}
