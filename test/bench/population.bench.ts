// `npm run bench -- population`: population at scale against kube-sim, or against the real cluster
// FURNISH_TEST_KUBECONFIG names (its current context; FURNISH_TEST_AUDIT_LOG, the API server's
// audit log, then counts every write Furnish made as the server saw it; kube-sim writes one of
// its own, `--audit-log`), in one run, with the settings a user gets by default (the reconciler's
// client paces itself by the server's answers). It measures only through the cluster (objects,
// watches, the audit log) and the processes (their clients' counters, memory, CPU): nothing of how
// Furnish keeps its books or what its messages carry.
//
// The guard rails (issue 26), each a `ROW … (target …)` line beside its baseline:
//   fan-out ≤ 2.00x the same applies sent directly; no-op resync 0 writes (audit log); create →
//   ready p99 < 1 s at 5/s; burst ≤ 2.50x Furnish's own writes sent directly; relay and
//   reconciler RSS flat (≤ 1.20x) from ~1,000 to ~10,000 namespaces.
// Three runs on a real kube-apiserver, each on a fresh one (a disposable cluster of your own),
// the machine otherwise quiet: give the API server `.ci/run`'s audit policy
// (`sed -n '/^apiVersion: audit/,/^POLICY$/p' .ci/run | sed '$d'`) and an audit log path, then
//   FURNISH_TEST_KUBECONFIG=<its kubeconfig> FURNISH_TEST_AUDIT_LOG=<its audit log> \
//     BENCH_SERVER_PIDS=<kube-apiserver pid>,<etcd pid> npm run bench -- population
// (about 10,000 namespaces each for the RSS row; BENCH_RSS_NAMESPACES=0 skips growing).
// A small run to check it prints (kube-sim, or add the variables above for the real server):
//   BENCH_NAMESPACES=40 BENCH_LATENCY_NAMESPACES=20 BENCH_RSS_NAMESPACES=200 npm run bench -- population
//
// Each row of issue 15's table is printed beside a baseline measured in the same run:
//   burst     N namespaces (default 1,000) created at concurrency 16, create → `ready`; baseline:
//             the creates' own time (ratio: all ready / all created)
//   latency   100 namespaces created at 5/s, create → `ready` p50/p99; baseline: the create call's
//             own p50/p99
//   fan-out   the template's ResourceQuota `pods` 50 → 60 reaching every namespace; baseline: the
//             same server-side applies sent directly at concurrency 16 (a quota of the bench's own
//             carrying Furnish's labels and annotations under renamed keys; also printed: the
//             quota without them)
//   resync    a no-op full resync; baseline: zero writes, counted by the server (audit log)
//   memory    RSS of the relay and of the reconciler after a no-op resync with the burst's and
//             latency's namespaces (~1,100), then again after the cluster grew, through Furnish, to
//             BENCH_RSS_NAMESPACES (default 10x that; 0: not grown): the same processes, side by side
// plus API calls per namespace and the RSS of each process against its idle self.
// Three processes besides this one, so each memory figure is its own: kube-sim, the relay (its
// in-process bus pushes to the reconciler over HTTP, in the Pub/Sub push format) and the
// reconcilers (Functions Framework; the template fan-out publishes to its own in-process bus).
// The template spells quantities the way people do (`1000m`, `1024Mi`, `0.5`), which the real
// server stores differently: the resync must still write nothing.
// BENCH_NAMESPACES, BENCH_LATENCY_NAMESPACES, BENCH_LATENCY_RATE, BENCH_CONCURRENCY and BENCH_RSS_NAMESPACES tune it;
// BENCH_LOG=1 (or INFO) shows the stack's log lines, BENCH_CPU_PROFILE=DIR writes the reconciler's and the relay's CPU profiles of the burst and of the fan-out there.
// BENCH_SERVER_PIDS (a real cluster's kube-apiserver and etcd, e.g. from start.sh's `pids:` line;
// kube-sim's own otherwise) adds the CPU time each side spent on the fan-out and on its baseline.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEY } from '../../shared/keys.ts';
import { connect, createKubeClient, type KubeClient, type KubeMetrics } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { listEach } from '../../shared/kube/api.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { mapLimit } from '../../shared/reconcile/concurrency.ts';
import { NODE_MEMORY_FLAGS } from '../../shared/functions/memory-flags.ts';
import { RELAY_MALLOC_ENV } from '../../functions/watch-relay/lib/malloc-env.ts';
import { APPLYSET_PARENT_NAME } from '../../shared/render/applyset.ts';
import { auditLog, type AuditEntry, type AuditLog } from '../support/audit.ts';
import { startKubeSimProcess } from './kube-sim-process.ts';
import { cpuMsOf, serveIpc, spawnRole, type Child } from './processes.ts';

const EXTERNAL = process.env.FURNISH_TEST_KUBECONFIG;
/** On a real cluster, this run's namespaces and template selector (earlier runs' are left alone). */
const RUN = EXTERNAL ? Date.now().toString(36).slice(-5) : 'yes';

const role = process.argv[2];
const N = Number(process.env.BENCH_NAMESPACES ?? 1_000);
const LATENCY_N = Number(process.env.BENCH_LATENCY_NAMESPACES ?? 100);
/** Namespaces created per second in the latency phase (open loop, like users would). */
const LATENCY_RATE = Number(process.env.BENCH_LATENCY_RATE ?? 5);
/** Concurrency of the namespace burst and of the direct server-side applies. */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
/** Namespaces the cluster grows to (through Furnish) for the second RSS figure; 0: not grown. */
const RSS_AT = Number(process.env.BENCH_RSS_NAMESPACES ?? 10 * (N + LATENCY_N));

interface Sample {
  maxRssMb: number;
  /** Highest heapUsed sampled (every 50 ms) since the last reset, garbage included. */
  peakHeapMb: number;
  /** heapUsed right after a full GC: what the process really holds. */
  retainedHeapMb: number;
  rssMb: number;
  /** Outside the JS heap: C++ objects bound to JS (`external`, Buffers included) and ArrayBuffers alone. */
  externalMb: number;
  arrayBuffersMb: number;
}

const mb = (bytes: number) => Math.round(bytes / 1048576);
const gc = (globalThis as { gc?: () => void }).gc;

/** Memory figures of this process; children are forked with --expose-gc (inherited execArgv). */
function memorySampler(): { reset(): void; read(): Sample } {
  let peak = 0;
  const t = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 50);
  t.unref();
  return {
    reset: () => {
      gc?.();
      peak = process.memoryUsage().heapUsed;
    },
    read: () => {
      const sampledPeak = Math.max(peak, process.memoryUsage().heapUsed);
      gc?.();
      const m = process.memoryUsage();
      return { maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024), peakHeapMb: mb(sampledPeak), retainedHeapMb: mb(m.heapUsed), rssMb: mb(m.rss), externalMb: mb(m.external), arrayBuffersMb: mb(m.arrayBuffers) };
    },
  };
}

