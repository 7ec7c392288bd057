// reconcile-organization: trues up Organizations' status from the real namespace list
// (terminating namespaces excluded), releasing reservations whose namespace is now counted or
// whose time ran out. A namespace event trues up only the organization(s) it concerns: that
// Organization read, then its namespaces by one labelled list (`furnish.dev/organization=<name>`)
// from the API server's watch cache, at least as fresh as the event (see cachedNamespacesOf). Only
// that makes its cost the organization's size: the API server has no label index, and the same
// list without a resourceVersion is read from etcd, where it reads and decodes every namespace of
// the cluster to keep a few (`npm run bench -- organizations`, kube-apiserver 1.26: 5.2x slower
// than from the cache with 1,000 namespaces, 10.6x with 5,000). A resync trues up every
// Organization with one Organization list and one namespace list from etcd. Either way: a write only where something changed,
// resourceVersion-checked; on conflict with the webhook's reservations (or another reconciler)
// both reads are done again. Failed calls are classified once (kube/errors.ts).
import { KEY } from '../keys.ts';
import { apiError, PermanentError, TransientError, type ApiFailure } from '../kube/errors.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Logger } from '../log.ts';
import { trueUp, type CountedNamespace, type ListSource } from './ledger.ts';
import { readError, type OrganizationApi } from './source.ts';
import type { Organization } from './types.ts';
import { organizationName } from './types.ts';
import { withEnforcement } from './enforced.ts';
import { isRevision, newerRevision } from '../kube/revisions.ts';

export interface OrganizationReconcileResult {
  organizations: number;
  updated: string[];
  conflicts: number;
  failed: { organization: string; error: string; failure: ApiFailure }[];
}

const PAGE = 500;
const MAX_ATTEMPTS = 8;

function counted(ns: KubeObject): CountedNamespace {
  const terminating = Boolean(ns.metadata.deletionTimestamp) || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating';
  return { name: ns.metadata.name ?? '', terminating, ...(ns.metadata.resourceVersion ? { resourceVersion: ns.metadata.resourceVersion } : {}) };
}

const selecting = (selector: string) => `/api/v1/namespaces?labelSelector=${encodeURIComponent(selector)}`;

