// The `parle` command as a user runs it (bin/parle.mjs over the built bundle): round trips,
// exit statuses 0 / 1 / 2, one-line errors, and no partial output left behind.
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, existsSync, lstatSync, statSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng, caseSeed, fillRuns } from './support/random.js';

const BIN = fileURLToPath(new URL('../bin/parle.mjs', import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parle-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
  /** stdout's bytes. */
  out: Buffer;
}

/** Runs `parle ...args` with `input` (bytes) on its standard input (default: none, /dev/null). */
function parleWith(input: Uint8Array | undefined, ...args: string[]): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => {
      const bytes = Buffer.concat(out);
      resolve({ status, stdout: bytes.toString(), stderr, out: bytes });
    });
    if (input) child.stdin!.end(input);
  });
}

const parle = (...args: string[]) => parleWith(undefined, ...args);

const at = (name: string) => join(dir, name);

describe('parle compress / decompress / inspect / sort', () => {
  it('round-trips a u16 file through a .parle file and inspects it', async () => {
    const data = new Uint16Array(300_000);
    fillRuns(new Rng(caseSeed('cli u16')), data, { kind: 'uniform', maxRun: 30 });
    await writeFile(at('a.u16'), data);
    const c = await parle('compress', at('a.u16'), '--type', 'u16', '--chunk-bytes', '65536');
    expect(c, c.stderr).toMatchObject({ status: 0, stderr: '' });
    const d = await parle('decompress', at('a.u16.parle'), at('a.out'));
    expect(d, d.stderr).toMatchObject({ status: 0 });
    expect(Buffer.compare(await readFile(at('a.out')), await readFile(at('a.u16')))).toBe(0);

    const i = await parle('inspect', at('a.u16.parle'));
    expect(i.status).toBe(0);
    const report = JSON.parse(i.stdout);
    expect(report).toMatchObject({ type: 'u16', elementCount: 300_000, chunkLength: 32768, chunkCount: 10 });
    expect(report.chunks[9]).toMatchObject({ index: 9, elementCount: 300_000 - 9 * 32768, encoding: 'rle' });
  });

  it('refuses to replace an existing output without --force', async () => {
    await writeFile(at('b.u8'), new Uint8Array([1, 1, 2]));
    expect((await parle('compress', at('b.u8'))).status).toBe(0);
    const again = await parle('compress', at('b.u8'));
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/exists.*--force/);
    expect((await parle('compress', at('b.u8'), '--force')).status).toBe(0);
  });

  it('--decoder gpu writes mode-3 Huffman streams: a slightly larger file than --decoder cpu, and both decompress to the input', async () => {
    // skewed bytes: the chooser codes them with huffman
    const rng = new Rng(caseSeed('cli decoder'));
    const data = new Uint8Array(600_000);
    for (let i = 0; i < data.length; i++) {
      let s = 0;
      while (s < 255 && rng.nextFloat() < 0.6) s++;
      data[i] = s;
    }
    await writeFile(at('h.u8'), data);
    const sizes: Record<string, number> = {};
    const files: Record<string, Buffer> = {};
    for (const decoder of ['cpu', 'gpu', undefined]) {
      const name = decoder ?? 'default';
      const c = await parle('compress', at('h.u8'), at(`h-${name}.parle`), ...(decoder ? ['--decoder', decoder] : []));
      expect(c, c.stderr).toMatchObject({ status: 0, stderr: '' });
      files[name] = await readFile(at(`h-${name}.parle`));
      sizes[name] = files[name].length;
      const d = await parle('decompress', at(`h-${name}.parle`), at(`h-${name}.out`));
      expect(d, d.stderr).toMatchObject({ status: 0 });
      expect(Buffer.compare(await readFile(at(`h-${name}.out`)), data), name).toBe(0);
    }
    expect(Buffer.compare(files.default, files.cpu), 'the default is --decoder cpu').toBe(0);
    expect(Buffer.compare(files.gpu, files.cpu)).not.toBe(0);
    expect(sizes.gpu, JSON.stringify(sizes)).toBeGreaterThan(sizes.cpu);
    expect(sizes.gpu / sizes.cpu, JSON.stringify(sizes)).toBeLessThan(1.02);
    const chunks = JSON.parse((await parle('inspect', at('h-gpu.parle'))).stdout).chunks as { encoding: string }[];
    expect(chunks.some((c) => c.encoding.includes('huffman'))).toBe(true);
  });

  it('sorts f32 keys', async () => {
    const keys = new Float32Array([3, -1, NaN, -0, 0, -Infinity, 2.5]);
    await writeFile(at('k.f32'), new Uint8Array(keys.buffer));
    const s = await parle('sort', at('k.f32'), at('k.sorted'), '--type', 'f32');
    expect(s, s.stderr).toMatchObject({ status: 0 });
    const sorted = new Float32Array(new Uint8Array(await readFile(at('k.sorted'))).buffer);
    expect(Array.from(sorted).map((x) => (Object.is(x, -0) ? '-0' : String(x)))).toEqual(['-Infinity', '-1', '-0', '0', '2.5', '3', 'NaN']);
  });

  it('sorts f64 and i64 keys (on the CPU path)', async () => {
    const keys = new Float64Array([3, -1e300, NaN, -0, 0, -Infinity, 2.5]);
    await writeFile(at('k.f64'), new Uint8Array(keys.buffer));
    const s = await parle('sort', at('k.f64'), at('k64.sorted'), '--type', 'f64');
    expect(s, s.stderr).toMatchObject({ status: 0 });
    const sorted = new Float64Array(new Uint8Array(await readFile(at('k64.sorted'))).buffer);
    expect(Array.from(sorted).map((x) => (Object.is(x, -0) ? '-0' : String(x)))).toEqual([
      '-Infinity',
      '-1e+300',
      '-0',
      '0',
      '2.5',
      '3',
      'NaN',
    ]);
    const ints = new BigInt64Array([5n, -(2n ** 63n), 2n ** 63n - 1n, 0n, -1n]);
    await writeFile(at('k.i64'), new Uint8Array(ints.buffer));
    expect((await parle('sort', at('k.i64'), at('i64.sorted'), '--type', 'i64')).status).toBe(0);
    const sortedInts = new BigInt64Array(new Uint8Array(await readFile(at('i64.sorted'))).buffer);
    expect(Array.from(sortedInts)).toEqual([-(2n ** 63n), -1n, 0n, 5n, 2n ** 63n - 1n]);
  });
});

