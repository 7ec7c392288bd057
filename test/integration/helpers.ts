// Shared steps of the population tests: a Kubernetes client on the test cluster (kube-sim or
// FURNISH_TEST_KUBECONFIG) as a given user, object builders, polling until the cluster converges,
// and the two things kube-sim offers natively that a real cluster does not: counting writes and
// injecting API faults.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KEY } from '../../shared/keys.ts';
import { connect, createKubeClient, resourceOfPath, USER_AGENT, type FaultHook, type KubeClient, type KubeRequest } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { testAuditLog } from '../support/audit.ts';
import type { Fault, TestCluster } from '../support/cluster.ts';

/** The tests' own client: User-Agent furnish-test, so that an audit log tells its writes from Furnish's. */
export async function clientFor(kubeconfigPath: string, context?: string): Promise<KubeClient> {
  return createKubeClient(await connect({ kubeconfigPath, context }), { pacing: { maxPerSecond: 1e6 }, userAgent: 'furnish-test' });
}

/** Furnish's requests in an audit log: its clients' User-Agent, not the tests'. */
export const isFurnish = (userAgent: string): boolean => userAgent === USER_AGENT;

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export function examples(): NamespaceTemplate[] {
  const dir = join(import.meta.dirname, '..', '..', 'examples');
  return ['security-defaults.yaml', 'starter-settings.yaml', 'privileged.yaml'].flatMap((f) =>
    parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as NamespaceTemplate).filter((o) => o?.kind === 'NamespaceTemplate'),
  );
}

/** Applies `t` as field manager `test`; the resourceVersion it was written at. */
export async function applyTemplate(kube: KubeClient, t: NamespaceTemplate): Promise<string> {
  const res = await kube.call<KubeObject>({ method: 'PATCH', path: `/apis/furnish.dev/v1alpha1/namespacetemplates/${t.metadata.name}`, query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml', body: t });
  if (!res.ok) throw new Error(`apply template ${t.metadata.name}: ${res.status} ${res.error}`);
  return res.data?.metadata.resourceVersion ?? '';
}

export async function deleteTemplate(kube: KubeClient, name: string): Promise<void> {
  await kube.call({ method: 'DELETE', path: `/apis/furnish.dev/v1alpha1/namespacetemplates/${name}` });
}

/** A namespace as mutate-namespace leaves it (creator, phase=pending), created directly. */
export async function createNamespace(kube: KubeClient, name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): Promise<void> {
  const body: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.phase]: 'pending', ...labels }, annotations: { [KEY.creator]: 'alice', ...annotations } } };
  const res = await kube.call({ method: 'POST', path: '/api/v1/namespaces', body });
  if (!res.ok) throw new Error(`create namespace ${name}: ${res.status} ${res.error}`);
}

