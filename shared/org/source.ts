// Where the organization rules get Organizations and namespaces: read fresh from the API server
// through the KubeHttp seam (decisions that grant never use a cache), or from memory (furnish
// admit, tests) with the same compare-and-swap semantics on status writes.
import { apiError, statusReason } from '../kube/errors.ts';
import type { KubeHttp } from '../kube/http.ts';
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { API_VERSION } from '../render/types.ts';
import type { Organization, OrganizationStatus } from './types.ts';
import { organizationName, ORGANIZATIONS_RESOURCE } from './types.ts';

/** A failed write says its HTTP status (0 without an answer), so that the caller can classify it. */
export type StatusWrite = { ok: true; organization: Organization } | { ok: false; conflict: boolean; status: number; error: string };

export interface OrganizationApi {
  /** Every Organization. Rejects (TransientError or PermanentError) when they cannot be read. */
  list(): Promise<Organization[]>;
  /** One Organization, undefined when it does not exist. Rejects when it cannot be read. */
  get(name: string): Promise<Organization | undefined>;
  /** Whether any Organization exists (one item listed). Rejects when it cannot be told. */
  anyOrganization(): Promise<boolean>;
  /** A namespace, undefined when it does not exist. Rejects when it cannot be read. */
  namespace(name: string): Promise<KubeObject | undefined>;
  /** The namespaces labelled with this organization (terminating ones included). Rejects when they cannot be read. */
  namespacesOf(organization: string): Promise<KubeObject[]>;
  /** An LNamespace, undefined when it does not exist. Rejects when it cannot be read. */
  lnamespace(name: string): Promise<KubeObject | undefined>;
  /** Replaces the status, only if the Organization is still at `organization.metadata.resourceVersion`. */
  writeStatus(organization: Organization, status: OrganizationStatus): Promise<StatusWrite>;
}

export const ORGANIZATIONS_PATH = `/apis/${API_VERSION}/${ORGANIZATIONS_RESOURCE}`;
const LNAMESPACES_PATH = `/apis/${API_VERSION}/lnamespaces`;
const organizationSelector = (organization: string) => `/api/v1/namespaces?labelSelector=${encodeURIComponent(`${KEY.organization}=${organization}`)}`;

/** A failed read, classified once: a 404 on the list (the CRD is not served) or a 403 is permanent, a 5xx, 429 or no answer transient. */
export function readError(what: string, r: { status: number; data?: unknown; error?: string }): Error {
  return apiError(`GET ${what}`, { status: r.status, reason: statusReason(r.data), message: r.error });
}

export function clusterOrganizations(http: KubeHttp): OrganizationApi {
  async function getOne<T>(path: string): Promise<T | undefined> {
    const r = await http<T>({ method: 'GET', path });
    if (r.status === 404) return undefined;
    if (!r.ok || !r.data) throw readError(path, r);
    return r.data;
  }
  async function items<T>(path: string): Promise<T[]> {
    const r = await http<{ items?: T[] }>({ method: 'GET', path });
    if (!r.ok || !Array.isArray(r.data?.items)) throw readError(path, r);
    return r.data.items;
  }
  return {
    list: () => items<Organization>(ORGANIZATIONS_PATH),
    anyOrganization: async () => (await items<Organization>(`${ORGANIZATIONS_PATH}?limit=1`)).length > 0,
    get: (name) => getOne<Organization>(`${ORGANIZATIONS_PATH}/${encodeURIComponent(name)}`),
    namespace: (name) => getOne<KubeObject>(`/api/v1/namespaces/${encodeURIComponent(name)}`),
    namespacesOf: (organization) => items<KubeObject>(organizationSelector(organization)),
    lnamespace: (name) => getOne<KubeObject>(`${LNAMESPACES_PATH}/${encodeURIComponent(name)}`),
    async writeStatus(organization, status) {
      const name = organizationName(organization);
      const body = { apiVersion: API_VERSION, kind: 'Organization', metadata: { name, resourceVersion: organization.metadata.resourceVersion }, spec: organization.spec ?? {}, status };
      const r = await http<Organization>({ method: 'PUT', path: `${ORGANIZATIONS_PATH}/${encodeURIComponent(name)}/status`, body });
      if (r.ok && r.data) return { ok: true, organization: r.data };
      return { ok: false, conflict: r.status === 409, status: r.status, error: r.error ?? `HTTP ${r.status}` };
    },
  };
}

/** Organizations, namespaces and LNamespaces held in memory; status writes are resourceVersion-checked like the API server's. */
export function memoryOrganizations(organizations: readonly Organization[], namespaces: readonly KubeObject[] = [], lnamespaces: readonly KubeObject[] = []): OrganizationApi & { organizations: Map<string, Organization> } {
  const byName = new Map(organizations.map((o) => [organizationName(o), structuredClone({ ...o, metadata: { resourceVersion: '1', ...o.metadata } })]));
  let version = 1;
  return {
    organizations: byName,
    list: async () => [...byName.values()].map((o) => structuredClone(o)),
    get: async (name) => {
      const o = byName.get(name);
      return o && structuredClone(o);
    },
    anyOrganization: async () => byName.size > 0,
    namespace: async (name) => namespaces.find((n) => n.metadata.name === name),
    namespacesOf: async (organization) => namespaces.filter((n) => n.metadata.labels?.[KEY.organization] === organization),
    lnamespace: async (name) => lnamespaces.find((n) => n.metadata.name === name),
    async writeStatus(organization, status) {
      const name = organizationName(organization);
      const live = byName.get(name);
      if (!live) return { ok: false, conflict: false, status: 404, error: `organizations.furnish.dev "${name}" not found` };
      if (organization.metadata.resourceVersion !== live.metadata.resourceVersion) {
        return { ok: false, conflict: true, status: 409, error: `Operation cannot be fulfilled on organizations.furnish.dev "${name}": the object has been modified; please apply your changes to the latest version and try again` };
      }
      const next = { ...live, metadata: { ...live.metadata, resourceVersion: String(++version) }, status: structuredClone(status) };
      byName.set(name, next);
      return { ok: true, organization: structuredClone(next) };
    },
  };
}
