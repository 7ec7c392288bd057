// What importing each function's bundle costs a fresh process (a fan-out starts many reconciler
// instances at once, each paying this before its first message), beside the Functions Framework
// imported alone, measured in the same run:
//   - bundle size: the entry file a cold start parses, and all files of the bundle (lazy chunks
//     included, loaded only by the code paths that need them);
//   - import time: `await import(bundle)` in a fresh process, wall and CPU, median of RUNS, targets interleaved;
//   - RSS after that import (after a GC), median of RUNS.
// Then the first connection of a reconciler (connect from a kubeconfig + one GET, fresh process,
// sources as run by `npm start`), kubeconfig read by Furnish beside the same kubeconfig read by
// @kubernetes/client-node (as every connection was before; today only exec/auth-provider plugins,
// proxies and multi-file KUBECONFIG take that path), against kube-sim in its own process.
// Then the fail-closed webhooks' cold start as far as it is Furnish's: a fresh process serving the
// bundle (Functions Framework, the deployed Node flags) from spawn until it answers its first
// AdmissionReview, median of RUNS, beside the webhook's timeoutSeconds (infra/webhooks). The
// platform's own instance start comes on top and cannot be measured here: both together are why
// terraform keeps `webhook.min_instances` (1) warm; `npm run bench -- webhooks-memory` sets the
// per-instance concurrency from memory.
// Target (issue 15): a reconciler's import costs close to the framework's, not 9x its time and 3x its memory.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildFunction, functionNames } from '../../scripts/build.ts';
import { parseAllDocuments } from 'yaml';
import { admissionFixture, mintToken, SCENARIO_TEMPLATES, testEnv, type AdmissionFixtureName } from '../support/fixtures.ts';
import { startFakeApiServer } from '../functions/fake-api-server.ts';
import { startServingProcess } from '../functions/serving-process.ts';
import { WEBHOOK_NODE_FLAGS } from '../../shared/webhooks/memory-budget.ts';
import { startKubeSimProcess } from './kube-sim-process.ts';

const root = join(import.meta.dirname, '..', '..');
const RUNS = Number(process.env.STARTUP_RUNS ?? 7);
const FRAMEWORK = '@google-cloud/functions-framework';

interface Sample {
  ms: number;
  /** CPU (user + system) the import took: less coloured than wall time by other processes on a busy machine. */
  cpuMs: number;
  rssMb: number;
}

/** Runs `work` (module code) in a fresh process, timing it, and reports its RSS afterwards. */
function measureOnce(work: string, env: Record<string, string> = {}): Sample {
  const probe = `const t = performance.now(); const c = process.cpuUsage(); ${work}; const ms = performance.now() - t; const u = process.cpuUsage(c); globalThis.gc(); console.log(JSON.stringify({ ms, cpuMs: (u.user + u.system) / 1000, rssMb: process.memoryUsage().rss / 1048576 })); process.exit(0);`;
  const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', probe], { encoding: 'utf8', cwd: root, env: { ...process.env, ...testEnv(), NODE_ENV: 'production', ...env } });
  const line = run.stdout.trim().split('\n').at(-1) ?? '';
  if (run.status !== 0 || !line.startsWith('{')) throw new Error(`${work} failed: ${run.stderr || run.stdout}`);
  return JSON.parse(line) as Sample;
}

const importOnce = (specifier: string) => measureOnce(`await import(${JSON.stringify(specifier)})`);

