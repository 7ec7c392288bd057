// What the API server can do beyond Kubernetes 1.26, found by discovery (never by version string:
// a managed control plane may turn a feature off, a distribution may backport one).
import type { KubeClient } from './client.ts';

/** The group version that serves ValidatingAdmissionPolicies (GA in 1.30, with webhook matchConditions). */
export const ADMISSION_POLICIES_GROUP_VERSION = 'admissionregistration.k8s.io/v1';

interface ResourceList {
  resources?: { name: string }[];
}

/**
 * Whether the server evaluates ValidatingAdmissionPolicies (and their bindings) of
 * admissionregistration.k8s.io/v1, and with them webhook matchConditions: both went GA together
 * (1.30), so one look at discovery decides both. Throws when discovery does not answer: guessing
 * "no" would install webhooks that no policy backs up on a server that has them, guessing "yes"
 * would write policies a server refuses.
 */
export async function inTreePolicies(kube: KubeClient): Promise<boolean> {
  const res = await kube.call<ResourceList>({ method: 'GET', path: `/apis/${ADMISSION_POLICIES_GROUP_VERSION}` });
  if (!res.ok) throw new Error(`could not read API discovery of ${ADMISSION_POLICIES_GROUP_VERSION}: ${res.error ?? `HTTP ${res.status}`}`);
  return servesAdmissionPolicies(res.data ?? {});
}

/** A discovery document of admissionregistration.k8s.io/v1 lists both the policies and their bindings. */
export function servesAdmissionPolicies(list: ResourceList): boolean {
  const names = new Set((list.resources ?? []).map((r) => r.name));
  return names.has('validatingadmissionpolicies') && names.has('validatingadmissionpolicybindings');
}
