// The `parle` command as a user runs it (bin/parle.mjs over the built bundle): round trips,
// exit statuses 0 / 1 / 2, one-line errors, and no partial output left behind.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
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
}

function parle(...args: string[]): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

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

  it('sorts f32 keys', async () => {
    const keys = new Float32Array([3, -1, NaN, -0, 0, -Infinity, 2.5]);
    await writeFile(at('k.f32'), new Uint8Array(keys.buffer));
    const s = await parle('sort', at('k.f32'), at('k.sorted'), '--type', 'f32');
    expect(s, s.stderr).toMatchObject({ status: 0 });
    const sorted = new Float32Array(new Uint8Array(await readFile(at('k.sorted'))).buffer);
    expect(Array.from(sorted).map((x) => (Object.is(x, -0) ? '-0' : String(x)))).toEqual(['-Infinity', '-1', '-0', '0', '2.5', '3', 'NaN']);
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
    const flipped = good.slice();
    flipped[good.length - 50] ^= 0x10;
    for (const [name, bytes, code] of [
      ['truncated', truncated, 'TRUNCATED'],
      ['flipped', flipped, 'CHECKSUM_MISMATCH'],
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
    ['compress'],
    ['compress', 'x', '--type', 'u64'],
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
