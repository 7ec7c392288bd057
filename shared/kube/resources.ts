// From apiVersion/kind (or an ApplySet group-kind) to a REST path. The common kinds are known
// up front; anything else is looked up once through API discovery and cached.
import type { KubeClient, KubeResponse } from './client.ts';
import { isTransient, TransientError } from './errors.ts';
import { formatGroupKind, groupOf } from '../render/kinds.ts';

export interface ResourceInfo {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

type Known = Omit<ResourceInfo, 'group'>;

const KNOWN: Record<string, Known> = {
  ConfigMap: { version: 'v1', plural: 'configmaps', namespaced: true },
  Secret: { version: 'v1', plural: 'secrets', namespaced: true },
  ServiceAccount: { version: 'v1', plural: 'serviceaccounts', namespaced: true },
  Service: { version: 'v1', plural: 'services', namespaced: true },
  ResourceQuota: { version: 'v1', plural: 'resourcequotas', namespaced: true },
  LimitRange: { version: 'v1', plural: 'limitranges', namespaced: true },
  PersistentVolumeClaim: { version: 'v1', plural: 'persistentvolumeclaims', namespaced: true },
  Pod: { version: 'v1', plural: 'pods', namespaced: true },
  Event: { version: 'v1', plural: 'events', namespaced: true },
  Namespace: { version: 'v1', plural: 'namespaces', namespaced: false },
  'Role.rbac.authorization.k8s.io': { version: 'v1', plural: 'roles', namespaced: true },
  'RoleBinding.rbac.authorization.k8s.io': { version: 'v1', plural: 'rolebindings', namespaced: true },
  'ClusterRole.rbac.authorization.k8s.io': { version: 'v1', plural: 'clusterroles', namespaced: false },
  'ClusterRoleBinding.rbac.authorization.k8s.io': { version: 'v1', plural: 'clusterrolebindings', namespaced: false },
  'NetworkPolicy.networking.k8s.io': { version: 'v1', plural: 'networkpolicies', namespaced: true },
  'Ingress.networking.k8s.io': { version: 'v1', plural: 'ingresses', namespaced: true },
  'Deployment.apps': { version: 'v1', plural: 'deployments', namespaced: true },
  'StatefulSet.apps': { version: 'v1', plural: 'statefulsets', namespaced: true },
  'DaemonSet.apps': { version: 'v1', plural: 'daemonsets', namespaced: true },
  'PodDisruptionBudget.policy': { version: 'v1', plural: 'poddisruptionbudgets', namespaced: true },
  'HorizontalPodAutoscaler.autoscaling': { version: 'v2', plural: 'horizontalpodautoscalers', namespaced: true },
  'Lease.coordination.k8s.io': { version: 'v1', plural: 'leases', namespaced: true },
  'NamespaceTemplate.furnish.dev': { version: 'v1alpha1', plural: 'namespacetemplates', namespaced: false },
};

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const group = groupOf(apiVersion);
  return { group, version: group === '' ? apiVersion : apiVersion.slice(group.length + 1) };
}

/** `/api/v1/namespaces/ns/configmaps[/name]` or `/apis/group/version/...`. */
export function resourcePath(info: ResourceInfo, namespace?: string, name?: string): string {
  const root = info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
  const ns = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${root}${ns}/${info.plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
}

/** The table lookup alone (pure): null when discovery is needed. */
export function knownResource(group: string, kind: string, version?: string): ResourceInfo | null {
  const k = KNOWN[formatGroupKind({ group, kind })];
  if (!k || (version && version !== k.version)) return null;
  return { group, ...k };
}

interface DiscoveryList {
  resources?: { name: string; kind: string; namespaced: boolean }[];
}

export class ResourceResolver {
  private readonly client: KubeClient;
  private readonly cache = new Map<string, Promise<ResourceInfo | null>>();

  constructor(client: KubeClient) {
    this.client = client;
  }

  /** For an object to write: its exact apiVersion. */
  forObject(apiVersion: string, kind: string): Promise<ResourceInfo | null> {
    const { group, version } = splitApiVersion(apiVersion);
    return this.lookup(group, kind, version);
  }

  /** For an ApplySet group-kind (no version): the table, else the group's preferred version. */
  forGroupKind(group: string, kind: string): Promise<ResourceInfo | null> {
    return this.lookup(group, kind, undefined);
  }

  private lookup(group: string, kind: string, version: string | undefined): Promise<ResourceInfo | null> {
    const known = knownResource(group, kind, version);
    if (known) return Promise.resolve(known);
    const key = `${group}/${version ?? '*'}/${kind}`;
    let hit = this.cache.get(key);
    if (!hit) {
      hit = this.discover(group, kind, version);
      hit.then((r) => r ?? this.cache.delete(key), () => this.cache.delete(key));
      this.cache.set(key, hit);
    }
    return hit;
  }

  private async discover(group: string, kind: string, version: string | undefined): Promise<ResourceInfo | null> {
    let v = version;
    if (!v) {
      if (group === '') v = 'v1';
      else {
        const g = await this.client.call<{ preferredVersion?: { version?: string } }>({ method: 'GET', path: `/apis/${group}` });
        v = answered(g, `discovery of API group ${group}`) ? g.data?.preferredVersion?.version : undefined;
        if (!v) return null;
      }
    }
    const path = group === '' ? `/api/${v}` : `/apis/${group}/${v}`;
    const list = await this.client.call<DiscoveryList>({ method: 'GET', path });
    const r = answered(list, `discovery of ${path}`) ? list.data?.resources?.find((x) => x.kind === kind && !x.name.includes('/')) : undefined;
    return r ? { group, version: v, plural: r.name, namespaced: r.namespaced } : null;
  }
}

/**
 * Whether a discovery read was answered; one that failed for a reason a retry may mend (no
 * answer, a 503, a call past its delivery's time) throws instead. Null means "not served", which
 * fails a template for good: a lookup other deliveries share must not say so for a passing fault.
 */
function answered(res: KubeResponse<unknown>, what: string): boolean {
  if (res.ok) return true;
  const failure = { status: res.status, reason: res.reason, message: res.error };
  if (isTransient(failure)) throw new TransientError(`${what}: ${res.error ?? `HTTP ${res.status}`}`, failure);
  return false;
}
