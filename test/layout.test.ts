// The layout's rules, checked on every run of the suite (and so in CI):
//   - the layers of ts/ (.dependency-cruiser.cjs): each imports only those below it, no cycles;
//   - every path a comment names in ts/, assembly/, shaders/, test/ and bench/ exists;
//   - no identifier in ts/, assembly/ or shaders/ carries a format version (`encodeChunk2`,
//     `compressV2OnDevice`): the container's version lives in one constant (ts/format/layout.ts
//     VERSION) and docs/format.md.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Files under `dir` (repository-relative) whose names end in one of `exts`. */
function filesUnder(dir: string, exts: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(join(ROOT, at))) {
      const path = join(at, name);
      if (name === 'node_modules' || name.startsWith('.')) continue;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (exts.some((e) => name.endsWith(e))) out.push(path);
    }
  };
  walk(dir);
  return out;
}

/** The comments of a TypeScript, JavaScript, AssemblyScript or WGSL source (line and block). */
function commentsOf(source: string): string[] {
  const out: string[] = [];
  // strings first, so a '//' inside a URL in a string is not a comment
  const re = /'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`|\/\/[^\n]*|\/\*[\s\S]*?\*\//g;
  for (const m of source.matchAll(re)) if (m[0].startsWith('/')) out.push(m[0]);
  return out;
}

/** Source without comments and string contents (for identifiers). */
function codeOf(source: string): string {
  return source.replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m) =>
    m.startsWith('/') ? ' ' : '""',
  );
}

const SOURCES = [
  ...filesUnder('ts', ['.ts', '.cts']),
  ...filesUnder('assembly', ['.ts']),
  ...filesUnder('shaders', ['.wgsl']),
  ...filesUnder('test', ['.ts', '.mjs']).filter((f) => !f.startsWith('test/consumers/') || !f.includes('node_modules')),
  ...filesUnder('bench', ['.mjs', '.ts']),
];

describe('the layout', () => {
  it('the layers of ts/ import only those below them, and no file imports itself through others', async () => {
    const bin = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, [bin, 'ts', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
    const result = JSON.parse(stdout) as {
      summary: { violations: { rule: { name: string }; from: string; to: string; cycle?: { name: string }[] }[]; totalCruised: number };
    };
    expect(result.summary.totalCruised).toBeGreaterThan(50);
    const violations = result.summary.violations.map(
      (v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`,
    );
    expect(violations).toEqual([]);
  });

  it('every file a comment names exists', () => {
    // repository paths (under ts, docs, ...) and relative ones (starting ./ or ../); dist/ and
    // generated folders are built, not kept
    const pathRe =
      /(?:\.{1,2}\/)*(?:(?:ts|assembly|shaders|test|bench|docs|build|data|web)\/)?[\w.-]+(?:\/[\w.-]+)*\.(?:ts|wgsl|mjs|cjs|md|json|sh|py)\b/g;
    const missing: string[] = [];
    for (const file of SOURCES) {
      for (const comment of commentsOf(readFileSync(join(ROOT, file), 'utf8'))) {
        for (const m of comment.matchAll(pathRe)) {
          const path = m[0];
          if (!path.includes('/')) continue; // a bare name (`index.ts`) is not a path
          if (/^(?:\.{1,2}\/)*(?:dist|node_modules|docs\/api)\//.test(path) || /^bench\/(?:\.quick|report)\//.test(path)) continue;
          const base = path.startsWith('.') ? dirname(join(ROOT, file)) : ROOT;
          const at = resolve(base, path);
          if (!existsSync(at)) missing.push(`${file}: ${path}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('no identifier in ts/, assembly/ or shaders/ carries a format version', () => {
    const versioned =
      /\b\w*(?:[a-z]V[1-9]|(?:Chunks?|Runs|Entry|Payload|Header|Container|Stream|Table|Pipeline|Codec|Format|Device)[1-9])(?![0-9])\w*/g;
    const found: string[] = [];
    for (const file of SOURCES.filter((f) => /^(ts|assembly|shaders)\//.test(f))) {
      for (const m of codeOf(readFileSync(join(ROOT, file), 'utf8')).matchAll(versioned))
        found.push(`${relative(ROOT, join(ROOT, file))}: ${m[0]}`);
    }
    expect(found).toEqual([]);
  });
});