export async function patchNamespace(kube: KubeClient, name: string, patch: unknown): Promise<void> {
  const res = await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${name}`, contentType: 'application/merge-patch+json', body: patch });
  if (!res.ok) throw new Error(`patch namespace ${name}: ${res.status} ${res.error}`);
}

export async function get(kube: KubeClient, path: string): Promise<KubeObject | undefined> {
  const res = await kube.call<KubeObject>({ method: 'GET', path });
  return res.ok ? res.data : undefined;
}

export async function phaseOf(kube: KubeClient, ns: string): Promise<string | undefined> {
  return (await get(kube, `/api/v1/namespaces/${ns}`))?.metadata.labels?.[KEY.phase];
}

export async function waitReady(kube: KubeClient, ns: string, timeoutMs = 20_000): Promise<void> {
  await waitFor(`namespace ${ns} phase=ready`, async () => (await phaseOf(kube, ns)) === 'ready', timeoutMs);
}

export async function list(kube: KubeClient, path: string, labelSelector?: string): Promise<KubeObject[]> {
  const res = await kube.call<{ items: KubeObject[] }>({ method: 'GET', path, query: { labelSelector } });
  if (!res.ok) throw new Error(`list ${path}: ${res.status} ${res.error}`);
  return res.data?.items ?? [];
}

/** The field managers that own an object (from managedFields). */
export function managers(obj: KubeObject | undefined): string[] {
  return ((obj?.metadata.managedFields ?? []) as { manager?: string }[]).map((m) => m.manager ?? '');
}

export const NETPOL = (ns: string, name: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/${name}`;
export const ROLEBINDING = (ns: string, name: string) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/${name}`;
export const CONFIGMAP = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
export const QUOTA = (ns: string, name: string) => `/api/v1/namespaces/${ns}/resourcequotas/${name}`;

/**
 * Writes since `reset()`, as each witness at hand saw them. kube-sim's request log is independent
 * of Furnish and sees every client (kube-sim only); a real API server's audit log
 * (FURNISH_TEST_AUDIT_LOG) is the same on a real cluster, Furnish's writes told from the tests' by
 * User-Agent; the reconcilers' own Kubernetes client metrics (writes per resource, counted at the
 * `call` seam) say what Furnish sent, on any cluster. Every assertion must hold for every witness.
 */
export interface WriteWitnesses {
  /** `kube-sim log` or `audit log` (when the cluster has one) and `furnish client`. */
  readonly names: string[];
  reset(): Promise<void>;
  /** Writes per witness, optionally to one resource (`configmaps`, `events`, `namespacetemplates/status`). */
  count(resource?: string): Promise<Record<string, number>>;
  /** What was written, for a failure message that says more than a count (empty when nothing was). */
  detail(): Promise<string[]>;
  /** `n` for every witness, to compare with `count()`. */
  all(n: number): Record<string, number>;
}

export function writeWitnesses(cluster: TestCluster, furnish: () => Promise<KubeClient>): WriteWitnesses {
  const log = cluster.log;
  const audit = cluster.isSimulated ? undefined : testAuditLog();
  const names = [...(log ? ['kube-sim log'] : []), ...(audit ? ['audit log'] : []), 'furnish client'];
  // The API server writes its audit log as requests complete; give the last ones time to land.
  const audited = async () => {
    await new Promise((r) => setTimeout(r, 300));
    return audit!.since(isFurnish);
  };
  let base: Record<string, number> = {};
  const sinceReset = async (): Promise<Record<string, number>> => {
    const now = (await furnish()).metrics.writesByResource;
    return Object.fromEntries(Object.entries(now).map(([r, n]) => [r, n - (base[r] ?? 0)]).filter(([, n]) => n !== 0));
  };
  return {
    names,
    async reset() {
      log?.reset();
      audit?.mark();
      base = { ...(await furnish()).metrics.writesByResource };
    },
    async count(resource) {
      const client = await sinceReset();
      const fromClient = resource === undefined ? Object.values(client).reduce((a, b) => a + b, 0) : (client[resource] ?? 0);
      const fromAudit = audit ? (await audited()).filter((w) => resource === undefined || w.resource === resource).length : 0;
      return { ...(log ? { 'kube-sim log': log.writes(resource === undefined ? {} : { resource }) } : {}), ...(audit ? { 'audit log': fromAudit } : {}), 'furnish client': fromClient };
    },
    async detail() {
      const logged = (log?.entries ?? []).filter((e) => ['create', 'update', 'patch', 'delete'].includes(e.verb) && !e.dryRun).map((e) => `kube-sim log: ${e.verb} ${e.resource} ${e.namespace ?? ''}/${e.name ?? ''} ${e.status}`);
      const inAudit = audit ? (await audited()).map((w) => `audit log: ${w.verb} ${w.resource} ${w.namespace}/${w.name} ${w.code}`) : [];
      return [...logged, ...inAudit, ...Object.entries(await sinceReset()).map(([r, n]) => `furnish client: ${n} × ${r}`)];
    },
    all: (n) => Object.fromEntries(names.map((w) => [w, n])),
  };
}

const VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** kube-sim's view of a request (verb, resource, namespace), for matching a `Fault` at the client seam. */
export function requestTarget(req: KubeRequest): { verb: string; resource: string; namespace?: string } {
  const segs = req.path.split('?')[0]!.split('/').filter(Boolean);
  const rest = segs[0] === 'api' ? segs.slice(2) : segs.slice(3);
  const resource = resourceOfPath(req.path);
  const namespaced = rest[0] === 'namespaces' && rest.length >= 3 && !resource.startsWith('namespaces');
  const named = (namespaced ? rest.length - 2 : rest.length) >= 2;
  const verb = VERBS[req.method] ?? (req.query?.watch ? 'watch' : named ? 'get' : 'list');
  return { verb, resource, ...(namespaced ? { namespace: rest[1]! } : {}) };
}

export interface SeamFaults {
  inject(f: Fault): () => void;
  clear(): void;
  /** Give to the stack (`startLocalStack({ faults })`): its reconcilers and relay then see the faults. */
  hook: FaultHook;
}

/**
 * kube-sim's faults (5xx, 429 with Retry-After, watches cut after a delay), injected at the Kubernetes
 * client seam instead of the server: the same faults, as the reconcilers and the relay see them, on
 * any cluster. Matching and `times` follow kube-sim; `latencyMs` is not supported here.
 */
export function seamFaults(): SeamFaults {
  let active: Array<{ fault: Fault; remaining: number }> = [];
  return {
    inject(fault) {
      if (fault.latencyMs !== undefined) throw new Error('seamFaults: latencyMs is kube-sim only');
      const entry = { fault, remaining: fault.times ?? Number.POSITIVE_INFINITY };
      active.push(entry);
      return () => {
        active = active.filter((a) => a !== entry);
      };
    },
    clear() {
      active = [];
    },
    hook(req) {
      const t = requestTarget(req);
      const hits = active.filter(({ fault: f, remaining }) => remaining > 0 && (f.verb === undefined || f.verb === t.verb) && (f.resource === undefined || f.resource === t.resource) && (f.namespace === undefined || f.namespace === t.namespace));
      for (const h of hits) h.remaining -= 1;
      active = active.filter((a) => a.remaining > 0);
      const failing = hits.find((h) => h.fault.status !== undefined)?.fault;
      if (failing) return { status: failing.status, error: `injected ${failing.status}`, ...(failing.retryAfterSeconds !== undefined ? { retryAfterSeconds: failing.retryAfterSeconds } : {}) };
      const cut = hits.find((h) => h.fault.closeWatchAfterMs !== undefined)?.fault;
      return cut && t.verb === 'watch' ? { closeWatchAfterMs: cut.closeWatchAfterMs } : undefined;
    },
  };
}

/** What a suite created on the cluster, removed again on a real one (kube-sim is thrown away whole). */
export interface Created {
  namespaces: string[];
  templates: string[];
}

/**
 * A suite's teardown: on a real cluster deletes what it created (namespaces, then templates), then
 * stops the local stack, closes the admin client and stops the test cluster.
 */
export async function tearDown(t: { cluster?: TestCluster; admin?: KubeClient; stack?: { stop(): Promise<void> }; created: Created }): Promise<void> {
  if (t.cluster && !t.cluster.isSimulated && t.admin) {
    for (const n of t.created.namespaces) await t.admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${n}` });
    for (const name of new Set(t.created.templates)) await deleteTemplate(t.admin, name);
  }
  await t.stack?.stop();
  t.admin?.close();
  await t.cluster?.stop();
}
