// `npm run bench -- memory`: memory of the relay and of the reconcilers against the number of
// namespaces (issue 15 item 4). For each point N (BENCH_MEMORY_POINTS, default 100,1000,10000),
// kube-sim (its own process; or the real cluster FURNISH_TEST_KUBECONFIG names) holds N namespaces
// already populated: created, then furnished by the reconciler's own code run in this process at
// high concurrency (so each is exactly what Furnish leaves: phase ready, record, ApplySet parent,
// the template's five objects), which is much faster than going through the relay and the bus.
// Then a fresh relay and a fresh reconciler start as processes of their own: the relay lists the
// N namespaces and publishes a SYNC for each (the reconciler handles N), then a full resync does it
// again. Printed per process and point: RSS now and at its highest, heap retained after a full GC,
// peak heap (garbage included), external and ArrayBuffers, V8's spaces, RSS by owner (V8's heap,
// malloc's arenas, other anonymous memory, files: rss-parts.ts); then the 10,000 point
// against the 100 point as `N.NNx`, and the state that has to scale as bytes per namespace (retained
// heap growth over namespace growth). Points grow one cluster (the 1,000 point adds 900 namespaces).
// BENCH_MEMORY_GROW=1 keeps one relay and one reconciler from the first point on, and the later
// points' namespaces are created pending and furnished by them while they watch (as the
// population bench's RSS row grows its cluster): what a long-lived relay keeps of the events it saw.
// BENCH_MEMORY_POINTS, BENCH_MEMORY_RUNS (runs per point, min/median/max), BENCH_MEMORY_NODE_ARGS
// (node flags of both processes; default: as deployed, NODE_MEMORY_FLAGS; empty: V8's defaults), BENCH_MEMORY_RESYNC=0 (no resync after the start), BENCH_MEMORY_RUN (reuse a seeded cluster) and BENCH_LOG=1 tune it.
// The relay runs with its container's malloc settings (RELAY_MALLOC_ENV; BENCH_RELAY_MALLOC=0: glibc's defaults).
// The children inherit the environment: FURNISH_TOPIC_BILLING= turns billing off, MALLOC_* settings reach the reconciler's malloc.
import { KEY } from '../../shared/keys.ts';
import { connect, createKubeClient, type KubeClient, type KubeMetrics } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { listEach } from '../../shared/kube/api.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { mapLimit } from '../../shared/reconcile/concurrency.ts';
import { NODE_MEMORY_FLAGS } from '../../shared/functions/memory-flags.ts';
import { RELAY_MALLOC_ENV } from '../../functions/watch-relay/lib/malloc-env.ts';
import { startKubeSimProcess } from './kube-sim-process.ts';
import { idleNow, memorySampler, ratio, serveIpc, spawnRole, waitIdle, type Child, type MemorySample } from './processes.ts';

const EXTERNAL = process.env.FURNISH_TEST_KUBECONFIG;
/**
 * This run's namespaces and template selector. On a real cluster a fresh one (earlier runs' are
 * left alone), removed at the end; BENCH_MEMORY_RUN names one to reuse and keep (namespaces already
 * ready are not seeded again), to compare settings without seeding 10,000 namespaces each time.
 */
