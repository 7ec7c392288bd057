// What the initializer rules read from the cluster: the NamespaceInitializationConfigurations
// (fresh on every use: they grant writes into new namespaces) and the namespace a guarded write
// goes into (fresh: its list of pending initializers changes as they finish). One live adapter
// through the KubeHttp seam and one over static objects (`furnish admit --cluster`).
import type { KubeHttp } from '../kube/http.ts';
import type { KubeObject } from '../kube/types.ts';
import { isInitializationConfiguration } from '../initializers/config.ts';
import { CONFIG_RESOURCE } from '../initializers/keys.ts';
import { API_VERSION } from '../render/types.ts';
import type { NamespaceInfo } from '../render/types.ts';

export interface InitializerLookups {
  /** Every NamespaceInitializationConfiguration; [] when the CRD is not installed. Rejects when they cannot be read. */
  configurations(): Promise<KubeObject[]>;
  /** The namespace as stored; undefined when it does not exist. Rejects when it cannot be read. */
  namespace(name: string): Promise<NamespaceInfo | undefined>;
}

export const CONFIGURATIONS_PATH = `/apis/${API_VERSION}/${CONFIG_RESOURCE}`;

function infoOf(o: KubeObject): NamespaceInfo {
  return { name: o.metadata.name ?? '', labels: o.metadata.labels ?? {}, annotations: o.metadata.annotations ?? {} };
}

export function clusterInitializerLookups(http: KubeHttp): InitializerLookups {
  return {
    async configurations() {
      const r = await http<{ items?: KubeObject[] }>({ method: 'GET', path: CONFIGURATIONS_PATH });
      if (r.status === 404) return [];
      if (!r.ok || !Array.isArray(r.data?.items)) throw new Error(`GET ${CONFIGURATIONS_PATH}: ${r.error ?? `HTTP ${r.status}`}`);
      return r.data.items;
    },
    async namespace(name) {
      const path = `/api/v1/namespaces/${encodeURIComponent(name)}`;
      const r = await http<KubeObject>({ method: 'GET', path });
      if (r.status === 404) return undefined;
      if (!r.ok || !r.data?.metadata) throw new Error(`GET ${path}: ${r.error ?? `HTTP ${r.status}`}`);
      return infoOf(r.data);
    },
  };
}

export function staticInitializerLookups(objects: readonly KubeObject[]): InitializerLookups {
  return {
    configurations: async () => objects.filter(isInitializationConfiguration),
    namespace: async (name) => {
      const found = objects.find((o) => o.kind === 'Namespace' && o.apiVersion === 'v1' && o.metadata?.name === name);
      return found ? infoOf(found) : undefined;
    },
  };
}