describe('bad input: exit 1, one line, nothing left behind', () => {
  it('a file that is not a whole number of elements', async () => {
    await writeFile(at('odd.bin'), new Uint8Array(7));
    const r = await parle('compress', at('odd.bin'), '--type', 'u32');
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/UNALIGNED_LENGTH/);
    expect(existsSync(at('odd.bin.parle'))).toBe(false);
  });

  for (const [label, make, code] of [
    ['empty', () => new Uint8Array(0), 'NOT_PARLE'],
    ['not .parle', () => new TextEncoder().encode('just some text\n'), 'NOT_PARLE'],
  ] as const) {
    it(`decompress of an ${label} file`, async () => {
      await writeFile(at(`${label}.parle`), make());
      const r = await parle('decompress', at(`${label}.parle`), at(`${label}.out`));
      expect(r.status).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(code);
      expect(r.stderr).not.toMatch(/\bat .*:\d+:\d+/); // no stack trace
      expect(existsSync(at(`${label}.out`))).toBe(false);
    });
  }

  it('decompress of truncated and bit-flipped files leaves no output', async () => {
    const data = new Uint8Array(200_000);
    fillRuns(new Rng(caseSeed('cli corrupt')), data, { kind: 'uniform', maxRun: 30 });
    await writeFile(at('c.u8'), data);
    expect((await parle('compress', at('c.u8'), '--chunk-bytes', '16384')).status).toBe(0);
    const good = new Uint8Array(await readFile(at('c.u8.parle')));
    const truncated = good.subarray(0, good.length - 100);
    // 13 chunks: the container ends with their index (8 x 13 + 4 bytes), the last payload before it
    const index = 8 * Math.ceil(data.length / 16384) + 4;
    const flipped = good.slice();
    flipped[good.length - index - 50] ^= 0x10;
    const badIndex = good.slice();
    badIndex[good.length - 20] ^= 0x01;
    for (const [name, bytes, code] of [
      ['truncated', truncated, 'TRUNCATED'],
      ['flipped', flipped, 'CHECKSUM_MISMATCH'],
      ['bad-index', badIndex, 'CORRUPT'],
    ] as const) {
      await writeFile(at(`${name}.parle`), bytes);
      const r = await parle('decompress', at(`${name}.parle`));
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(code);
      expect(existsSync(at(name))).toBe(false);
    }
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('decompress with --max-elements below the file', async () => {
    const r = await parle('decompress', at('c.u8.parle'), at('c.limited'), '--max-elements', '1000');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('LIMIT_EXCEEDED');
    expect(existsSync(at('c.limited'))).toBe(false);
  });

  it('a missing input file', async () => {
    const r = await parle('compress', at('nope.bin'));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('IO_ERROR');
  });
});

describe('bad usage: exit 2', () => {
  for (const args of [
    ['frobnicate'],
    ['compress', 'a', 'b', 'c'],
    ['compress', 'x', '--chunk-bytes', '0'],
    ['compress', 'x', '--level', '10'],
    ['compress', 'x', '--decoder', 'GPU'],
    ['compress', 'x', '--type', 'u128'],
    ['compress', 'x', '--workers', '-3'],
    ['compress', 'x', '--workers', 'NaN'],
    ['sort', 'a', 'b'],
    ['decompress', 'noext'],
  ]) {
    it(args.join(' '), async () => {
      const r = await parle(...args);
      expect(r.status).toBe(2);
      expect(r.stderr.length).toBeGreaterThan(0);
    });
  }

  it('--help exits 0', async () => {
    const r = await parle('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/compress/);
  });
});

describe('parle demo', () => {
  it('round-trips the shipped samples and prints the table', async () => {
    const r = await parle('demo');
    expect(r.status, r.stderr).toBe(0);
    for (const word of ['t1-brain-labels', 't1-mri', 'camera', 'plain JS RLE', 'fflate deflate-1', 'ratio', 'encode MB/s']) {
      expect(r.stdout).toContain(word);
    }
    expect(r.stdout).toMatch(/round trips: all equal/);
  });
});

describe('standard input and output, and outputs that are not regular files', () => {
  const data = new Uint16Array(100_000);
  fillRuns(new Rng(caseSeed('cli pipes')), data, { kind: 'uniform', maxRun: 20 });
  const raw = new Uint8Array(data.buffer);

  it('pipes both ways: - or no file name is standard input / output', async () => {
    const c = await parleWith(raw, 'compress', '--type', 'u16');
    expect(c.status, c.stderr).toBe(0);
    const d = await parleWith(c.out, 'decompress', '-', '-');
    expect(d.status, d.stderr).toBe(0);
    expect(Buffer.compare(d.out, Buffer.from(raw))).toBe(0);
    const i = await parleWith(c.out, 'inspect');
    expect(i.status, i.stderr).toBe(0);
    expect(JSON.parse(i.stdout)).toMatchObject({ type: 'u16', elementCount: 100_000, fileBytes: c.out.length });
    // a file to standard output, standard input to a file
    await writeFile(at('p.u16'), raw);
    const toStdout = await parle('compress', at('p.u16'), '-');
    expect(Buffer.compare(toStdout.out, c.out)).toBe(0);
    const fromStdin = await parleWith(c.out, 'decompress', '-', at('p.back'));
    expect(fromStdin.status, fromStdin.stderr).toBe(0);
    expect(Buffer.compare(await readFile(at('p.back')), Buffer.from(raw))).toBe(0);
  });

  it('--shape records the shape, predicts along it and round-trips; a bad --shape exits with a usage error', async () => {
    const image = new Uint8Array(60 * 80 * 4).map((_, i) =>
      i % 4 === 3 ? 255 : (Math.floor(i / 320) * 2 + ((i >> 2) % 80) + (i % 4) * 30) & 255,
    );
    await writeFile(at('img.u8'), image);
    const r = await parle('compress', at('img.u8'), '--shape', '60x80x4');
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse((await parle('inspect', at('img.u8.parle'))).stdout);
    expect(report).toMatchObject({ version: 4, type: 'u8', shape: [60, 80, 4] });
    expect(report.chunks.some((c: { encoding: string }) => c.encoding.startsWith('predict('))).toBe(true);
    expect((await parle('decompress', at('img.u8.parle'), at('img.back'))).status).toBe(0);
    expect(Buffer.compare(await readFile(at('img.back')), Buffer.from(image))).toBe(0);
    for (const bad of ['60x0x4', '60,80,4', '60x80x3']) {
      const failed = await parle('compress', at('img.u8'), at('img.bad'), '--shape', bad, '-f');
      expect(failed.status, bad).not.toBe(0);
      expect(failed.stderr, bad).toMatch(/shape/);
    }
  });

  it('compresses the element types of version 4: an f64 grid by its extension, i16 and f16 by --type', async () => {
    const grid = Float64Array.from({ length: 30 * 40 }, (_, i) => Math.round(1000 * Math.sin(i / 40)) / 100);
    await writeFile(at('grid.f64'), new Uint8Array(grid.buffer));
    expect((await parle('compress', at('grid.f64'), '--shape', '30x40')).status).toBe(0);
    expect(JSON.parse((await parle('inspect', at('grid.f64.parle'))).stdout)).toMatchObject({ type: 'f64', shape: [30, 40] });
    expect((await parle('decompress', at('grid.f64.parle'), at('grid.back'))).status).toBe(0);
    expect(Buffer.compare(await readFile(at('grid.back')), Buffer.from(grid.buffer))).toBe(0);
    for (const type of ['i16', 'f16']) {
      const r = await parle('compress', at('grid.f64'), at(`grid.${type}.parle`), '--type', type, '-f');
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse((await parle('inspect', at(`grid.${type}.parle`))).stdout)).toMatchObject({ type });
    }
  });

  it("takes the element type from the input's extension when --type is not given", async () => {
    await writeFile(at('ext.u16'), raw);
    expect((await parle('compress', at('ext.u16'))).status).toBe(0);
    expect(JSON.parse((await parle('inspect', at('ext.u16.parle'))).stdout)).toMatchObject({ type: 'u16', version: 4, level: 5 });
    await writeFile(at('noext'), raw);
    expect((await parle('compress', at('noext'))).status).toBe(0);
    const report = JSON.parse((await parle('inspect', at('noext.parle'))).stdout);
    expect(report.type).toBe('u8');
    // checksums at their width: 32 bits since version 2
    expect(report.chunks[0].payloadChecksum).toMatch(/^[0-9a-f]{8}$/);
  });

  for (const viaLink of [false, true]) {
    it(`writes into a FIFO${viaLink ? ' named by a symbolic link' : ''} in place: it stays a FIFO and receives the data`, async () => {
      const fifo = at(`out${viaLink ? '-l' : ''}.fifo`);
      execFileSync('mkfifo', [fifo]);
      const target = viaLink ? at('fifo.link') : fifo;
      if (viaLink) await symlink(fifo, target);
      const received = new Promise<Buffer>((resolve, reject) => {
        const parts: Buffer[] = [];
        createReadStream(fifo)
          .on('data', (d) => parts.push(d as Buffer))
          .on('end', () => resolve(Buffer.concat(parts)))
          .on('error', reject);
      });
      await writeFile(at('f.u16'), raw);
      const r = await parle('compress', at('f.u16'), target);
      expect(r.status, r.stderr).toBe(0);
      const bytes = await received;
      expect(statSync(fifo).isFIFO()).toBe(true);
      if (viaLink) expect(lstatSync(target).isSymbolicLink()).toBe(true);
      const back = await parleWith(bytes, 'decompress');
      expect(Buffer.compare(back.out, Buffer.from(raw))).toBe(0);
    });
  }

  it('writes to /dev/null without --force and leaves it a device', async () => {
    await writeFile(at('n.u16'), raw);
    const r = await parle('compress', at('n.u16'), '/dev/null');
    expect(r.status, r.stderr).toBe(0);
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
  });

  it('replaces the file a symbolic link names with --force, keeping the link', async () => {
    await writeFile(at('s.u16'), raw);
    await writeFile(at('real.parle'), 'old');
    await symlink(at('real.parle'), at('s.link'));
    expect((await parle('compress', at('s.u16'), at('s.link'))).status).toBe(1);
    const r = await parle('compress', at('s.u16'), at('s.link'), '--force');
    expect(r.status, r.stderr).toBe(0);
    expect(lstatSync(at('s.link')).isSymbolicLink()).toBe(true);
    expect((await parle('decompress', at('real.parle'), '-')).out.length).toBe(raw.length);
  });

  it('refuses a directory as output', async () => {
    await writeFile(at('dir.u16'), raw);
    const r = await parle('compress', at('dir.u16'), dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/is a directory.*IO_ERROR/);
  });
});

describe('bad input and options name what the user typed', () => {
  it('--codec bogus names --codec', async () => {
    await writeFile(at('o.u8'), new Uint8Array(1000));
    const r = await parle('compress', at('o.u8'), '--codec', 'bogus');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/--codec.*bogus.*\[INVALID_OPTION\]/);
    expect(r.stderr).not.toContain('options.');
    expect(existsSync(at('o.u8.parle'))).toBe(false);
  });

  it('--decoder with a bad value: exit 2, naming --decoder and its choices, as a bad --level', async () => {
    await writeFile(at('p.u8'), new Uint8Array(1000));
    for (const [flag, value] of [
      ['--decoder', 'wasm'],
      ['--level', '10'],
    ]) {
      const r = await parle('compress', at('p.u8'), flag, value);
      expect(r.status, flag).toBe(2);
      expect(r.stderr, flag).toMatch(new RegExp(`^error: option '${flag} <\\w+>' argument '${value}' is invalid`));
      expect(existsSync(at('p.u8.parle')), flag).toBe(false);
    }
    expect((await parle('compress', at('p.u8'), '--decoder', 'wasm')).stderr).toMatch(/Allowed choices are cpu, gpu/);
    expect((await parle('compress', '--help')).stdout).toMatch(/--decoder <decoder>/);
  });

  it('--error-bound-abs that is not a number names the flag', async () => {
    await writeFile(at('o.f32'), new Uint8Array(4000));
    const r = await parle('compress', at('o.f32'), '--error-bound-abs', 'x');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/--error-bound-abs.*\[INVALID_OPTION\]/);
  });

  for (const [label, make, code] of [
    ['missing', undefined, 'IO_ERROR'],
    ['not .parle', () => new TextEncoder().encode('hello'), 'NOT_PARLE'],
    ['truncated', () => new Uint8Array([0x50, 0x41, 0x52, 0x4c]), ''],
  ] as const) {
    it(`inspect of a ${label} file: exit 1, one line`, async () => {
      const path = at(`inspect-${label.replace(/\W/g, '')}.parle`);
      if (make) await writeFile(path, make());
      const r = await parle('inspect', path);
      expect(r.status).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(new RegExp(`\\[${code || '[A-Z_]+'}\\]`));
      expect(r.stdout).toBe('');
    });
  }

  it('sort of a missing file and of a file that is not whole keys', async () => {
    const missing = await parle('sort', at('nokeys'), at('nokeys.out'), '--type', 'u32', '--path', 'cpu');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('IO_ERROR');
    await writeFile(at('k.odd'), new Uint8Array(6));
    const odd = await parle('sort', at('k.odd'), at('k.odd.out'), '--type', 'u32', '--path', 'cpu');
    expect(odd.status).toBe(1);
    expect(odd.stderr).toContain('UNALIGNED_LENGTH');
    expect(existsSync(at('k.odd.out'))).toBe(false);
  });
});