const KEEP = process.env.BENCH_MEMORY_RUN;
const RUN = KEEP ?? (EXTERNAL ? Date.now().toString(36).slice(-5) : 'mem');
const role = process.argv[2];
const POINTS = (process.env.BENCH_MEMORY_POINTS ?? '100,1000,10000').split(',').map(Number).sort((a, b) => a - b);
const RUNS = Number(process.env.BENCH_MEMORY_RUNS ?? 1);
/** Concurrency of the seeding (creates, and the in-process reconciles). */
const SEED_CONCURRENCY = Number(process.env.BENCH_MEMORY_SEED_CONCURRENCY ?? 48);
/** BENCH_MEMORY_RESYNC=0: the start's SYNC of every namespace only, no full resync after it (half the time). */
const RESYNC = process.env.BENCH_MEMORY_RESYNC !== '0';
/** Node flags of the relay and the reconciler: those they are deployed with, unless BENCH_MEMORY_NODE_ARGS says otherwise (empty: V8's defaults). */
const NODE_ARGS = process.env.BENCH_MEMORY_NODE_ARGS === undefined ? [...NODE_MEMORY_FLAGS] : process.env.BENCH_MEMORY_NODE_ARGS.split(' ').filter((a) => a !== '');
/** BENCH_MEMORY_GROW=1: one relay and reconciler for every point, the cluster grown through them. */
const GROW = process.env.BENCH_MEMORY_GROW === '1';
/** The relay's malloc as in its container (BENCH_RELAY_MALLOC=0: glibc's defaults). */
const RELAY_MALLOC = process.env.BENCH_RELAY_MALLOC === '0' ? {} : RELAY_MALLOC_ENV;

async function childLog(name: string) {
  const { silentLogger, jsonLogger } = await import('../../shared/log.ts');
  // BENCH_LOG=1: warnings and errors of this process on stderr (why a phase waits).
  return process.env.BENCH_LOG ? jsonLogger(name, (l) => process.stderr.write(l), 'WARNING') : silentLogger;
}

async function reconcilerRole(): Promise<void> {
  const { serveReconcilers } = await import('../../scripts/start/reconcilers.ts');
  const { memoryBusToPush } = await import('../../scripts/start/bus.ts');
  const { createMemoryBus } = await import('../../shared/bus/memory.ts');
  const { reconcileConfig } = await import('../../shared/reconcile/config.ts');
  const mem = memorySampler();
  // Default settings: only what the local stack needs (no push authentication).
  const config = reconcileConfig({ ...process.env, FURNISH_PUSH_AUTH: 'off' });
  const bus = createMemoryBus();
  // record-billing (beside the reconcilers, as in `npm start`) writes to a file of this run's own.
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const billing = `sqlite:${mkdtempSync(`${tmpdir()}/furnish-bench-memory-`)}/billing.sqlite`;
  const served = await serveReconcilers({ credentials: { kubeconfigPath: process.env.KUBECONFIG }, config, bus, port: 0, log: await childLog('reconciler'), env: { FURNISH_BILLING: billing } });
  await memoryBusToPush(bus, config, served.url);
  serveIpc(async ({ cmd }) => {
    if (cmd === 'url') return served.url;
    if (cmd === 'idle') return idleNow(bus);
    if (cmd === 'stats') {
      const kube = (await served.runtime.cluster(config.cluster)).kube;
      return { metrics: structuredClone(kube.metrics), memory: await mem.read() };
    }
    if (cmd === 'reset-memory') return mem.reset();
    throw new Error(`unknown command ${cmd}`);
  });
}

async function relayRole(): Promise<void> {
  const { memoryBusToPush } = await import('../../scripts/start/bus.ts');
  const { createMemoryBus } = await import('../../shared/bus/memory.ts');
  const { reconcileConfig } = await import('../../shared/reconcile/config.ts');
  const { relayConfig } = await import('../../functions/watch-relay/lib/config.ts');
  const { startRelay } = await import('../../functions/watch-relay/lib/relay-process.ts');
  const mem = memorySampler();
  const bus = createMemoryBus();
  await memoryBusToPush(bus, reconcileConfig({ FURNISH_PUSH_AUTH: 'off' }), process.env.RECONCILER_URL!);
  // Started as a user gets it (it lists and publishes a SYNC for every namespace), resync by command.
  const running = await startRelay({ config: { ...relayConfig(process.env), port: 0, resyncSeconds: 0, bus: 'memory' }, bus, kube: createKubeClient(await connect({ kubeconfigPath: process.env.KUBECONFIG })), log: await childLog('relay') });
  serveIpc(async ({ cmd }) => {
    if (cmd === 'idle') return idleNow(bus);
    if (cmd === 'resync') return running.relay.resync();
    if (cmd === 'stats') return { counters: { ...running.relay.counters }, sizes: running.relay.sizes(), memory: await mem.read() };
    if (cmd === 'reset-memory') return mem.reset();
    throw new Error(`unknown command ${cmd}`);
  });
}

