// Organizations' cost on the admission path, measured in one run against the same API server
// (kube-sim in its own process, or the cluster FURNISH_TEST_KUBECONFIG names):
//   1. a namespace CREATE through mutate-namespace and validate-namespace with organizations on
//      (the user's default organization read fresh, the Organization read fresh, the quota slot
//      reserved by a resourceVersion-checked status update) against the same CREATE with
//      organizations off; the two interleaved so that drift in machine load colours both alike;
//   2. mutate-pod's decision in process: a Pod that restarts forever (every Deployment's Pod:
//      no look-up) and a run-once Pod (namespace read, then remembered for a few seconds);
//   3. reconcile-organization in a burst: 1,000 namespace events across 10 organizations (each
//      holding a reservation per namespace, as the webhook leaves them after a burst of creates),
//      handled 32 at a time as the bus delivers them; API calls per event and time, against the
//      baseline of a true-up of every Organization per event (what each event cost before), in
//      the same run: per-organization passes without coalescing, then the handler as deployed.
//      BENCH_ORG_EVENTS sets the burst's size; BENCH_ORG_PARTS=burst runs only 3;
//   4. the per-event true-up's namespace list (25 namespaces of one organization) with the cluster
//      at 1,000 and at 5,000 namespaces: from etcd (no resourceVersion, paged: what every event
//      cost before) against from the watch cache (NotOlderThan the event's revision, no limit),
//      interleaved; on a real API server the etcd list reads every namespace of the cluster.
//      BENCH_ORG_PARTS=lists runs only 4 (BENCH_ORG_SIZES: the cluster sizes, default 1000,5000).
// mutate-pod's HTTP latency and cold start against the echo function are in webhooks.bench.ts.
import type { ReconcileMessage } from '../../shared/bus/envelope.ts';
import { bearerCredentials } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import { createKubeHttp, type KubeCall, type KubeHttp } from '../../shared/kube/http.ts';
import { reconcileOrganizationsOf } from '../../shared/org/function.ts';
import { failureOf, namespacesOf, reconcileOrganization, reconcileOrganizations, type OrganizationReconcileResult } from '../../shared/org/reconcile.ts';
import { newestRevision } from '../../shared/kube/revisions.ts';
import type { Organization } from '../../shared/org/types.ts';
import { mapLimit } from '../../shared/reconcile/concurrency.ts';
import type { Runtime } from '../../shared/reconcile/runtime.ts';
import { cachedAuthorizer } from '../../shared/kube/sar.ts';
import { clusterOrganizations, ORGANIZATIONS_PATH } from '../../shared/org/source.ts';
import type { WebhookDeps } from '../../shared/webhooks/deps.ts';
import { mutateNamespace } from '../../shared/webhooks/handlers/mutate-namespace.ts';
import { mutatePod } from '../../shared/webhooks/handlers/mutate-pod.ts';
import { validateNamespace } from '../../shared/webhooks/handlers/validate-namespace.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { fakeAuthorizer, SCENARIO_TEMPLATES, testDeps } from '../support/fixtures.ts';
import { namespaceObject, namespaceRequest, organization, orgDeps, podReview } from '../support/organizations.ts';
import { startKubeSimProcess } from './kube-sim-process.ts';

const CREATES = { warmup: 50, measured: 600, resetEvery: 25 };
const BURST = { events: Number(process.env.BENCH_ORG_EVENTS ?? 1000), organizations: 10, deliveries: 32 };
const POD_DECISIONS = { warmup: 5_000, measured: 50_000 };
const suffix = Date.now().toString(36).slice(-5);
const ORG = `bench-${suffix}`;
const alice = { username: 'alice', groups: ['system:authenticated'] };

function summary(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99) };
}
const ms = (v: number, digits = 2) => `${v.toFixed(digits)} ms`;

