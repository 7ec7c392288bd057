// The webhooks by name: the one table the functions, `furnish admit` and the bench share.
// Each refuses an object nested too deep before its rules (which recurse) see it.
import { deny } from '../../admission/response.ts';
import { depthProblem } from '../../admission/depth.ts';
import type { WebhookName } from '../../config/types.ts';
import type { AdmissionHandler } from '../deps.ts';
import { guardInitializing } from './guard-initializing.ts';
import { mutateLNamespace } from './mutate-lnamespace.ts';
import { mutateNamespace } from './mutate-namespace.ts';
import { validateNamespace } from './validate-namespace.ts';
import { validateNamespaceTemplate } from './validate-template.ts';
import { withConfigurationValidation, withInitializerGuard, withInitializerMutations, withInitializerValidation } from './initializers.ts';
import { validateOrganizationHandler } from './validate-organization.ts';
import { mutatePod } from './mutate-pod.ts';
import { protectObjects } from './protect-objects.ts';

/** 422 with the path where the object gets too deep, instead of a stack overflow (a 500) in a rule. */
export function withDepthLimit(handler: AdmissionHandler): AdmissionHandler {
  return (request, deps) => {
    const problem = depthProblem(request.object, '') ?? depthProblem(request.oldObject, 'oldObject');
    return problem === undefined ? handler(request, deps) : deny(request, problem, 422);
  };
}

export const HANDLERS: Readonly<Record<WebhookName, AdmissionHandler>> = {
  // Pluggable initializers (handlers/initializers.ts) wrap the namespace webhooks.
  'mutate-namespace': withDepthLimit(withInitializerMutations(mutateNamespace)),
  'validate-namespace': withDepthLimit(withInitializerValidation(validateNamespace)),
  'validate-template': withDepthLimit(withConfigurationValidation(validateNamespaceTemplate)),
  'guard-initializing': withDepthLimit(withInitializerGuard(guardInitializing)),
  'validate-organization': withDepthLimit(validateOrganizationHandler),
  'mutate-pod': withDepthLimit(mutatePod),
  'mutate-lnamespace': withDepthLimit(mutateLNamespace),
  'protect-objects': withDepthLimit(protectObjects),
};