// ---- the driver ------------------------------------------------------------------------------

const TEMPLATE: NamespaceTemplate = {
  apiVersion: 'furnish.dev/v1alpha1',
  kind: 'NamespaceTemplate',
  metadata: { name: `memory-${RUN}` },
  spec: {
    namespaces: { labelSelector: { matchLabels: { 'bench-memory': RUN } } },
    templates: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { owner: '$(CREATOR)' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'contacts' }, data: { team: '$(NAMESPACE)' } },
      { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'default-deny' }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'namespace-admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: '$(CREATOR)' }], roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' } },
      { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'default-quota' }, spec: { hard: { pods: '50', 'requests.cpu': '1', 'requests.memory': '1Gi' } } },
    ],
  },
};

async function installCrdsAndTemplate(kube: KubeClient): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const { parse } = await import('yaml');
  // Without Organization the organization reconciler fails every namespace message and the bus retries them.
  for (const file of ['namespacetemplates', 'organizations', 'lnamespaces']) {
    const crd = parse(readFileSync(new URL(`../../infra/crds/${file}.yaml`, import.meta.url), 'utf8')) as KubeObject;
    const r = await kube.call({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
    if (!r.ok && r.status !== 409) throw new Error(`install CRD ${file}: ${r.status} ${r.error}`);
  }
  for (let i = 0; i < 100 && !(await kube.call({ method: 'GET', path: '/apis/furnish.dev/v1alpha1/organizations' })).ok; i++) await new Promise((r) => setTimeout(r, 100));
  const r = await kube.call({ method: 'PATCH', path: `/apis/furnish.dev/v1alpha1/namespacetemplates/${TEMPLATE.metadata.name}`, query: { fieldManager: 'bench', force: true }, contentType: 'application/apply-patch+yaml', body: TEMPLATE });
  if (!r.ok) throw new Error(`apply template: ${r.status} ${r.error}`);
}

const nameOf = (i: number) => `${RUN}-${String(i).padStart(5, '0')}`;

/** Namespaces `from`..`to`-1 not ready yet, created pending (an existing one is left as it is). */
async function createPending(kube: KubeClient, from: number, to: number): Promise<string[]> {
  const ready = new Set<string>();
  const listed = await listEach(kube, '/api/v1/namespaces', { labelSelector: `bench-memory=${RUN},${KEY.phase}=ready`, limit: 1000 }, (o) => ready.add(o.metadata.name ?? ''));
  if (!listed.ok) throw new Error(`list namespaces: ${listed.status} ${listed.error}`);
  const names = Array.from({ length: to - from }, (_, i) => nameOf(from + i)).filter((n) => !ready.has(n));
  await mapLimit(names, SEED_CONCURRENCY, async (name) => {
    // A loaded server (or machine) may not answer in time: ask again (409: it did create it).
    for (let attempt = 1; ; attempt += 1) {
      const r = await kube.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'bench-memory': RUN, [KEY.phase]: 'pending' }, annotations: { [KEY.creator]: 'alice' } } } });
      if (r.ok || r.status === 409) return;
      if (r.status !== 0 || attempt >= 5) throw new Error(`create ${name}: ${r.status} ${r.error}`);
    }
  });
  return names;
}

