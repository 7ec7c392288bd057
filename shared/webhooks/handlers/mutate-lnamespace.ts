// mutate-lnamespace: records the creator of an LNamespace at CREATE (restored if an UPDATE changes
// it), and refuses what the reconciler could not honour: malformed subjects or billing fields, a
// name that cannot be a namespace or is reserved, taking over an existing namespace without verb
// `adopt`, and whatever the Organization rules refuse. The rules are in shared/lnamespace/admission.ts.
import { allow, deny, mutateClone } from '../../admission/response.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import { describeAccess, type AccessCheck } from '../../kube/sar.ts';
import { adoptionNeeded, creatorAnnotation, describeProblems, objectProblems, RESERVED_NAMES } from '../../lnamespace/admission.ts';
import { ADOPT_VERB, LNS_GROUP } from '../../lnamespace/types.ts';
import type { AdmissionHandler, WebhookDeps } from '../deps.ts';
import { requireObject, requireResource } from '../request.ts';
import { who } from '../rules/principals.ts';

/**
 * The one place where the Organization rules (membership, quota) judge the namespace an LNamespace
 * will create, so that a refusal comes at `kubectl apply` time. Returns refusals; none until the
 * Organization rules exist.
 */
export async function organizationRefusals(_request: AdmissionRequest, _deps: WebhookDeps): Promise<string[]> {
  return [];
}

export const mutateLNamespace: AdmissionHandler = async (request, deps): Promise<AdmissionResponse> => {
  requireResource(request, 'mutate-lnamespace', LNS_GROUP, 'lnamespaces');
  const { operation } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || request.subResource) return allow(request);
  const object = requireObject(request, 'object');
  const old = operation === 'UPDATE' ? requireObject(request, 'oldObject') : undefined;
  const name = object.metadata?.name || request.name || '';
  const { settings } = deps;
  const problems = objectProblems(object, [...RESERVED_NAMES, ...settings.systemNamespaces, settings.furnishNamespace]);
  if (problems.length > 0) return deny(request, describeProblems(name, problems), 422);

  let exists = false;
  if (operation === 'CREATE') {
    if (!deps.namespaces) return deny(request, `could not check whether namespace "${name}" exists (no API access configured); retry`, 503);
    try {
      exists = await deps.namespaces.exists(name);
    } catch (e) {
      return deny(request, `could not check whether namespace "${name}" exists: ${(e as Error).message}; retry`, 503);
    }
  }
  const adoption = adoptionNeeded(operation, object, old, exists);
  if (adoption) {
    const check: AccessCheck = { user: request.userInfo, verb: ADOPT_VERB, group: LNS_GROUP, resource: 'lnamespaces', name };
    const decision = await deps.authorizer.check(check);
    if (decision.error) return deny(request, `could not check ${describeAccess(check)}: ${decision.error}; retry`, 503);
    if (!decision.allowed) return deny(request, `${who(request.userInfo)} may not take over namespace "${name}": ${adoption}, which needs ${describeAccess(check)}`, 403);
  }
  const refusals = await organizationRefusals(request, deps);
  if (refusals.length > 0) return deny(request, refusals.join('; '), 403);

  const creator = creatorAnnotation(operation, request.userInfo, object, old);
  if (!creator) return allow(request);
  const ours: { annotations?: Record<string, string> } = {};
  if (object.metadata?.annotations) ours.annotations = object.metadata.annotations;
  return mutateClone(request, ours, (draft) => {
    draft.annotations = { ...draft.annotations, ...creator };
  }, { auditAnnotations: { mutations: operation === 'CREATE' ? 'recorded creator' : 'restored creator' } }, '/metadata');
};
