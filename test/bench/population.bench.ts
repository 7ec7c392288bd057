// `npm run bench population`: population at scale against kube-sim, or against the real cluster
// FURNISH_TEST_KUBECONFIG names (its current context; FURNISH_TEST_AUDIT_LOG, the API server's
// audit log, then counts every write Furnish made as the server saw it), in one run.
//   setup     N namespaces (default 10,000) furnished by a template of 5 objects
//   latency   `create namespace` → phase=ready, p50/p99 over 200 namespaces
//   fan-out   one object of the template changed: wall time, API writes (by resource; the
//             object writes must equal the objects that really changed), messages published,
//             peak memory of the relay and of the reconciler
//   resync    the same figures for a no-op full resync (baseline: zero writes)
// Three processes besides this one, so each memory figure is its own: kube-sim, the relay (its
// in-process bus pushes to the reconciler over HTTP, in the Pub/Sub push format) and the
// reconcilers (Functions Framework; the template fan-out publishes to its own in-process bus).
// The template spells quantities the way people do (`1000m`, `1024Mi`, `0.5`), which the real
// server stores differently: the resync must still write nothing.
// BENCH_NAMESPACES, BENCH_LATENCY_NAMESPACES and FURNISH_KUBE_QPS tune it.
import { fork, type ChildProcess } from 'node:child_process';
import { KEY } from '../../shared/keys.ts';
import { connect, createKubeClient, type KubeClient, type KubeMetrics } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { listEach } from '../../shared/kube/api.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { mapLimit } from '../../shared/reconcile/concurrency.ts';
import { auditLog, type AuditLog } from '../support/audit.ts';
import { startKubeSimProcess } from './kube-sim-process.ts';

const EXTERNAL = process.env.FURNISH_TEST_KUBECONFIG;
/** On a real cluster, this run's namespaces and template selector (earlier runs' are left alone). */
const RUN = EXTERNAL ? Date.now().toString(36).slice(-5) : 'yes';

const role = process.argv[2];
const N = Number(process.env.BENCH_NAMESPACES ?? 10_000);
const LATENCY_N = Number(process.env.BENCH_LATENCY_NAMESPACES ?? 200);
const QPS = process.env.FURNISH_KUBE_QPS ?? '5000';
/** Namespaces created per second in the latency phase (open loop, like users would). */
const LATENCY_RATE = Number(process.env.BENCH_LATENCY_RATE ?? 10);

interface Sample {
  maxRssMb: number;
  /** Highest heapUsed sampled (every 50 ms) since the last reset, garbage included. */
  peakHeapMb: number;
  /** heapUsed right after a full GC: what the process really holds. */
  retainedHeapMb: number;
  rssMb: number;
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
      return { maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024), peakHeapMb: mb(sampledPeak), retainedHeapMb: mb(m.heapUsed), rssMb: mb(m.rss) };
    },
  };
}

type Handler = (msg: { cmd: string }) => Promise<unknown>;

function serveIpc(handler: Handler): void {
  process.on('message', (m: { id: number; cmd: string }) => {
    void handler(m).then((result) => process.send!({ id: m.id, result }), (e: Error) => process.send!({ id: m.id, error: e.stack }));
  });
}