/** Namespaces `from`..`to`-1 created pending and furnished by reconcileNamespace itself, in this process. */
async function seed(kube: KubeClient, from: number, to: number): Promise<void> {
  const { reconcileNamespace } = await import('../../shared/reconcile/namespace.ts');
  const { ResourceResolver } = await import('../../shared/kube/resources.ts');
  const { silentLogger } = await import('../../shared/log.ts');
  const t0 = performance.now();
  const names = await createPending(kube, from, to);
  const created = performance.now();
  const deps = { kube, resolver: new ResourceResolver(kube), log: silentLogger };
  await mapLimit(names, SEED_CONCURRENCY, async (name) => {
    for (let attempt = 1; ; attempt += 1) {
      const r = await reconcileNamespace(deps, name).catch((e: unknown) => ({ result: 'failed', reason: String(e) }));
      if (r.result === 'converged') return;
      if (attempt >= 5) throw new Error(`seeding ${name}: ${r.result} ${r.reason ?? ''}`);
    }
  });
  console.log(`    seeded ${names.length} namespaces: created in ${((created - t0) / 1000).toFixed(1)} s, furnished in ${((performance.now() - created) / 1000).toFixed(1)} s`);
}

/** Namespaces `from`..`to`-1 created pending and furnished by the running stack; resolves once all are ready and the stack is idle. */
async function grow(kube: KubeClient, stack: Stack, from: number, to: number): Promise<void> {
  const t0 = performance.now();
  const names = await createPending(kube, from, to);
  const created = performance.now();
  for (let left = names.length; left > 0; ) {
    if (performance.now() - created > 3_600_000) throw new Error(`${left} namespaces not ready within an hour`);
    await new Promise((r) => setTimeout(r, 2000));
    let notReady = 0;
    const listed = await listEach(kube, '/api/v1/namespaces', { labelSelector: `bench-memory=${RUN},${KEY.phase}!=ready`, limit: 1000 }, () => void (notReady += 1));
    if (listed.ok) left = notReady; // not answered in time (a loaded machine): look again
  }
  await waitIdle(stack.children);
  console.log(`    grew by ${names.length} namespaces through the relay and the reconciler: created in ${((created - t0) / 1000).toFixed(1)} s, all ready in ${((performance.now() - created) / 1000).toFixed(1)} s`);
}

interface RelayStats {
  counters: { published: number };
  sizes: Record<string, number>;
  memory: MemorySample;
}

interface ReconcilerStats {
  metrics: KubeMetrics;
  memory: MemorySample;
}

interface Point {
  n: number;
  relay: MemorySample;
  reconciler: MemorySample;
  startSeconds: number;
  resyncSeconds: number;
  published: number;
  writes: number;
  callsPerNamespace: number;
}

const writesOf = (m: KubeMetrics) => Object.values(m.writesByResource).reduce((a, b) => a + b, 0);

/** The relay and the reconciler, processes of their own, and how long the relay's start took (its SYNC of every namespace handled). */
interface Stack {
  relay: Child;
  reconciler: Child;
  children: Child[];
  startSeconds: number;
}

async function startStack(kubeconfigPath: string): Promise<Stack> {
  const children: Child[] = [];
  try {
    const env = { KUBECONFIG: kubeconfigPath };
    const reconciler = await spawnRole(import.meta.filename, 'reconciler', env, NODE_ARGS);
    children.push(reconciler);
    const t0 = performance.now();
    const relay = await spawnRole(import.meta.filename, 'relay', { ...env, ...RELAY_MALLOC, RECONCILER_URL: await reconciler.ask<string>('url') }, NODE_ARGS);
    children.push(relay);
    await waitIdle(children);
    return { relay, reconciler, children, startSeconds: (performance.now() - t0) / 1000 };
  } catch (e) {
    await stopStack(children);
    throw e;
  }
}

async function stopStack(children: Child[]): Promise<void> {
  for (const c of [...children].reverse()) await c.stop();
}

