// mutate-lnamespace: records the creator of an LNamespace at CREATE (restored if an UPDATE changes
// it), and refuses what the reconciler could not honour: malformed subjects or billing fields, a
// name that cannot be a namespace or is reserved, taking over an existing namespace without verb
// `adopt`, and whatever the Organization rules refuse of the namespace it asks for (at CREATE, and
// at UPDATE when its organization or billing fields change). The rules are in
// shared/lnamespace/admission.ts and shared/webhooks/rules/organization-lnamespace.ts.
import { allow, deny, mutateClone } from '../../admission/response.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import { describeAccess, type AccessCheck } from '../../kube/sar.ts';
import { adoptionNeeded, creatorAnnotation, describeProblems, objectProblems, RESERVED_NAMES } from '../../lnamespace/admission.ts';
import { ADOPT_VERB, LNS_GROUP } from '../../lnamespace/types.ts';
import type { AdmissionHandler, WebhookDeps } from '../deps.ts';
import { requireObject, requireResource } from '../request.ts';
import { who } from '../rules/principals.ts';
import { KEY } from '../../keys.ts';
import type { NamespaceInfo } from '../../render/types.ts';
import { isChange } from '../rules/mutate-namespace.ts';
import { organizationContext, organizationMutation, organizationVerdict, withChanges } from '../organizations.ts';
import { lnamespaceAsk, lnamespaceAskChanged, lnamespaceTransfer, namespaceAsked } from '../rules/organization-lnamespace.ts';

/**
 * The one place where the Organization rules judge the namespace an LNamespace asks for, with the
 * LNamespace's requester, so that a refusal comes at `kubectl apply` time and the reconciler is
 * nobody's deputy (organization-lnamespace.ts): a CREATE as the namespace's CREATE (for its
 * creator), an UPDATE that changes its organization or billing fields as the namespace's UPDATE
 * (a transfer: membership of both organizations). A CREATE or transfer takes a real quota slot,
 * keyed by this request's uid and the namespace's name, which the reconciler's namespace write
 * then finds held (ledger.ts planReservation); a dry run takes none.
 */
export async function organizationRefusals(request: AdmissionRequest, deps: WebhookDeps, startedAt: number = Date.now()): Promise<{ refusals: string[]; code: 403 | 503 }> {
  const none = { refusals: [], code: 403 as const };
  const { operation } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || !organizationContext(deps).settings.enabled) return none;
  const object = requireObject(request, 'object');
  const name = object.metadata?.name || request.name || '';
  const after = lnamespaceAsk(object);
  const before = operation === 'UPDATE' ? lnamespaceAsk(requireObject(request, 'oldObject')) : undefined;
  if (before && !lnamespaceAskChanged(before, after)) return none;
  const asNamespace: AdmissionRequest = { ...request, name, namespace: '', dryRun: request.dryRun === true, kind: { group: '', version: 'v1', kind: 'Namespace' }, resource: { group: '', version: 'v1', resource: 'namespaces' } };
  try {
    let namespace: NamespaceInfo;
    let old: NamespaceInfo | undefined;
    if (before) {
      if (!deps.organizations) throw new Error('this cluster has no API configured (clusters[].api.server)');
      const live = await deps.organizations.namespace(name);
      const { from, to } = lnamespaceTransfer(before, after, live?.metadata.labels?.[KEY.organization] || undefined);
      old = namespaceAsked(name, from, before.billing);
      namespace = namespaceAsked(name, to, after.billing);
    } else {
      const planned = namespaceAsked(name, after.organization, after.billing, request.userInfo.username ?? '');
      const defaulted = await organizationMutation(asNamespace, deps, planned);
      namespace = defaulted && isChange(defaulted) ? withChanges(planned, [defaulted]) : planned;
    }
    const verdict = await organizationVerdict(asNamespace, deps, namespace, old, startedAt);
    if (!verdict || verdict.allowed) return none;
    return { refusals: verdict.denials.map((d) => `the namespace of LNamespace "${name}": ${d}`), code: verdict.unavailable ? 503 : 403 };
  } catch (e) {
    return { refusals: [`could not read Organizations (${(e as Error).message}); retry`], code: 503 };
  }
}

export const mutateLNamespace: AdmissionHandler = async (request, deps): Promise<AdmissionResponse> => {
  const startedAt = Date.now();
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
  const organization = await organizationRefusals(request, deps, startedAt);
  if (organization.refusals.length > 0) return deny(request, organization.refusals.join('; '), organization.code);

  const creator = creatorAnnotation(operation, request.userInfo, object, old);
  if (!creator) return allow(request);
  const ours: { annotations?: Record<string, string> } = {};
  if (object.metadata?.annotations) ours.annotations = object.metadata.annotations;
  return mutateClone(request, ours, (draft) => {
    draft.annotations = { ...draft.annotations, ...creator };
  }, { auditAnnotations: { mutations: operation === 'CREATE' ? 'recorded creator' : 'restored creator' } }, '/metadata');
};
