// What a ResourceQuota's status.used holds, computed as kube-controller-manager's quota
// evaluators compute it (pkg/quota/v1/evaluator/core and generic, 1.26): pods (object count and
// compute requests/limits), services, persistent volume claims, and an object count
// (`count/<plural>[.<group>]`) for every other namespaced kind the server serves, except events.
// Names no evaluator knows (`count/widgets.example.com` on a cluster without widgets, `example.com/foo`)
// get no entry in used. Pure functions: the controller (quota-controller.ts) lists and writes.
import { formatQuantity, parseQuantity, type ParsedQuantity } from './quantity.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A ResourceList being summed: name → value (keeping the format Quantity.Add keeps). */
export type Usage = Map<string, ParsedQuantity>;

/** A namespaced kind the quota controller can count, as `count/<plural>` (core) or `count/<plural>.<group>`. */
export interface CountableKind {
  group: string;
  plural: string;
}

// --- Quantity arithmetic as quota.Add and quota.Max do it ---------------------------------

const ZERO: ParsedQuantity = { milli: 0n, format: 'DecimalSI' };
const ONE: ParsedQuantity = { milli: 1000n, format: 'DecimalSI' };

/** Quantity.Add: a zero receiver takes the other's format, otherwise keeps its own. */
function plus(a: ParsedQuantity, b: ParsedQuantity): ParsedQuantity {
  return { milli: a.milli + b.milli, format: a.milli === 0n ? b.format : a.format };
}

/** quota.Add: every key of either list, summed where both have it. */
export function addUsage(a: Usage, b: Usage): Usage {
  const result: Usage = new Map(a);
  for (const [k, v] of b) result.set(k, result.has(k) ? plus(result.get(k)!, v) : v);
  return result;
}

/** quota.Max: every key of either list, the larger value where both have it (the first on a tie). */
function maxUsage(a: Usage, b: Usage): Usage {
  const result: Usage = new Map(a);
  for (const [k, v] of b) if (!result.has(k) || v.milli > result.get(k)!.milli) result.set(k, v);
  return result;
}

/** A ResourceList of an object (values the server already stored in canonical form). */
function resourceList(list: unknown): Usage {
  const usage: Usage = new Map();
  if (!isRecord(list)) return usage;
  for (const [k, v] of Object.entries(list)) {
    const q = typeof v === 'string' || typeof v === 'number' ? parseQuantity(String(v)) : null;
    if (q) usage.set(k, q);
  }
  return usage;
}

/** A ResourceList as the API shows it: keys sorted (Go encodes maps so), values canonical. */
export function encodeUsage(usage: Usage): Record<string, string> {
  return Object.fromEntries([...usage.keys()].sort().map((k) => [k, formatQuantity(usage.get(k)!)]));
}

/** A ResourceQuota's ResourceLists with their keys sorted, as the server encodes Go maps (in place). */
export function sortQuotaLists(quota: KubeObject): void {
  for (const [parent, field] of [['spec', 'hard'], ['status', 'hard'], ['status', 'used']] as const) {
    const holder = (quota as Json)[parent];
    if (!isRecord(holder) || !isRecord(holder[field])) continue;
    const value = holder[field];
    holder[field] = Object.fromEntries(Object.keys(value).sort().map((k) => [k, value[k]]));
  }
}

const at = (o: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, k) => (isRecord(v) ? v[k] : undefined), o);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

// --- evaluators ----------------------------------------------------------------------------

interface Evaluator {
  /** The kind it lists (typeKey parts). */
  group: string;
  plural: string;
  matches(resource: string): boolean;
  /** Whether the object counts under the quota's scopes (only pods match any scope). */
  inScope(obj: KubeObject, scopes: ScopeRequirement[]): boolean;
  usage(obj: KubeObject): Usage;
}

const countName = (k: CountableKind): string => (k.group ? `count/${k.plural}.${k.group}` : `count/${k.plural}`);
/** The pre-`count/` names of some core kinds (legacyObjectCountAliases). */
const LEGACY_ALIAS: Record<string, string> = { configmaps: 'configmaps', resourcequotas: 'resourcequotas', replicationcontrollers: 'replicationcontrollers', secrets: 'secrets' };

