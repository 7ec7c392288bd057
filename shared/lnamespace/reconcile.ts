// reconcile-lnamespace's executor: read the LNamespace, its namespace, what it holds and its
// organization's billing map; let the pure planner decide; carry out exactly the planned writes;
// record the status when it changed. Level-triggered: the message only names the LNamespace.
// Transient failures throw TransientError (Pub/Sub redelivers); permanent ones are logged and the
// delivery acknowledged (the next resync tries again), so a broken object never loops.
import { KEY } from '../keys.ts';
import { applyObject, listAll, mergePatch, NAMESPACES } from '../kube/api.ts';
import type { KubeClient, KubeResponse } from '../kube/client.ts';
import { resourcePath, type ResourceInfo } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { mapLimit } from '../reconcile/concurrency.ts';
import { classifyApiError, TransientError } from '../kube/errors.ts';
import type { Logger } from '../log.ts';
import { holderLabel, sharedObjects, type LnsSettings } from './desired.ts';
import { keyOf, planLNamespace, statusNeedsWrite, withTransitionTimes, type LnsWrite, type NamespaceState } from './plan.ts';
import { CLUSTERROLEBINDINGS, CLUSTERROLES, LNAMESPACES, ORGANIZATIONS, ROLEBINDINGS, ROLES, type LNamespace } from './types.ts';

export interface LnsDeps {
  kube: KubeClient;
  settings: LnsSettings;
  log: Logger;
  concurrency?: number;
  now?: () => Date;
}

export interface LnsResult {
  result: 'converged' | 'gone' | 'waiting' | 'failed';
  lnamespace: string;
  namespace?: NamespaceState;
  /** Write requests issued (objects, namespace, status). */
  writes: number;
  reason?: string;
}

const INFO: Record<string, ResourceInfo> = { Namespace: NAMESPACES, RoleBinding: ROLEBINDINGS, Role: ROLES, ClusterRole: CLUSTERROLES, ClusterRoleBinding: CLUSTERROLEBINDINGS };

/** A read that will fail the same way next time (403, 422): reported once, the delivery acknowledged. */
class PermanentReadError extends Error {}

function transientOr(what: string, res: KubeResponse<unknown>): string {
  const c = classifyApiError({ status: res.status, reason: res.reason, message: res.error });
  if (c.class === 'transient') throw new TransientError(`${what}: ${c.why}: ${res.error ?? ''}`, { status: res.status, reason: res.reason, message: res.error });
  return `${what}: ${c.why}: ${res.error ?? ''}`;
}

async function getOrNull(kube: KubeClient, path: string, what: string): Promise<KubeObject | null> {
  const res = await kube.call<KubeObject>({ method: 'GET', path });
  if (res.ok) return res.data!;
  if (res.status === 404) return null;
  throw new PermanentReadError(transientOr(what, res));
}

async function listHeld(kube: KubeClient, info: ResourceInfo, kind: string, selector: string, namespace?: string): Promise<KubeObject[]> {
  const { result, items } = await listAll(kube, resourcePath(info, namespace), { labelSelector: selector });
  if (!result.ok) throw new PermanentReadError(transientOr(`list ${info.plural}`, { ok: false, status: result.status, data: undefined, reason: result.reason, error: result.error, attempts: 1 }));
  return items.map((i) => ({ ...i, apiVersion: i.apiVersion ?? `${info.group}/${info.version}`, kind: i.kind ?? kind }));
}

/** spec.billing of the named Organization; none when there is no such Organization (or no Organization API). */
async function organizationBilling(kube: KubeClient, org: string | undefined): Promise<Record<string, unknown> | undefined> {
  if (!org) return undefined;
  const res = await kube.call<KubeObject>({ method: 'GET', path: resourcePath(ORGANIZATIONS, undefined, org) });
  if (!res.ok) {
    // Tolerant: no Organization API, no such Organization, or no right to read it all mean "no defaults".
    if (res.status !== 404) transientOr(`get organization ${org}`, res);
    return undefined;
  }
  const billing = (res.data?.spec as { billing?: unknown } | undefined)?.billing;
  return billing && typeof billing === 'object' && !Array.isArray(billing) ? billing as Record<string, unknown> : undefined;
}