/** Furnish's part of one `kubectl create namespace`: the mutating call, then the validating one on the mutated object. */
async function admitCreate(deps: WebhookDeps, name: string, labels: Record<string, string>): Promise<boolean> {
  const mutated = await mutateNamespace(namespaceRequest({ webhook: 'mutate', user: alice, name, labels }), deps);
  if (!mutated.allowed) throw new Error(`mutate refused ${name}: ${mutated.status?.message}`);
  const organization = deps.settings.organizations?.enabled ? ORG : undefined;
  const validated = await validateNamespace(namespaceRequest({ user: alice, name, labels: organization ? { ...labels, 'furnish.dev/organization': organization } : labels }), deps);
  if (!validated.allowed) throw new Error(`validate refused ${name}: ${validated.status?.message}`);
  return true;
}

async function resetStatus(http: KubeHttp): Promise<void> {
  const org = await http<{ metadata: { resourceVersion: string } }>({ method: 'GET', path: `${ORGANIZATIONS_PATH}/${ORG}` });
  await http({ method: 'PUT', path: `${ORGANIZATIONS_PATH}/${ORG}/status`, body: { ...(org.data as object), status: { namespaces: 0, reservations: [] } } });
}

async function namespaceCreates(http: KubeHttp): Promise<void> {
  const base = testDeps({ authorizer: cachedAuthorizer(fakeAuthorizer([])), templates: SCENARIO_TEMPLATES });
  const off: WebhookDeps = { ...base, organizations: clusterOrganizations(http) };
  const on: WebhookDeps = { ...off, settings: { ...base.settings, organizations: { enabled: true } } };
  const samples = { off: [] as number[], on: [] as number[] };
  let n = 0;
  const run = async (deps: WebhookDeps, into?: number[]) => {
    const t = performance.now();
    await admitCreate(deps, `b-${suffix}-${n++}`, {});
    into?.push(performance.now() - t);
  };
  for (let i = 0; i < CREATES.warmup; i++) {
    await run(off);
    await run(on);
  }
  await resetStatus(http);
  for (let i = 0; i < CREATES.measured; i++) {
    // A live organization holds at most about its quota in reservations: keep the status that size.
    if (i % CREATES.resetEvery === 0) await resetStatus(http);
    await run(off, samples.off);
    await run(on, samples.on);
  }
  const a = summary(samples.off);
  const b = summary(samples.on);
  console.log(`\n-- namespace CREATE: mutate-namespace + validate-namespace in process, API look-ups over loopback (${CREATES.measured} each, interleaved, after ${CREATES.warmup} warm-up)`);
  console.log(`${'without organizations'.padEnd(26)} p50 ${ms(a.p50)}  p99 ${ms(a.p99)}`);
  console.log(`${'with organizations'.padEnd(26)} p50 ${ms(b.p50)} (${(b.p50 / a.p50).toFixed(2)}x)  p99 ${ms(b.p99)} (${(b.p99 / a.p99).toFixed(2)}x)`);
  console.log(`${'added by organizations'.padEnd(26)} p50 ${ms(b.p50 - a.p50)}  p99 ${ms(b.p99 - a.p99)}  (one Organization list, one Organization read, one status update)`);
}

async function podDecisions(): Promise<void> {
  console.log(`\n-- mutate-pod decision in process (${POD_DECISIONS.measured} calls each after ${POD_DECISIONS.warmup} warm-up)`);
  const deps = orgDeps({ namespaces: [namespaceObject('team-a', { 'furnish.dev/organization': 'acme' })] });
  const cases = [
    ['restartPolicy Always', podReview('team-a', { restartPolicy: 'Always' }).request],
    ['run-once, default set', podReview('team-a', { restartPolicy: 'Never' }).request],
  ] as const;
  for (const [label, request] of cases) {
    for (let i = 0; i < POD_DECISIONS.warmup; i++) await mutatePod(request, deps);
    const samples = new Array<number>(POD_DECISIONS.measured);
    for (let i = 0; i < POD_DECISIONS.measured; i++) {
      const t = performance.now();
      await mutatePod(request, deps);
      samples[i] = performance.now() - t;
    }
    const { p50, p99 } = summary(samples);
    console.log(`${label.padEnd(26)} p50 ${ms(p50, 4)}  p99 ${ms(p99, 4)}`);
  }
}

