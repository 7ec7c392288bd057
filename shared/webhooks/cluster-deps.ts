// A configured cluster's look-ups: SubjectAccessReviews (allowed answers cached briefly, denials
// never) and NamespaceTemplates (read fresh), both through the cluster's API credentials. Built once per cluster, on first use.
import type { ClusterConfig } from '../config/types.ts';
import { createKubeHttp } from '../kube/http.ts';
import { cachedAuthorizer, createSarAuthorizer } from '../kube/sar.ts';
import type { WebhookDeps } from './deps.ts';
import { clusterNamespaces, clusterTemplates } from './templates.ts';
import { clusterInitializerLookups } from './initializer-lookups.ts';
import { clusterObjects } from './object-lookups.ts';
import { clusterOrganizations } from '../org/source.ts';

function unreachable(cluster: ClusterConfig): Omit<WebhookDeps, 'settings'> {
  const error = `cluster "${cluster.id}" has no api configured (clusters[].api.server)`;
  return {
    authorizer: { check: async () => ({ allowed: false, error }) },
    templates: { list: async () => Promise.reject(new Error(error)) },
    initializers: { configurations: async () => Promise.reject(new Error(error)), namespace: async () => Promise.reject(new Error(error)) },
    objects: { get: async () => Promise.reject(new Error(error)) },
  };
}

export function depsForCluster(cluster: ClusterConfig): WebhookDeps {
  if (!cluster.api) return { settings: cluster, ...unreachable(cluster) };
  const http = createKubeHttp(cluster.api);
  return {
    settings: cluster,
    authorizer: cachedAuthorizer(createSarAuthorizer(http), { ttlMs: cluster.sarCacheTtlMs }),
    templates: clusterTemplates(http),
    initializers: clusterInitializerLookups(http),
    organizations: clusterOrganizations(http),
    namespaces: clusterNamespaces(http),
    objects: clusterObjects(http),
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
