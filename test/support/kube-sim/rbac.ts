// The RBAC authorizer over the stored Roles, ClusterRoles and their bindings, with the same
// matching rules (wildcards, `*/subresource`, resourceNames, non-resource URLs), aggregated
// ClusterRoles, the `system:masters` superuser group and the reason strings of kube-apiserver.
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { Authenticated } from './authn.ts';
import { fromLabelSelector, matchesLabels } from './selectors.ts';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface Attributes {
  user: Authenticated;
  verb: string;
  /** false for non-resource URLs such as /version. */
  resourceRequest: boolean;
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  path?: string;
}

export interface Decision {
  allowed: boolean;
  reason: string;
}

/** Read access to the stored RBAC objects (the authorizer reads, never writes). */
export interface RbacSource {
  list(kind: 'Role' | 'RoleBinding' | 'ClusterRole' | 'ClusterRoleBinding', namespace?: string): KubeObject[];
}

export const SUPERUSER_GROUP = 'system:masters';

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === '*' || v === verb);
}

function groupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === '*' || g === group);
}

function resourceMatches(rule: PolicyRule, resource: string, subresource: string | undefined): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some((r) => r === '*' || r === combined || (subresource !== undefined && r === `*/${subresource}`));
}

function nameMatches(rule: PolicyRule, name: string | undefined): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (name !== undefined && names.includes(name));
}

function urlMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

export function ruleAllows(rule: PolicyRule, a: Attributes): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.resourceRequest) return urlMatches(rule, a.path ?? '');
  return groupMatches(rule, a.apiGroup ?? '') && resourceMatches(rule, a.resource ?? '', a.subresource) && nameMatches(rule, a.name);
}

function subjectMatches(subject: Subject, user: Authenticated, bindingNamespace: string | undefined): boolean {
  switch (subject.kind) {
    case 'User': return subject.name === user.username;
    case 'Group': return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return user.username === `system:serviceaccount:${namespace}:${subject.name}`;
    }
    default: return false;
  }
}

function describeSubject(subject: Subject, bindingNamespace: string | undefined): string {
  if (subject.kind === 'ServiceAccount') return `ServiceAccount "${subject.name}/${subject.namespace || bindingNamespace}"`;
  return `${subject.kind} "${subject.name}"`;
}

export class RbacAuthorizer {
  private readonly source: RbacSource;

  constructor(source: RbacSource) {
    this.source = source;
  }

  authorize(a: Attributes): Decision {
    if (a.user.groups.includes(SUPERUSER_GROUP)) return { allowed: true, reason: '' };
    for (const { binding, subject, rules, roleDescription, bindingDescription } of this.applicableBindings(a.user, a.namespace)) {
      if (rules.some((rule) => ruleAllows(rule, a))) {
        return { allowed: true, reason: `RBAC: allowed by ${bindingDescription} of ${roleDescription} to ${describeSubject(subject, binding.metadata.namespace)}` };
      }
    }
    return { allowed: false, reason: '' };
  }

  /** Every rule that applies to the user in a namespace (for SelfSubjectRulesReview). */
  rulesFor(user: Authenticated, namespace: string | undefined): PolicyRule[] {
    if (user.groups.includes(SUPERUSER_GROUP)) {
      return [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] }];
    }
    return [...this.applicableBindings(user, namespace)].flatMap((b) => b.rules);
  }

  private *applicableBindings(user: Authenticated, namespace: string | undefined): Generator<{
    binding: KubeObject; subject: Subject; rules: PolicyRule[]; roleDescription: string; bindingDescription: string;
  }> {
    const bindings = [
      ...this.source.list('ClusterRoleBinding').map((b) => ({ b, description: `ClusterRoleBinding "${b.metadata.name}"` })),
      ...(namespace ? this.source.list('RoleBinding', namespace).map((b) => ({ b, description: `RoleBinding "${b.metadata.name}/${namespace}"` })) : []),
    ];
    for (const { b, description } of bindings) {
      const subjects = (b.subjects ?? []) as Subject[];
      const subject = subjects.find((s) => subjectMatches(s, user, b.metadata.namespace));
      if (!subject) continue;
      const roleRef = (b.roleRef ?? {}) as { kind?: string; name?: string };
      const rules = this.roleRules(roleRef.kind, roleRef.name ?? '', b.metadata.namespace);
      if (!rules) continue;
      yield { binding: b, subject, rules, roleDescription: `${roleRef.kind} "${roleRef.name}"`, bindingDescription: description };
    }
  }

  private roleRules(kind: string | undefined, name: string, namespace: string | undefined): PolicyRule[] | undefined {
    if (kind === 'Role') {
      const role = namespace ? this.source.list('Role', namespace).find((r) => r.metadata.name === name) : undefined;
      return role ? ((role.rules ?? []) as PolicyRule[]) : undefined;
    }
    const clusterRoles = this.source.list('ClusterRole');
    const role = clusterRoles.find((r) => r.metadata.name === name);
    return role ? aggregatedRules(role, clusterRoles) : undefined;
  }
}