/** An http that counts its calls, and the objects its lists returned. */
function counting(http: KubeHttp): KubeHttp & { calls: number; items: number } {
  const counted = Object.assign(async <T,>(c: KubeCall) => {
    counted.calls += 1;
    const r = await http<T>(c);
    counted.items += (r.data as { items?: unknown[] } | undefined)?.items?.length ?? 0;
    return r;
  }, { calls: 0, items: 0 });
  return counted;
}

/** Each organization counts 0 and holds a reservation per namespace of its own: the state right after a burst of creates. */
async function reserveAll(http: KubeHttp, orgs: string[], byOrg: Map<string, string[]>): Promise<void> {
  const expires = new Date(Date.now() + 3_600_000).toISOString();
  for (const name of orgs) {
    const org = await http<Organization>({ method: 'GET', path: `${ORGANIZATIONS_PATH}/${name}` });
    const reservations = (byOrg.get(name) ?? []).map((ns) => ({ uid: `bench-${ns}`, namespace: ns, expires }));
    const r = await http({ method: 'PUT', path: `${ORGANIZATIONS_PATH}/${name}/status`, body: { ...org.data, status: { namespaces: 0, reservations } } });
    if (!r.ok) throw new Error(`reset ${name}: ${r.error}`);
  }
}

async function checkTrue(http: KubeHttp, orgs: string[], byOrg: Map<string, string[]>, label: string): Promise<void> {
  for (const name of orgs) {
    const status = (await http<Organization>({ method: 'GET', path: `${ORGANIZATIONS_PATH}/${name}` })).data?.status;
    if (status?.namespaces !== byOrg.get(name)!.length || (status.reservations ?? []).length !== 0) throw new Error(`${label}: ${name} ended at ${JSON.stringify(status)}`);
  }
}

/** Retried like a redelivery until the event's pass succeeds (the old handler answered a failed one with 500). */
async function untilDone(run: () => Promise<OrganizationReconcileResult>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const failure = failureOf(await run());
    if (!failure) return;
    if (attempt >= 20) throw failure;
  }
}

