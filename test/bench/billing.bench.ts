// `npm run bench billing`, each figure beside a baseline measured in the same run:
//   1. rows per second into the SQLite sink (UNIQUE event id, insert-or-ignore, indexes), one row
//      per call as record-billing writes them and in batches of 500, beside a plain INSERT of the
//      same rows into a table with no constraint and no index (the floor node:sqlite allows; both
//      with SQLite's default synchronous=FULL: a row is on disk before its message is acked);
//      and the same rows again (every one a duplicate);
//   1b. group commit: the same rows written one per call by 64 concurrent callers (as pushes arrive
//      in a burst), beside the same rows one per call awaited one after another (one transaction each);
//   2. record-billing cold start: process spawn to first recorded push, from its esbuild bundle
//      under the Functions Framework, beside a function that echoes a constant, and beside
//      reconcile-namespace (the same Kubernetes client bundled in) for reference (median of 7).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildFunction } from '../../scripts/build.ts';
import { buildRow, encodeBillingMessage } from '../../shared/billing/event.ts';
import { loadSqlite, openSqliteSink } from '../../shared/billing/sqlite.ts';
import type { BillingEventMessage, BillingRow } from '../../shared/billing/types.ts';

const ROWS = Number(process.env.BENCH_BILLING_ROWS ?? 20_000);
const COLD_STARTS = 7;
const root = join(import.meta.dirname, '..', '..');
const frameworkMain = join(root, 'node_modules', '@google-cloud', 'functions-framework', 'build', 'src', 'main.js');
const ratio = (v: number, base: number) => `${(v / base).toFixed(2)}x`;

function message(i: number): BillingEventMessage {
  return { v: 1, type: 'event', event: 'snapshot', cluster: 'bench', namespace: `ns-${i}`, uid: `uid-${i}`, eventTime: new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString(), organization: `org-${i % 50}`, creator: 'alice', billing: { costCenter: String(i % 7) } };
}

function rowsPerSecond(count: number, ms: number): string {
  return `${Math.round((count / ms) * 1000).toLocaleString('en-US')} rows/s`;
}

async function timed(fn: () => Promise<void> | void): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** The floor: the same rows, one transaction per call, into a bare table. */
async function baselineInsert(path: string, rows: readonly BillingRow[], batch: number): Promise<number> {
  const { DatabaseSync } = await loadSqlite();
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (event_id, event, event_time, recorded_time, cluster, namespace, namespace_uid, organization, creator, billing, resource_version)');
  const insert = db.prepare('INSERT INTO t VALUES (:event_id, :event, :event_time, :recorded_time, :cluster, :namespace, :namespace_uid, :organization, :creator, :billing, :resource_version)');
  const t = performance.now();
  for (let i = 0; i < rows.length; i += batch) {
    db.exec('BEGIN');
    for (const r of rows.slice(i, i + batch)) insert.run({ ...r, billing: JSON.stringify(r.billing) });
    db.exec('COMMIT');
  }
  const ms = performance.now() - t;
  db.close();
  return ms;
}

async function sqliteThroughput(dir: string): Promise<void> {
  const rows = Array.from({ length: ROWS }, (_, i) => buildRow(message(i), {}, new Date()));
  console.log(`\n-- rows into SQLite (${ROWS.toLocaleString('en-US')} rows, file in ${dir})`);
  for (const batch of [1, 500]) {
    const base = await baselineInsert(join(dir, `base-${batch}.sqlite`), rows, batch);
    const sink = await openSqliteSink(join(dir, `sink-${batch}.sqlite`));
    const ms = await timed(async () => {
      for (let i = 0; i < rows.length; i += batch) await sink.insert(rows.slice(i, i + batch));
    });
    const dupMs = await timed(async () => {
      for (let i = 0; i < rows.length; i += batch) await sink.insert(rows.slice(i, i + batch));
    });
    const stored = (await sink.reportRows('2026-01-01', '2026-12-31')).length;
    await sink.close();
    console.log(`batch ${String(batch).padStart(3)}  baseline (bare table) ${rowsPerSecond(ROWS, base).padStart(16)}   sink ${rowsPerSecond(ROWS, ms).padStart(16)} (${ratio(base, ms)} of baseline)   duplicates ${rowsPerSecond(ROWS, dupMs).padStart(16)}   stored ${stored}`);
  }
}

const CALLERS = 64;

/** ms per row: `rows` written one per call by `callers` callers, each awaiting its own inserts in turn. */
async function msPerRow(path: string, rows: readonly BillingRow[], callers: number): Promise<number> {
  const sink = await openSqliteSink(path);
  const ms = await timed(async () => {
    await Promise.all(
      Array.from({ length: callers }, async (_, c) => {
        for (let i = c; i < rows.length; i += callers) await sink.insert([rows[i]!]);
      }),
    );
  });
  const stored = (await sink.reportRows('2026-01-01', '2026-12-31')).length;
  await sink.close();
  if (stored !== rows.length) throw new Error(`stored ${stored} of ${rows.length} rows`);
  return ms / rows.length;
}

