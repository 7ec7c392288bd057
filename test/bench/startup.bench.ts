// What importing each function's bundle costs a fresh process (a fan-out starts many reconciler
// instances at once, each paying this before its first message), beside the Functions Framework
// imported alone, measured in the same run:
//   - bundle size: the entry file a cold start parses, and all files of the bundle (lazy chunks
//     included, loaded only by the code paths that need them);
//   - import time: `await import(bundle)` in a fresh process, wall and CPU, median of RUNS, targets interleaved;
//   - RSS after that import (after a GC), median of RUNS.
// Target (issue 15): a reconciler's import costs close to the framework's, not 9x its time and 3x its memory.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildFunction, functionNames } from '../../scripts/build.ts';
import { testEnv } from '../support/fixtures.ts';

const root = join(import.meta.dirname, '..', '..');
const RUNS = Number(process.env.STARTUP_RUNS ?? 7);
const FRAMEWORK = '@google-cloud/functions-framework';

interface Sample {
  ms: number;
  /** CPU (user + system) the import took: less coloured than wall time by other processes on a busy machine. */
  cpuMs: number;
  rssMb: number;
}

/** One fresh process imports `specifier` and reports how long it took and its RSS afterwards. */
function importOnce(specifier: string): Sample {
  const probe = `const t = performance.now(); const c = process.cpuUsage(); await import(${JSON.stringify(specifier)}); const ms = performance.now() - t; const u = process.cpuUsage(c); globalThis.gc(); console.log(JSON.stringify({ ms, cpuMs: (u.user + u.system) / 1000, rssMb: process.memoryUsage().rss / 1048576 })); process.exit(0);`;
  const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', probe], { encoding: 'utf8', cwd: root, env: { ...process.env, ...testEnv(), NODE_ENV: 'production' } });
  const line = run.stdout.trim().split('\n').at(-1) ?? '';
  if (run.status !== 0 || !line.startsWith('{')) throw new Error(`importing ${specifier} failed: ${run.stderr || run.stdout}`);
  return JSON.parse(line) as Sample;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function dirBytes(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).reduce((n, e) => n + statSync(join(e.parentPath, e.name)).size, 0);
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(2)} MiB`;
const ratio = (v: number, base: number) => `${(v / base).toFixed(2)}x`;

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${process.platform}/${process.arch}; median of ${RUNS} fresh processes per target, targets interleaved`);
  const wanted = process.argv.slice(2);
  const names = wanted.length > 0 ? wanted : functionNames();
  // Inside the repository, so that the bundles resolve the framework (left outside) from node_modules.
  mkdirSync(join(root, 'dist'), { recursive: true });
  const work = mkdtempSync(join(root, 'dist', 'bench-startup-'));
  try {
    const bundles = [];
    for (const name of names) {
      const built = await buildFunction(name, work);
      bundles.push({ name, entry: join(built.dir, 'index.js'), entryBytes: statSync(join(built.dir, 'index.js')).size, totalBytes: dirBytes(built.dir) });
    }
    const targets = [{ name: `framework alone`, specifier: FRAMEWORK }, ...bundles.map((b) => ({ name: b.name, specifier: b.entry }))];
    const samples = new Map(targets.map((t) => [t.name, [] as Sample[]]));
    for (let i = 0; i < RUNS; i++) for (const t of targets) samples.get(t.name)!.push(importOnce(t.specifier));
    const summary = (name: string) => {
      const of = (k: keyof Sample) => median(samples.get(name)!.map((s) => s[k]));
      return { ms: of('ms'), cpuMs: of('cpuMs'), rssMb: of('rssMb') };
    };
    const base = summary('framework alone');
    const cell = (v: number, unit: string, b?: number) => `${v.toFixed(1).padStart(6)} ${unit}${b === undefined ? ''.padStart(8) : ratio(v, b).padStart(8)}`;
    console.log(`\n${'target'.padEnd(24)} ${'entry'.padStart(10)} ${'all files'.padStart(10)}   ${'import wall'.padEnd(18)}${'import CPU'.padEnd(18)}RSS after import`);
    console.log(`${'framework alone'.padEnd(24)} ${''.padStart(21)}   ${cell(base.ms, 'ms')}  ${cell(base.cpuMs, 'ms')}  ${cell(base.rssMb, 'MB')}`);
    for (const b of bundles) {
      const s = summary(b.name);
      console.log(`${b.name.padEnd(24)} ${mib(b.entryBytes).padStart(10)} ${mib(b.totalBytes).padStart(10)}   ${cell(s.ms, 'ms', base.ms)}  ${cell(s.cpuMs, 'ms', base.cpuMs)}  ${cell(s.rssMb, 'MB', base.rssMb)}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
