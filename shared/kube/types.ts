// The slice of the Kubernetes object model Furnish reads and writes. Plain JSON shapes, no
// client library: webhook functions import this without paying for @kubernetes/client-node.

export type StringMap = Record<string, string>;

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  labels?: StringMap;
  annotations?: StringMap;
  ownerReferences?: unknown[];
  finalizers?: string[];
  managedFields?: unknown[];
  [extra: string]: unknown;
}

/** Any Kubernetes object as it travels on the wire. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string; // In | NotIn | Exists | DoesNotExist; anything else is rejected by parseSelector
  values?: string[];
}

/** metav1.LabelSelector. `{}` selects everything; `null`/absent in a template means `{}`. */
export interface LabelSelector {
  matchLabels?: StringMap;
  matchExpressions?: LabelSelectorRequirement[];
}

/** userInfo of an AdmissionReview and the subject of a SubjectAccessReview. */
export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** RBAC's subject kinds: who an Organization member, an initializer principal or an LNamespace subject is. */
export const SUBJECT_KINDS = ['User', 'Group', 'ServiceAccount'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

/** A User, Group or ServiceAccount, as RBAC bindings name them. */
export interface Subject {
  kind: SubjectKind;
  name: string;
  /** ServiceAccount only. */
  namespace?: string;
}
