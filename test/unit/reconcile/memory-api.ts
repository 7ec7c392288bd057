// A small in-memory Kubernetes API for unit tests of the executors: enough of GET/LIST (label
// selectors as the API server reads them, cluster-wide lists), server-side apply (merge of what is
// sent), create, delete (with a uid precondition) and merge patch (RFC 7386), `dryRun=All` on create and apply. It plugs in as the client's transport, so
// the real seam (retries, rate limit, metrics, faults) runs on top of it. Integration tests use
// kube-sim; this keeps the unit tests fast and network-free.
import { createKubeClient, type FaultHook, type KubeClient, type KubeRequest } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { matchesLabels, parseLabelSelector } from '../../support/kube-sim/selectors.ts';

interface Route {
  collection: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

function parse(path: string): Route | null {
  const parts = path.split('/').filter(Boolean);
  const rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  const group = parts[0] === 'api' ? '' : parts[1];
  let namespace: string | undefined;
  let i = 0;
  // namespaces/<name>/status and /finalize are the namespace's own subresources, not a collection in it.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(rest.length === 3 && ['status', 'finalize'].includes(rest[2]!))) {
    namespace = decodeURIComponent(rest[1]!);
    i = 2;
  }
  const plural = rest[i];
  if (!plural) return null;
  return { collection: `${group}/${plural}`, namespace, name: rest[i + 1] ? decodeURIComponent(rest[i + 1]!) : undefined, subresource: rest[i + 2] };
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = new Map<string, unknown>(target && typeof target === 'object' && !Array.isArray(target) ? Object.entries(target) : []);
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) out.delete(k);
    else out.set(k, mergePatch(out.get(k), v));
  }
  return Object.fromEntries(out);
}

/** A strategic merge patch's status.conditions merge with the object's by type (their patchMergeKey). */
function byTypeConditions(existing: KubeObject, patch: unknown): unknown {
  const conditions = (patch as { status?: { conditions?: { type: string }[] } }).status?.conditions;
  if (!Array.isArray(conditions)) return patch;
  const before = ((existing.status as { conditions?: { type: string }[] } | undefined)?.conditions ?? []).filter((c) => !conditions.some((n) => n.type === c.type));
  const p = patch as { status: Record<string, unknown> };
  return { ...p, status: { ...p.status, conditions: [...before, ...conditions] } };
}

/** Label selectors as the API server reads them (kube-sim's parser: equality and set-based). */
function matches(obj: KubeObject, selector: string | undefined): boolean {
  return matchesLabels(parseLabelSelector(selector), obj.metadata.labels);
}

interface LabelsEntry { manager: string; operation: 'Apply' | 'Update'; fieldsV1: { 'f:metadata': { 'f:labels': Record<string, object> } } }

/**
 * managedFields as far as ownership reads them (shared/ownership.ts): which field manager's write
 * set which labels (an apply owns what it sent, an update or patch what it set; a null drops it).
 */
function withManagers(before: KubeObject | undefined, after: KubeObject, req: KubeRequest): KubeObject {
  const entries = ((before?.metadata.managedFields ?? []) as LabelsEntry[]).map((e) => ({ ...e, fieldsV1: { 'f:metadata': { 'f:labels': { ...e.fieldsV1['f:metadata']['f:labels'] } } } }));
  const manager = req.query?.fieldManager as string | undefined;
  if (manager) {
    const operation = req.contentType === 'application/apply-patch+yaml' ? 'Apply' : 'Update';
    let entry = entries.find((e) => e.manager === manager && e.operation === operation);
    if (!entry) entries.push((entry = { manager, operation, fieldsV1: { 'f:metadata': { 'f:labels': {} } } }));
    const sent = Object.entries((req.body as KubeObject).metadata?.labels ?? {}) as [string, string | null][];
    const kept = operation === 'Apply' ? [] : Object.keys(entry.fieldsV1['f:metadata']['f:labels']).filter((f) => !sent.some(([k]) => f === `f:${k}`));
    const set = sent.filter(([, v]) => v !== null).map(([k]) => `f:${k}`);
    entry.fieldsV1['f:metadata']['f:labels'] = Object.fromEntries([...kept, ...set].map((f) => [f, {}]));
  }
  return { ...after, metadata: { ...after.metadata, managedFields: entries } };
}

const status = (code: number, reason: string, message = reason) => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });

export interface MemoryApi {
  client: KubeClient;
  /** Another client on the same store: another reconciler instance (its own caches). */
  newClient(): KubeClient;
  /** Every request that reached the store (faults excluded). */
  requests: KubeRequest[];
  writes(): KubeRequest[];
  put(obj: KubeObject): void;
  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined;
  all(kind: string): KubeObject[];
  /** 422 for objects the API server would refuse. */
  rejectWhen?: (obj: KubeObject) => string | undefined;
  /** Holds a request before the store sees it while the promise it returns is pending (interleavings). */
  hold?: (req: KubeRequest) => Promise<void> | undefined;
}