async function organizationBurst(http: KubeHttp): Promise<void> {
  const orgs = Array.from({ length: BURST.organizations }, (_, i) => `burst-${suffix}-${i}`);
  const events = Array.from({ length: BURST.events }, (_, i) => ({ namespace: `ob-${suffix}-${i}`, org: orgs[i % orgs.length]! }));
  const byOrg = new Map<string, string[]>();
  for (const e of events) byOrg.set(e.org, [...(byOrg.get(e.org) ?? []), e.namespace]);
  for (const name of orgs) {
    const r = await http({ method: 'POST', path: ORGANIZATIONS_PATH, body: organization(name, [], { quota: 1_000_000 }) });
    if (!r.ok) throw new Error(`create organization ${name}: ${r.error}`);
  }
  const created = performance.now();
  const revisions = new Map<string, string>();
  await mapLimit(events, 16, async (e) => {
    const r = await http<{ metadata?: { resourceVersion?: string } }>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: e.namespace, labels: { 'furnish.dev/organization': e.org } } } });
    if (!r.ok) throw new Error(`create namespace ${e.namespace}: ${r.error}`);
    revisions.set(e.namespace, r.data?.metadata?.resourceVersion ?? '');
  });
  console.log(`\n-- reconcile-organization: a burst of ${BURST.events} namespace events across ${BURST.organizations} organizations, ${BURST.deliveries} delivered at a time (namespaces created in ${((performance.now() - created) / 1000).toFixed(1)} s)`);
  const modes: { label: string; handle: (c: KubeHttp) => (e: (typeof events)[number]) => Promise<void> }[] = [
    // Before: every event trued up every Organization, from a cluster-wide namespace list.
    { label: 'every Organization per event (before)', handle: (c) => () => untilDone(() => reconcileOrganizations(clusterOrganizations(c), c)) },
    { label: 'its organization per event', handle: (c) => (e) => untilDone(() => reconcileOrganization(clusterOrganizations(c), c, e.org)) },
    { label: 'its organization, coalesced (after)', handle: (c) => {
      const kube = { http: c, call: async (req: KubeCall) => ({ ...(await c(req)), attempts: 1 }) };
      const rt = { config: { cluster: 'bench' }, cluster: async () => ({ kube }), log: silentLogger } as unknown as Runtime;
      return async (e) => {
        // As the relay sends it: the revision the watch delivered the namespace at.
        const msg: ReconcileMessage = { v: 1, cluster: 'bench', kind: 'Namespace', name: e.namespace, type: 'ADDED', organizations: [e.org], resourceVersion: revisions.get(e.namespace) };
        for (let attempt = 1; ; attempt++) {
          try {
            await reconcileOrganizationsOf(rt, msg);
            return;
          } catch (err) {
            if (attempt >= 20) throw err;
          }
        }
      };
    } },
  ];
  let baseline: { calls: number; items: number; ms: number } | undefined;
  try {
    for (const mode of modes) {
      await reserveAll(http, orgs, byOrg);
      const c = counting(http);
      const handle = mode.handle(c);
      const t = performance.now();
      await mapLimit(events, BURST.deliveries, handle);
      const took = performance.now() - t;
      await checkTrue(http, orgs, byOrg, mode.label);
      baseline ??= { calls: c.calls, items: c.items, ms: took };
      const per = (n: number) => (n / events.length).toFixed(2).padStart(7);
      console.log(`${mode.label.padEnd(40)} ${per(c.calls)} calls/event (${(c.calls / baseline.calls).toFixed(2)}x)  ${per(c.items)} objects listed/event (${(c.items / baseline.items).toFixed(2)}x)  ${(took / 1000).toFixed(2).padStart(6)} s (${(took / baseline.ms).toFixed(2)}x)`);
    }
  } finally {
    await mapLimit(events, 16, (e) => http({ method: 'DELETE', path: `/api/v1/namespaces/${e.namespace}` }));
    for (const name of orgs) await http({ method: 'DELETE', path: `${ORGANIZATIONS_PATH}/${name}` });
  }
}

const LISTS = { organization: 25, warmup: 20, measured: 200, sizes: (process.env.BENCH_ORG_SIZES ?? '1000,5000').split(',').map(Number) };