async function reconcilerRole(): Promise<void> {
  const { serveReconcilers, memoryBusToPush } = await import('../../scripts/start.ts');
  const { createMemoryBus } = await import('../../shared/bus/memory.ts');
  const { reconcileConfig } = await import('../../shared/reconcile/config.ts');
  const { silentLogger } = await import('../../shared/log.ts');
  const mem = memorySampler();
  const config = reconcileConfig({ ...process.env, FURNISH_PUSH_AUTH: 'off', FURNISH_KUBE_QPS: QPS, FURNISH_KUBE_BURST: QPS, FURNISH_FANOUT_RATE: '20000' });
  const bus = createMemoryBus();
  const served = await serveReconcilers({ credentials: { kubeconfigPath: process.env.KUBECONFIG }, config, bus, port: 0, log: silentLogger });
  await memoryBusToPush(bus, config, served.url);
  const kube = async () => (await served.runtime.cluster(config.cluster)).kube;
  serveIpc(async ({ cmd }) => {
    if (cmd === 'url') return served.url;
    if (cmd === 'idle') return (await Promise.race([bus.idle().then(() => true), new Promise((r) => setTimeout(() => r(false), 20))])) as boolean;
    if (cmd === 'stats') return { metrics: structuredClone((await kube()).metrics), bus: { ...bus.stats }, memory: mem.read() };
    if (cmd === 'reset-memory') return mem.reset();
    throw new Error(`unknown command ${cmd}`);
  });
  process.send!({ ready: true });
}

async function relayRole(): Promise<void> {
  const { memoryBusToPush } = await import('../../scripts/start.ts');
  const { createMemoryBus } = await import('../../shared/bus/memory.ts');
  const { reconcileConfig, relayConfig } = await import('../../shared/reconcile/config.ts');
  const { silentLogger } = await import('../../shared/log.ts');
  const { startRelay } = await import('../../functions/watch-relay/index.ts');
  const mem = memorySampler();
  const bus = createMemoryBus();
  await memoryBusToPush(bus, reconcileConfig({ FURNISH_PUSH_AUTH: 'off' }), process.env.RECONCILER_URL!);
  const running = await startRelay({ config: { ...relayConfig(process.env), port: 0, resyncSeconds: 0, bus: 'memory' }, bus, kube: createKubeClient(await connect({ kubeconfigPath: process.env.KUBECONFIG })), log: silentLogger });
  serveIpc(async ({ cmd }) => {
    if (cmd === 'idle') return (await Promise.race([bus.idle().then(() => true), new Promise((r) => setTimeout(() => r(false), 20))])) as boolean;
    if (cmd === 'resync') return running.relay.resync();
    if (cmd === 'stats') return { counters: { ...running.relay.counters }, sizes: running.relay.sizes(), bus: { ...bus.stats }, memory: mem.read() };
    if (cmd === 'reset-memory') return mem.reset();
    throw new Error(`unknown command ${cmd}`);
  });
  process.send!({ ready: true });
}

// ---- the driver ------------------------------------------------------------------------------

interface Child {
  proc: ChildProcess;
  ask<T>(cmd: string): Promise<T>;
}

async function spawnRole(name: string, env: Record<string, string>, execArgv: string[] = []): Promise<Child> {
  const proc = fork(import.meta.filename, [name], { env: { ...process.env, ...env }, execArgv: [...process.execArgv, ...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let next = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  await new Promise<void>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
    proc.on('message', (m: { ready?: boolean; id?: number; result?: unknown; error?: string }) => {
      if (m.ready) return resolve();
      const w = waiting.get(m.id!);
      waiting.delete(m.id!);
      if (m.error) w?.reject(new Error(m.error));
      else w?.resolve(m.result);
    });
  });
  return {
    proc,
    ask: <T>(cmd: string) =>
      new Promise<T>((resolve, reject) => {
        const id = ++next;
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        proc.send({ id, cmd });
      }),
  };
}

const TEMPLATE = (version: string): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1',
  kind: 'NamespaceTemplate',
  metadata: { name: 'bench' },
  spec: {
    namespaces: { labelSelector: { matchLabels: { bench: RUN } } },
    templates: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { owner: '$(CREATOR)', version } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'contacts' }, data: { team: '$(NAMESPACE)' } },
      { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'default-deny' }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'namespace-admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: '$(CREATOR)' }], roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' } },
      { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'default-quota' }, spec: { hard: { pods: '50', 'requests.cpu': '1000m', 'requests.memory': '1024Mi', 'limits.cpu': '0.5' } } },
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

