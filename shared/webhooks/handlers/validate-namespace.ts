// validate-namespace: the permission checks of namespace CREATE and UPDATE.
import { allow, deny } from '../../admission/response.ts';
import type { AdmissionRequest } from '../../admission/types.ts';
import { KEY } from '../../keys.ts';
import type { NamespaceInfo } from '../../render/types.ts';
import { newlyMatchedTemplates, requiresPermission, templateName, templatesNeedingPermission } from '../../render/index.ts';
import type { PolicySettings } from '../../config/types.ts';
import type { AdmissionHandler, TemplateSource } from '../deps.ts';
import { namespaceInfoOf, requireObject, requireResource } from '../request.ts';
import { resolveOutcomes } from '../rules/outcome.ts';
import { validationOutcomes } from '../rules/validate-namespace.ts';

/** Only a change of labels or of the opt-out can make a namespace match a new template. */
function mayMatchNewTemplates(ns: NamespaceInfo, old: NamespaceInfo | undefined): boolean {
  if (!old) return true;
  if (ns.annotations[KEY.optOut] !== old.annotations[KEY.optOut]) return true;
  const a = Object.keys(ns.labels);
  return a.length !== Object.keys(old.labels).length || a.some((k) => ns.labels[k] !== old.labels[k]);
}

/** Names of the permission-requiring templates this request makes the namespace match. */
export async function templatesToAuthorize(ns: NamespaceInfo, old: NamespaceInfo | undefined, source: TemplateSource, settings: PolicySettings): Promise<string[]> {
  if (!mayMatchNewTemplates(ns, old)) return [];
  const templates = await source.list();
  const opts = { systemNamespaces: settings.systemNamespaces };
  const selected = old
    ? newlyMatchedTemplates(old, ns, templates, { ...opts, granted: () => true }).filter(requiresPermission)
    : templatesNeedingPermission(ns, templates, opts);
  return selected.map(templateName);
}

function unavailable(request: AdmissionRequest, what: string, e: unknown) {
  return deny(request, `could not ${what} (${(e as Error).message}); retry`, 503);
}

export const validateNamespace: AdmissionHandler = async (request, { settings, authorizer, templates }) => {
  requireResource(request, 'validate-namespace', '', 'namespaces');
  const { operation } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || request.subResource) return allow(request);
  const namespace = namespaceInfoOf(requireObject(request, 'object'), request);
  const old = operation === 'UPDATE' ? namespaceInfoOf(requireObject(request, 'oldObject'), request) : undefined;
  let names: string[];
  try {
    names = await templatesToAuthorize(namespace, old, templates, settings);
  } catch (e) {
    return unavailable(request, 'list NamespaceTemplates', e);
  }
  const outcomes = validationOutcomes({ operation, user: request.userInfo, namespace, old, settings, templatesNeedingPermission: names });
  const verdict = await resolveOutcomes(outcomes, authorizer);
  if (verdict.allowed) return allow(request);
  return deny(request, verdict.denials.join('; '), verdict.unavailable ? 503 : 403);
};
