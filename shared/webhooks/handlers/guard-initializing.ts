// guard-initializing: only the reconciler, the system controllers and holders of `initialize`
// write into a namespace that is still being furnished.
import { allow, deny } from '../../admission/response.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import type { AdmissionHandler } from '../deps.ts';
import { guardOutcome, stillFurnishing } from '../rules/guard-initializing.ts';
import { resolve } from '../rules/outcome.ts';
import type { Verdict } from '../rules/outcome.ts';

function respond(request: AdmissionRequest, namespace: string, verdict: Verdict): AdmissionResponse {
  if (verdict.allowed) return allow(request);
  return deny(request, `${stillFurnishing(namespace)} (${verdict.denials.join('; ')})`, verdict.unavailable ? 503 : 403);
}

export const guardInitializing: AdmissionHandler = (request, { settings, authorizer }) => {
  const namespace = request.namespace;
  // Cluster-scoped objects have no namespace to guard (the webhook's scope is Namespaced).
  if (!namespace || request.operation === 'CONNECT') return allow(request);
  const verdict = resolve([guardOutcome({ user: request.userInfo, namespace, settings })], authorizer);
  return verdict instanceof Promise ? verdict.then((v) => respond(request, namespace, v)) : respond(request, namespace, verdict);
};
