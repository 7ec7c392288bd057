// The webhooks by name: the one table the functions, `furnish admit` and the bench share.
import type { WebhookName } from '../../config/types.ts';
import type { AdmissionHandler } from '../deps.ts';
import { guardInitializing } from './guard-initializing.ts';
import { mutateLNamespace } from './mutate-lnamespace.ts';
import { mutateNamespace } from './mutate-namespace.ts';
import { validateNamespace } from './validate-namespace.ts';
import { validateNamespaceTemplate } from './validate-template.ts';

export const HANDLERS: Readonly<Record<WebhookName, AdmissionHandler>> = {
  'mutate-namespace': mutateNamespace,
  'validate-namespace': validateNamespace,
  'validate-template': validateNamespaceTemplate,
  'guard-initializing': guardInitializing,
  'mutate-lnamespace': mutateLNamespace,
};