/** connect() from the default chain (KUBECONFIG) and one GET /version. */
function firstConnection(kubeconfig: string): Sample {
  const modules = ['connection', 'client'].map((m) => JSON.stringify(join(root, 'shared', 'kube', `${m}.ts`)));
  return measureOnce(`const { connect } = await import(${modules[0]}); const { createKubeClient } = await import(${modules[1]}); const kube = createKubeClient(await connect()); const r = await kube.call({ method: 'GET', path: '/version' }); if (!r.ok) throw new Error(r.error); kube.close()`, { KUBECONFIG: kubeconfig });
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
    await coldStarts(work);
    await connections();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The fail-closed webhooks, each with a review the API server sent it. */
const FAIL_CLOSED: { webhook: string; review: AdmissionFixtureName }[] = [
  { webhook: 'mutate-namespace', review: '001-mutate-CREATE-namespaces-team-a-alice' },
  { webhook: 'validate-namespace', review: '002-validate-CREATE-namespaces-team-a-alice' },
  { webhook: 'guard-initializing', review: '021-guard-CREATE-configmaps-app-config-alice' },
  { webhook: 'protect-objects', review: '034-protect-UPDATE-networkpolicies-default-deny-alice' },
];

/** A webhook's timeoutSeconds, as infra/webhooks registers it. */
function timeoutSecondsOf(webhook: string): number {
  const docs = parseAllDocuments(readFileSync(join(root, 'infra', 'webhooks', `${webhook}.yaml`), 'utf8')).map((d) => d.toJS() as { webhooks?: { name: string; timeoutSeconds?: number }[] });
  const entry = docs.flatMap((d) => d.webhooks ?? []).find((w) => w.name === `${webhook}.furnish.dev`);
  return entry?.timeoutSeconds ?? 10;
}

async function coldStarts(work: string): Promise<void> {
  const api = await startFakeApiServer(SCENARIO_TEMPLATES);
  try {
    const env = testEnv({ FURNISH_API_SERVER: api.url, NODE_OPTIONS: WEBHOOK_NODE_FLAGS.join(' ') });
    const token = await mintToken();
    console.log(`\n-- fail-closed webhooks: fresh process (bundle, Functions Framework, NODE_OPTIONS=${env.NODE_OPTIONS}) from spawn to its first answer, median of ${RUNS}`);
    for (const { webhook, review } of FAIL_CLOSED) {
      const bundle = (await buildFunction(webhook, join(work, 'cold'))).dir;
      const body = JSON.stringify(admissionFixture(review).review);
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        const served = await startServingProcess(webhook, env, bundle);
        try {
          const answer = await fetch(`${served.url}?timeout=5s`, { method: 'POST', body, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } });
          if (answer.status !== 200) throw new Error(`${webhook} answered ${answer.status}: ${await answer.text()}`);
          await answer.arrayBuffer();
          ms.push(performance.now() - t0);
        } finally {
          await served.stop();
        }
      }
      const timeout = timeoutSecondsOf(webhook);
      const p50 = median(ms);
      console.log(`ROW cold start ${webhook}: first answer ${p50.toFixed(0)} ms after spawn (max ${Math.max(...ms).toFixed(0)} ms), ${(p50 / (timeout * 10)).toFixed(0)} % of its ${timeout} s timeout before the platform starts an instance; baseline: a warm instance (terraform webhook.min_instances = 1) adds none`);
    }
  } finally {
    await api.close();
  }
}

const median3 = (samples: Sample[]) => ({ ms: median(samples.map((s) => s.ms)), cpuMs: median(samples.map((s) => s.cpuMs)), rssMb: median(samples.map((s) => s.rssMb)) });

async function connections(): Promise<void> {
  const sim = await startKubeSimProcess();
  try {
    // A multi-file KUBECONFIG (here with an empty second file) is one of the cases left to client-node.
    const empty = join(dirname(sim.kubeconfigPath), 'empty-kubeconfig');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n');
    const targets = [
      { name: 'via @kubernetes/client-node', kubeconfig: `${sim.kubeconfigPath}:${empty}` },
      { name: 'read by Furnish (yaml)', kubeconfig: sim.kubeconfigPath },
    ];
    const samples = new Map(targets.map((t) => [t.name, [] as Sample[]]));
    for (let i = 0; i < RUNS; i++) for (const t of targets) samples.get(t.name)!.push(firstConnection(t.kubeconfig));
    const base = median3(samples.get(targets[0]!.name)!);
    console.log(`\n-- first connection: connect() from KUBECONFIG + GET /version against kube-sim (fresh process, median of ${RUNS})`);
    for (const t of targets) {
      const s = median3(samples.get(t.name)!);
      console.log(`${t.name.padEnd(30)} wall ${s.ms.toFixed(1).padStart(6)} ms (${ratio(s.ms, base.ms)})  CPU ${s.cpuMs.toFixed(1).padStart(6)} ms (${ratio(s.cpuMs, base.cpuMs)})  RSS ${s.rssMb.toFixed(1)} MB (${ratio(s.rssMb, base.rssMb)})`);
    }
  } finally {
    await sim.stop();
  }
}

await main();
