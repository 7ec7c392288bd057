// What Furnish knows about kinds without asking the API server: the group of an apiVersion,
// which well-known kinds are cluster-scoped (a template may only hold namespaced objects), and
// which name syntax a kind's objects must follow.
import { dns1035LabelErrors, dns1123SubdomainErrors, pathSegmentNameErrors } from './names.ts';
import type { GroupKind } from './types.ts';

/** `apps/v1` → `apps`; `v1` → `''` (the core group). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** `Kind.group`, or `Kind` for the core group: the ApplySet and kubectl notation. */
export function formatGroupKind(gk: GroupKind): string {
  return gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`;
}

const CLUSTER_SCOPED_BY_GROUP: Readonly<Record<string, readonly string[]>> = {
  '': ['Namespace', 'Node', 'PersistentVolume', 'ComponentStatus'],
  'rbac.authorization.k8s.io': ['ClusterRole', 'ClusterRoleBinding'],
  'apiextensions.k8s.io': ['CustomResourceDefinition'],
  'apiregistration.k8s.io': ['APIService'],
  'admissionregistration.k8s.io': [
    'MutatingWebhookConfiguration',
    'ValidatingWebhookConfiguration',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
    'MutatingAdmissionPolicy',
    'MutatingAdmissionPolicyBinding',
  ],
  'storage.k8s.io': ['StorageClass', 'CSIDriver', 'CSINode', 'VolumeAttachment', 'VolumeAttributesClass'],
  'scheduling.k8s.io': ['PriorityClass'],
  'networking.k8s.io': ['IngressClass', 'IPAddress', 'ServiceCIDR'],
  'node.k8s.io': ['RuntimeClass'],
  'certificates.k8s.io': ['CertificateSigningRequest', 'ClusterTrustBundle'],
  'flowcontrol.apiserver.k8s.io': ['FlowSchema', 'PriorityLevelConfiguration'],
  'resource.k8s.io': ['DeviceClass', 'ResourceSlice'],
  'authentication.k8s.io': ['TokenReview', 'SelfSubjectReview'],
  'authorization.k8s.io': ['SubjectAccessReview', 'SelfSubjectAccessReview', 'SelfSubjectRulesReview'],
  policy: ['PodSecurityPolicy'],
  'furnish.dev': ['NamespaceTemplate', 'Organization', 'LNamespace'],
};

const CLUSTER_SCOPED = new Set(
  Object.entries(CLUSTER_SCOPED_BY_GROUP).flatMap(([group, kinds]) => kinds.map((kind) => formatGroupKind({ group, kind }))),
);

/** Well-known cluster-scoped kinds; a custom kind is assumed namespaced (the API server decides). */
export function isClusterScoped(gk: GroupKind): boolean {
  return CLUSTER_SCOPED.has(formatGroupKind(gk));
}

export type NameRule = 'dns1123-subdomain' | 'dns1035-label' | 'path-segment';

/** The name syntax of a kind's objects, as the API server validates it. */
export function nameRuleOf(gk: GroupKind): NameRule {
  if (gk.group === '' && gk.kind === 'Service') return 'dns1035-label';
  if (gk.group === 'rbac.authorization.k8s.io') return 'path-segment';
  return 'dns1123-subdomain';
}

export function nameErrors(rule: NameRule, name: string): readonly string[] {
  switch (rule) {
    case 'dns1123-subdomain':
      return dns1123SubdomainErrors(name);
    case 'dns1035-label':
      return dns1035LabelErrors(name);
    case 'path-segment':
      return name === '' ? ['must be non-empty'] : pathSegmentNameErrors(name);
  }
}

/** `group/Kind/namespace/name`, core group empty: what makes two objects the same object. */
export function objectKey(gk: GroupKind, namespace: string, name: string): string {
  return `${gk.group}/${gk.kind}/${namespace}/${name}`;
}