async function reconcilerRole(): Promise<void> {
  const { serveReconcilers, memoryBusToPush } = await import('../../scripts/start.ts');
  const { createMemoryBus } = await import('../../shared/bus/memory.ts');
  const { reconcileConfig } = await import('../../shared/reconcile/config.ts');
  const { silentLogger, jsonLogger } = await import('../../shared/log.ts');
  // BENCH_LOG=1: warnings and errors of this process on stderr (why a phase waits); BENCH_LOG=INFO: every line.
  const log = process.env.BENCH_LOG ? jsonLogger(role!, (l) => process.stderr.write(l), process.env.BENCH_LOG === 'INFO' ? 'INFO' : 'WARNING') : silentLogger;
  const mem = memorySampler();
  const profiler = phaseProfiler(process.env.BENCH_CPU_PROFILE);
  // Default settings: only what the local stack needs (no push authentication).
  const config = reconcileConfig({ ...process.env, FURNISH_PUSH_AUTH: 'off' });
  const bus = createMemoryBus();
  const served = await serveReconcilers({ credentials: { kubeconfigPath: process.env.KUBECONFIG }, config, bus, port: 0, log });
  await memoryBusToPush(bus, config, served.url);
  const kube = async () => (await served.runtime.cluster(config.cluster)).kube;
  let trace: ReturnType<typeof pacingTrace> | undefined;
  serveIpc(async ({ cmd, arg }) => {
    if (cmd === 'url') return served.url;
    if (cmd === 'idle') return (await Promise.race([bus.idle().then(() => true), new Promise((r) => setTimeout(() => r(false), 20))])) as boolean;
    if (cmd === 'stats') {
      const k = await kube();
      return { metrics: structuredClone(k.metrics), pacing: { limit: k.pacing.limit, rate: k.pacing.rate, ...k.pacing.counters }, bus: { ...bus.stats }, memory: mem.read() };
    }
    if (cmd === 'reset-memory') return mem.reset();
    if (cmd === 'pacing-trace-start') return void (trace = pacingTrace((await kube()).pacing));
    if (cmd === 'pacing-trace-stop') return trace?.stop();
    if (cmd === 'profile-start') return profiler.start();
    if (cmd === 'profile-stop') return profiler.stop(String(arg));
    throw new Error(`unknown command ${cmd}`);
  });
}

/** The client's pacing over one phase, sampled every 100 ms: what bounded the calls in flight, the client or the server. */
function pacingTrace(pacing: { limit: number; inflight: number }): { stop(): string } {
  const limits: number[] = [];
  let full = 0;
  const t = setInterval(() => {
    limits.push(pacing.limit);
    if (pacing.inflight >= Math.floor(pacing.limit)) full += 1;
  }, 100);
  return {
    stop() {
      clearInterval(t);
      const sorted = [...limits].sort((a, b) => a - b);
      const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0).toFixed(0);
      return `in-flight limit p10/p50/p90 ${at(0.1)}/${at(0.5)}/${at(0.9)}, at the limit (calls waiting in the client) in ${((100 * full) / Math.max(1, limits.length)).toFixed(0)} % of samples`;
    },
  };
}

/** A child's CPU profile over one phase (BENCH_CPU_PROFILE=DIR), written as DIR/<phase>-<pid>.cpuprofile for Chrome DevTools. */
function phaseProfiler(dir: string | undefined): { start(): Promise<void>; stop(phase: string): Promise<string | null> } {
  let session: import('node:inspector/promises').Session | undefined;
  return {
    async start() {
      if (!dir) return;
      const { Session } = await import('node:inspector/promises');
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    },
    async stop(phase) {
      if (!session) return null;
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      session = undefined;
      const { writeFileSync } = await import('node:fs');
      const file = `${dir}/${phase}-${process.pid}.cpuprofile`;
      writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
}

async function relayRole(): Promise<void> {
  const { memoryBusToPush } = await import('../../scripts/start.ts');
  const { createMemoryBus } = await import('../../shared/bus/memory.ts');
  const { reconcileConfig } = await import('../../shared/reconcile/config.ts');
  const { relayConfig } = await import('../../functions/watch-relay/lib/config.ts');
  const { silentLogger, jsonLogger } = await import('../../shared/log.ts');
  // BENCH_LOG=1: warnings and errors of this process on stderr (why a phase waits); BENCH_LOG=INFO: every line.
  const log = process.env.BENCH_LOG ? jsonLogger(role!, (l) => process.stderr.write(l), process.env.BENCH_LOG === 'INFO' ? 'INFO' : 'WARNING') : silentLogger;
  const { startRelay } = await import('../../functions/watch-relay/index.ts');
  const mem = memorySampler();
  const profiler = phaseProfiler(process.env.BENCH_CPU_PROFILE);
  const bus = createMemoryBus();
  await memoryBusToPush(bus, reconcileConfig({ FURNISH_PUSH_AUTH: 'off' }), process.env.RECONCILER_URL!);
  const running = await startRelay({ config: { ...relayConfig(process.env), port: 0, resyncSeconds: 0, bus: 'memory' }, bus, kube: createKubeClient(await connect({ kubeconfigPath: process.env.KUBECONFIG })), log });
  serveIpc(async ({ cmd, arg }) => {
    if (cmd === 'idle') return (await Promise.race([bus.idle().then(() => true), new Promise((r) => setTimeout(() => r(false), 20))])) as boolean;
    if (cmd === 'resync') return running.relay.resync();
    if (cmd === 'stats') return { counters: { ...running.relay.counters }, bus: { ...bus.stats }, memory: mem.read() };
    if (cmd === 'reset-memory') return mem.reset();
    if (cmd === 'profile-start') return profiler.start();
    if (cmd === 'profile-stop') return profiler.stop(`relay-${String(arg)}`);
    throw new Error(`unknown command ${cmd}`);
  });
}

// ---- the driver ------------------------------------------------------------------------------

const QUOTA = (pods: string) => ({ apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods, 'requests.cpu': '1000m', 'requests.memory': '1024Mi', 'limits.cpu': '0.5' } } });

const TEMPLATE = (pods: string): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1',
  kind: 'NamespaceTemplate',
  metadata: { name: 'bench' },
  spec: {
    namespaces: { labelSelector: { matchLabels: { bench: RUN } } },
    templates: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { owner: '$(CREATOR)' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'contacts' }, data: { team: '$(NAMESPACE)' } },
      { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'default-deny' }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'namespace-admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: '$(CREATOR)' }], roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' } },
      { ...QUOTA(pods), metadata: { name: 'default-quota' } },
    ],
  },
});

