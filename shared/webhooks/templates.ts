// The NamespaceTemplate list of a live cluster, read through the KubeHttp seam and remembered
// briefly (validate-namespace asks on every label change).
import type { KubeHttp } from '../kube/http.ts';
import { API_VERSION } from '../render/types.ts';
import type { NamespaceTemplate } from '../render/types.ts';
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import type { NamespaceFailures, TemplateSource } from './deps.ts';

export const TEMPLATES_PATH = `/apis/${API_VERSION}/namespacetemplates`;

export function clusterTemplates(http: KubeHttp, ttlMs: number, now: () => number = Date.now): TemplateSource {
  let cached: { at: number; items: NamespaceTemplate[] } | undefined;
  let inflight: Promise<NamespaceTemplate[]> | undefined;
  async function fetchAll(): Promise<NamespaceTemplate[]> {
    const result = await http<{ items?: NamespaceTemplate[] }>({ method: 'GET', path: TEMPLATES_PATH });
    if (!result.ok || !Array.isArray(result.data?.items)) throw new Error(`GET ${TEMPLATES_PATH}: ${result.error ?? `HTTP ${result.status}`}`);
    cached = { at: now(), items: result.data.items };
    return cached.items;
  }
  const current = () => (cached && now() - cached.at < ttlMs ? cached.items : undefined);
  return {
    current,
    list() {
      const items = current();
      if (items) return Promise.resolve(items);
      inflight ??= fetchAll().finally(() => (inflight = undefined));
      return inflight;
    },
  };
}

/** The reason reconcile-namespace recorded on a namespace it could not furnish, read fresh. */
export function namespaceFailures(http: KubeHttp): NamespaceFailures {
  return {
    async failure(namespace) {
      const result = await http<KubeObject>({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(namespace)}` });
      return result.ok ? result.data?.metadata.annotations?.[KEY.failure] : undefined;
    },
  };
}
