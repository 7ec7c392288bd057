// The in-tree policies `furnish install` writes where the API server serves
// ValidatingAdmissionPolicies (shared/kube/features.ts): the tenancy rules that need nothing but the
// request, the namespace and the authorizer, enforced by the API server itself, so that the
// webhooks that also judge them may fail open or be asked less (match-conditions.ts).
import type { PolicySettings } from '../config/types.ts';
import type { KubeObject } from '../kube/types.ts';
import { guard } from './guard.ts';
import { initializerKeys } from './initializers.ts';
import { creatorImmutable, namespaceMarks, optOut, phaseAndReady } from './namespace.ts';
import { subresourceMetadata } from './objects.ts';
import { organizationMetadata } from './organization.ts';
import { bindingObject, policyObject, type PolicySpec } from './policy.ts';

export type { PolicySpec } from './policy.ts';
export { webhookMatchConditions } from './match-conditions.ts';

/**
 * Every policy for these settings, in order. Of the organization rules only reserved names and the
 * metadata allowlist, and only where a namespace names an organization (organization.ts): the
 * others read Organizations (state), and stay in validate-namespace, which matchConditions send
 * every request they judge.
 */
export function policySpecs(settings: PolicySettings): PolicySpec[] {
  const organization = organizationMetadata(settings);
  return [
    namespaceMarks(settings), creatorImmutable(), phaseAndReady(settings), guard(settings), optOut(settings), initializerKeys(), subresourceMetadata(settings),
    ...(organization ? [organization] : []),
  ];
}

/** The ValidatingAdmissionPolicies, then their bindings (a binding names its policy, so it goes second). */
export function admissionPolicies(settings: PolicySettings): KubeObject[] {
  const specs = policySpecs(settings);
  return [...specs.map(policyObject), ...specs.map(bindingObject)];
}
