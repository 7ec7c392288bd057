// validate-namespace: the permission checks of namespace CREATE and UPDATE (and of metadata
// changed through namespaces/status and namespaces/finalize). The template list is read fresh
// whenever the request can make the namespace match a new template: that decision grants `use`.
import { allow, deny } from '../../admission/response.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../admission/types.ts';
import { KEY } from '../../keys.ts';
import type { NamespaceInfo, NamespaceTemplate } from '../../render/types.ts';
import { templatesToAuthorize } from '../../auth/template-use.ts';
import type { AdmissionHandler } from '../deps.ts';
import { judgesMetadataOf, namespaceInfoOf, requireObject, requireResource } from '../request.ts';
import { resolve } from '../rules/outcome.ts';
import type { RuleOutcome, Verdict } from '../rules/outcome.ts';
import { validationOutcomes } from '../rules/validate-namespace.ts';
import { exemptNamespaces } from '../rules/mutate-namespace.ts';
import type { NamespaceMutationInput } from '../rules/mutate-namespace.ts';
import { bothVerdicts, organizationVerdict } from '../organizations.ts';

/** Only a change of labels or of the opt-out can make a namespace match a new template. */
export function mayMatchNewTemplates(ns: NamespaceInfo, old: NamespaceInfo | undefined): boolean {
  if (!old) return true;
  if (ns.annotations[KEY.optOut] !== old.annotations[KEY.optOut]) return true;
  const a = Object.keys(ns.labels);
  return a.length !== Object.keys(old.labels).length || a.some((k) => ns.labels[k] !== old.labels[k]);
}

/** A condition type kubectl wait takes for Ready: ASCII case folded (no letter of "ready" has another fold). */
const isReadyType = (type: unknown): boolean => typeof type === 'string' && /^ready$/i.test(type);

/** The Ready conditions as the rule compares them (status, reason, message of each), or undefined without one. */
export function readyConditionOf(object: unknown): string | undefined {
  const conditions = (object as { status?: { conditions?: unknown } } | undefined)?.status?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  // Every Ready condition: a second one added is a change too (the server keeps duplicates), and
  // its type in any case (`kubectl wait --for=condition=Ready` compares with EqualFold).
  const ready = conditions.filter((c): c is Record<string, unknown> => typeof c === 'object' && c !== null && isReadyType((c as { type?: unknown }).type));
  return ready.length === 0 ? undefined : JSON.stringify(ready.map((c) => [c.status ?? '', c.reason ?? '', c.message ?? '']));
}

function respond(request: AdmissionRequest, verdict: Verdict): AdmissionResponse {
  if (verdict.allowed) return allow(request);
  return deny(request, verdict.denials.join('; '), verdict.unavailable ? 503 : 403);
}

export const validateNamespace: AdmissionHandler = (request, deps) => {
  const { settings, authorizer, templates } = deps;
  requireResource(request, 'validate-namespace', '', 'namespaces');
  const { operation } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || !judgesMetadataOf(request)) return allow(request);
  const namespace = namespaceInfoOf(requireObject(request, 'object'), request);
  const old = operation === 'UPDATE' ? namespaceInfoOf(requireObject(request, 'oldObject'), request) : undefined;
  // Every rule judges namespaces/status and /finalize as well (a real API server keeps metadata
  // changed through them); the organization quota slot is reserved only once every other rule allowed.
  const finish = (verdict: Verdict) => {
    const organization = verdict.allowed ? organizationVerdict(request, deps, namespace, old) : undefined;
    return organization ? organization.then((o) => respond(request, bothVerdicts(verdict, o))) : respond(request, verdict);
  };
  const input: NamespaceMutationInput = { operation, user: request.userInfo, namespace, old, settings };
  const readyCondition = operation === 'UPDATE' ? { before: readyConditionOf(request.oldObject), after: readyConditionOf(request.object) } : undefined;
  const outcomesWith = (list: readonly NamespaceTemplate[]): RuleOutcome[] =>
    validationOutcomes({ ...input, readyCondition, templatesNeedingPermission: mayMatchNewTemplates(namespace, old) ? templatesToAuthorize(namespace, old, list, exemptNamespaces(settings)) : [] });
  const decide = (list: readonly NamespaceTemplate[]) => {
    const verdict = resolve(outcomesWith(list), authorizer);
    return verdict instanceof Promise ? verdict.then(finish) : finish(verdict);
  };
  const list = mayMatchNewTemplates(namespace, old) ? templates.current?.() : [];
  if (list) return decide(list);
  return templates.list().then(decide, (e: unknown) => deny(request, `could not list NamespaceTemplates (${(e as Error).message}); retry`, 503));
};
