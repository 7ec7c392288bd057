// The shape every in-tree policy shares: a ValidatingAdmissionPolicy `furnish-<rule>` that fails
// closed, and a binding of the same name that denies. Each policy file gives the match, the
// variables and the validations; this file writes the objects around them.
import type { KubeObject, LabelSelector } from '../kube/types.ts';
import { text, WHO, type Cel } from './cel.ts';

export const POLICY_API_VERSION = 'admissionregistration.k8s.io/v1';
export const POLICY_LABELS = { 'app.kubernetes.io/part-of': 'furnish' } as const;

export interface Validation {
  expression: string;
  /** Fallback when the messageExpression cannot be evaluated (kube-apiserver then shows this). */
  message: string;
  /** A CEL string expression: who, what, and why, as the webhooks' messages. */
  messageExpression: string;
  reason?: 'Forbidden' | 'Invalid';
}

export interface ResourceRule {
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  operations: ('CREATE' | 'UPDATE' | 'DELETE')[];
  scope?: 'Cluster' | 'Namespaced' | '*';
}

export interface PolicySpec {
  /** `furnish-<rule>`. */
  name: string;
  resourceRules: ResourceRule[];
  namespaceSelector?: LabelSelector;
  /** Matched against the old and the new object, as a webhook's. */
  objectSelector?: LabelSelector;
  matchConditions?: { name: string; expression: string }[];
  variables: { name: string; expression: string }[];
  validations: Validation[];
}

/** Namespaces and the subresources through which their metadata changes (METADATA_SUBRESOURCES). */
export function namespaceRule(operations: ResourceRule['operations'], subresources: readonly string[] = []): ResourceRule {
  return { apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces', ...subresources.map((s) => `namespaces/${s}`)], operations, scope: 'Cluster' };
}

/** A message that starts with who: `user "alice" may not …`. */
export function byRequester(...parts: readonly (string | Cel)[]): string {
  return text(...WHO, ...parts);
}

export function policyObject(spec: PolicySpec): KubeObject {
  return {
    apiVersion: POLICY_API_VERSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: spec.name, labels: { ...POLICY_LABELS } },
    spec: {
      // Fail: an expression that cannot be evaluated refuses, as the webhooks fail closed.
      failurePolicy: 'Fail',
      matchConstraints: {
        matchPolicy: 'Equivalent',
        ...(spec.namespaceSelector ? { namespaceSelector: spec.namespaceSelector } : {}),
        ...(spec.objectSelector ? { objectSelector: spec.objectSelector } : {}),
        resourceRules: spec.resourceRules,
      },
      ...(spec.matchConditions?.length ? { matchConditions: spec.matchConditions } : {}),
      variables: spec.variables,
      validations: spec.validations.map((v) => ({ reason: 'Forbidden', ...v })),
    },
  };
}

export function bindingObject(spec: PolicySpec): KubeObject {
  return {
    apiVersion: POLICY_API_VERSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: spec.name, labels: { ...POLICY_LABELS } },
    spec: { policyName: spec.name, validationActions: ['Deny'] },
  };
}
