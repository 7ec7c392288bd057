// A configured cluster's look-ups: SubjectAccessReviews (cached) and NamespaceTemplates (cached),
// both through the cluster's API credentials. Built once per cluster, on first use.
import type { ClusterConfig } from '../config/types.ts';
import { createKubeHttp } from '../kube/http.ts';
import { cachedAuthorizer, createSarAuthorizer } from '../kube/sar.ts';
import type { Authorizer } from '../kube/sar.ts';
import type { TemplateSource, WebhookDeps } from './deps.ts';
import { clusterTemplates, namespaceFailures } from './templates.ts';

function unreachable(cluster: ClusterConfig): { authorizer: Authorizer; templates: TemplateSource } {
  const error = `cluster "${cluster.id}" has no api configured (clusters[].api.server)`;
  return {
    authorizer: { check: async () => ({ allowed: false, error }) },
    templates: { list: async () => Promise.reject(new Error(error)) },
  };
}

export function depsForCluster(cluster: ClusterConfig): WebhookDeps {
  if (!cluster.api) return { settings: cluster, ...unreachable(cluster) };
  const http = createKubeHttp(cluster.api);
  return {
    settings: cluster,
    authorizer: cachedAuthorizer(createSarAuthorizer(http), { ttlMs: cluster.sarCacheTtlMs }),
    templates: clusterTemplates(http, cluster.templateCacheTtlMs),
    namespaces: namespaceFailures(http),
  };
}

/** One WebhookDeps per cluster id, built lazily. */
export function clusterDepsCache(build: (cluster: ClusterConfig) => WebhookDeps = depsForCluster): (cluster: ClusterConfig) => WebhookDeps {
  const built = new Map<string, WebhookDeps>();
  return (cluster) => {
    let deps = built.get(cluster.id);
    if (!deps) built.set(cluster.id, (deps = build(cluster)));
    return deps;
  };
}
