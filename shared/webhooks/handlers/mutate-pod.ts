// mutate-pod: on every Pod CREATE, so it answers at once for Pods that restart forever or set a
// deadline (no look-up, no promise); only run-once Pods without one read their namespace (its
// labels and annotations, remembered for a few seconds: a default, not a grant).
import { allow, allowWithPatch } from '../../admission/response.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import type { KubeObject } from '../../kube/types.ts';
import { organizationSettings } from '../../org/settings.ts';
import type { OrganizationApi } from '../../org/source.ts';
import type { AdmissionHandler } from '../deps.ts';
import { requireObject, requireResource } from '../request.ts';
import { isRunOnceWithoutDeadline, podDeadline, type PodShape } from '../rules/run-once-pod.ts';

const NAMESPACE_TTL_MS = 5_000;
const cache = new WeakMap<OrganizationApi, Map<string, { at: number; ns: KubeObject | undefined }>>();

function namespaceOf(api: OrganizationApi, name: string, now = Date.now()): Promise<KubeObject | undefined> {
  let byName = cache.get(api);
  if (!byName) cache.set(api, (byName = new Map()));
  const hit = byName.get(name);
  if (hit && now - hit.at < NAMESPACE_TTL_MS) return Promise.resolve(hit.ns);
  return api.namespace(name).then((ns) => {
    if (byName.size > 1000) byName.clear();
    byName.set(name, { at: now, ns });
    return ns;
  });
}

function respond(request: AdmissionRequest, ns: KubeObject | undefined, defaultSeconds: number): AdmissionResponse {
  const decision = podDeadline(ns?.metadata ?? {}, defaultSeconds);
  if ('skip' in decision) return allow(request);
  return allowWithPatch(request, {}, { activeDeadlineSeconds: decision.set }, { auditAnnotations: { mutations: decision.reason } }, '/spec');
}

export const mutatePod: AdmissionHandler = (request, deps) => {
  requireResource(request, 'mutate-pod', '', 'pods');
  if (request.operation !== 'CREATE' || request.subResource) return allow(request);
  const settings = organizationSettings(deps.settings);
  const pod = requireObject(request, 'object');
  if (!settings.enabled || !isRunOnceWithoutDeadline(pod.spec as PodShape | undefined)) return allow(request);
  const namespace = request.namespace ?? pod.metadata?.namespace;
  if (!namespace || !deps.organizations) return allow(request);
  return namespaceOf(deps.organizations, namespace).then(
    (ns) => respond(request, ns, settings.podActiveDeadlineSeconds),
    // A default, not a security check: without the namespace the Pod is admitted as it is, with a warning.
    (e: unknown) => allow(request, { warnings: [`no default activeDeadlineSeconds: could not read namespace "${namespace}" (${(e as Error).message})`] }),
  );
};