async function execute(deps: LnsDeps, w: LnsWrite): Promise<KubeResponse<unknown>> {
  const info = INFO[w.object.kind]!;
  const { namespace, name } = w.object.metadata;
  if (w.op === 'apply') return applyObject(deps.kube, info, w.object, { fieldManager: w.manager });
  // The last holder deletes a shared object only as it saw it: a holder arriving meanwhile makes this a 409, and the retry re-plans.
  const body = { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', ...(w.resourceVersion ? { preconditions: { resourceVersion: w.resourceVersion } } : {}) };
  return deps.kube.call({ method: 'DELETE', path: resourcePath(info, namespace, name), body });
}

export async function reconcileLNamespace(deps: LnsDeps, name: string): Promise<LnsResult> {
  try {
    return await converge(deps, name);
  } catch (e) {
    if (!(e instanceof PermanentReadError)) throw e;
    deps.log.log('ERROR', 'lnamespace not reconciled: a read failed permanently', { lnamespace: name, error: e.message });
    return { result: 'failed', lnamespace: name, writes: 0, reason: e.message };
  }
}

async function converge(deps: LnsDeps, name: string): Promise<LnsResult> {
  const { kube, log } = deps;
  const lns = await getOrNull(kube, resourcePath(LNAMESPACES, undefined, name), `get lnamespace ${name}`) as LNamespace | null;
  // Deleted: the garbage collector removes what it owned (and its share of shared objects).
  if (!lns || lns.metadata.deletionTimestamp) return { result: 'gone', lnamespace: name, writes: 0 };
  const namespace = await getOrNull(kube, resourcePath(NAMESPACES, undefined, name), `get namespace ${name}`);
  const selector = holderLabel(name);
  // Cluster-wide: a ServiceAccount sudoer's self-impersonation Role and RoleBinding live in its own namespace.
  const held = (await Promise.all([
    listHeld(kube, ROLEBINDINGS, 'RoleBinding', selector),
    listHeld(kube, ROLES, 'Role', selector),
    listHeld(kube, CLUSTERROLES, 'ClusterRole', selector),
    listHeld(kube, CLUSTERROLEBINDINGS, 'ClusterRoleBinding', selector),
  ])).flat();
  const heldKeys = new Set(held.map(keyOf));
  const notHeld = sharedObjects(lns).filter((o) => !heldKeys.has(keyOf(o)));
  const shared = (await Promise.all(notHeld.map((o) => getOrNull(kube, resourcePath(INFO[o.kind]!, undefined, o.metadata.name), `get ${keyOf(o)}`).then((got) => got && { ...got, apiVersion: o.apiVersion, kind: o.kind })))).filter((o): o is KubeObject => o !== null);
  const organization = lns.metadata.labels?.[KEY.organization] ?? namespace?.metadata.labels?.[KEY.organization];
  const plan = planLNamespace({ lns, namespace, held, shared, organizationBilling: await organizationBilling(kube, organization) }, deps.settings);

  let writes = 0;
  const failures: string[] = [];
  const transient: string[] = [];
  const run = async (w: LnsWrite): Promise<KubeResponse<unknown>> => {
    writes += 1;
    const res = await execute(deps, w);
    if (res.ok || (w.op === 'delete' && res.status === 404)) return res;
    const c = classifyApiError({ status: res.status, reason: res.reason, message: res.error });
    (c.class === 'transient' ? transient : failures).push(`${w.op} ${w.key}: ${c.why}: ${res.error ?? ''}`);
    return res;
  };
  const [first, ...rest] = plan.writes;
  // The namespace just created (or adopted) is recorded by uid from the answer, so a sudoer removing
  // its ownerReference right away cannot make it look like someone else's.
  let namespaceUID = plan.status.namespaceUID;
  if (first && first.object.kind === 'Namespace') {
    const res = await run(first);
    if (res.ok) namespaceUID = (res.data as KubeObject | undefined)?.metadata?.uid ?? namespaceUID;
  } else if (first) rest.unshift(first);
  if (transient.length === 0 && failures.length === 0) await mapLimit(rest, deps.concurrency ?? 8, run);
  if (transient.length > 0) throw new TransientError(`lnamespace ${name}: ${transient.length} transient failure(s): ${transient.slice(0, 3).join('; ')}`, { status: 503 });

  const planned = namespaceUID ? { ...plan.status, namespaceUID } : plan.status;
  const status = failures.length > 0
    ? { ...planned, conditions: [{ type: 'Ready', status: 'False' as const, reason: 'WriteFailed', message: failures.slice(0, 3).join('; ').slice(0, 1000) }] }
    : planned;
  if (statusNeedsWrite(lns.status, status)) {
    writes += 1;
    const res = await mergePatch(kube, `${resourcePath(LNAMESPACES, undefined, name)}/status`, { status: withTransitionTimes(lns.status, status, deps.now?.() ?? new Date()) });
    if (!res.ok && res.status !== 404) transientOr(`status of lnamespace ${name}`, res);
  }
  const result: LnsResult['result'] = failures.length > 0 ? 'failed' : plan.namespace === 'conflict' || plan.namespace === 'terminating' ? 'waiting' : 'converged';
  log.log(failures.length > 0 ? 'WARNING' : 'INFO', `lnamespace ${result}`, { lnamespace: name, namespace: plan.namespace, writes, planned: plan.writes.map((w) => `${w.op} ${w.key} (${w.why})`), failures });
  return { result, lnamespace: name, namespace: plan.namespace, writes, ...(failures.length > 0 ? { reason: failures.join('; ') } : {}) };
}
