// reconcile-organization's handler on the shared reconciler runtime: a namespace event trues up
// the organization(s) it concerns, a resync every Organization (see reconcile.ts). Events for one
// organization that arrive together share passes: one running, one queued that starts after
// every event it answers arrived, so a burst of N creates costs a few passes, not N. A pass lists
// from the watch cache at least as fresh as the newest event it answers (versions.ts).
import type { ReconcileMessage } from '../bus/envelope.ts';
import type { KubeCall } from '../kube/http.ts';
import { coalescer } from '../reconcile/concurrency.ts';
import type { Runtime } from '../reconcile/runtime.ts';
import { cacheCannotAnswer, failureOf, reconcileOrganization, reconcileOrganizations, type OrganizationReconcileResult } from './reconcile.ts';
import { clusterOrganizations } from './source.ts';
import { PendingRevisions } from './versions.ts';
import { readSetting, SETTINGS } from '../config/settings.ts';

/** Which Organizations a namespace message can change the count of. */
export type OrganizationScope = { kind: 'none'; why: string } | { kind: 'some'; organizations: string[] } | { kind: 'all' };

/**
 * A template's fan-out (FANOUT) changes no membership; a namespace in no organization, before or
 * after, none either: acknowledged without a call. The relay names the namespace's organization
 * now and before (`organizations`); a resync (SYNC), or a message without that field (an older
 * relay, a namespace found gone that the relay never saw), trues up all of them.
 */
export function organizationScope(msg: Pick<ReconcileMessage, 'type' | 'organizations'>): OrganizationScope {
  if (msg.type === 'FANOUT') return { kind: 'none', why: 'a template fan-out changes no organization membership' };
  if (msg.type === 'SYNC' || msg.organizations === undefined) return { kind: 'all' };
  if (msg.organizations.length === 0) return { kind: 'none', why: 'the namespace is in no organization' };
  return { kind: 'some', organizations: [...new Set(msg.organizations)] };
}

/** The key under which a pass over all Organizations is coalesced (no Organization name is empty). */
const ALL = '';

/** Passes in flight per cluster client: a new client (a new cluster, a test's runtime) starts afresh. */
const passes = new WeakMap<object, { pass: ReturnType<typeof coalescer<OrganizationReconcileResult>>; revisions: PendingRevisions }>();

/**
 * The watch-cache lists' own latency class: they take milliseconds, or up to 3 s waiting for a
 * revision, neither of which says how fast etcd lists go.
 */
export const CACHE_LIST_KIND = 'GET list (watch cache)';

/**
 * Whether the organization rules are on, for the `Enforced` condition (enforced.ts), when this
 * reconciler's settings say it (FURNISH_ORGANIZATIONS set: `npm start` sets it); undefined when
 * they do not (the rules may be on in the webhooks' configuration file, which it does not read),
 * and then it writes no condition rather than a wrong one.
 */
export function rulesEnforced(env: Readonly<Record<string, string | undefined>>): boolean | undefined {
  return env[SETTINGS.organizations.env!] ? readSetting(env, 'organizations') : undefined;
}

/** reconcile-organization's handler, with the rules' state read once from `env`. */
export function organizationHandler(env: Readonly<Record<string, string | undefined>>): (rt: Runtime, msg: ReconcileMessage) => Promise<object> {
  const enforced = rulesEnforced(env);
  return (rt, msg) => reconcileOrganizationsOf(rt, msg, enforced);
}

export async function reconcileOrganizationsOf(rt: Runtime, msg: ReconcileMessage, enforced?: boolean): Promise<object> {
  const scope = organizationScope(msg);
  if (scope.kind === 'none') return { skipped: scope.why };
  const { kube } = await rt.cluster(msg.cluster || rt.config.cluster);
  const http = <T,>(c: KubeCall) => kube.http<T>(c);
  // The cache's refusal is an answer (list from etcd), not a fault: returned at once; a 429, 5xx or
  // dropped connection is retried as any call is.
  const cached = async <T,>(c: KubeCall) => {
    const r = await kube.call<T>({ ...c, latencyKind: CACHE_LIST_KIND, expected: cacheCannotAnswer });
    return { ok: r.ok, status: r.status, data: r.data, error: r.error };
  };
  const api = clusterOrganizations(http);
  let state = passes.get(kube);
  if (!state) passes.set(kube, (state = { pass: coalescer<OrganizationReconcileResult>(), revisions: new PendingRevisions() }));
  const { pass, revisions } = state;
  if (scope.kind === 'some') for (const name of scope.organizations) revisions.note(name, msg.resourceVersion);
  const reads = (name: string) => ({ resourceVersion: revisions.take(name), cached, log: rt.log });
  const results = scope.kind === 'all'
    ? [await pass(ALL, () => reconcileOrganizations(api, http, Date.now, enforced))]
    : await Promise.all(scope.organizations.map((name) => pass(name, () => reconcileOrganization(api, http, name, Date.now, reads(name), enforced))));
  const merged: OrganizationReconcileResult = { organizations: 0, updated: [], conflicts: 0, failed: [] };
  for (const r of results) {
    merged.organizations += r.organizations;
    merged.updated.push(...r.updated);
    merged.conflicts += r.conflicts;
    merged.failed.push(...r.failed);
  }
  const failure = failureOf(merged);
  if (failure) throw failure;
  return merged;
}
