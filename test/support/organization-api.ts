// An API server in memory for reconcile-organization's unit tests: Organizations (list, get,
// resourceVersion-checked status PUT) and namespaces (list by label selector, paged), every call
// recorded, any call answerable with a fault instead.
import type { KubeCall, KubeHttp, KubeResult } from '../../shared/kube/http.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { ORGANIZATIONS_PATH } from '../../shared/org/source.ts';
import type { Organization } from '../../shared/org/types.ts';
import { namespaceObject } from './organizations.ts';

export interface FakeOrganizationApi {
  http: KubeHttp;
  calls: string[];
  organizations: Map<string, Organization>;
  namespaces: KubeObject[];
  /** Answer a call with this status (and a metav1.Status body) instead; undefined serves it. */
  fault?: (call: KubeCall) => number | undefined;
}

const PAGE = 500;

function matches(ns: KubeObject, selector: string): boolean {
  const [key, value] = selector.split('=');
  const label = ns.metadata.labels?.[key!];
  return value === undefined ? label !== undefined : label === value;
}

export function fakeOrganizationApi(organizations: Organization[], namespaces: Record<string, string | undefined> = {}): FakeOrganizationApi {
  let version = 100;
  const api: FakeOrganizationApi = {
    calls: [],
    organizations: new Map(organizations.map((o) => [o.metadata.name!, { ...structuredClone(o), metadata: { resourceVersion: String(++version), ...o.metadata } }])),
    namespaces: Object.entries(namespaces).map(([name, org]) => namespaceObject(name, org ? { 'furnish.dev/organization': org } : {})),
    http: async <T,>(call: KubeCall): Promise<KubeResult<T>> => {
      api.calls.push(`${call.method} ${call.path}`);
      const ok = (data: unknown) => ({ ok: true, status: 200, data: structuredClone(data) as T });
      const fail = (status: number, message: string) => ({ ok: false, status, data: { kind: 'Status', status: 'Failure', message, code: status } as T, error: message });
      const faulted = api.fault?.(call);
      if (faulted !== undefined) return fail(faulted, `injected HTTP ${faulted}`);
      const [path, query = ''] = call.path.split('?');
      const params = new URLSearchParams(query);
      if (path === '/api/v1/namespaces' && call.method === 'GET') {
        const all = api.namespaces.filter((n) => matches(n, params.get('labelSelector') ?? ''));
        const start = Number(params.get('continue') ?? 0);
        const next = start + PAGE < all.length ? String(start + PAGE) : undefined;
        return ok({ items: all.slice(start, start + PAGE), metadata: next ? { continue: next } : {} });
      }
      if (path === ORGANIZATIONS_PATH && call.method === 'GET') return ok({ items: [...api.organizations.values()] });
      const name = decodeURIComponent(path!.slice(ORGANIZATIONS_PATH.length + 1).replace(/\/status$/, ''));
      const live = api.organizations.get(name);
      if (!live) return fail(404, `organizations.furnish.dev "${name}" not found`);
      if (call.method === 'GET') return ok(live);
      const body = call.body as Organization;
      if (body.metadata.resourceVersion !== live.metadata.resourceVersion) return fail(409, `Operation cannot be fulfilled on organizations.furnish.dev "${name}": the object has been modified`);
      const next = { ...live, metadata: { ...live.metadata, resourceVersion: String(++version) }, status: structuredClone(body.status) };
      api.organizations.set(name, next);
      return ok(next);
    },
  };
  return api;
}
