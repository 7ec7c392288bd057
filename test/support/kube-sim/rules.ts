// Which admission requests a rule, a namespaceSelector and an objectSelector select, as
// kube-apiserver's webhook predicates (rules, namespace, object) decide it for webhooks and
// ValidatingAdmissionPolicies alike.
import type { KubeObject, LabelSelector, StringMap } from '../../../shared/kube/types.ts';
import { fromLabelSelector, matchesLabels } from './selectors.ts';

export interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: 'Cluster' | 'Namespaced' | '*';
}

/** The request as the predicates see it. `namespace` is the namespace's own name for a request on a Namespace. */
export interface MatchRequest {
  operation: string;
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  object: KubeObject | null;
  oldObject: KubeObject | null;
}

function includesOrStar(list: string[] | undefined, value: string): boolean {
  return (list ?? []).some((v) => v === '*' || v === value);
}

/** `pods` matches the resource only, `pods/status` that subresource, `*` every resource, `*\/*` everything. */
function resourceMatches(patterns: string[] | undefined, resource: string, subresource: string | undefined): boolean {
  return (patterns ?? []).some((p) => {
    const [res, sub = ''] = p.split('/', 2) as [string, string?];
    return (res === '*' || res === resource) && (sub === '*' || sub === (subresource ?? ''));
  });
}

export const isNamespaceRequest = (r: Pick<MatchRequest, 'group' | 'resource'>): boolean => r.group === '' && r.resource === 'namespaces';

function scopeMatches(scope: Rule['scope'], r: MatchRequest): boolean {
  if (scope === undefined || scope === '*') return true;
  const clusterScoped = isNamespaceRequest(r) || !r.namespace;
  return scope === 'Cluster' ? clusterScoped : !clusterScoped;
}

export function ruleMatches(rule: Rule, r: MatchRequest): boolean {
  return scopeMatches(rule.scope, r) && includesOrStar(rule.operations, r.operation) && includesOrStar(rule.apiGroups, r.group)
    && includesOrStar(rule.apiVersions, r.version) && resourceMatches(rule.resources, r.resource, r.subresource);
}

/**
 * A Namespace written with CREATE or UPDATE is judged by its new labels; any other request in or
 * on a namespace by the stored namespace's (`storedLabels`); cluster-scoped requests always match.
 */
export function namespaceSelectorMatches(selector: LabelSelector | undefined, r: MatchRequest, storedLabels: () => StringMap | undefined): boolean {
  if (!r.namespace && !isNamespaceRequest(r)) return true;
  const parsed = fromLabelSelector(selector);
  if (parsed.length === 0) return true;
  const ownLabels = isNamespaceRequest(r) && !r.subresource && (r.operation === 'CREATE' || r.operation === 'UPDATE');
  return matchesLabels(parsed, ownLabels ? r.object?.metadata.labels : storedLabels());
}

export function objectSelectorMatches(selector: LabelSelector | undefined, r: MatchRequest): boolean {
  const parsed = fromLabelSelector(selector);
  if (parsed.length === 0) return true;
  return [r.object, r.oldObject].some((o) => o !== null && matchesLabels(parsed, o.metadata.labels));
}
