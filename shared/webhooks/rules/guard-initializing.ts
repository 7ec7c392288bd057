// guard-initializing: writes into a namespace labelled furnish.dev/phase=pending or failed. The
// webhook's namespaceSelector sends only those, so every request here is one into a namespace
// that is not furnished yet.
import { KEY, PHASE } from '../../keys.ts';
import type { UserInfo } from '../../kube/types.ts';
import type { PolicySettings } from '../../config/types.ts';
import { allowBecause } from './outcome.ts';
import type { RuleOutcome } from './outcome.ts';
import { matchingPrincipal } from './principals.ts';

export interface GuardInput {
  user: UserInfo;
  /** The pending namespace written into. */
  namespace: string;
  settings: PolicySettings;
}

/**
 * Why the write is refused. A namespace whose templates could not be applied says why in its
 * annotation KEY.failure (written by reconcile-namespace with phase=failed): waiting will not help,
 * so the message quotes it instead of asking to retry.
 */
export function stillFurnishing(namespace: string, failure?: string): string {
  if (failure) return `namespace "${namespace}" could not be furnished (${KEY.phase}=${PHASE.failed}): ${failure.split('\n').join('; ')}`;
  return `namespace "${namespace}" is still being furnished; retry in a few seconds`;
}

export function allowReconciler(input: GuardInput): RuleOutcome | undefined {
  const p = matchingPrincipal(input.user, input.settings.guard.reconciler);
  return p === undefined ? undefined : allowBecause('allow-reconciler', `the reconciler ("${p}") furnishes the namespace`);
}

export function allowSystemPrincipals(input: GuardInput): RuleOutcome | undefined {
  const p = matchingPrincipal(input.user, input.settings.guard.systemPrincipals);
  return p === undefined ? undefined : allowBecause('allow-system-principals', `system principal "${p}" writes into every new namespace`);
}

export function requireInitialize(input: GuardInput): RuleOutcome {
  return {
    rule: 'require-initialize',
    refused: `write into namespace "${input.namespace}" while it is pending`,
    requires: { user: input.user, verb: 'initialize', group: '', resource: 'namespaces', name: input.namespace },
  };
}

/** The first rule that allows, else the requester needs `initialize`. */
export function guardOutcome(input: GuardInput): RuleOutcome {
  return allowReconciler(input) ?? allowSystemPrincipals(input) ?? requireInitialize(input);
}
