// A TypeScript application of parle. Compiling it is the test (`tsc -p .`: strict, skipLibCheck
// off, no DOM lib, no @webgpu/types): the assertions below are types, and each `@ts-expect-error`
// fails the build when the error it expects goes away. Nothing here runs.
import {
  createEngine,
  ErrorCodes,
  isParleError,
  ParleError,
  type CompressOptions,
  type DeviceArray,
  type Engine,
  type EngineOptions,
  type ErrorBound,
  type ParleArray,
  type Runs,
} from 'parle-codec';
import { createService, type Service, type ServiceOptions } from 'parle-codec/service';

/** True when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Compiles only when T is true. */
function assertType<T extends true>(): T | undefined {
  return undefined;
}

export async function main(): Promise<void> {
  const options: EngineOptions = { workers: 2, gpu: 'off', calibration: 'skip' };
  const engine: Engine = await createEngine(options);
  const input = new Float32Array([1, 2, 2, 3]);
  const bound: ErrorBound = { abs: 1e-3 };
  const compressOptions: CompressOptions = { level: 9, errorBound: bound };
  const packed: Uint8Array = await engine.compress(input, compressOptions);

  // decompress: the type of `out` when given; else any ParleArray, or a DeviceArray on the device
  const f: Float32Array = await engine.decompress(packed, { out: new Float32Array(input.length) });
  const shared = await engine.decompress(packed, { out: engine.alloc('u16', 4) });
  assertType<Equal<typeof shared, Uint16Array>>();
  const unknownType = await engine.decompress(packed);
  assertType<Equal<typeof unknownType, ParleArray>>();
  // @ts-expect-error without `out` the element type is not known until the header is read
  const notKnown: Float32Array = await engine.decompress(packed, { path: 'cpu' });
  const onDevice: DeviceArray = await engine.decompress(packed, { to: 'device' });
  onDevice.destroy();
  // containers on the device: compress to one (a u8 DeviceArray), decompress from one
  const resident: DeviceArray = await engine.compress(input, { to: 'device' });
  const fromResident: DeviceArray = await engine.decompress(resident);
  const fromResidentToHost = await engine.decompress(resident, { to: 'host' });
  assertType<Equal<typeof fromResidentToHost, ParleArray>>();
  // @ts-expect-error compress's container is on the host unless to: 'device'
  const notResident: DeviceArray = await engine.compress(input);
  fromResident.destroy();

  // scan, sort and rleDecode: the input's array type, or out's
  const keys = new Uint32Array([3, 1, 2]);
  const sorted = await engine.sort(keys);
  assertType<Equal<typeof sorted, Uint32Array<ArrayBuffer>>>();
  const sortedInto = await engine.sort(keys, { out: engine.alloc('u32', 3) });
  assertType<Equal<typeof sortedInto, Uint32Array>>();
  const pairs = await engine.sort(new Float32Array(3), { values: keys });
  assertType<Equal<typeof pairs, { keys: Float32Array<ArrayBuffer>; values: Uint32Array }>>();
  const sums: Int32Array = await engine.scan(new Int32Array(3), { inclusive: true });
  const sumsInto = await engine.scan(keys, { out: new Uint32Array(3) });
  assertType<Equal<typeof sumsInto, Uint32Array<ArrayBuffer>>>();
  const runs: Runs<Uint8Array<ArrayBuffer>> = await engine.rleEncode(new Uint8Array([7, 7, 8]));
  const expanded = await engine.rleDecode(runs);
  assertType<Equal<typeof expanded, Uint8Array<ArrayBuffer>>>();
  const expandedInto = await engine.rleDecode(runs, { out: engine.alloc('u8', 3) });
  assertType<Equal<typeof expandedInto, Uint8Array>>();

  // Unknown options are type errors (excess property checks), as they are INVALID_OPTION at run time
  // @ts-expect-error misspelt option
  await engine.compress(input, { levle: 9 });
  // @ts-expect-error errorBound takes { abs } only
  await engine.compress(input, { errorBound: { rel: 0.01 } });
  // @ts-expect-error misspelt engine option
  await createEngine({ worker: 2 });
  // @ts-expect-error an out of another type than a scan's input
  await engine.scan(keys, { out: new Uint8Array(3) });

  try {
    await engine.compress(input, { chunkBytes: 1 });
  } catch (e) {
    if (isParleError(e, ErrorCodes.INVALID_OPTION)) {
      const option: string | undefined = e.option; // 'chunkBytes'
      console.log(option, e.code, e.message);
    } else if (e instanceof ParleError) {
      console.log(e.code);
    }
  }

  // parle-codec/service (needs fastify and prom-client, which this application installs)
  const serviceOptions: ServiceOptions = { maxBody: 1 << 20, chunkBytes: 1 << 18 };
  const service: Service = await createService(engine, serviceOptions);
  const url: string = await service.listen({ port: 0, host: '127.0.0.1' });
  console.log(url, f.length, sums.length, notKnown);
  await service.close();
  await engine.destroy();
}