/** Namespaces matching a label selector from etcd (no resourceVersion: the latest), every page of the list. */
async function listNamespaces(http: KubeHttp, selector: string, each: (ns: KubeObject) => void): Promise<void> {
  let cont = '';
  do {
    const path = `${selecting(selector)}&limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
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

/** How a true-up reads one organization's namespaces. */
export interface TrueUpReads {
  /**
   * The revision of the namespace event(s) this true-up answers: the list comes from the watch
   * cache, at least this fresh. Absent (a resync, an event without one): from etcd.
   */
  resourceVersion?: string;
  /**
   * The call for the cache list (default: the reconciler's own). It must return the cache's
   * refusals (cacheCannotAnswer) at once: a 504 means the cache has not reached the revision in
   * 3 s, and retrying it only waits 3 s more before etcd answers. Anything else it retries.
   */
  cached?: KubeHttp;
  log?: Logger;
}

/** The watch cache's answer for a list at `resourceVersion`: a list with no `limit` (with one, 1.26 reads etcd). */
export function cachedListPath(selector: string, resourceVersion: string): string {
  return `${selecting(selector)}&resourceVersion=${encodeURIComponent(resourceVersion)}&resourceVersionMatch=NotOlderThan`;
}

/**
 * The cache cannot answer at that revision, etcd can: 504 `Too large resource version` (the cache
 * has not reached it: a revision of another resource may never be, for minutes) or 410.
 */
export function cacheCannotAnswer(r: { status: number; data?: unknown; error?: string }): boolean {
  const message = `${r.error ?? ''} ${(r.data as { message?: unknown } | undefined)?.message ?? ''}`;
  return r.status === 504 || r.status === 410 || message.includes('Too large resource version');
}

/**
 * One organization's namespaces from the watch cache, at least as fresh as `resourceVersion`;
 * undefined when the cache cannot answer at it.
 *
 * Why a list as fresh as the triggering event is enough, never undercounting into admitting
 * namespaces over the quota (ledger.ts): the webhook reserves a slot before a namespace exists, and
 * trueUp drops a reservation only for a namespace in the list, so a list that is behind keeps the
 * reservation (an overcount until the next true-up), never loses the slot. A namespace that
 * exists is counted by the true-up of its own event (its creation, label change or relist carries
 * a revision at or after the namespace's), which lists at least that fresh and so sees it, while
 * its reservation still holds it (reservationSeconds, 60 s by default). The revision is only a
 * floor: the cache answers as it is now, milliseconds behind etcd, so any true-up after that
 * sees it too, as an etcd list would. Later events trigger later true-ups, each at least as
 * fresh as its own. What a list as fresh as an OLDER event could lose (several API servers, each
 * cache at its own revision; messages of different namespaces delivered out of order) is a
 * namespace an earlier true-up counted and released: so a true-up also lists at least as fresh
 * as the newest namespace the status was counted from (`status.countedResourceVersion`, which
 * only grows while the cache reaches it: ledger.ts nextFloor), and the count never goes back to a
 * view without it. A namespace deleted or moved
 * out shows in a list behind as still there: an overcount, repaired by the true-up of that event.
 */
async function cachedNamespacesOf(http: KubeHttp, organization: string, resourceVersion: string, log?: Logger): Promise<CountedNamespace[] | undefined> {
  const path = cachedListPath(`${KEY.organization}=${organization}`, resourceVersion);
  const r = await http<{ items?: KubeObject[] }>({ method: 'GET', path });
  if (r.ok && Array.isArray(r.data?.items)) return r.data.items.map(counted);
  if (!cacheCannotAnswer(r)) throw readError(path, r);
  log?.log('INFO', 'namespace list from the watch cache refused: listing from etcd', { organization, resourceVersion, status: r.status, error: r.error });
  return undefined;
}

/**
 * The namespaces of one organization, and where they came from: from the watch cache at `atLeast`
 * when given (its cost that organization's size), else (or when the cache cannot answer) from
 * etcd, whose cost is the cluster's: the API server reads every namespace and filters afterwards.
 */
export async function namespacesOf(http: KubeHttp, organization: string, atLeast?: string, reads: Omit<TrueUpReads, 'resourceVersion'> = {}): Promise<{ namespaces: CountedNamespace[]; source: ListSource }> {
  const cached = atLeast ? await cachedNamespacesOf(reads.cached ?? http, organization, atLeast, reads.log) : undefined;
  if (cached) return { namespaces: cached, source: 'cache' };
  const namespaces: CountedNamespace[] = [];
  await listNamespaces(http, `${KEY.organization}=${organization}`, (ns) => namespaces.push(counted(ns)));
  return { namespaces, source: atLeast ? 'fallback' : 'etcd' };
}

/** The revision a true-up lists at: the event's and the status's newest; none without an event revision (etcd). */
export function listRevision(eventRevision: string | undefined, org: Organization): string | undefined {
  if (!isRevision(eventRevision)) return undefined;
  const floor = org.status?.countedResourceVersion;
  return isRevision(floor) ? newerRevision(eventRevision, floor) : eventRevision;
}

function newResult(): OrganizationReconcileResult {
  return { organizations: 0, updated: [], conflicts: 0, failed: [] };
}

/**
 * Writes one Organization's trued-up status, with its `Enforced` condition when `enforced` says
 * whether the rules are on (enforced.ts). Returns true on a conflict (redo with fresh reads).
 * An Organization deleted since it was read (404) needs nothing more.
 */
async function writeTrueUp(api: OrganizationApi, org: Organization, namespaces: readonly CountedNamespace[], now: number, result: OrganizationReconcileResult, source: ListSource = 'etcd', enforced?: boolean): Promise<boolean> {
  const name = organizationName(org);
  const counted = trueUp(org, namespaces, now, source);
  const status = withEnforcement(counted ?? org.status, enforced, now) ?? counted;
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
async function allPass(api: OrganizationApi, http: KubeHttp, now: () => number, wanted: ReadonlySet<string> | undefined, result: OrganizationReconcileResult, enforced?: boolean): Promise<Set<string>> {
  const organizations = (await api.list()).filter((o) => !wanted || wanted.has(organizationName(o)));
  if (!wanted) result.organizations = organizations.length;
  const byOrg = await namespacesByOrganization(http);
  const conflicted = new Set<string>();
  for (const org of organizations) {
    if (await writeTrueUp(api, org, byOrg.get(organizationName(org)) ?? [], now(), result, 'etcd', enforced)) conflicted.add(organizationName(org));
  }
  result.conflicts += conflicted.size;
  return conflicted;
}

/**
 * Every Organization (a resync): one Organization list and one namespace list per pass.
 * `enforced`: whether the organization rules are on (undefined: not known here, no condition written).
 */
export async function reconcileOrganizations(api: OrganizationApi, http: KubeHttp, now: () => number = Date.now, enforced?: boolean): Promise<OrganizationReconcileResult> {
  const result = newResult();
  let wanted: Set<string> | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    wanted = await allPass(api, http, now, wanted, result, enforced);
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
 * One Organization (a namespace event): read it, then list its namespaces (from the watch cache
 * when the event has a revision), write what changed; on conflict, again from the read. An
 * Organization that does not exist (404) needs nothing.
 */
export async function reconcileOrganization(api: OrganizationApi, http: KubeHttp, name: string, now: () => number = Date.now, reads: TrueUpReads = {}, enforced?: boolean): Promise<OrganizationReconcileResult> {
  const result = newResult();
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const org = await api.get(name);
    if (!org) return result;
    result.organizations = 1;
    const { namespaces, source } = await namespacesOf(http, name, listRevision(reads.resourceVersion, org), reads);
    if (!(await writeTrueUp(api, org, namespaces, now(), result, source, enforced))) return result;
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
