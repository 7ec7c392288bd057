// reconcile-organization: trues up every Organization's status from the real namespace list
// (terminating namespaces excluded), releasing reservations whose namespace is now counted or
// whose time ran out. Level-triggered: any namespace event (or a resync) converges all of them
// with one namespace list and one Organization list; a write only where something changed,
// resourceVersion-checked; on conflict with the webhook's reservations (or another reconciler)
// both lists are read again.
import { KEY } from '../keys.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { KubeObject } from '../kube/types.ts';
import { trueUp, type CountedNamespace } from './ledger.ts';
import type { OrganizationApi } from './source.ts';
import { organizationName } from './types.ts';

export interface OrganizationReconcileResult {
  organizations: number;
  updated: string[];
  conflicts: number;
  failed: { organization: string; error: string }[];
}

const PAGE = 500;
const MAX_ATTEMPTS = 8;

/** Namespaces labelled with an organization, by organization (every page of the list). */
export async function namespacesByOrganization(http: KubeHttp): Promise<Map<string, CountedNamespace[]>> {
  const byOrg = new Map<string, CountedNamespace[]>();
  let cont = '';
  do {
    const query = `labelSelector=${encodeURIComponent(KEY.organization)}&limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    const r = await http<{ items?: KubeObject[]; metadata?: { continue?: string } }>({ method: 'GET', path: `/api/v1/namespaces?${query}` });
    if (!r.ok || !Array.isArray(r.data?.items)) throw new Error(`GET /api/v1/namespaces: ${r.error ?? `HTTP ${r.status}`}`);
    for (const ns of r.data.items) {
      const org = ns.metadata.labels?.[KEY.organization];
      if (!org) continue;
      const list = byOrg.get(org) ?? [];
      list.push({ name: ns.metadata.name ?? '', terminating: Boolean(ns.metadata.deletionTimestamp) || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating' });
      byOrg.set(org, list);
    }
    cont = r.data.metadata?.continue ?? '';
  } while (cont);
  return byOrg;
}

/**
 * One pass over `wanted` (all when undefined): the Organizations read first, then the namespaces,
 * so that a namespace whose reservation the Organization holds is either in the list (counted,
 * reservation dropped) or not yet (reservation kept). Names whose write met a conflict are returned:
 * they are redone with both lists read again, never with this pass's namespace list, which a
 * concurrent reconciler may already have superseded.
 */
async function pass(api: OrganizationApi, http: KubeHttp, now: () => number, wanted: ReadonlySet<string> | undefined, result: OrganizationReconcileResult): Promise<Set<string>> {
  const organizations = (await api.list()).filter((o) => !wanted || wanted.has(organizationName(o)));
  if (!wanted) result.organizations = organizations.length;
  const byOrg = await namespacesByOrganization(http);
  const conflicted = new Set<string>();
  for (const org of organizations) {
    const name = organizationName(org);
    const status = trueUp(org, byOrg.get(name) ?? [], now());
    if (!status) continue;
    const written = await api.writeStatus(org, status);
    if (written.ok) result.updated.push(name);
    else if (written.conflict) conflicted.add(name);
    else result.failed.push({ organization: name, error: written.error });
  }
  result.conflicts += conflicted.size;
  return conflicted;
}

export async function reconcileOrganizations(api: OrganizationApi, http: KubeHttp, now: () => number = Date.now): Promise<OrganizationReconcileResult> {
  const result: OrganizationReconcileResult = { organizations: 0, updated: [], conflicts: 0, failed: [] };
  let wanted: Set<string> | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    wanted = await pass(api, http, now, wanted, result);
    if (wanted.size === 0) return result;
  }
  for (const name of wanted ?? []) result.failed.push({ organization: name, error: `${MAX_ATTEMPTS} conflicting status updates in a row` });
  return result;
}
