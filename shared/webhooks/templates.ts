// The NamespaceTemplate list of a live cluster, read through the KubeHttp seam. Never cached and
// never shared with a read already in flight: validate-namespace grants `use` from it, so a template
// created just before a namespace must be seen (namespace creates and label changes are rare).
import type { KubeHttp } from '../kube/http.ts';
import { API_VERSION } from '../render/types.ts';
import type { NamespaceTemplate } from '../render/types.ts';
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import type { NamespaceSource, NamespaceState, TemplateSource } from './deps.ts';

export const TEMPLATES_PATH = `/apis/${API_VERSION}/namespacetemplates`;

export function clusterTemplates(http: KubeHttp): TemplateSource {
  return {
    async list() {
      const result = await http<{ items?: NamespaceTemplate[] }>({ method: 'GET', path: TEMPLATES_PATH });
      if (!result.ok || !Array.isArray(result.data?.items)) throw new Error(`GET ${TEMPLATES_PATH}: ${result.error ?? `HTTP ${result.status}`}`);
      return result.data.items;
    },
    // protect-objects: one template, read fresh (a template that stopped protecting must stop at once).
    async get(name) {
      const path = `${TEMPLATES_PATH}/${encodeURIComponent(name)}`;
      const result = await http<NamespaceTemplate>({ method: 'GET', path });
      if (result.status === 404) return undefined;
      if (!result.ok || !result.data) throw new Error(`GET ${path}: ${result.error ?? `HTTP ${result.status}`}`);
      return result.data;
    },
  };
}

/** What the guard reads of a namespace: its phase, and its failure record. */
export function namespaceState(ns: KubeObject): NamespaceState {
  const phase = ns.metadata.labels?.[KEY.phase];
  const failure = ns.metadata.annotations?.[KEY.failure];
  return { ...(phase !== undefined ? { phase } : {}), ...(failure !== undefined ? { failure } : {}) };
}

/** Namespaces read fresh: existence, and their state (phase, failure record). */
export function clusterNamespaces(http: KubeHttp): NamespaceSource {
  return {
    async exists(name) {
      const res = await http({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(name)}` });
      if (res.ok) return true;
      if (res.status === 404) return false;
      throw new Error(`GET namespace ${name}: ${res.error ?? `HTTP ${res.status}`}`);
    },
    async state(namespace) {
      const result = await http<KubeObject>({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(namespace)}` });
      return result.ok && result.data ? namespaceState(result.data) : {};
    },
  };
}