/** Creates namespaces until the cluster holds `total` (unlabelled fillers), returning their names. */
async function fillTo(http: KubeHttp, total: number, prefix: string): Promise<string[]> {
  const have = (await http<{ items?: unknown[] }>({ method: 'GET', path: '/api/v1/namespaces' })).data?.items?.length ?? 0;
  const names = Array.from({ length: Math.max(0, total - have) }, (_, i) => `${prefix}-${have + i}`);
  await mapLimit(names, 16, async (name) => {
    const r = await http({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
    if (!r.ok) throw new Error(`create namespace ${name}: ${r.error}`);
  });
  return names;
}

/** Part 4: one organization's namespace list per event, from etcd against from the watch cache, as the cluster grows. */
async function trueUpLists(http: KubeHttp): Promise<void> {
  const org = `lists-${suffix}`;
  const members = Array.from({ length: LISTS.organization }, (_, i) => `ol-${suffix}-${i}`);
  const made: string[] = [];
  let revision: string | undefined;
  for (const name of members) {
    const r = await http<{ metadata?: { resourceVersion?: string } }>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'furnish.dev/organization': org } } } });
    if (!r.ok) throw new Error(`create namespace ${name}: ${r.error}`);
    made.push(name);
    // The revision of the organization's newest namespace event, as the relay's message carries it.
    revision = newestRevision([revision, r.data?.metadata?.resourceVersion]);
  }
  console.log(`\n-- the per-event true-up's namespace list: ${LISTS.organization} namespaces of one organization, ${LISTS.measured} lists each (interleaved, after ${LISTS.warmup} warm-up)`);
  let fallbacks = 0;
  const log = { log: () => void (fallbacks += 1) };
  try {
    for (const size of LISTS.sizes) {
      const t = performance.now();
      made.push(...(await fillTo(http, size, `fill-${suffix}`)));
      const filled = ((performance.now() - t) / 1000).toFixed(1);
      const samples = { etcd: [] as number[], cache: [] as number[] };
      const time = async (into: number[] | undefined, atLeast?: string) => {
        const t0 = performance.now();
        const { namespaces: listed } = await namespacesOf(http, org, atLeast, { log });
        into?.push(performance.now() - t0);
        if (listed.length !== LISTS.organization) throw new Error(`listed ${listed.length} namespaces of ${org}, expected ${LISTS.organization}`);
      };
      for (let i = 0; i < LISTS.warmup + LISTS.measured; i++) {
        const keep = i >= LISTS.warmup;
        await time(keep ? samples.etcd : undefined);
        await time(keep ? samples.cache : undefined, revision);
      }
      const etcd = summary(samples.etcd);
      const cache = summary(samples.cache);
      console.log(`cluster at ${String(size).padStart(5)} namespaces (filled in ${filled} s)`);
      console.log(`  ${'etcd list (before)'.padEnd(34)} p50 ${ms(etcd.p50)}  p99 ${ms(etcd.p99)}`);
      console.log(`  ${'watch-cache list (after)'.padEnd(34)} p50 ${ms(cache.p50)}  p99 ${ms(cache.p99)}  etcd/cache: p50 ${(etcd.p50 / cache.p50).toFixed(2)}x  p99 ${(etcd.p99 / cache.p99).toFixed(2)}x`);
    }
    if (fallbacks > 0) throw new Error(`${fallbacks} watch-cache lists fell back to etcd: the measure is not the cache's`);
  } finally {
    await mapLimit(made, 16, (name) => http({ method: 'DELETE', path: `/api/v1/namespaces/${name}` }));
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  if (!process.env.BENCH_ORG_PARTS) await podDecisions();
  const external = process.env.FURNISH_TEST_KUBECONFIG;
  const sim = external ? undefined : await startKubeSimProcess();
  try {
    const creds = await bearerCredentials({ kubeconfigPath: external ?? sim!.kubeconfigPath, context: external ? undefined : sim!.adminContext });
    const http = createKubeHttp({ server: creds.server, caPem: creds.caPem, token: creds.token, timeoutMs: 10_000 });
    console.log(`\nAPI server: ${external ? `kube-apiserver (${creds.server})` : 'kube-sim (own process)'}`);
    const crd = parse(readFileSync(join(import.meta.dirname, '..', '..', 'infra', 'crds', 'organizations.yaml'), 'utf8'));
    await http({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
    for (let i = 0; i < 100 && !(await http({ method: 'GET', path: ORGANIZATIONS_PATH })).ok; i++) await new Promise((r) => setTimeout(r, 100));
    const created = await http({ method: 'POST', path: ORGANIZATIONS_PATH, body: organization(ORG, [{ kind: 'User', name: 'alice', default: true }], { quota: 1_000_000 }) });
    if (!created.ok) throw new Error(`create organization: ${created.error}`);
    try {
      const parts = process.env.BENCH_ORG_PARTS;
      if (!parts) await namespaceCreates(http);
      if (!parts || parts === 'burst') await organizationBurst(http);
      if (!parts || parts === 'lists') await trueUpLists(http);
    } finally {
      await http({ method: 'DELETE', path: `${ORGANIZATIONS_PATH}/${ORG}` });
    }
  } finally {
    await sim?.stop();
  }
}

await main();
