// guard-initializing: only the reconciler, the system controllers and holders of `initialize`
// write into a namespace that is still being furnished.
import { allow, deny } from '../../admission/response.ts';
import type { AdmissionHandler } from '../deps.ts';
import { guardOutcome, stillFurnishing } from '../rules/guard-initializing.ts';
import { resolveOutcomes } from '../rules/outcome.ts';

export const guardInitializing: AdmissionHandler = async (request, { settings, authorizer }) => {
  const namespace = request.namespace;
  // Cluster-scoped objects have no namespace to guard (the webhook's scope is Namespaced).
  if (!namespace || request.operation === 'CONNECT') return allow(request);
  const verdict = await resolveOutcomes([guardOutcome({ user: request.userInfo, namespace, settings })], authorizer);
  if (verdict.allowed) return allow(request);
  return deny(request, `${stillFurnishing(namespace)} (${verdict.denials.join('; ')})`, verdict.unavailable ? 503 : 403);
};