/** A full resync of the N namespaces by a running stack, then each process's memory. */
async function measurePoint(n: number, stack: Stack): Promise<Point> {
  const { relay, reconciler, children } = stack;
  const before = { relay: await relay.ask<RelayStats>('stats'), reconciler: await reconciler.ask<ReconcilerStats>('stats') };
  if (before.relay.sizes.Namespace! < n) throw new Error(`the relay knows ${before.relay.sizes.Namespace} namespaces, expected at least ${n}`);
  const t1 = performance.now();
  if (RESYNC) {
    await relay.ask('resync');
    await waitIdle(children);
  }
  const resyncSeconds = (performance.now() - t1) / 1000;
  const after = { relay: await relay.ask<RelayStats>('stats'), reconciler: await reconciler.ask<ReconcilerStats>('stats') };
  const published = RESYNC ? after.relay.counters.published - before.relay.counters.published : after.relay.counters.published;
  if (published < n) throw new Error(`the resync published ${published} messages for ${n} namespaces`);
  return {
    n,
    relay: after.relay.memory,
    reconciler: after.reconciler.memory,
    startSeconds: stack.startSeconds,
    resyncSeconds,
    published,
    writes: RESYNC ? writesOf(after.reconciler.metrics) - writesOf(before.reconciler.metrics) : writesOf(after.reconciler.metrics),
    callsPerNamespace: (after.reconciler.metrics.requests - (RESYNC ? before.reconciler.metrics.requests : 0)) / published,
  };
}

const line = (s: MemorySample) => `RSS ${s.rssMb} MB (peak ${s.peakRssMb}, max ${s.maxRssMb}), heap ${s.retainedHeapMb} MB retained after GC, ${s.peakHeapMb} MB peak, external ${s.externalMb} MB (ArrayBuffers ${s.arrayBuffersMb} MB), GC ${s.gcMs.minor} ms scavenges + ${s.gcMs.major} ms full${s.parts ? `; RSS parts: V8 heap ${s.parts.v8Mb}, malloc ${s.parts.mallocMb} (${s.parts.arenas + 1} arenas), other anonymous ${s.parts.otherAnonMb}, files ${s.parts.fileMb}` : ''}`;
const spaces = (s: MemorySample) => Object.entries(s.spaces).filter(([, v]) => v > 0).map(([k, v]) => `${k.replace(/_space$/, '')} ${v}`).join(', ');

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** min/median/max of one figure over the runs of a point. */
function spread(points: Point[], pick: (p: Point) => number): { min: number; median: number; max: number; text: string } {
  const v = points.map(pick);
  const r = { min: Math.min(...v), median: median(v), max: Math.max(...v) };
  return { ...r, text: points.length > 1 ? `${r.median} (${r.min}–${r.max})` : `${r.median}` };
}

function report(byN: Map<number, Point[]>): void {
  const first = POINTS[0]!;
  const last = POINTS.at(-1)!;
  for (const proc of ['relay', 'reconciler'] as const) {
    console.log(`\n--- ${proc}: RSS, heap after GC and peak heap by namespaces (MB${RUNS > 1 ? `, median (min–max) of ${RUNS} runs` : ''})`);
    for (const n of POINTS) {
      const ps = byN.get(n)!;
      const f = (pick: (s: MemorySample) => number) => spread(ps, (p) => pick(p[proc])).text;
      console.log(`${String(n).padStart(6)} namespaces  RSS ${f((s) => s.rssMb)} (max ${f((s) => s.maxRssMb)}), heap ${f((s) => s.retainedHeapMb)} retained, ${f((s) => s.peakHeapMb)} peak, external ${f((s) => s.externalMb)} (ArrayBuffers ${f((s) => s.arrayBuffersMb)})`);
    }
    if (first === last) continue;
    const at = (n: number, pick: (s: MemorySample) => number) => spread(byN.get(n)!, (p) => pick(p[proc])).median;
    const perNs = (at(last, (s) => s.retainedHeapBytes) - at(first, (s) => s.retainedHeapBytes)) / (last - first);
    const scaling = (perNs * (last - first)) / 1048576;
    console.log(`ROW ${proc} RSS: ${at(last, (s) => s.rssMb)} MB at ${last} namespaces, ${at(first, (s) => s.rssMb)} MB at ${first}; ratio ${ratio(at(last, (s) => s.rssMb), at(first, (s) => s.rssMb))}`);
    console.log(`ROW ${proc} max RSS: ${at(last, (s) => s.maxRssMb)} MB at ${last}, ${at(first, (s) => s.maxRssMb)} MB at ${first}; ratio ${ratio(at(last, (s) => s.maxRssMb), at(first, (s) => s.maxRssMb))}`);
    console.log(`ROW ${proc} state that scales: ${Math.round(perNs)} bytes per namespace of retained heap (${scaling.toFixed(1)} MB more at ${last}); RSS beyond it ${ratio(at(last, (s) => s.rssMb) - scaling, at(first, (s) => s.rssMb))} (target ≤ 1.50x)`);
  }
}

