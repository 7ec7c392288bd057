// guard-initializing: only the reconciler, the system controllers and holders of `initialize`
// write into a namespace that is still being furnished.
import { allow, deny } from '../../admission/response.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import type { AdmissionHandler, NamespaceSource } from '../deps.ts';
import { guardOutcome, stillFurnishing } from '../rules/guard-initializing.ts';
import { resolve } from '../rules/outcome.ts';
import type { Verdict } from '../rules/outcome.ts';

function respond(request: AdmissionRequest, namespace: string, verdict: Verdict, failure?: string): AdmissionResponse {
  if (verdict.allowed) return allow(request);
  return deny(request, `${stillFurnishing(namespace, failure)} (${verdict.denials.join('; ')})`, verdict.unavailable ? 503 : 403);
}

/** A denial looks the namespace's failure up (only then: allowed writes cost no read). */
async function denyWithReason(request: AdmissionRequest, namespace: string, verdict: Verdict, namespaces: NamespaceSource | undefined): Promise<AdmissionResponse> {
  const failure = verdict.allowed || !namespaces ? undefined : await namespaces.failure(namespace).catch(() => undefined);
  return respond(request, namespace, verdict, failure);
}

export const guardInitializing: AdmissionHandler = (request, { settings, authorizer, namespaces }) => {
  const namespace = request.namespace;
  // Cluster-scoped objects have no namespace to guard (the webhook's scope is Namespaced).
  if (!namespace || request.operation === 'CONNECT') return allow(request);
  const verdict = resolve([guardOutcome({ user: request.userInfo, namespace, settings })], authorizer);
  if (verdict instanceof Promise) return verdict.then((v) => denyWithReason(request, namespace, v, namespaces));
  return verdict.allowed || !namespaces ? respond(request, namespace, verdict) : denyWithReason(request, namespace, verdict, namespaces);
};
