// reconcile-organization: trues up Organizations' status from the real namespace list
// (terminating namespaces excluded), releasing reservations whose namespace is now counted or
// whose time ran out. A namespace event trues up only the organization(s) it concerns, at a cost
// that does not grow with the cluster: that Organization read, then its namespaces by one
// labelled list (`furnish.dev/organization=<name>`). A resync trues up every Organization with
// one Organization list and one namespace list. Either way: a write only where something
// changed, resourceVersion-checked; on conflict with the webhook's reservations (or another
// reconciler) both reads are done again. Failed calls are classified once (kube/errors.ts).
import { KEY } from '../keys.ts';
import { apiError, PermanentError, TransientError, type ApiFailure } from '../kube/errors.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { KubeObject } from '../kube/types.ts';
import { trueUp, type CountedNamespace } from './ledger.ts';
import { readError, type OrganizationApi } from './source.ts';
import type { Organization } from './types.ts';
import { organizationName } from './types.ts';

export interface OrganizationReconcileResult {
  organizations: number;
  updated: string[];
  conflicts: number;
  failed: { organization: string; error: string; failure: ApiFailure }[];
}

const PAGE = 500;
const MAX_ATTEMPTS = 8;

function counted(ns: KubeObject): CountedNamespace {
  return { name: ns.metadata.name ?? '', terminating: Boolean(ns.metadata.deletionTimestamp) || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating' };
}

/** Namespaces matching a label selector, every page of the list. */
async function listNamespaces(http: KubeHttp, selector: string, each: (ns: KubeObject) => void): Promise<void> {
  let cont = '';
  do {
    const path = `/api/v1/namespaces?labelSelector=${encodeURIComponent(selector)}&limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    const r = await http<{ items?: KubeObject[]; metadata?: { continue?: string } }>({ method: 'GET', path });
    if (!r.ok || !Array.isArray(r.data?.items)) throw readError(path, r);
    r.data.items.forEach(each);
    cont = r.data.metadata?.continue ?? '';
  } while (cont);
}

/** Namespaces labelled with an organization, by organization. */
export async function namespacesByOrganization(http: KubeHttp): Promise<Map<string, CountedNamespace[]>> {
  const byOrg = new Map<string, CountedNamespace[]>();
  await listNamespaces(http, KEY.organization, (ns) => {
    const org = ns.metadata.labels?.[KEY.organization];
    if (!org) return;
    const list = byOrg.get(org) ?? [];
    list.push(counted(ns));
    byOrg.set(org, list);
  });
  return byOrg;
}

/** The namespaces of one organization: a list whose cost is that organization's size, not the cluster's. */
export async function namespacesOf(http: KubeHttp, organization: string): Promise<CountedNamespace[]> {
  const list: CountedNamespace[] = [];
  await listNamespaces(http, `${KEY.organization}=${organization}`, (ns) => list.push(counted(ns)));
  return list;
}

function newResult(): OrganizationReconcileResult {
  return { organizations: 0, updated: [], conflicts: 0, failed: [] };
}

/**
 * Writes one Organization's trued-up status. Returns true on a conflict (redo with fresh reads).
 * An Organization deleted since it was read (404) needs nothing more.
 */
async function writeTrueUp(api: OrganizationApi, org: Organization, namespaces: readonly CountedNamespace[], now: number, result: OrganizationReconcileResult): Promise<boolean> {
  const name = organizationName(org);
  const status = trueUp(org, namespaces, now);
  if (!status) return false;
  const written = await api.writeStatus(org, status);
  if (written.ok) result.updated.push(name);
  else if (written.conflict) return true;
  else if (written.status !== 404) result.failed.push({ organization: name, error: written.error, failure: { status: written.status, message: written.error } });
  return false;
}

/**
 * One pass over `wanted` (all when undefined): the Organizations read first, then the namespaces,
 * so that a namespace whose reservation the Organization holds is either in the list (counted,
 * reservation dropped) or not yet (reservation kept). Names whose write met a conflict are returned:
 * they are redone with both lists read again, never with this pass's namespace list, which a
 * concurrent reconciler may already have superseded.
 */
async function allPass(api: OrganizationApi, http: KubeHttp, now: () => number, wanted: ReadonlySet<string> | undefined, result: OrganizationReconcileResult): Promise<Set<string>> {
  const organizations = (await api.list()).filter((o) => !wanted || wanted.has(organizationName(o)));
  if (!wanted) result.organizations = organizations.length;
  const byOrg = await namespacesByOrganization(http);
  const conflicted = new Set<string>();
  for (const org of organizations) {
    if (await writeTrueUp(api, org, byOrg.get(organizationName(org)) ?? [], now(), result)) conflicted.add(organizationName(org));
  }
  result.conflicts += conflicted.size;
  return conflicted;
}

/** Every Organization (a resync): one Organization list and one namespace list per pass. */
export async function reconcileOrganizations(api: OrganizationApi, http: KubeHttp, now: () => number = Date.now): Promise<OrganizationReconcileResult> {
  const result = newResult();
  let wanted: Set<string> | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    wanted = await allPass(api, http, now, wanted, result);
    if (wanted.size === 0) return result;
  }
  for (const name of wanted ?? []) result.failed.push(tooManyConflicts(name));
  return result;
}

function tooManyConflicts(organization: string): OrganizationReconcileResult['failed'][number] {
  const error = `${MAX_ATTEMPTS} conflicting status updates in a row`;
  return { organization, error, failure: { status: 409, reason: 'Conflict', message: error } };
}

/**
 * One Organization (a namespace event): read it, then list its namespaces, write what changed;
 * on conflict, again from the read. An Organization that does not exist (404) needs nothing.
 */
export async function reconcileOrganization(api: OrganizationApi, http: KubeHttp, name: string, now: () => number = Date.now): Promise<OrganizationReconcileResult> {
  const result = newResult();
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const org = await api.get(name);
    if (!org) return result;
    result.organizations = 1;
    if (!(await writeTrueUp(api, org, await namespacesOf(http, name), now(), result))) return result;
    result.conflicts += 1;
  }
  result.failed.push(tooManyConflicts(name));
  return result;
}

/**
 * What a pass's failed writes mean for the delivery: any transient one (5xx, 429, a conflict that
 * kept coming back) fails it so that it is redelivered; permanent ones only (403, 422) are
 * reported and acknowledged, never redelivered to the dead-letter limit.
 */
export function failureOf(result: OrganizationReconcileResult): TransientError | PermanentError | undefined {
  if (result.failed.length === 0) return undefined;
  const errors = result.failed.map((f) => apiError(`write status of organization ${f.organization}`, f.failure));
  const what = `organizations not trued up: ${errors.map((e) => e.message).join('; ')}`;
  const transient = errors.find((e) => e instanceof TransientError);
  return transient ? new TransientError(what, transient.failure) : new PermanentError(what, errors[0]!.failure);
}
