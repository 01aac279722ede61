/**
 * The `parle` command. Exit status: 0 on success, 1 on bad input (one line on stderr, no stack
 * trace), 2 on bad usage. Progress goes to stderr for work over 64 MiB when stderr is a
 * terminal. `-` (or no file name) is standard input / output; see ts/node/files.ts for how
 * outputs are written.
 *
 *   parle demo
 *   parle compress [IN|-] [OUT|-] [--type u8|u16|u32|i32|f32|i8|i16|f16|f64|i64|u64] [--level N] [--codec C] [--decoder cpu|gpu] [--path auto|cpu|gpu]
 *                  [--workers N] [-f]
 *   parle decompress [IN.parle|-] [OUT|-] [--max-elements N] [-f]
 *   parle inspect [FILE.parle|-]
 *   parle sort IN OUT --type u32|i32|f32|u64|i64|f64
 *   parle serve [--port N] [--host ADDR] [--processes N] [--workers N] [--max-body BYTES] [--max-output-bytes BYTES]
 *               [--max-output-ratio N] [--queue N] [--timeout-ms N] [--max-connections N] [--headers-timeout-ms N]
 *               [--keep-alive-timeout-ms N] [--max-requests-per-socket N]
 *               [--max-wait-ms N] [--shed-rate N] [--min-body-rate BYTES] [--gpu MODE]
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine, VERSION, type Engine } from '../engine.js';
import type { EngineOptions } from '../options.js';
import { ErrorCodes, ParleError } from '../errors.js';
import { MAX_CHUNK_BYTES } from '../format/layout.js';
import { compressFile, decompressFile, inspectFile, STDIO, type ProgressCallback } from '../node/files.js';
import { arrayConstructor, ELEMENT_TYPES, elementSize, isElementType, SORT_KEY_TYPES, type ElementType, type SortKeys } from '../types.js';
import { integerFlag } from '../service/flags.js';
import { loadService } from '../service/load.js';
import { runDemo } from './demo.js';
import { startProgress } from './progress.js';

/** Files beside the package that only a clone of the repository has (ts/cli and dist/node are both two levels below its root). */
const CLONE_ONLY = {
  demo: new URL('../../data/samples/', import.meta.url),
  bench: new URL('../../bench/suite/index.mjs', import.meta.url),
};

/** Exits 2 with one line when `parle <command>` needs a file the npm package does not ship. */
function needClone(command: keyof typeof CLONE_ONLY): void {
  const path = fileURLToPath(CLONE_ONLY[command]);
  if (!existsSync(path)) {
    throw new CommanderError(
      2,
      'parle.usage',
      `error: parle ${command} needs a clone of the repository (${path} is not in the npm package): git clone the project and run it there`,
    );
  }
}

/**
 * The CLI flag of a library option, for errors: the engine names `options.chunkBytes`, the user
 * typed `--chunk-bytes`.
 */
const FLAGS: Record<string, string> = {
  chunkBytes: '--chunk-bytes',
  level: '--level',
  codec: '--codec',
  decoder: '--decoder',
  errorBound: '--error-bound-abs',
  shape: '--shape',
  'errorBound.abs': '--error-bound-abs',
  maxElements: '--max-elements',
  workers: '--workers',
  type: '--type',
  path: '--path',
};

/**
 * An engine error's message with `options.x` replaced by the flag that set x, where the error
 * names an option (ParleError.option) that a flag sets.
 */
function flagMessage(e: ParleError): string {
  const flag = e.option === undefined ? undefined : FLAGS[e.option];
  return flag === undefined ? e.message : e.message.replaceAll(`options.${e.option}`, flag);
}

/**
 * The element type of a compress input: --type, else the input's extension when it names one
 * (camera.u8, grid.f32), else u8.
 */
function inputType(flag: string | undefined, input: string): ElementType {
  if (flag !== undefined) return flag as ElementType;
  const ext = extname(input).slice(1);
  return input !== STDIO && isElementType(ext) ? ext : 'u8';
}

/** Standard input as an input: refused when it is a terminal (nothing would be piped in). */
function checkStdin(input: string): void {
  if (input === STDIO && process.stdin.isTTY) {
    throw new CommanderError(2, 'parle.usage', 'error: no input: give a file, or pipe data to standard input');
  }
}