const PLURALS: Record<string, string> = { Namespace: '/namespaces', ConfigMap: '/configmaps', ServiceAccount: '/serviceaccounts', RoleBinding: 'rbac.authorization.k8s.io/rolebindings', NamespaceTemplate: 'furnish.dev/namespacetemplates', Event: '/events', NetworkPolicy: 'networking.k8s.io/networkpolicies', NamespaceInitializationConfiguration: 'furnish.dev/namespaceinitializationconfigurations', LNamespace: 'furnish.dev/lnamespaces', ClusterRole: 'rbac.authorization.k8s.io/clusterroles', ClusterRoleBinding: 'rbac.authorization.k8s.io/clusterrolebindings' };

export function memoryApi(faults?: FaultHook): MemoryApi {
  const store = new Map<string, Map<string, KubeObject>>();
  let rv = 100;
  const keyOf = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;
  const coll = (c: string) => {
    let m = store.get(c);
    if (!m) store.set(c, (m = new Map()));
    return m;
  };
  const requests: KubeRequest[] = [];
  const api: MemoryApi = {
    client: undefined as unknown as KubeClient,
    newClient: () => api.client,
    requests,
    writes: () => requests.filter((r) => r.method !== 'GET' && r.query?.dryRun === undefined),
    put(obj) {
      const c = PLURALS[obj.kind]!;
      coll(c).set(keyOf(obj.metadata.namespace, obj.metadata.name!), { ...obj, metadata: { uid: `uid-${obj.metadata.name}`, generation: 1, ...obj.metadata, resourceVersion: String(++rv) } });
    },
    get(_apiVersion, kind, namespace, name) {
      return coll(PLURALS[kind]!).get(keyOf(namespace, name));
    },
    all(kind) {
      return [...coll(PLURALS[kind]!).values()];
    },
  };
  const transport = async (req: KubeRequest): Promise<{ status: number; data: unknown }> => {
    await api.hold?.(req);
    requests.push(req);
    const route = parse(req.path);
    if (!route) return { status: 404, data: status(404, 'NotFound') };
    const c = coll(route.collection);
    const existing = route.name ? c.get(keyOf(route.namespace, route.name)) : undefined;
    const save = (obj: KubeObject, code: number) => {
      if (req.query?.dryRun === 'All') return { status: code, data: obj };
      const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv), uid: obj.metadata.uid ?? `uid-${obj.metadata.name}` } };
      c.set(keyOf(obj.metadata.namespace, obj.metadata.name!), stored);
      return { status: code, data: stored };
    };
    switch (req.method) {
      case 'GET': {
        if (route.name) return existing ? { status: 200, data: existing } : { status: 404, data: status(404, 'NotFound') };
        const items = [...c.values()].filter((o) => (route.namespace === undefined || o.metadata.namespace === route.namespace) && matches(o, req.query?.labelSelector as string | undefined));
        return { status: 200, data: { items, metadata: { resourceVersion: String(rv) } } };
      }
      case 'POST': {
        const obj = req.body as KubeObject;
        if (c.has(keyOf(route.namespace, obj.metadata.name!))) return { status: 409, data: status(409, 'AlreadyExists') };
        const bad = api.rejectWhen?.(obj);
        if (bad) return { status: 422, data: status(422, 'Invalid', bad) };
        return save(withManagers(undefined, { ...obj, metadata: { ...obj.metadata, namespace: route.namespace } }, req), 201);
      }
      case 'DELETE': {
        if (!existing) return { status: 404, data: status(404, 'NotFound') };
        const uid = (req.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
        if (uid !== undefined && uid !== existing.metadata.uid) return { status: 409, data: status(409, 'Conflict', `the UID in the precondition (${uid}) does not match the UID in record (${existing.metadata.uid}). The object might have been deleted and then recreated`) };
        c.delete(keyOf(route.namespace, route.name!));
        return { status: 200, data: existing };
      }
      case 'PATCH': {
        if (req.contentType === 'application/apply-patch+yaml') {
          const obj = req.body as KubeObject;
          const bad = api.rejectWhen?.(obj);
          if (bad) return { status: 422, data: status(422, 'Invalid', bad) };
          const merged = existing ? (mergePatch(existing, obj) as KubeObject) : obj;
          return save(withManagers(existing, merged, req), existing ? 200 : 201);
        }
        if (!existing) return { status: 404, data: status(404, 'NotFound') };
        const body = req.contentType === 'application/strategic-merge-patch+json' ? byTypeConditions(existing, req.body) : req.body;
        return save(withManagers(existing, mergePatch(existing, body) as KubeObject, req), 200);
      }
      default:
        return { status: 405, data: status(405, 'MethodNotAllowed') };
    }
  };
  api.newClient = () => createKubeClient({ server: 'https://memory.invalid', agent: undefined as never, headers: async () => ({}) }, { transport, faults, sleep: async () => {}, pacing: { maxPerSecond: 1e9, maxInflight: 1e9 } });
  api.client = api.newClient();
  return api;
}
