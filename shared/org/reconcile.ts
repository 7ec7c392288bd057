// reconcile-organization: trues up every Organization's status from the real namespace list
// (terminating namespaces excluded), releasing reservations whose namespace is now counted or
// whose time ran out. Level-triggered: any namespace event (or a resync) converges all of them
// with one namespace list and one Organization list; a write only where something changed,
// resourceVersion-checked, re-read and retried on conflict with the webhook's reservations.
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

/** Trues up one Organization; true when its status was written. */
async function trueUpOne(api: OrganizationApi, name: string, namespaces: readonly CountedNamespace[], now: () => number, result: OrganizationReconcileResult): Promise<void> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const org = await api.get(name);
    if (!org) return;
    const status = trueUp(org, namespaces, now());
    if (!status) return;
    const written = await api.writeStatus(org, status);
    if (written.ok) {
      result.updated.push(name);
      return;
    }
    if (!written.conflict) throw new Error(written.error);
    result.conflicts++;
  }
  throw new Error(`${MAX_ATTEMPTS} conflicting status updates in a row`);
}

export async function reconcileOrganizations(api: OrganizationApi, http: KubeHttp, now: () => number = Date.now): Promise<OrganizationReconcileResult> {
  // Organizations first, then namespaces: a reservation the list already counts is dropped, one it
  // does not yet count is kept (over-counting for a moment, never under-counting).
  const organizations = await api.list();
  const byOrg = await namespacesByOrganization(http);
  const result: OrganizationReconcileResult = { organizations: organizations.length, updated: [], conflicts: 0, failed: [] };
  for (const org of organizations) {
    const name = organizationName(org);
    try {
      await trueUpOne(api, name, byOrg.get(name) ?? [], now, result);
    } catch (e) {
      result.failed.push({ organization: name, error: (e as Error).message });
    }
  }
  return result;
}