function positiveInteger(name: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > max) {
      throw new InvalidArgumentError(`${name} must be an integer from 1 to ${max}`);
    }
    return n;
  };
}

/** The --shape flag: positive integers joined by x (720x1440). */
function shapeArgument(value: string): number[] {
  const dims = value.split('x').map((d) => (/^[1-9][0-9]*$/.test(d) ? Number(d) : NaN));
  if (dims.some((d) => !Number.isSafeInteger(d)))
    throw new InvalidArgumentError(`--shape must be positive integers joined by x (720x1440); got ${value}`);
  return dims;
}

/** The --level flag: 1..9. */
const levelArgument = positiveInteger('--level', 9);

/**
 * Engine options from the shared flags. Containers are built on the CPU, so only `sort` opens
 * the GPU (and only when --path allows it).
 */
function engineOptions(opts: { workers?: number; path?: string }, usesGpu = false): EngineOptions {
  const gpu = opts.path === 'gpu' ? 'require' : usesGpu && opts.path !== 'cpu' ? 'auto' : 'off';
  return { workers: opts.workers, gpu };
}

async function withEngine<R>(options: EngineOptions, fn: (engine: Engine) => Promise<R>): Promise<R> {
  const engine = await createEngine(options);
  try {
    return await fn(engine);
  } finally {
    await engine.destroy();
  }
}

async function withProgress<R>(label: string, fn: (onProgress?: ProgressCallback) => Promise<R>): Promise<R> {
  const progress = startProgress(label);
  try {
    return await fn(progress.onProgress);
  } finally {
    progress.stop();
  }
}

const pathOption = () => new Option('--path <path>', 'where the work runs').choices(['auto', 'cpu', 'gpu']).default('auto');
const workersOption = () =>
  new Option('--workers <n>', 'CPU worker threads (default: all cores)').argParser(positiveInteger('--workers', 1024));