async function applyTemplate(kube: KubeClient, t: NamespaceTemplate): Promise<void> {
  const r = await kube.call({ method: 'PATCH', path: '/apis/furnish.dev/v1alpha1/namespacetemplates/bench', query: { fieldManager: 'bench', force: true }, contentType: 'application/apply-patch+yaml', body: t });
  if (!r.ok) throw new Error(`apply template: ${r.status} ${r.error}`);
}

async function createNamespace(kube: KubeClient, name: string, labels: Record<string, string>): Promise<void> {
  const r = await kube.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { bench: RUN, [KEY.phase]: 'pending', ...labels }, annotations: { [KEY.creator]: 'alice' } } } });
  if (!r.ok) throw new Error(`create ${name}: ${r.status} ${r.error}`);
}

async function countWhere(kube: KubeClient, path: string, labelSelector: string, pred: (o: KubeObject) => boolean): Promise<number> {
  let n = 0;
  const r = await listEach(kube, path, { labelSelector, limit: 1000 }, (o) => (n += pred(o) ? 1 : 0));
  if (!r.ok) throw new Error(`list ${path}: ${r.status}`);
  return n;
}

async function waitIdle(relay: Child, reconciler: Child): Promise<void> {
  for (let quiet = 0; quiet < 3; ) {
    const idle = (await relay.ask<boolean>('idle')) && (await reconciler.ask<boolean>('idle'));
    quiet = idle ? quiet + 1 : 0;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

interface Snapshot {
  reconciler: { metrics: KubeMetrics; bus: { published: number }; memory: Sample };
  relay: { counters: { published: number }; memory: Sample };
}

async function snapshot(relay: Child, reconciler: Child): Promise<Snapshot> {
  return { reconciler: await reconciler.ask('stats'), relay: await relay.ask('stats') };
}

function diffWrites(a: KubeMetrics, b: KubeMetrics): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.writesByResource)) if (v - (a.writesByResource[k] ?? 0) > 0) out[k] = v - (a.writesByResource[k] ?? 0);
  return out;
}

