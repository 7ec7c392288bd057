// Reading one namespaced object by its resource, fresh, through the KubeHttp seam: protect-objects
// judges a `/scale` request by the object it scales (a Scale carries no labels).
import type { GroupVersionResource } from '../admission/types.ts';
import type { KubeHttp } from '../kube/http.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ObjectSource } from './deps.ts';

/** `/apis/apps/v1/namespaces/team-a/deployments/web` (core: `/api/v1/...`). */
export function objectPath(resource: GroupVersionResource, namespace: string, name: string): string {
  const base = resource.group === '' ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  return `${base}/namespaces/${encodeURIComponent(namespace)}/${resource.resource}/${encodeURIComponent(name)}`;
}

export function clusterObjects(http: KubeHttp): ObjectSource {
  return {
    async get(resource, namespace, name) {
      const path = objectPath(resource, namespace, name);
      const r = await http<KubeObject>({ method: 'GET', path });
      if (r.status === 404) return undefined;
      if (!r.ok || !r.data?.metadata) throw new Error(`GET ${path}: ${r.error ?? `HTTP ${r.status}`}`);
      return r.data;
    },
  };
}

/** Over given objects (`furnish admit --cluster`): the plural is the kind's, lower-cased, plus `s` (what the scale webhook's four resources are). */
export function staticObjects(objects: readonly KubeObject[]): ObjectSource {
  return {
    get: async (resource, namespace, name) => objects.find((o) => {
      const group = o.apiVersion?.includes('/') ? o.apiVersion.split('/')[0] : '';
      return group === resource.group && `${(o.kind ?? '').toLowerCase()}s` === resource.resource && o.metadata?.namespace === namespace && o.metadata?.name === name;
    }),
  };
}