async function groupCommit(dir: string): Promise<void> {
  const rows = Array.from({ length: ROWS }, (_, i) => buildRow(message(i), {}, new Date()));
  console.log(`\n-- group commit (${ROWS.toLocaleString('en-US')} rows, one per call)`);
  const sequential = await msPerRow(join(dir, 'sequential.sqlite'), rows, 1);
  const grouped = await msPerRow(join(dir, 'grouped.sqlite'), rows, CALLERS);
  console.log(`baseline (1 caller, a transaction each) ${sequential.toFixed(3)} ms/row   ${CALLERS} concurrent callers ${grouped.toFixed(3)} ms/row (${ratio(sequential, grouped)} faster)`);
}

interface Served {
  startMs: number;
  stop(): Promise<void>;
}

let nextPort = 19_800 + Math.floor(Math.random() * 150);

/** Spawns the Functions Framework on a bundle; resolves once one push is answered 2xx. */
async function coldStart(source: string, target: string, body: string, env: Record<string, string>): Promise<Served> {
  const port = nextPort++;
  const started = performance.now();
  const child = spawn(process.execPath, [frameworkMain, `--target=${target}`, `--source=${source}`, `--port=${port}`], { env: { ...process.env, ...env, NODE_ENV: 'production' }, stdio: ['ignore', 'ignore', 'inherit'] });
  let exited = false;
  child.on('exit', () => (exited = true));
  for (;;) {
    if (exited) throw new Error(`${target} exited before answering`);
    const status = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.status, () => 0);
    if (status >= 200 && status < 300) break;
    if (status >= 300) throw new Error(`${target} answered HTTP ${status}`);
    await new Promise((r) => setTimeout(r, 2));
  }
  const startMs = performance.now() - started;
  return { startMs, stop: () => new Promise<void>((resolve) => (exited ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM')))) };
}

function writeEcho(dir: string): string {
  const source = join(dir, 'echo');
  mkdirSync(source, { recursive: true });
  writeFileSync(join(source, 'index.js'), "import * as functions from '@google-cloud/functions-framework';\nfunctions.http('echo', (req, res) => { res.status(200).json({ acknowledged: true }); });\n");
  writeFileSync(join(source, 'package.json'), JSON.stringify({ type: 'module', main: 'index.js' }));
  return source;
}

async function coldStarts(work: string): Promise<void> {
  const built = await buildFunction('record-billing', join(work, 'dist'));
  const reconciler = await buildFunction('reconcile-namespace', join(work, 'dist'));
  const env = { FURNISH_PUSH_AUTH: 'off', FURNISH_BILLING: `sqlite:${join(work, 'cold.sqlite')}` };
  // Its own billing fields: no Organization to read, so no cluster is needed.
  const billing = JSON.stringify({ message: { data: encodeBillingMessage(message(1)).data.toString('base64'), messageId: '1' }, subscription: 'projects/p/subscriptions/record-billing' });
  // A template message to the namespace reconciler: decoded and acknowledged (204) without a cluster.
  const other = JSON.stringify({ message: { data: Buffer.from(JSON.stringify({ v: 1, cluster: 'bench', kind: 'NamespaceTemplate', name: 't', type: 'SYNC' })).toString('base64'), messageId: '1' } });
  const targets = [
    { label: 'baseline (echo)', source: writeEcho(work), name: 'echo', body: billing },
    { label: 'record-billing', source: built.dir, name: 'record-billing', body: billing },
    { label: 'reconcile-namespace', source: reconciler.dir, name: 'reconcile-namespace', body: other },
  ];
  const times = new Map(targets.map((t) => [t.label, [] as number[]]));
  for (let i = 0; i < COLD_STARTS; i++) {
    for (const t of targets) {
      const served = await coldStart(t.source, t.name, t.body, env);
      times.get(t.label)!.push(served.startMs);
      await served.stop();
    }
  }
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  const base = median(times.get('baseline (echo)')!);
  console.log(`\n-- cold start: spawn to first answered push (median of ${COLD_STARTS}, interleaved; record-billing bundle ${(built.bytes / 1024).toFixed(0)} KiB)`);
  for (const t of targets) {
    const ms = median(times.get(t.label)!);
    console.log(`${t.label.padEnd(20)} ${ms.toFixed(1)} ms${t.label === 'baseline (echo)' ? '' : ` (${ratio(ms, base)})`}`);
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  mkdirSync(join(root, 'dist'), { recursive: true });
  // Inside the repository, so bundles resolve the Functions Framework from node_modules.
  const work = mkdtempSync(join(root, 'dist', 'bench-billing-'));
  try {
    await sqliteThroughput(work);
    await groupCommit(work);
    await coldStarts(work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
