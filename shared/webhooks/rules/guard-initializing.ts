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
  /** The namespace written into (pending or failed). */
  namespace: string;
  settings: PolicySettings;
}

/** The templates a KEY.failure annotation names (one line each: `template T: group/Kind/ns/name: ...`). */
export function failedTemplates(failure: string): string[] {
  const names = failure.split('\n').map((line) => /^template ([^\s:]+):/.exec(line)?.[1]).filter((n): n is string => n !== undefined);
  return [...new Set(names)];
}

/**
 * What the user of a failed namespace can do, waiting will not help: a template named by the
 * failure must change (Furnish then applies them again), or, for an initializer's failure, a
 * holder of `initialize` repairs the namespace and removes the failure record (the phase is Furnish's). Used by both guard paths (with and without initializers).
 */
export function recoveryAdvice(namespace: string, failure: string): string {
  const names = failedTemplates(failure);
  if (names.length === 0) return `waiting will not help: a holder of verb "initialize" on namespace "${namespace}" repairs it, then removes its annotation ${KEY.failure} (Furnish then sets phase ${PHASE.pending} again)`;
  const fix = `fix ${names.map((n) => `NamespaceTemplate "${n}" (kubectl edit namespacetemplate ${n})`).join(', ')}, or ask ${names.length === 1 ? 'its owner' : 'their owners'} to`;
  return `${fix}; Furnish applies the namespace's templates again when a template changes, and the namespace leaves phase ${PHASE.failed} once all of them apply`;
}

/**
 * Why the write is refused. A namespace whose templates could not be applied says why in its
 * annotation KEY.failure (written by reconcile-namespace with phase=failed): waiting will not help,
 * so the message quotes it and says what to fix instead of asking to retry.
 */
export function stillFurnishing(namespace: string, failure?: string): string {
  if (failure) return `namespace "${namespace}" could not be furnished (${KEY.phase}=${PHASE.failed}): ${failure.split('\n').join('; ')}; ${recoveryAdvice(namespace, failure)}`;
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
    // Pending or failed alike (the handler reads which only on denial): no tense that is wrong for one.
    refused: `write into namespace "${input.namespace}" until it is furnished`,
    requires: { user: input.user, verb: 'initialize', group: '', resource: 'namespaces', name: input.namespace },
  };
}

/**
 * Whether a write of a subresource (an eviction, a scale, a token request) goes unjudged: in a
 * failed namespace it does, so that what already runs there keeps running (cluster-autoscaler's
 * evictions, an autoscaler's scale, add-ons' tokens); a pending namespace, new, guards them too.
 * The handler asks only once the rules would refuse (it reads the phase then).
 */
export function subresourceLeftOpen(subResource: string | undefined, phase: string | undefined): boolean {
  return Boolean(subResource) && phase === PHASE.failed;
}

/** The first rule that allows, else the requester needs `initialize`. */
export function guardOutcome(input: GuardInput): RuleOutcome {
  return allowReconciler(input) ?? allowSystemPrincipals(input) ?? requireInitialize(input);
}
