// A small in-memory Kubernetes API for unit tests of the executors: enough of GET/LIST (label
// selectors as the API server reads them, cluster-wide lists), server-side apply and
// managedFields (kube-sim's code: what each field manager owns, as drift and ownership read it),
// create, delete (with a uid precondition), merge patch (RFC 7386) and `dryRun=All`. A write
// that changes nothing keeps the resourceVersion. It plugs in as the client's transport, so the
// real seam (retries, rate limit, metrics, faults) runs on top of it. Integration tests use
// kube-sim itself; this keeps the unit tests fast and network-free.
import { createKubeClient, type FaultHook, type KubeClient, type KubeRequest } from '../../../shared/kube/client.ts';
import { FIELD_MANAGER } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { serverSideApply } from '../../support/kube-sim/apply.ts';
import { ApiError } from '../../support/kube-sim/errors.ts';
import { deepEqual } from '../../support/kube-sim/fieldsets.ts';
import { managersForApply, managersForWrite, recordUpdate, setManagedFields, type WriteContext } from '../../support/kube-sim/managed-fields.ts';
import { builtinTypes, tableSchema, type ResourceType } from '../../support/kube-sim/resources.ts';
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

const BUILTIN_TYPES = builtinTypes();

/** kube-sim's description of a kind (its list semantics); a custom kind (furnish.dev): untyped, with a status subresource. */
function typeOf(obj: KubeObject): ResourceType {
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') as [string, string] : ['', obj.apiVersion];
  const builtin = BUILTIN_TYPES.find((t) => t.group === group && t.kind === obj.kind);
  if (builtin) return builtin;
  const plural = `${obj.kind.toLowerCase()}s`;
  return {
    group, version, kind: obj.kind, listKind: `${obj.kind}List`, plural, singular: obj.kind.toLowerCase(), namespaced: true, shortNames: [],
    statusSubresource: true, generation: true, strategicMerge: false, merge: { ...tableSchema(obj.kind), typed: false }, verbs: [],
  };
}

interface Writer {
  manager: string;
  subresource?: string;
}

const contextOf = (obj: KubeObject, w: Writer): WriteContext => ({ type: typeOf(obj), manager: w.manager, ...(w.subresource ? { subresource: w.subresource } : {}) });

/**
 * What the API server holds after `writer` applies `config` over `live` (undefined: absent),
 * managedFields included, by kube-sim's code (apply.ts): the manager owns exactly what it sent,
 * what it applied before and no longer does is pruned, what it changes leaves the others' entries,
 * and an unchanged value another manager applied too is shared. Throws kube-sim's ApiError (409)
 * on a conflict unless forced.
 */
export function serverApply(live: KubeObject | undefined, config: KubeObject, writer: Writer = { manager: FIELD_MANAGER }, force = true): KubeObject {
  const ctx = contextOf(config, writer);
  const applied = serverSideApply(live, config, live ? managersForApply(live, ctx) : new Map(), ctx, force);
  const next = { ...applied.object, metadata: { ...applied.object.metadata } };
  setManagedFields(next, applied.managers);
  return next;
}

/**
 * What the API server holds after `writer` writes `next` over `live` by create, update or patch
 * (managed-fields.ts recordUpdate): every other manager loses the fields it changed or removed,
 * and the writer owns what it changed; a value written again unchanged moves nothing.
 */
export function serverUpdate(live: KubeObject | undefined, next: KubeObject, writer: Writer): KubeObject {
  const out = { ...next, metadata: { ...next.metadata } };
  setManagedFields(out, recordUpdate(live, out, managersForWrite(live, next), contextOf(next, writer)));
  return out;
}

/** managedFields for a request: an apply's, or any other write's (a write without fieldManager is "unknown"'s). */
function withManagers(before: KubeObject | undefined, body: KubeObject, req: KubeRequest, subresource: string | undefined): KubeObject {
  const writer = { manager: (req.query?.fieldManager as string | undefined) ?? 'unknown', subresource };
  if (req.contentType === APPLY) return serverApply(before, body, writer, req.query?.force === true || req.query?.force === 'true');
  return serverUpdate(before, body, writer);
}

const APPLY = 'application/apply-patch+yaml';

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
      // A write that changes nothing is no write: the same resourceVersion, nothing a watch would see (as the API server does).
      if (existing && deepEqual(obj, existing)) return { status: code, data: existing };
      const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv), uid: obj.metadata.uid ?? `uid-${obj.metadata.name}` } };
      c.set(keyOf(obj.metadata.namespace, obj.metadata.name!), stored);
      return { status: code, data: stored };
    };
    try {
      return respond(req, route, c, existing, save);
    } catch (e) {
      // An unforced apply that conflicts (kube-sim's serverSideApply): 409 with its causes.
      if (e instanceof ApiError) return { status: e.code, data: e.status };
      throw e;
    }
  };
  const respond = (req: KubeRequest, route: Route, c: Map<string, KubeObject>, existing: KubeObject | undefined, save: (obj: KubeObject, code: number) => { status: number; data: unknown }): { status: number; data: unknown } => {
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
        const created = { ...obj, metadata: { ...obj.metadata, namespace: route.namespace } };
        return save(withManagers(undefined, created, req, undefined), 201);
      }
      case 'DELETE': {
        if (!existing) return { status: 404, data: status(404, 'NotFound') };
        const uid = (req.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
        if (uid !== undefined && uid !== existing.metadata.uid) return { status: 409, data: status(409, 'Conflict', `the UID in the precondition (${uid}) does not match the UID in record (${existing.metadata.uid}). The object might have been deleted and then recreated`) };
        c.delete(keyOf(route.namespace, route.name!));
        return { status: 200, data: existing };
      }
      case 'PATCH': {
        if (req.contentType === APPLY) {
          const obj = req.body as KubeObject;
          const bad = api.rejectWhen?.(obj);
          if (bad) return { status: 422, data: status(422, 'Invalid', bad) };
          return save(withManagers(existing, obj, req, route.subresource), existing ? 200 : 201);
        }
        if (!existing) return { status: 404, data: status(404, 'NotFound') };
        // A resourceVersion in the patch is a precondition, as on the API server.
        const sentVersion = (req.body as { metadata?: { resourceVersion?: string } } | undefined)?.metadata?.resourceVersion;
        if (sentVersion && sentVersion !== existing.metadata.resourceVersion) return { status: 409, data: status(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again') };
        const body = req.contentType === 'application/strategic-merge-patch+json' ? byTypeConditions(existing, req.body) : req.body;
        const merged = mergePatch(existing, body) as KubeObject;
        return save(withManagers(existing, merged, req, route.subresource), 200);
      }
      default:
        return { status: 405, data: status(405, 'MethodNotAllowed') };
    }
  };
  api.newClient = () => createKubeClient({ server: 'https://memory.invalid', agent: undefined as never, headers: async () => ({}) }, { transport, faults, sleep: async () => {}, pacing: { maxPerSecond: 1e9, maxInflight: 1e9 } });
  api.client = api.newClient();
  return api;
}
