// The webhooks by name: the one table the functions, `furnish admit` and the bench share.
import type { WebhookName } from '../../config/types.ts';
import type { AdmissionHandler } from '../deps.ts';
import { guardInitializing } from './guard-initializing.ts';
import { mutateNamespace } from './mutate-namespace.ts';
import { validateNamespace } from './validate-namespace.ts';
import { validateNamespaceTemplate } from './validate-template.ts';
import { withConfigurationValidation, withInitializerGuard, withInitializerMutations, withInitializerValidation } from './initializers.ts';
import { validateOrganizationHandler } from './validate-organization.ts';
import { mutatePod } from './mutate-pod.ts';

export const HANDLERS: Readonly<Record<WebhookName, AdmissionHandler>> = {
  // Pluggable initializers (handlers/initializers.ts) wrap the namespace webhooks.
  'mutate-namespace': withInitializerMutations(mutateNamespace),
  'validate-namespace': withInitializerValidation(validateNamespace),
  'validate-template': withConfigurationValidation(validateNamespaceTemplate),
  'guard-initializing': withInitializerGuard(guardInitializing),
  'validate-organization': validateOrganizationHandler,
  'mutate-pod': mutatePod,
};
