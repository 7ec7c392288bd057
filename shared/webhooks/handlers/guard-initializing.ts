// guard-initializing: only the reconciler, the system controllers and holders of `initialize`
// write into a namespace that is still being furnished.
import { allow, deny } from '../../admission/response.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import type { AdmissionHandler, NamespaceSource, NamespaceState } from '../deps.ts';
import { guardOutcome, stillFurnishing, subresourceLeftOpen } from '../rules/guard-initializing.ts';
import { resolve } from '../rules/outcome.ts';
import type { Verdict } from '../rules/outcome.ts';

function respond(request: AdmissionRequest, namespace: string, verdict: Verdict, failure?: string): AdmissionResponse {
  if (verdict.allowed) return allow(request);
  return deny(request, `${stillFurnishing(namespace, failure)} (${verdict.denials.join('; ')})`, verdict.unavailable ? 503 : 403);
}

/** A refusal reads the namespace: a subresource write in a failed one is let through (subresourceLeftOpen), any other quotes its failure. Allowed writes cost no read. */
async function judged(request: AdmissionRequest, namespace: string, verdict: Verdict, namespaces: NamespaceSource): Promise<AdmissionResponse> {
  const state = await namespaces.state(namespace).catch(() => ({}) as NamespaceState);
  if (subresourceLeftOpen(request.subResource, state.phase)) return allow(request);
  return respond(request, namespace, verdict, state.failure);
}

export const guardInitializing: AdmissionHandler = (request, { settings, authorizer, namespaces }) => {
  const namespace = request.namespace;
  // Cluster-scoped objects have no namespace to guard (the webhook's scope is Namespaced).
  if (!namespace || request.operation === 'CONNECT') return allow(request);
  const verdict = resolve([guardOutcome({ user: request.userInfo, namespace, settings })], authorizer);
  const decide = (v: Verdict) => (v.allowed || !namespaces ? respond(request, namespace, v) : judged(request, namespace, v, namespaces));
  return verdict instanceof Promise ? verdict.then(decide) : decide(verdict);
};