/** Furnish's requests (User-Agent furnish) per namespace, in all and by verb and resource, most first. */
function callsPerNamespace(requests: AuditEntry[], namespaces: number): string {
  const by: Record<string, number> = {};
  for (const r of requests.filter((q) => q.userAgent === 'furnish')) {
    const key = `${r.verb} ${r.resource}`;
    by[key] = (by[key] ?? 0) + 1;
  }
  const each = Object.entries(by).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${(n / namespaces).toFixed(2)}`);
  return `${(sum(by) / namespaces).toFixed(2)} (${each.join(', ')})`;
}

/** Furnish's writes in the audit log since `mark()`, by resource (dry runs are not writes). */
function auditedWrites(audit: AuditLog): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of audit.since((ua) => ua === 'furnish')) out[w.resource] = (out[w.resource] ?? 0) + 1;
  return out;
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

async function measured(label: string, relay: Child, reconciler: Child, run: () => Promise<void>, audit?: AuditLog): Promise<{ wallMs: number; writes: Record<string, number>; totalWrites: number; audited?: Record<string, number>; messages: { relay: number; fanout: number }; memory: { relay: Sample; reconciler: Sample } }> {
  await relay.ask('reset-memory');
  await reconciler.ask('reset-memory');
  audit?.mark();
  const before = await snapshot(relay, reconciler);
  const t0 = performance.now();
  await run();
  await waitIdle(relay, reconciler);
  const wallMs = Math.round(performance.now() - t0);
  const after = await snapshot(relay, reconciler);
  const writes = diffWrites(before.reconciler.metrics, after.reconciler.metrics);
  // The API server writes its audit log as requests complete: let the last lines land.
  if (audit) await new Promise((r) => setTimeout(r, 1000));
  const audited = audit ? auditedWrites(audit) : undefined;
  const result = {
    wallMs,
    writes,
    totalWrites: sum(writes),
    ...(audited ? { audited } : {}),
    messages: { relay: after.relay.counters.published - before.relay.counters.published, fanout: after.reconciler.bus.published - before.reconciler.bus.published },
    memory: { relay: after.relay.memory, reconciler: after.reconciler.memory },
  };
  console.log(`\n--- ${label}`);
  console.log(`wall time            ${(wallMs / 1000).toFixed(2)} s`);
  console.log(`API writes           ${result.totalWrites}  ${JSON.stringify(writes)} (Furnish's client)`);
  if (audited) console.log(`audit log writes     ${sum(audited)}  ${JSON.stringify(audited)} (the API server's audit log, User-Agent furnish)`);
  console.log(`messages published   relay ${result.messages.relay}, fan-out ${result.messages.fanout}`);
  const m = (s: Sample) => `heap ${s.retainedHeapMb} MB retained after GC, ${s.peakHeapMb} MB peak incl. garbage; RSS ${s.rssMb} MB (max ${s.maxRssMb} MB)`;
  console.log(`memory relay         ${m(result.memory.relay)}`);
  console.log(`memory reconciler    ${m(result.memory.reconciler)}`);
  return result;
}

/** When each object of `path` matching `labelSelector` was first seen satisfying `pred` (performance.now()), by `keyOf`. */
function firstSeen(kube: KubeClient, path: string, labelSelector: string, pred: (o: KubeObject) => boolean, keyOf: (o: KubeObject) => string): { seen: Map<string, number>; stop(): void } {
  const seen = new Map<string, number>();
  // From resourceVersion 0 (any), without bookmarks: over etcd 3.4 (no progress notifications),
  // kube-apiserver 1.32 ends a watch from the current revision with "Too large resource version"
  // when the kind is quiet, and refuses one asking for bookmarks without a revision at once.
  const handle = kube.watch({ method: 'GET', path, query: { watch: 1, labelSelector, resourceVersion: '0' } }, (ev) => {
    const o = (ev as { object?: KubeObject }).object;
    if (!o?.metadata) return;
    const key = keyOf(o);
    if (!seen.has(key) && pred(o)) seen.set(key, performance.now());
  });
  return { seen, stop: () => handle.stop() };
}

/** When each watched namespace was first seen `ready`. */
function readyWatch(kube: KubeClient, labelSelector: string): { ready: Map<string, number>; stop(): void } {
  const w = firstSeen(kube, '/api/v1/namespaces', labelSelector, (o) => o.metadata.labels?.[KEY.phase] === 'ready', (o) => o.metadata.name ?? '');
  return { ready: w.seen, stop: w.stop };
}

async function until(pred: () => boolean, timeoutMs: number): Promise<boolean> {
  for (const end = performance.now() + timeoutMs; performance.now() < end; ) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return pred();
}

/** When each of `keys` was seen, from `t0`, sorted (NaN for one never seen: it sorts last and poisons the max). */
function elapsed(seen: Map<string, number>, keys: string[], t0: number): number[] {
  return keys.map((k) => (seen.get(k) ?? Number.NaN) - t0).sort((a, b) => (Number.isNaN(a) ? 1 : Number.isNaN(b) ? -1 : a - b));
}

/** How a wave of writes progressed: when the first, 10 %, half, 90 % and last were seen. */
function progress(sorted: number[]): string {
  const at = (p: number) => seconds(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN);
  return `first ${seconds(sorted[0] ?? Number.NaN)}, 10 % ${at(10)}, 50 % ${at(50)}, 90 % ${at(90)}, last ${at(100)}`;
}

/** CPU time of the server's processes, the relay, the reconciler and this process, read at once. */
type CpuSample = Record<'server' | 'relay' | 'reconciler' | 'bench', number>;

function cpuSampler(serverPids: number[], relay: Child, reconciler: Child): () => CpuSample {
  return () => ({
    server: serverPids.reduce((a, pid) => a + cpuMsOf(pid), 0),
    relay: cpuMsOf(relay.proc.pid!),
    reconciler: cpuMsOf(reconciler.proc.pid!),
    bench: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
  });
}

const cpuSpent = (from: CpuSample, to: CpuSample): CpuSample => ({ server: to.server - from.server, relay: to.relay - from.relay, reconciler: to.reconciler - from.reconciler, bench: to.bench - from.bench });

const ratio = (furnish: number, baseline: number) => `${(furnish / baseline).toFixed(2)}x`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Creates `names` (at `concurrency`, or open loop at `perSecond`); each create's send time and own duration. */
async function createAll(kube: KubeClient, names: string[], labels: Record<string, string>, pace: { concurrency: number } | { perSecond: number }): Promise<{ sentAt: Map<string, number>; callMs: number[]; doneAt: number }> {
  const sentAt = new Map<string, number>();
  const callMs: number[] = [];
  const one = async (n: string) => {
    const t = performance.now();
    sentAt.set(n, t);
    await createNamespace(kube, n, labels);
    callMs.push(performance.now() - t);
  };
  if ('concurrency' in pace) await mapLimit(names, pace.concurrency, one);
  else {
    const all: Promise<void>[] = [];
    for (const n of names) {
      all.push(one(n));
      await new Promise((r) => setTimeout(r, 1000 / pace.perSecond));
    }
    await Promise.all(all);
  }
  return { sentAt, callMs: callMs.sort((a, b) => a - b), doneAt: performance.now() };
}

/** create → ready of each name, sorted. */
function readyLatencies(sentAt: Map<string, number>, ready: Map<string, number>): number[] {
  return [...sentAt].map(([n, t]) => (ready.get(n) ?? Number.NaN) - t).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
}

/**
 * The baseline of the fan-out: the same server-side apply of a quota, sent directly at
 * `CONCURRENCY`, timed the same way (until a watch saw the last quota hold it: the watch's cost
 * on the server is in both figures).
 */
/** What a baseline quota carries besides its spec: its own name, and labels and annotations (the bench's label always, for its watch). */
interface QuotaShape {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

async function directApply(kube: KubeClient, namespaces: string[], pods: string, shape: QuotaShape): Promise<number[]> {
  const seen = firstSeen(kube, '/api/v1/resourcequotas', `bench-direct=${RUN}`, (o) => o.metadata.name === shape.name && (o.spec as { hard?: Record<string, string> })?.hard?.pods === pods, (o) => o.metadata.namespace ?? '');
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  try {
    await mapLimit(namespaces, CONCURRENCY, async (ns) => {
      const metadata = { name: shape.name, namespace: ns, labels: { ...shape.labels, 'bench-direct': RUN }, ...(shape.annotations ? { annotations: shape.annotations } : {}) };
      const r = await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${ns}/resourcequotas/${shape.name}`, query: { fieldManager: 'bench-direct', force: true }, contentType: 'application/apply-patch+yaml', body: { ...QUOTA(pods), metadata } });
      if (!r.ok) throw new Error(`direct apply in ${ns}: ${r.status} ${r.error}`);
    });
    await until(() => namespaces.every((n) => seen.seen.has(n)), 60_000);
    return elapsed(seen.seen, namespaces, t0);
  } finally {
    seen.stop();
  }
}

/** The API paths of the kinds the bench's template holds (its own table: no discovery needed). */
const KIND_PATHS: Record<string, string> = { ConfigMap: '/api/v1/namespaces/NS/configmaps', NetworkPolicy: '/apis/networking.k8s.io/v1/namespaces/NS/networkpolicies', RoleBinding: '/apis/rbac.authorization.k8s.io/v1/namespaces/NS/rolebindings', ResourceQuota: '/api/v1/namespaces/NS/resourcequotas' };

/** What Furnish wrote into a namespace on its first population, to send again elsewhere. */
interface Population {
  /** ApplySet parent first, then the template's objects: server-side applies. */
  parent: KubeObject;
  objects: KubeObject[];
  /** The namespace's labels and annotations of Furnish's (phase, record): one merge patch. */
  namespace: { labels: Record<string, string>; annotations: Record<string, string> };
  /** Furnish's Events about the namespace (as many as it wrote). */
  events: KubeObject[];
  /** The namespace's status conditions (Furnish's Ready condition, written through namespaces/status); none: no status write. */
  conditions: unknown[];
}

/** An object as a client would send it: no server-set fields, no status. */
function asSent(o: KubeObject): KubeObject {
  const { name, namespace, labels, annotations } = o.metadata;
  const { status: _status, ...rest } = o as KubeObject & { status?: unknown };
  return { ...rest, metadata: { name, namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
}

/** The same object for namespace `to`: every string equal to `from` (its namespace, rendered `$(NAMESPACE)`) becomes `to`. */
function retarget<T>(o: T, from: string, to: string): T {
  return JSON.parse(JSON.stringify(o).replaceAll(`"${from}"`, `"${to}"`)) as T;
}

const furnishKeys = (m: Record<string, string> | undefined) => Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => k.includes('furnish.dev/')));

/** Read back, from the API server, every write of Furnish's first population of `ns`: the objects, the namespace's furnish.dev/ labels and annotations and status conditions, its Events. */
async function furnishWrites(kube: KubeClient, ns: string): Promise<Population> {
  const get = async (path: string): Promise<KubeObject> => {
    const r = await kube.call<KubeObject>({ method: 'GET', path });
    if (!r.ok || !r.data) throw new Error(`read ${path}: ${r.status} ${r.error}`);
    return r.data;
  };
  const at = (kind: string, name: string) => `${KIND_PATHS[kind]!.replace('NS', ns)}/${name}`;
  const objects = await Promise.all((TEMPLATE('50').spec.templates ?? []).map(async (t) => ({ ...asSent(await get(at(String(t.kind), String(t.metadata?.name)))), apiVersion: String(t.apiVersion), kind: String(t.kind) })));
  const parent = { ...asSent(await get(at('ConfigMap', APPLYSET_PARENT_NAME))), apiVersion: 'v1', kind: 'ConfigMap' };
  const space = await get(`/api/v1/namespaces/${ns}`);
  const events = await kube.call<{ items: KubeObject[] }>({ method: 'GET', path: `/api/v1/namespaces/${ns}/events` });
  // Furnish's Events are about the namespace; nothing else writes one into a bench namespace.
  const about = (events.data?.items ?? []).filter((e) => (e as { involvedObject?: { kind?: string; name?: string } }).involvedObject?.kind === 'Namespace' && (e as { involvedObject?: { name?: string } }).involvedObject?.name === ns);
  const conditions = (space as { status?: { conditions?: unknown[] } }).status?.conditions ?? [];
  return { parent, objects, namespace: { labels: furnishKeys(space.metadata.labels), annotations: furnishKeys(space.metadata.annotations) }, events: about.map((e) => ({ ...asSent(e), apiVersion: 'v1', kind: 'Event' })), conditions };
}

/**
 * The baseline of the burst made of Furnish's own writes: for each of `names`, at `CONCURRENCY`,
 * create the namespace, then send what Furnish wrote into `model` (retargeted), in Furnish's order:
 * the ApplySet parent, the objects (8 at a time, as `FURNISH_APPLY_CONCURRENCY`), then the Events
 * and the namespace's patch (its labels, annotations and conditions, through namespaces/status when
 * it has conditions) side by side. No reads: what is left of the ratio is what Furnish reads
 * and decides. Timed from the first create until the last namespace's patch was answered.
 */
async function directPopulation(kube: KubeClient, names: string[], model: string, pop: Population): Promise<number> {
  const ssa = async (o: KubeObject) => {
    const r = await kube.call({ method: 'PATCH', path: `${KIND_PATHS[o.kind!]!.replace('NS', o.metadata.namespace!)}/${o.metadata.name}`, query: { fieldManager: 'bench-direct', force: true }, contentType: 'application/apply-patch+yaml', body: o });
    if (!r.ok) throw new Error(`apply ${o.kind} in ${o.metadata.namespace}: ${r.status} ${r.error}`);
  };
  const t0 = performance.now();
  await mapLimit(names, CONCURRENCY, async (ns) => {
    const r = await kube.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'bench-writes': RUN }, annotations: { [KEY.creator]: 'alice' } } } });
    if (!r.ok) throw new Error(`create ${ns}: ${r.status} ${r.error}`);
    await ssa(retarget(pop.parent, model, ns));
    await mapLimit(pop.objects, 8, (o) => ssa(retarget(o, model, ns)));
    const answers = await Promise.all([
      ...pop.events.map((e) => retarget(e, model, ns)).map((event, i) => kube.call({ method: 'POST', path: `/api/v1/namespaces/${ns}/events`, body: { ...event, metadata: { ...event.metadata, name: `${ns}.bench-direct-${i}` } } })),
      // One patch, as Furnish's: conditions go through namespaces/status, which takes the metadata too.
      pop.conditions.length > 0
        ? kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${ns}/status`, contentType: 'application/merge-patch+json', body: { metadata: pop.namespace, status: { conditions: pop.conditions } } })
        : kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${ns}`, contentType: 'application/merge-patch+json', body: { metadata: pop.namespace } }),
    ]);
    const failed = answers.find((a) => !a.ok);
    if (failed) throw new Error(`event or namespace patch in ${ns}: ${failed.status} ${failed.error}`);
  });
  return performance.now() - t0;
}

/**
 * The metadata Furnish's quota in `ns` carries (its template and ApplySet labels, its hash and
 * policy annotations), under keys of the bench's own ("bench-" before each, so that no watch of
 * Furnish's selects them): a baseline of applies the size of Furnish's.
 */
async function furnishShape(kube: KubeClient, ns: string): Promise<QuotaShape> {
  const r = await kube.call<KubeObject>({ method: 'GET', path: `/api/v1/namespaces/${ns}/resourcequotas/default-quota` });
  if (!r.ok || !r.data) throw new Error(`read Furnish's quota in ${ns}: ${r.status} ${r.error}`);
  const ours = (m: Record<string, string> | undefined) => Object.fromEntries(Object.entries(m ?? {}).map(([k, v]) => [`bench-${k}`, v]));
  return { name: 'bench-direct-furnish', labels: ours(r.data.metadata.labels), annotations: ours(r.data.metadata.annotations) };
}

/**
 * The shape with another value of the same length for each annotation that holds a digest (16 or
 * more hex digits, whatever its key): Furnish's apply of a change rewrites what it derives from
 * the content too.
 */
function rehashed(shape: QuotaShape): QuotaShape {
  const rehash = (v: string) => (/^[0-9a-f]{16,}$/.test(v) ? createHash('sha256').update(v).digest('hex').repeat(Math.ceil(v.length / 64)).slice(0, v.length) : v);
  return { ...shape, annotations: Object.fromEntries(Object.entries(shape.annotations ?? {}).map(([k, v]) => [k, rehash(v)])) };
}

const memoryLine = (s: Sample) => `RSS ${s.rssMb} MB (max ${s.maxRssMb} MB), heap ${s.retainedHeapMb} MB retained after GC, ${s.peakHeapMb} MB peak, external ${s.externalMb} MB (ArrayBuffers ${s.arrayBuffersMb} MB)`;

async function main(): Promise<void> {
  console.log(`population bench: ${N} namespaces × 5 objects, default settings, burst and direct applies at concurrency ${CONCURRENCY}, latency over ${LATENCY_N} at ${LATENCY_RATE}/s, relay and reconciler with the deployed V8 flags (${NODE_MEMORY_FLAGS.join(' ')}), the relay with its container's malloc settings (${process.env.BENCH_RELAY_MALLOC === '0' ? "glibc's defaults: BENCH_RELAY_MALLOC=0" : Object.entries(RELAY_MALLOC_ENV).map(([k, v]) => `${k}=${v}`).join(' ')}), against ${EXTERNAL ? `the real cluster ${EXTERNAL}` : 'kube-sim'}`);
  // kube-sim writes an audit log as kube-apiserver does: the server's count of writes on both.
  const simDir = EXTERNAL ? undefined : mkdtempSync(join(tmpdir(), 'furnish-bench-population-'));
  const sim = simDir === undefined ? { kubeconfigPath: EXTERNAL!, adminContext: undefined, stop: async () => {} } : await startKubeSimProcess(['--audit-log', join(simDir, 'audit.log')]);
  const auditPath = simDir === undefined ? process.env.FURNISH_TEST_AUDIT_LOG : join(simDir, 'audit.log');
  const audit = auditPath ? auditLog(auditPath) : undefined;
  const server = EXTERNAL ? 'audit log' : "kube-sim's audit log";
  // The bench's own client (creates, direct applies) is not paced: it is the baseline.
  const admin = createKubeClient(await connect({ kubeconfigPath: sim.kubeconfigPath, context: sim.adminContext }), { pacing: { maxPerSecond: 1e6, maxInflight: 1e6, initialInflight: 1e6 }, userAgent: 'furnish-bench' });
  const children: Child[] = [];
  const ourNamespaces: string[] = [];
  let watch: { stop(): void } | undefined;
  try {
    // Furnish's CRDs, as an install puts them (without Organization the organization reconciler
    // fails every namespace message and the bus retries them for minutes).
    const { parse } = await import('yaml');
    for (const file of ['namespacetemplates', 'organizations', 'lnamespaces']) {
      const crd = parse(readFileSync(new URL(`../../infra/crds/${file}.yaml`, import.meta.url), 'utf8')) as KubeObject;
      const r = await admin.call({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
      if (!r.ok && r.status !== 409) throw new Error(`install CRD ${file}: ${r.status} ${r.error}`);
    }
    for (let i = 0; i < 100 && !(await admin.call({ method: 'GET', path: '/apis/furnish.dev/v1alpha1/organizations' })).ok; i++) await new Promise((r) => setTimeout(r, 100));
    await applyTemplate(admin, TEMPLATE('50'));
    const env = { KUBECONFIG: sim.kubeconfigPath };
    // Both with the V8 flags they are deployed with (the relay's container, the functions' NODE_OPTIONS):
    // a heap sized otherwise collects at another pace (an old space capped below what V8 commits kept
    // the relay in back-to-back full GCs for most of a burst).
    const reconciler = await spawnRole(import.meta.filename, 'reconciler', env, [...NODE_MEMORY_FLAGS]);
    children.push(reconciler);
    // The relay with its container's malloc settings too (BENCH_RELAY_MALLOC=0: glibc's defaults).
    const relayMalloc = process.env.BENCH_RELAY_MALLOC === '0' ? {} : RELAY_MALLOC_ENV;
    const relay = await spawnRole(import.meta.filename, 'relay', { ...env, ...relayMalloc, RECONCILER_URL: await reconciler.ask<string>('url') }, [...NODE_MEMORY_FLAGS]);
    children.push(relay);
    const serverPids = 'pid' in sim ? [sim.pid] : (process.env.BENCH_SERVER_PIDS ?? '').split(',').filter((p) => p !== '').map(Number);
    const cpu = cpuSampler(serverPids, relay, reconciler);
    const idleMemory = { relay: (await relay.ask<{ memory: Sample }>('stats')).memory, reconciler: (await reconciler.ask<{ memory: Sample }>('stats')).memory };

    // row: a burst of N creates at CONCURRENCY, create → ready
    const prefix = EXTERNAL ? `bench-${RUN}` : 'bench';
    const names = Array.from({ length: N }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
    const latencyNames = Array.from({ length: LATENCY_N }, (_, i) => (EXTERNAL ? `lat-${RUN}-${i}` : `lat-${i}`));
    ourNamespaces.push(...names, ...latencyNames);
    const w = readyWatch(admin, `bench=${RUN}`);
    watch = w;
    await new Promise((r) => setTimeout(r, 200));
    const beforeBurst = await reconciler.ask<Snapshot['reconciler']>('stats');
    await Promise.all([reconciler.ask('profile-start'), relay.ask('profile-start')]);
    await reconciler.ask('pacing-trace-start');
    audit?.mark();
    const t0 = performance.now();
    const burst = await createAll(admin, names, {}, { concurrency: CONCURRENCY });
    const allReady = await until(() => names.every((n) => w.ready.has(n)), 600_000);
    await waitIdle(relay, reconciler);
    const burstPacing = await reconciler.ask<string>('pacing-trace-stop');
    const burstProfiles = await Promise.all([reconciler.ask<string | null>('profile-stop', 'burst'), relay.ask<string | null>('profile-stop', 'burst')]);
    const afterBurst = await reconciler.ask<Snapshot['reconciler']>('stats');
    const burstLat = readyLatencies(burst.sentAt, w.ready);
    const lastReady = Math.max(...names.map((n) => w.ready.get(n) ?? Number.NaN));
    const createsMs = burst.doneAt - t0;
    console.log(`\n--- burst: ${N} namespaces created at concurrency ${CONCURRENCY}, create → ready${allReady ? '' : ` (only ${burstLat.length} ready within 10 min)`}`);
    console.log(`ROW burst: all ${N} ready ${seconds(lastReady - t0)} after the first create; the creates themselves ${seconds(createsMs)}; ratio ${ratio(lastReady - t0, createsMs)} (target ≤ 2.00x)`);
    console.log(`    create → ready p50 ${percentile(burstLat, 50).toFixed(0)} ms, p99 ${percentile(burstLat, 99).toFixed(0)} ms; reconciler calls per namespace ${((afterBurst.metrics.requests - beforeBurst.metrics.requests) / N).toFixed(2)} ${JSON.stringify(afterBurst.metrics.byVerb)}`);
    console.log(`    pacing during the burst: ${burstPacing}`);
    if (burstProfiles[0]) console.log(`    CPU profiles of the burst: reconciler ${burstProfiles[0]}, relay ${burstProfiles[1]}`);
    const relayAfterBurst = await relay.ask<{ memory: Sample; counters: { redriven?: number; published: number } }>('stats');
    console.log(`    relay messages ${relayAfterBurst.counters.published}${relayAfterBurst.counters.redriven === undefined ? '' : `, of which re-driven (a namespace still pending after the redrive period) ${relayAfterBurst.counters.redriven}`}`);
    const burstWrites = audit ? auditedWrites(audit) : undefined;
    if (burstWrites) console.log(`    Furnish's writes per namespace in the burst (${server}): ${(sum(burstWrites) / N).toFixed(2)} ${JSON.stringify(burstWrites)}`);
    const setupMemory = { relay: relayAfterBurst.memory, reconciler: afterBurst.memory };

    // row: LATENCY_N namespaces at LATENCY_RATE/s, create → ready
    const lat = await createAll(admin, latencyNames, { 'bench-latency': 'yes' }, { perSecond: LATENCY_RATE });
    await until(() => latencyNames.every((n) => w.ready.has(n)), 60_000);
    const latencies = readyLatencies(lat.sentAt, w.ready);
    console.log(`\n--- ${LATENCY_N} namespaces created at ${LATENCY_RATE}/s, create → ready (${latencies.length} ready)`);
    console.log(`ROW latency p50: ${percentile(latencies, 50).toFixed(0)} ms create → ready; the create call itself ${percentile(lat.callMs, 50).toFixed(0)} ms; ratio ${ratio(percentile(latencies, 50), percentile(lat.callMs, 50))}`);
    console.log(`ROW latency p99: ${percentile(latencies, 99).toFixed(0)} ms create → ready${latencies.length < LATENCY_N ? ` (${LATENCY_N - latencies.length} never ready)` : ''}; the create call itself ${percentile(lat.callMs, 99).toFixed(0)} ms; ratio ${ratio(percentile(latencies, 99), percentile(lat.callMs, 99))} (target < 1000 ms at ${LATENCY_RATE}/s)`);
    watch.stop();
    watch = undefined;
    await waitIdle(relay, reconciler);

    // row: fan-out of a template change; baselines first (their quotas are their own, Furnish never
    // sees them): the quota alone, and the quota with metadata the size of Furnish's (the row's).
    const all = [...names, ...latencyNames];
    const total = all.length;
    const plain: QuotaShape = { name: 'bench-direct' };
    const shaped = await furnishShape(admin, names[0]!);
    await directApply(admin, all, '50', plain);
    const plainMs = (await directApply(admin, all, '60', plain)).at(-1)!;
    await directApply(admin, all, '50', shaped);
    const directFrom = cpu();
    const direct = await directApply(admin, all, '60', rehashed(shaped));
    const directCpu = cpuSpent(directFrom, cpu());
    const directMs = direct.at(-1)!;
    const before = await reconciler.ask<Snapshot['reconciler']>('stats');
    // "Reaching" a namespace: its quota holds the change (the stack is idle later, once the template's status is recounted).
    const quotas = firstSeen(admin, '/api/v1/resourcequotas', `${KEY.template}=bench`, (o) => o.metadata.name === 'default-quota' && (o.spec as { hard?: Record<string, string> })?.hard?.pods === '60', (o) => o.metadata.namespace ?? '');
    watch = quotas;
    await new Promise((r) => setTimeout(r, 200));
    let changedAt = 0;
    let fanFrom = cpu();
    let fanReached: CpuSample | undefined;
    const fan = await measured(`template change (ResourceQuota pods 50 → 60) fanned out to ${total} namespaces`, relay, reconciler, async () => {
      await Promise.all([reconciler.ask('profile-start'), relay.ask('profile-start')]);
      fanFrom = cpu();
      changedAt = performance.now();
      if (process.env.BENCH_LOG) console.error(`template changed at ${new Date().toISOString()}`);
      await applyTemplate(admin, TEMPLATE('60'));
      // Until every quota holds the change (a watch on the cluster), then measured() waits for both processes to go idle.
      for (let i = 0; i < 6000 && !fanReached; i++) {
        await new Promise((r) => setTimeout(r, 100));
        if (all.every((n) => quotas.seen.has(n))) fanReached = cpu();
      }
    }, audit);
    const after = await reconciler.ask<Snapshot['reconciler'] & { pacing: Record<string, number> }>('stats');
    const ours = new Set(all);
    const updated = await countWhere(admin, '/api/v1/resourcequotas', `${KEY.template}=bench`, (o) => o.metadata.name === 'default-quota' && ours.has(o.metadata.namespace ?? '') && (o.spec as { hard: Record<string, string> })?.hard?.pods === '60');
    const profiles = await Promise.all([reconciler.ask<string | null>('profile-stop', 'fanout'), relay.ask<string | null>('profile-stop', 'fanout')]);
    if (profiles[0]) console.log(`    CPU profiles of the fan-out: reconciler ${profiles[0]}, relay ${profiles[1]}`);
    const reached = elapsed(quotas.seen, all, changedAt);
    const reachedMs = reached.at(-1)!;
    quotas.stop();
    watch = undefined;
    console.log(`ROW fan-out: ${seconds(reachedMs)} from the template change until the last of ${updated}/${total} namespaces held it; direct server-side apply of the same ${total} quotas at concurrency ${CONCURRENCY} (with Furnish's labels and annotations, renamed), timed the same way, ${seconds(directMs)}; ratio ${ratio(reachedMs, directMs)} (target ≤ 2.00x)`);
    console.log(`    against the quotas alone (no labels or annotations but the bench's watch label): ${seconds(plainMs)}; ratio ${ratio(reachedMs, plainMs)}`);
    console.log(`    quotas seen holding the change: fan-out ${progress(reached)}; direct ${progress(direct)}`);
    if (fanReached) {
      const fanCpu = cpuSpent(fanFrom, fanReached);
      const server = serverPids.length > 0 ? `${EXTERNAL ? 'API server and etcd' : 'kube-sim'} ${fanCpu.server.toFixed(0)} ms against ${directCpu.server.toFixed(0)} ms (${ratio(fanCpu.server, directCpu.server)}), ` : '';
      console.log(`    CPU until the last quota held the change (within 100 ms), fan-out against direct: ${server}reconciler ${fanCpu.reconciler.toFixed(0)} ms and relay ${fanCpu.relay.toFixed(0)} ms against the bench's client ${directCpu.bench.toFixed(0)} ms`);
    }
    console.log(`    both processes idle ${seconds(fan.wallMs)} after the change (ratio ${ratio(fan.wallMs, directMs)})`);
    console.log(`    reconciler calls per namespace ${((after.metrics.requests - before.metrics.requests) / total).toFixed(2)} (${after.metrics.requests - before.metrics.requests} calls: ${JSON.stringify(Object.fromEntries(Object.entries(after.metrics.byVerb).map(([k, v]) => [k, v - (before.metrics.byVerb[k] ?? 0)])))}); quota writes ${fan.writes.resourcequotas ?? 0} (${(fan.writes.resourcequotas ?? 0) / updated}x the quotas that changed)`);
    console.log(`    pacing: in-flight limit ${after.pacing.limit!.toFixed(1)}, rate ${after.pacing.rate!.toFixed(0)}/s, 429s ${after.pacing.throttled}, cuts ${after.pacing.cuts} (on queueing ${after.pacing.queueing}), ${after.metrics.byStatus['429'] ?? 0} answers 429 in all`);
    console.log(`    writes per namespace ${(fan.totalWrites / total).toFixed(2)} (client, all resources)${fan.audited ? `; ${(sum(fan.audited) / total).toFixed(2)} (audit log, all resources)` : ''}`);
    if (audit) console.log(`    Furnish's calls per namespace (${server}, reads as far as its policy records them): ${callsPerNamespace(audit.requestsSince(), total)}`);

    // no-op resync: the baseline is zero writes
    const resync = await measured('no-op full resync (nothing changed)', relay, reconciler, async () => {
      await relay.ask('resync');
    }, audit);
    console.log(`ROW no-op resync: ${resync.audited ? `${sum(resync.audited)} writes (${server})` : 'writes not counted by the server (FURNISH_TEST_AUDIT_LOG unset)'}, ${resync.totalWrites} (Furnish's client), ${resync.messages.relay} namespaces and templates resynced; baseline 0 (target 0)`);

    // row: RSS of the same processes at the cluster's size now and grown tenfold through Furnish
    // (each figure after a no-op resync with the stack idle, so both processes handled every namespace).
    const small = { namespaces: total, relay: resync.memory.relay, reconciler: resync.memory.reconciler };
    const grown = RSS_AT > total ? await growTo(admin, relay, reconciler, RSS_AT - total, `${prefix}-m`, audit) : undefined;
    if (grown) ourNamespaces.push(...grown.names);

    // row: the burst against Furnish's own writes sent directly (Furnish stopped first: it would
    // furnish these namespaces too). Last, since it adds N namespaces to the cluster.
    const pop = await furnishWrites(admin, names[0]!);
    for (const c of children) c.proc.kill('SIGTERM');
    const writeNames = Array.from({ length: N }, (_, i) => `${prefix}-w-${String(i).padStart(5, '0')}`);
    ourNamespaces.push(...writeNames);
    const writesMs = await directPopulation(admin, writeNames, names[0]!, pop);
    const sent = 1 + pop.objects.length + pop.events.length + 1;
    console.log(`ROW burst against the writes: all ${N} ready ${seconds(lastReady - t0)}; the same ${N} creates with Furnish's ${sent} writes each (parent, ${pop.objects.length} objects, ${pop.events.length} Event(s), namespace${pop.conditions.length > 0 ? ' and its conditions (namespaces/status)' : ''}; no reads) sent directly at concurrency ${CONCURRENCY}${grown ? ` (in a cluster of ${RSS_AT} namespaces)` : ''}: ${seconds(writesMs)}; ratio ${ratio(lastReady - t0, writesMs)} (target ≤ 2.50x)`);

    console.log(`\n--- memory with ${total} namespaces (baseline: the same process idle, before any namespace)`);
    console.log(`ROW memory relay: ${memoryLine(setupMemory.relay)} after the burst; idle ${idleMemory.relay.rssMb} MB; ratio ${ratio(setupMemory.relay.rssMb, idleMemory.relay.rssMb)}`);
    console.log(`ROW memory reconciler: ${memoryLine(setupMemory.reconciler)} after the burst; idle ${idleMemory.reconciler.rssMb} MB; ratio ${ratio(setupMemory.reconciler.rssMb, idleMemory.reconciler.rssMb)}`);
    console.log(`    after the fan-out: relay ${memoryLine(fan.memory.relay)}; reconciler ${memoryLine(fan.memory.reconciler)}`);
    for (const proc of ['relay', 'reconciler'] as const) {
      if (!grown) {
        console.log(`ROW RSS ${proc}: ${small[proc].rssMb} MB at ${small.namespaces} namespaces; not grown (BENCH_RSS_NAMESPACES ${RSS_AT}) (target ≤ 1.20x from ~1,000 to ~10,000)`);
        continue;
      }
      console.log(`ROW RSS ${proc}: ${grown.memory[proc].rssMb} MB at ${grown.namespaces} namespaces, ${small[proc].rssMb} MB at ${small.namespaces}; ratio ${ratio(grown.memory[proc].rssMb, small[proc].rssMb)} (target ≤ 1.20x: flat)`);
      console.log(`    max RSS ${grown.memory[proc].maxRssMb} MB at ${grown.namespaces}, ${small[proc].maxRssMb} MB at ${small.namespaces} (${ratio(grown.memory[proc].maxRssMb, small[proc].maxRssMb)}); retained heap ${grown.memory[proc].retainedHeapMb} MB and ${small[proc].retainedHeapMb} MB`);
    }
  } finally {
    watch?.stop();
    for (const c of children) c.proc.kill('SIGTERM');
    if (EXTERNAL) {
      // Leave the real cluster as it was, and wait until it is: namespaces still terminating would
      // make the next run's drift watch and reconcilers work for this one.
      await admin.call({ method: 'DELETE', path: '/apis/furnish.dev/v1alpha1/namespacetemplates/bench' });
      await mapLimit(ourNamespaces, 32, (n) => admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${n}` }));
      const ours = new Set(ourNamespaces);
      const left = () => countWhere(admin, '/api/v1/namespaces', '', (o) => ours.has(o.metadata.name ?? ''));
      for (let i = 0; i < 300 && (await left()) > 0; i++) await new Promise((r) => setTimeout(r, 1000));
      console.log(`cleanup: ${await left()} of this run's namespaces left`);
    }
    admin.close();
    await sim.stop();
    if (simDir) rmSync(simDir, { recursive: true, force: true });
  }
}

/**
 * Grows the cluster by `count` namespaces the template selects, created at `CONCURRENCY` and
 * furnished by the running stack, then resyncs once (nothing changed: every namespace handled
 * again, as before the first RSS figure): the processes' memory then, and the cluster's size.
 */
async function growTo(kube: KubeClient, relay: Child, reconciler: Child, count: number, prefix: string, audit: AuditLog | undefined): Promise<{ names: string[]; namespaces: number; memory: { relay: Sample; reconciler: Sample } }> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
  const w = readyWatch(kube, `bench=${RUN}`);
  try {
    const t0 = performance.now();
    await createAll(kube, names, {}, { concurrency: CONCURRENCY });
    const allReady = await until(() => names.every((n) => w.ready.has(n)), 3_600_000);
    await waitIdle(relay, reconciler);
    console.log(`\n--- the cluster grown by ${count} namespaces through Furnish in ${seconds(performance.now() - t0)}${allReady ? '' : ` (only ${names.filter((n) => w.ready.has(n)).length} ready within an hour)`}`);
  } finally {
    w.stop();
  }
  const resync = await measured(`no-op full resync with ${RSS_AT} namespaces`, relay, reconciler, () => relay.ask('resync'), audit);
  return { names, namespaces: await countWhere(kube, '/api/v1/namespaces', `bench=${RUN}`, () => true), memory: resync.memory };
}

if (role === 'reconciler') await reconcilerRole();
else if (role === 'relay') await relayRole();
else await main();