async function main(): Promise<void> {
  console.log(`memory bench: relay and reconciler at ${POINTS.join(', ')} namespaces × 5 objects, ${RUNS} run(s) per point, node flags ${NODE_ARGS.length ? NODE_ARGS.join(' ') : "none (V8's defaults)"}, against ${EXTERNAL ? `the real cluster ${EXTERNAL}` : 'kube-sim'}`);
  const sim = EXTERNAL ? { kubeconfigPath: EXTERNAL, adminContext: undefined, stop: async () => {} } : await startKubeSimProcess();
  // The bench's own client is not paced: seeding is setup, not what is measured.
  const admin = createKubeClient(await connect({ kubeconfigPath: sim.kubeconfigPath, context: sim.adminContext }), { pacing: { maxPerSecond: 1e6, maxInflight: 1e6, initialInflight: 1e6 }, userAgent: 'furnish-bench' });
  let seeded = 0;
  const byN = new Map<number, Point[]>();
  let kept: Stack | undefined;
  try {
    await installCrdsAndTemplate(admin);
    for (const n of POINTS) {
      console.log(`\n--- ${n} namespaces`);
      if (kept) await grow(admin, kept, seeded, n);
      else await seed(admin, seeded, n);
      seeded = n;
      const runs: Point[] = [];
      for (let run = 0; run < RUNS; run++) {
        const stack = kept ?? (await startStack(sim.kubeconfigPath));
        if (GROW) kept = stack;
        const p = await measurePoint(n, stack).finally(() => (kept ? undefined : stopStack(stack.children)));
        runs.push(p);
        console.log(`    ${n === POINTS[0] || !GROW ? `start (SYNC of each) ${p.startSeconds.toFixed(1)} s, ` : ''}resync ${p.resyncSeconds.toFixed(1)} s: ${p.published} messages, ${p.callsPerNamespace.toFixed(2)} reconciler calls and ${(p.writes / p.published).toFixed(2)} writes per message`);
        console.log(`    relay       ${line(p.relay)}; V8 spaces ${spaces(p.relay)}`);
        console.log(`    reconciler  ${line(p.reconciler)}; V8 spaces ${spaces(p.reconciler)}`);
      }
      byN.set(n, runs);
    }
    report(byN);
  } finally {
    if (kept) await stopStack(kept.children);
    if (EXTERNAL && !KEEP) {
      // Leave the real cluster as it was: this run's template and namespaces go (in the background, server-side).
      await admin.call({ method: 'DELETE', path: `/apis/furnish.dev/v1alpha1/namespacetemplates/${TEMPLATE.metadata.name}` });
      await mapLimit(Array.from({ length: seeded }, (_, i) => nameOf(i)), 32, (n) => admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${n}` }));
    }
    admin.close();
    await sim.stop();
  }
}

if (role === 'reconciler') await reconcilerRole();
else if (role === 'relay') await relayRole();
else await main();
