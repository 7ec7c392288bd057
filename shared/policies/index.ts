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
import { bindingObject, policyObject, type PolicySpec } from './policy.ts';

export type { PolicySpec } from './policy.ts';
export { webhookMatchConditions } from './match-conditions.ts';

/**
 * Every policy for these settings, in order. None for the organization rules: they turn on with
 * the first Organization (shared/webhooks/organizations.ts), state no policy can see; they stay in
 * validate-namespace, which matchConditions send every request they judge.
 */
export function policySpecs(settings: PolicySettings): PolicySpec[] {
  return [namespaceMarks(settings), creatorImmutable(), phaseAndReady(settings), guard(settings), optOut(settings), initializerKeys(), subresourceMetadata(settings)];
}

/** The ValidatingAdmissionPolicies, then their bindings (a binding names its policy, so it goes second). */
export function admissionPolicies(settings: PolicySettings): KubeObject[] {
  const specs = policySpecs(settings);
  return [...specs.map(policyObject), ...specs.map(bindingObject)];
}