/** The rules of a ClusterRole, with those of the ClusterRoles its aggregationRule selects. */
export function aggregatedRules(role: KubeObject, all: KubeObject[]): PolicyRule[] {
  const own = (role.rules ?? []) as PolicyRule[];
  const aggregation = role.aggregationRule as { clusterRoleSelectors?: Array<Record<string, unknown>> } | undefined;
  if (!aggregation?.clusterRoleSelectors) return own;
  const selected = all.filter((other) => other.metadata.name !== role.metadata.name
    && aggregation.clusterRoleSelectors!.some((s) => matchesLabels(fromLabelSelector(s), other.metadata.labels)));
  return [...own, ...selected.flatMap((other) => (other.rules ?? []) as PolicyRule[])];
}

// --- the default roles every cluster has ---------------------------------------------------

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const aggregateLabel = (role: string): Record<string, string> => ({ [`rbac.authorization.k8s.io/aggregate-to-${role}`]: 'true' });

function clusterRole(name: string, rules: PolicyRule[], extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole',
    metadata: { name, labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults', ...(extra.metadata?.labels ?? {}) } },
    rules, ...(extra.aggregationRule ? { aggregationRule: extra.aggregationRule } : {}),
  };
}

function groupBinding(name: string, role: string, groups: string[]): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding',
    metadata: { name, labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  };
}

const aggregated = (name: string): KubeObject => clusterRole(name, [], {
  aggregationRule: { clusterRoleSelectors: [{ matchLabels: aggregateLabel(name) }] },
});

/** cluster-admin, admin/edit/view (aggregated, as in kube-apiserver) and the discovery roles. */
export function defaultRbacObjects(): KubeObject[] {
  const namespacedWorkloads = ['pods', 'configmaps', 'secrets', 'serviceaccounts', 'services', 'endpoints', 'persistentvolumeclaims', 'replicationcontrollers'];
  return [
    clusterRole('cluster-admin', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, { nonResourceURLs: ['*'], verbs: ['*'] }]),
    aggregated('admin'),
    aggregated('edit'),
    aggregated('view'),
    clusterRole('system:aggregate-to-view', [
      { apiGroups: [''], resources: ['configmaps', 'endpoints', 'persistentvolumeclaims', 'pods', 'replicationcontrollers', 'services',
        'serviceaccounts', 'events', 'limitranges', 'resourcequotas', 'resourcequotas/status', 'namespaces', 'namespaces/status', 'pods/log', 'pods/status'], verbs: READ },
      { apiGroups: ['apps', 'batch', 'autoscaling', 'policy'], resources: ['*'], verbs: READ },
      { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies', 'ingresses'], verbs: READ },
    ], { metadata: { labels: { ...aggregateLabel('view'), ...aggregateLabel('edit'), ...aggregateLabel('admin') } } }),
    clusterRole('system:aggregate-to-edit', [
      { apiGroups: [''], resources: namespacedWorkloads, verbs: WRITE },
      { apiGroups: [''], resources: ['secrets'], verbs: READ },
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
      { apiGroups: ['apps', 'batch', 'autoscaling', 'policy'], resources: ['*'], verbs: WRITE },
      { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies', 'ingresses'], verbs: WRITE },
    ], { metadata: { labels: { ...aggregateLabel('edit'), ...aggregateLabel('admin') } } }),
    clusterRole('system:aggregate-to-admin', [
      { apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'], verbs: ['create'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings', 'roles'], verbs: [...READ, ...WRITE] },
    ], { metadata: { labels: aggregateLabel('admin') } }),
    clusterRole('system:discovery', [{ nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
    clusterRole('system:basic-user', [
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    ]),
    clusterRole('system:public-info-viewer', [{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
    groupBinding('cluster-admin', 'cluster-admin', [SUPERUSER_GROUP]),
    groupBinding('system:discovery', 'system:discovery', ['system:authenticated']),
    groupBinding('system:basic-user', 'system:basic-user', ['system:authenticated']),
    groupBinding('system:public-info-viewer', 'system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  ];
}