async function main(): Promise<void> {
  console.log(`population bench: ${N} namespaces × 5 objects, latency over ${LATENCY_N}, reconciler client ${QPS} qps, relay heap capped at 128 MB, against ${EXTERNAL ? `the real cluster ${EXTERNAL}` : 'kube-sim'}`);
  const sim = EXTERNAL ? { kubeconfigPath: EXTERNAL, adminContext: undefined, stop: async () => {} } : await startKubeSimProcess();
  const audit = EXTERNAL && process.env.FURNISH_TEST_AUDIT_LOG ? auditLog(process.env.FURNISH_TEST_AUDIT_LOG) : undefined;
  const admin = createKubeClient(await connect({ kubeconfigPath: sim.kubeconfigPath, context: sim.adminContext }), { qps: 1e6, burst: 1e6, userAgent: 'furnish-bench' });
  const children: Child[] = [];
  const ourNamespaces: string[] = [];
  try {
    const crdReady = await admin.call({ method: 'GET', path: '/apis/furnish.dev/v1alpha1' });
    if (!crdReady.ok) {
      const { readFileSync } = await import('node:fs');
      const { parse } = await import('yaml');
      const crd = parse(readFileSync(new URL('../../infra/crds/namespacetemplates.yaml', import.meta.url), 'utf8')) as KubeObject;
      await admin.call({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
    }
    await applyTemplate(admin, TEMPLATE('1'));
    // kube-sim serves every page of a list by scanning the whole kind, so big pages are cheaper there.
    const env = { KUBECONFIG: sim.kubeconfigPath, FURNISH_KUBE_QPS: QPS, FURNISH_LIST_PAGE_SIZE: process.env.FURNISH_LIST_PAGE_SIZE ?? '5000' };
    const reconciler = await spawnRole('reconciler', env);
    children.push(reconciler);
    // The relay lists with the default page size and runs under a 128 MB heap cap: names and versions only.
    const relay = await spawnRole('relay', { ...env, FURNISH_LIST_PAGE_SIZE: '500', RECONCILER_URL: await reconciler.ask<string>('url') }, ['--max-old-space-size=128']);
    children.push(relay);

    // setup, with the relay's memory measured at a tenth of the namespaces and at all of them
    const t0 = performance.now();
    const prefix = EXTERNAL ? `bench-${RUN}` : 'bench';
    const names = Array.from({ length: N }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
    const latencyNames = Array.from({ length: LATENCY_N }, (_, i) => (EXTERNAL ? `lat-${RUN}-${i}` : `lat-${i}`));
    ourNamespaces.push(...names, ...latencyNames);
    const tenth = Math.ceil(N / 10);
    await mapLimit(names.slice(0, tenth), 64, (n) => createNamespace(admin, n, {}));
    await waitIdle(relay, reconciler);
    const relayAtTenth = (await relay.ask<{ memory: Sample; sizes: { Namespace: number } }>('stats'));
    await mapLimit(names.slice(tenth), 64, (n) => createNamespace(admin, n, {}));
    await waitIdle(relay, reconciler);
    const relayAtAll = (await relay.ask<{ memory: Sample; sizes: { Namespace: number } }>('stats'));
    const ready = await countWhere(admin, '/api/v1/namespaces', `bench=${RUN}`, (o) => o.metadata.labels?.[KEY.phase] === 'ready');
    console.log(`\n--- setup: ${N} namespaces created and furnished in ${((performance.now() - t0) / 1000).toFixed(1)} s (${ready} ready)`);
    console.log(`relay retained heap after GC: ${relayAtTenth.memory.retainedHeapMb} MB knowing ${relayAtTenth.sizes.Namespace} namespaces, ${relayAtAll.memory.retainedHeapMb} MB knowing ${relayAtAll.sizes.Namespace} (RSS ${relayAtTenth.memory.rssMb} → ${relayAtAll.memory.rssMb} MB)`);

    // latency
    const created = new Map<string, number>();
    const latencies: number[] = [];
    const watch = admin.watch({ method: 'GET', path: '/api/v1/namespaces', query: { watch: 1, labelSelector: 'bench-latency=yes', allowWatchBookmarks: true } }, (ev) => {
      const e = ev as { type: string; object: KubeObject };
      const name = e.object?.metadata?.name ?? '';
      const t = created.get(name);
      if (t !== undefined && e.object.metadata.labels?.[KEY.phase] === 'ready') {
        latencies.push(performance.now() - t);
        created.delete(name);
      }
    });
    await new Promise((r) => setTimeout(r, 200));
    const creations: Promise<void>[] = [];
    for (let i = 0; i < LATENCY_N; i++) {
      const n = latencyNames[i]!;
      created.set(n, performance.now());
      creations.push(createNamespace(admin, n, { 'bench-latency': 'yes' }));
      await new Promise((r) => setTimeout(r, 1000 / LATENCY_RATE));
    }
    await Promise.all(creations);
    for (let i = 0; i < 600 && latencies.length < LATENCY_N; i++) await new Promise((r) => setTimeout(r, 100));
    watch.stop();
    latencies.sort((a, b) => a - b);
    console.log(`\n--- create namespace → phase=ready over ${latencies.length} namespaces created at ${LATENCY_RATE}/s: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${latencies[latencies.length - 1]?.toFixed(0)} ms`);
    await waitIdle(relay, reconciler);

    // fan-out of a template change
    const total = N + LATENCY_N;
    const fan = await measured(`template change fanned out to ${total} namespaces (1 of 5 objects changed)`, relay, reconciler, async () => {
      await applyTemplate(admin, TEMPLATE('2'));
      for (let i = 0; i < 6000; i++) {
        await new Promise((r) => setTimeout(r, 100));
        if ((await relay.ask<boolean>('idle')) && (await reconciler.ask<boolean>('idle')) && (await reconciler.ask<Snapshot['reconciler']>('stats')).bus.published >= total) break;
      }
    }, audit);
    const ours = new Set([...names, ...latencyNames]);
    const updated = await countWhere(admin, '/api/v1/configmaps', `${KEY.template}=bench`, (o) => o.metadata.name === 'settings' && ours.has(o.metadata.namespace ?? '') && (o.data as Record<string, string>)?.version === '2');
    const objectWrites = (source: Record<string, number>) => source.configmaps ?? 0;
    console.log(`objects really changed: ${updated} (configmap "settings" at version 2) = baseline`);
    console.log(`object writes        ${objectWrites(fan.writes)} (client) ${(objectWrites(fan.writes) / updated).toFixed(2)}x baseline${fan.audited ? `; ${objectWrites(fan.audited)} (audit log) ${(objectWrites(fan.audited) / updated).toFixed(2)}x baseline` : ''}`);
    console.log(`writes per namespace ${(fan.totalWrites / total).toFixed(2)} (client, all resources)${fan.audited ? `; ${(sum(fan.audited) / total).toFixed(2)} (audit log, all resources)` : ''}`);

    // no-op resync: the baseline
    const resync = await measured('no-op full resync (nothing changed)', relay, reconciler, async () => {
      await relay.ask('resync');
    }, audit);
    console.log(`no-op resync writes  ${resync.totalWrites} (client)${resync.audited ? `, ${sum(resync.audited)} (audit log)` : ''}; baseline 0`);
  } finally {
    for (const c of children) c.proc.kill('SIGTERM');
    if (EXTERNAL) {
      // Leave the real cluster as it was: this run's template and namespaces go (in the background, server-side).
      await admin.call({ method: 'DELETE', path: '/apis/furnish.dev/v1alpha1/namespacetemplates/bench' });
      await mapLimit(ourNamespaces, 32, (n) => admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${n}` }));
    }
    admin.close();
    await sim.stop();
  }
}

if (role === 'reconciler') await reconcilerRole();
else if (role === 'relay') await relayRole();
else await main();