export function buildProgram(): Command {
  const program = new Command('parle')
    .description(
      'Typed-array compression (the .parle codec: delta, byte shuffle, run-length and Huffman coding per chunk; a lossy mode for f32) ' +
        'and radix sort, on WebAssembly SIMD workers and WebGPU. "-" or no file name means standard input / output.',
    )
    .version(VERSION)
    .exitOverride()
    .configureOutput({ outputError: (message, write) => write(message) })
    .showHelpAfterError('(run parle --help for usage)');

  program
    .command('demo')
    .description('compress and decompress the real sample data in the repository and compare with plain JS and fflate (needs a clone)')
    .action(async () => {
      needClone('demo');
      await withEngine({ gpu: 'off' }, (engine) => runDemo(engine));
    });

  program
    .command('compress')
    .description('compress raw little-endian elements into a .parle file (OUT defaults to IN.parle; standard output when IN is -)')
    .argument('[in]', 'input file of raw little-endian elements; - or none: standard input', STDIO)
    .argument('[out]', 'output .parle file; -: standard output')
    .addOption(
      new Option('--type <type>', "element type (default: IN's extension when it is one of these, else u8)").choices(ELEMENT_TYPES),
    )
    .addOption(pathOption())
    .addOption(workersOption())
    .addOption(new Option('--chunk-bytes <n>', 'bytes of elements per chunk').argParser(positiveInteger('--chunk-bytes', MAX_CHUNK_BYTES)))
    .addOption(new Option('--level <n>', 'compression level: 1 fastest, 9 smallest (default 5)').argParser(levelArgument))
    .option(
      '--codec <codec>',
      "codec pipeline of every chunk: 'auto' (the chooser picks per chunk), 'stored', or stages joined by '+' in the order delta, shuffle, rle, then huffman or pack (e.g. delta+shuffle+huffman, delta+pack)",
      'auto',
    )
    .addOption(
      new Option(
        '--decoder <decoder>',
        "the decoder the Huffman streams are laid out for: 'cpu' (mode 2, fastest on the CPU) or 'gpu' (mode 3, interleaved lanes a GPU decodes faster; about 0.5 % larger)",
      )
        .choices(['cpu', 'gpu'])
        .default('cpu'),
    )
    .option(
      '--error-bound-abs <x>',
      'f32 and f64 only: lossy, every finite element within x of its original (NaN, Infinity, -0 exact); see docs/format.md "Stage 5: quantize"',
      (value: string) => Number(value),
    )
    .option(
      '--shape <dims>',
      "the array's shape, C order, dims joined by x (720x1440 for a grid, 512x512x4 for an RGBA image as u8): predictors along its axes, channels and fields as planes",
      shapeArgument,
    )
    .option('-f, --force', 'replace an existing output file; write to a terminal')
    .option('--explain', "print the path the engine picks and why, then each chunk's pipeline and why")
    .action(async (input: string, output: string | undefined, opts) => {
      checkStdin(input);
      const out = output ?? (input === STDIO ? STDIO : `${input}.parle`);
      await withEngine(engineOptions(opts), async (engine) => {
        if (opts.explain) {
          const { size } = input === STDIO ? { size: 0 } : await stat(input).catch(() => ({ size: 0 }));
          console.error(JSON.stringify(engine.explain('compress', { byteLength: size, location: 'host' }), null, 2));
        }
        const reports = await withProgress('compress', (onProgress) =>
          compressFile(engine, input, out, {
            type: inputType(opts.type, input),
            chunkBytes: opts.chunkBytes,
            codec: opts.codec,
            ...(opts.level !== undefined ? { level: opts.level as number } : {}),
            decoder: opts.decoder as 'cpu' | 'gpu',
            explain: opts.explain === true,
            ...(opts.errorBoundAbs !== undefined ? { errorBound: { abs: opts.errorBoundAbs as number } } : {}),
            ...(opts.shape !== undefined ? { shape: opts.shape as number[] } : {}),
            force: opts.force,
            onProgress,
          }),
        );
        if (opts.explain) console.error(JSON.stringify({ chunks: reports }, null, 2));
      });
    });

  program
    .command('decompress')
    .description(
      'decompress a .parle file into raw little-endian elements (OUT defaults to IN without .parle; standard output when IN is -)',
    )
    .argument('[in]', 'input .parle file; - or none: standard input', STDIO)
    .argument('[out]', 'output file; -: standard output')
    .addOption(pathOption())
    .addOption(workersOption())
    .addOption(new Option('--max-elements <n>', 'refuse files that claim more elements').argParser(positiveInteger('--max-elements')))
    .option('-f, --force', 'replace an existing output file; write to a terminal')
    .action(async (input: string, output: string | undefined, opts) => {
      checkStdin(input);
      let out = output ?? (input === STDIO ? STDIO : undefined);
      if (out === undefined) {
        if (!input.endsWith('.parle')) {
          throw new CommanderError(2, 'parle.usage', 'error: give OUT when IN does not end in .parle');
        }
        out = input.slice(0, -'.parle'.length);
      }
      await withEngine(engineOptions(opts), (engine) =>
        withProgress('decompress', (onProgress) =>
          decompressFile(engine, input, out, { maxElements: opts.maxElements, force: opts.force, onProgress }),
        ),
      );
    });

  program
    .command('calibrate')
    .description("measure this machine's CPU and GPU rates for the cost model again, store them, and print them")
    .addOption(workersOption())
    .action(async (opts) => {
      await withEngine({ workers: opts.workers, gpu: 'auto', calibration: 'skip' }, async (engine) => {
        const bar = process.stderr.isTTY
          ? (done: number, total: number) => process.stderr.write(`\rcalibrating ${done}/${total}`)
          : undefined;
        await engine.calibrate({ force: true, onProgress: bar });
        if (bar) process.stderr.write('\n');
        if (!engine.adapter) console.error('parle: no WebGPU adapter: the CPU path runs everything, nothing to calibrate');
        console.log(JSON.stringify({ adapter: engine.adapter, workers: engine.workers, rates: engine.model.rates }, null, 2));
      });
    });

  program
    .command('inspect')
    .description('print the header and chunk table of a .parle file as JSON')
    .argument('[file]', '.parle file; - or none: standard input', STDIO)
    .action(async (file: string) => {
      checkStdin(file);
      console.log(JSON.stringify(await inspectFile(file), null, 2));
    });

  program
    .command('sort')
    .description('sort raw little-endian keys (stable LSD radix sort; f32 and f64 in IEEE totalOrder; 64-bit keys on the CPU path)')
    .argument('<in>', 'input file of keys')
    .argument('<out>', 'output file')
    .addOption(new Option('--type <type>', 'key type').choices([...SORT_KEY_TYPES]).makeOptionMandatory())
    .addOption(pathOption())
    .addOption(workersOption())
    .action(async (input: string, output: string, opts) => {
      const type = opts.type as ElementType;
      let raw: Uint8Array;
      try {
        // a copy of its own (offset 0): 64-bit keys need an 8-byte aligned view
        raw = new Uint8Array(await readFile(input));
      } catch (e) {
        throw new ParleError(ErrorCodes.IO_ERROR, `cannot read ${input}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
      }
      if (raw.length % elementSize(type) !== 0) {
        throw new ParleError(ErrorCodes.UNALIGNED_LENGTH, `${input} has ${raw.length} bytes, not a whole number of ${type} keys`);
      }
      const keys = new (arrayConstructor(type))(raw.buffer, raw.byteOffset, raw.length / elementSize(type)) as SortKeys;
      await withEngine(engineOptions(opts, true), async (engine) => {
        const sorted = await engine.sort(keys, { path: opts.path });
        await writeFile(output, new Uint8Array(sorted.buffer, sorted.byteOffset, sorted.byteLength));
      });
    });

  program
    .command('serve')
    .description('serve compress, decompress and sort over HTTP (an engine per process, shared by its requests) until SIGTERM')
    .addOption(new Option('--port <n>', 'TCP port (0: a free one, printed)').argParser(integerFlag('--port', 0, 65535)).default(8080))
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .addOption(
      new Option(
        '--processes <n>',
        'processes sharing the port, each with an engine and its share of the workers (default: one per two cores, 1 to 8, at most --workers)',
      ).argParser(positiveInteger('--processes', 256)),
    )
    .addOption(
      new Option('--workers <n>', 'CPU worker threads over all processes (default: all cores)').argParser(
        positiveInteger('--workers', 1024),
      ),
    )
    .addOption(
      new Option('--max-body <bytes>', 'largest request body (413 above)').argParser(integerFlag('--max-body', 0)).default(2 ** 30),
    )
    .addOption(
      new Option('--max-output-bytes <bytes>', 'largest decompress output (413 LIMIT_EXCEEDED from the header above)')
        .argParser(integerFlag('--max-output-bytes', 0))
        .default(2 ** 30),
    )
    .addOption(
      new Option('--max-output-ratio <n>', 'largest ratio of decompress output to body bytes (413 LIMIT_EXCEEDED above; 0: none)')
        .argParser(integerFlag('--max-output-ratio', 0))
        .default(65536),
    )
    .addOption(
      new Option('--queue <n>', 'requests that may wait for the engine (503 above)').argParser(integerFlag('--queue', 0)).default(128),
    )
    .addOption(new Option('--timeout-ms <n>', 'per-request timeout').argParser(integerFlag('--timeout-ms', 1)).default(120_000))
    .addOption(
      new Option(
        '--max-connections <n>',
        'open connections per process; one more closes the oldest that has sent nothing yet (itself if none)',
      )
        .argParser(integerFlag('--max-connections', 1, 2 ** 31 - 1))
        .default(4096),
    )
    .addOption(
      new Option('--headers-timeout-ms <n>', "time a client may take to send a request's headers (408 after)")
        .argParser(integerFlag('--headers-timeout-ms', 1, 2 ** 31 - 1))
        .default(10_000),
    )
    .addOption(
      new Option('--keep-alive-timeout-ms <n>', 'idle time a keep-alive connection stays open')
        .argParser(integerFlag('--keep-alive-timeout-ms', 0, 2 ** 31 - 1))
        .default(5000),
    )
    .addOption(
      new Option('--max-requests-per-socket <n>', 'requests a connection may carry (0: no limit)')
        .argParser(integerFlag('--max-requests-per-socket', 0, 2 ** 31 - 1))
        .default(0),
    )
    .addOption(
      new Option(
        '--max-wait-ms <n>',
        'shed a request (503 OVERLOADED, before its body is read) when the work queued ahead would take longer',
      )
        .argParser(integerFlag('--max-wait-ms', 0, 2 ** 31 - 1))
        .default(1500),
    )
    .addOption(
      new Option(
        '--shed-rate <n>',
        '503s answered per second at once; past it (after a burst of 64) each waits its turn, at most 1 s (0: never)',
      )
        .argParser(integerFlag('--shed-rate', 0, 2 ** 31 - 1))
        .default(200),
    )
    .addOption(
      new Option('--min-body-rate <bytes>', 'slowest request body, bytes/s of waiting after 5 s (408 SLOW_BODY below; 0: none)')
        .argParser(integerFlag('--min-body-rate', 0))
        .default(16384),
    )
    .addOption(new Option('--gpu <mode>', 'use a WebGPU adapter for sort').choices(['auto', 'off', 'require']).default('off'))
    .action(async (opts) => {
      if (opts.processes !== undefined && opts.workers !== undefined && opts.workers < opts.processes) {
        throw new CommanderError(
          2,
          'parle.usage',
          `error: --workers (${opts.workers}) must be at least --processes (${opts.processes}): each process needs a worker thread`,
        );
      }
      // fastify and prom-client are optional: loaded only here; without them this command cannot
      // run in this install, which is bad usage (exit 2, one line naming what to install)
      const { runServe } = await loadService().catch((e: unknown) => {
        if (e instanceof ParleError && e.code === ErrorCodes.PATH_UNAVAILABLE) {
          throw new CommanderError(2, 'parle.usage', `error: parle serve: ${e.message} [${e.code}]`);
        }
        throw e;
      });
      await runServe({
        gpu: opts.gpu,
        port: opts.port,
        host: opts.host,
        processes: opts.processes,
        workers: opts.workers,
        maxBody: opts.maxBody,
        maxOutputBytes: opts.maxOutputBytes,
        maxOutputRatio: opts.maxOutputRatio,
        queue: opts.queue,
        timeoutMs: opts.timeoutMs,
        maxConnections: opts.maxConnections,
        headersTimeoutMs: opts.headersTimeoutMs,
        keepAliveTimeoutMs: opts.keepAliveTimeoutMs,
        maxRequestsPerSocket: opts.maxRequestsPerSocket,
        maxWaitMs: opts.maxWaitMs,
        shedRate: opts.shedRate,
        minBodyRate: opts.minBodyRate,
      });
    });

  program
    .command('bench')
    .description("run the comparison benchmarks (peers, the papers' tables, charts) into bench/report/ (needs a clone)")
    .option('--quick', 'small sizes, about 90 s on 2 cores; GPU cases above 256 KiB skipped')
    .option('--json <file>', 'also write the results JSON to FILE')
    .option('--gpu-machine', 'full sizes with a real GPU required, no GPU cap; output to $OUT when set')
    .option(
      '--out <dir>',
      'directory for report.md and the charts (default bench/report/; with --quick bench/.quick/report/); the results go to bench/results/<machine>/suite.json (DIR/<machine>/ with --out)',
    )
    .action(async (opts: { quick?: boolean; json?: string; gpuMachine?: boolean; out?: string }) => {
      // The suite is plain .mjs beside the package (not bundled, not in the npm package).
      needClone('bench');
      const suite = (await import(CLONE_ONLY.bench.href)) as {
        runSuite(options: { quick?: boolean; json?: string; gpuMachine?: boolean; out?: string }): Promise<unknown>;
      };
      await suite.runSuite({ quick: opts.quick, json: opts.json, gpuMachine: opts.gpuMachine, out: opts.out });
    });

  return program;
}

/** Runs the CLI; resolves to the exit status. */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return 0;
      if (e.code === 'parle.usage') process.stderr.write(`parle: ${e.message}\n`);
      return 2;
    }
    if (e instanceof ParleError) {
      const message = flagMessage(e);
      process.stderr.write(`parle: ${message} [${e.code}]\n`);
      return 1;
    }
    throw e;
  }
}