function objectCountEvaluator(kind: CountableKind): Evaluator {
  const names = new Set([countName(kind), ...(kind.group === '' && LEGACY_ALIAS[kind.plural] ? [LEGACY_ALIAS[kind.plural]!] : [])]);
  return {
    ...kind,
    matches: (r) => names.has(r),
    inScope: (_obj, scopes) => scopes.length === 0,
    usage: () => new Map([...names].map((n) => [n, ONE])),
  };
}

// Pods: the object count always; compute resources only while the pod is not terminal.
const POD_COMPUTE = new Set(['pods', 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage']);
const isHugePages = (r: string): boolean => r.startsWith('hugepages-');
/** IsExtendedResourceName: a domain-qualified name outside kubernetes.io, not itself `requests.`-prefixed. */
const isExtended = (r: string): boolean => r.includes('/') && !r.startsWith('requests.') && !/^([^/]*\.)?kubernetes\.io\//.test(r);

function podMatches(r: string): boolean {
  if (r === 'count/pods' || POD_COMPUTE.has(r) || isHugePages(r)) return true;
  if (!r.startsWith('requests.')) return false;
  const rest = r.slice('requests.'.length);
  return isHugePages(rest) || isExtended(rest);
}

const isTerminal = (pod: KubeObject): boolean => ['Succeeded', 'Failed'].includes(String(at(pod, 'status', 'phase') ?? ''));

/** PodUsageFunc: containers summed, the largest init container taken where it is larger, overhead added. */
function podUsage(pod: KubeObject): Usage {
  const count: Usage = new Map([['count/pods', ONE]]);
  if (isTerminal(pod) || pod.metadata.deletionTimestamp) return count;
  let requests: Usage = new Map();
  let limits: Usage = new Map();
  for (const c of list(at(pod, 'spec', 'containers'))) {
    requests = addUsage(requests, resourceList(at(c, 'resources', 'requests')));
    limits = addUsage(limits, resourceList(at(c, 'resources', 'limits')));
  }
  for (const c of list(at(pod, 'spec', 'initContainers'))) {
    requests = maxUsage(requests, resourceList(at(c, 'resources', 'requests')));
    limits = maxUsage(limits, resourceList(at(c, 'resources', 'limits')));
  }
  const overhead = resourceList(at(pod, 'spec', 'overhead'));
  requests = addUsage(requests, overhead);
  limits = addUsage(limits, overhead);
  const result: Usage = new Map([...count, ['pods', ONE]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const request = requests.get(r);
    if (request) result.set(r, request).set(`requests.${r}`, request);
    const limit = limits.get(r);
    if (limit) result.set(`limits.${r}`, limit);
  }
  for (const [r, q] of requests) {
    if (isHugePages(r)) result.set(r, q).set(`requests.${r}`, q);
    else if (isExtended(r)) result.set(`requests.${r}`, q);
  }
  return result;
}

const PODS: Evaluator = { group: '', plural: 'pods', matches: podMatches, inScope: (pod, scopes) => scopes.every((s) => podInScope(pod, s)), usage: podUsage };

const SERVICES: Evaluator = {
  group: '', plural: 'services',
  matches: (r) => ['services', 'count/services', 'services.loadbalancers', 'services.nodeports'].includes(r),
  inScope: (_obj, scopes) => scopes.length === 0,
  usage: (svc) => {
    const type = String(at(svc, 'spec', 'type') ?? 'ClusterIP');
    const ports = list(at(svc, 'spec', 'ports')).length;
    const balanced = type === 'LoadBalancer';
    const nodePorts = type === 'NodePort' || (balanced && at(svc, 'spec', 'allocateLoadBalancerNodePorts') !== false) ? ports : 0;
    const n = (v: number): ParsedQuantity => ({ milli: BigInt(v) * 1000n, format: 'DecimalSI' });
    return new Map([['services', ONE], ['count/services', ONE], ['services.loadbalancers', n(balanced ? 1 : 0)], ['services.nodeports', n(nodePorts)]]);
  },
};

const STORAGE_CLASS = '.storageclass.storage.k8s.io/';
const PVCS: Evaluator = {
  group: '', plural: 'persistentvolumeclaims',
  matches: (r) => ['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage'].includes(r)
    || (r.includes(STORAGE_CLASS) && ['requests.storage', 'persistentvolumeclaims'].includes(r.slice(r.indexOf(STORAGE_CLASS) + STORAGE_CLASS.length))),
  inScope: (_obj, scopes) => scopes.length === 0,
  usage: (pvc) => {
    const result: Usage = new Map([['persistentvolumeclaims', ONE], ['count/persistentvolumeclaims', ONE]]);
    const storage = resourceList(at(pvc, 'spec', 'resources', 'requests')).get('storage');
    const storageClass = at(pvc, 'spec', 'storageClassName');
    if (typeof storageClass === 'string' && storageClass) result.set(`${storageClass}${STORAGE_CLASS}persistentvolumeclaims`, ONE);
    if (storage) {
      result.set('requests.storage', storage);
      if (typeof storageClass === 'string' && storageClass) result.set(`${storageClass}${STORAGE_CLASS}requests.storage`, storage);
    }
    return result;
  },
};

// --- scopes ----------------------------------------------------------------------------------

export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

/** spec.scopes (each an Exists) and spec.scopeSelector.matchExpressions, as one list. */
export function scopesOf(quota: KubeObject): ScopeRequirement[] {
  const named = list(at(quota, 'spec', 'scopes')).map((s) => ({ scopeName: String(s), operator: 'Exists' }));
  const selected = list(at(quota, 'spec', 'scopeSelector', 'matchExpressions')).filter(isRecord)
    .map((e) => ({ scopeName: String(e.scopeName), operator: String(e.operator), values: list(e.values).map(String) }));
  return [...named, ...selected];
}

/** qos.GetPodQOS == BestEffort: no container (init included) requests or limits cpu or memory. */
function isBestEffort(pod: KubeObject): boolean {
  const containers = [...list(at(pod, 'spec', 'containers')), ...list(at(pod, 'spec', 'initContainers'))];
  return containers.every((c) => ['requests', 'limits'].every((f) => {
    const r = resourceList(at(c, 'resources', f));
    return !['cpu', 'memory'].some((n) => (r.get(n)?.milli ?? 0n) !== 0n);
  }));
}

function hasCrossNamespaceAffinity(pod: KubeObject): boolean {
  const terms = ['podAffinity', 'podAntiAffinity'].flatMap((a) => ['requiredDuringSchedulingIgnoredDuringExecution', 'preferredDuringSchedulingIgnoredDuringExecution']
    .flatMap((w) => list(at(pod, 'spec', 'affinity', a, w)).map((t) => (isRecord(t) && isRecord(t.podAffinityTerm) ? t.podAffinityTerm : t))));
  return terms.some((t) => list(at(t, 'namespaces')).length > 0 || at(t, 'namespaceSelector') !== undefined);
}

/** podMatchesScopeFunc. */
function podInScope(pod: KubeObject, s: ScopeRequirement): boolean {
  const deadline = at(pod, 'spec', 'activeDeadlineSeconds');
  const terminating = typeof deadline === 'number' && deadline >= 0;
  switch (s.scopeName) {
    case 'Terminating': return terminating;
    case 'NotTerminating': return !terminating;
    case 'BestEffort': return isBestEffort(pod);
    case 'NotBestEffort': return !isBestEffort(pod);
    case 'CrossNamespacePodAffinity': return hasCrossNamespaceAffinity(pod);
    case 'PriorityClass': {
      const name = String(at(pod, 'spec', 'priorityClassName') ?? '');
      if (s.operator === 'Exists') return name !== '';
      if (s.operator === 'DoesNotExist') return name === '';
      const listed = (s.values ?? []).includes(name);
      return s.operator === 'In' ? listed : s.operator === 'NotIn' ? !listed : false;
    }
    default: return false;
  }
}

// --- the calculation -----------------------------------------------------------------------

/** The quota controller ignores events (core and events.k8s.io); pods, services and PVCs have their own evaluators. */
const NOT_COUNTED_GENERICALLY = new Set(['events', 'pods', 'services', 'persistentvolumeclaims']);

/** Every evaluator of a cluster serving `kinds` (namespaced, listable). */
export function evaluators(kinds: CountableKind[]): Evaluator[] {
  const generic = kinds.filter((k) => !NOT_COUNTED_GENERICALLY.has(k.plural)).map(objectCountEvaluator);
  return [PODS, SERVICES, PVCS, ...generic];
}

/** The namespaced kinds a real 1.26 API server serves whatever kube-sim serves: counted (zero here) all the same. */
export const ALWAYS_SERVED: CountableKind[] = [
  ...['configmaps', 'endpoints', 'limitranges', 'persistentvolumeclaims', 'pods', 'podtemplates', 'replicationcontrollers', 'resourcequotas', 'secrets', 'serviceaccounts', 'services']
    .map((plural) => ({ group: '', plural })),
  ...[['apps', 'controllerrevisions'], ['apps', 'daemonsets'], ['apps', 'deployments'], ['apps', 'replicasets'], ['apps', 'statefulsets'],
    ['autoscaling', 'horizontalpodautoscalers'], ['batch', 'cronjobs'], ['batch', 'jobs'], ['coordination.k8s.io', 'leases'],
    ['discovery.k8s.io', 'endpointslices'], ['networking.k8s.io', 'ingresses'], ['networking.k8s.io', 'networkpolicies'],
    ['policy', 'poddisruptionbudgets'], ['rbac.authorization.k8s.io', 'rolebindings'], ['rbac.authorization.k8s.io', 'roles'],
    ['storage.k8s.io', 'csistoragecapacities']].map(([group, plural]) => ({ group: group!, plural: plural! })),
];

/** Whether an object of this kind can change what any of the quota's hard resources count. */
export function tracks(all: Evaluator[], group: string, plural: string, hard: string[]): Evaluator | undefined {
  return all.find((e) => e.group === group && e.plural === plural && hard.some((r) => e.matches(r)));
}

/**
 * quota.CalculateUsage: for each evaluator matching some hard resource, zero for each matched
 * resource plus the usage of every object in scope; masked to the matched resources.
 */
export function calculateUsage(all: Evaluator[], hard: string[], scopes: ScopeRequirement[], objectsOf: (e: Evaluator) => KubeObject[]): Usage {
  let used: Usage = new Map();
  for (const e of all) {
    const matched = hard.filter((r) => e.matches(r));
    if (matched.length === 0) continue;
    let stats: Usage = new Map(matched.map((r) => [r, ZERO]));
    for (const obj of objectsOf(e)) if (e.inScope(obj, scopes)) stats = addUsage(stats, mask(e.usage(obj), matched));
    used = addUsage(used, stats);
  }
  return used;
}

export function mask(usage: Usage, names: string[]): Usage {
  return new Map([...usage].filter(([k]) => names.includes(k)));
}

/**
 * The status the controller writes (syncResourceQuota): hard = spec.hard; used = the previous
 * observation, overwritten by the new one, masked to the hard resources.
 */
export function quotaStatus(quota: KubeObject, newUsage: Usage): { hard: Record<string, string>; used: Record<string, string> } {
  const hard = resourceList(at(quota, 'spec', 'hard'));
  const names = [...hard.keys()];
  const used = mask(new Map([...resourceList(at(quota, 'status', 'used')), ...newUsage]), names);
  return { hard: encodeUsage(hard), used: encodeUsage(used) };
}

/** The ResourceQuota admission plugin's accounting of a create: used plus the object's usage, for resources in status.hard. */
export function usedAfterCreate(quota: KubeObject, e: Evaluator, obj: KubeObject): Record<string, string> | null {
  const hard = Object.keys(isRecord(at(quota, 'status', 'hard')) ? at(quota, 'status', 'hard') as Json : {});
  const matched = hard.filter((r) => e.matches(r));
  if (matched.length === 0 || !e.inScope(obj, scopesOf(quota))) return null;
  const delta = mask(e.usage(obj), matched);
  if (delta.size === 0) return null;
  return encodeUsage(addUsage(resourceList(at(quota, 'status', 'used')), delta));
}

export type { Evaluator };
export const usageOf = (e: Evaluator, obj: KubeObject): Record<string, string> => encodeUsage(e.usage(obj));
