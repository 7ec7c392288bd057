// mutate-namespace's initializer rules: record the initializers that select a new namespace (the
// request's own value is replaced, so it cannot be forged), and move the phase when the list
// empties (`ready`), an initializer reports failure (`failed`) or a failure record is removed (`pending`). Same shape as the other
// mutate-namespace rules; the handler decorator in handlers/initializers.ts runs them.
import { KEY } from '../../keys.ts';
import type { Initializer } from '../../initializers/config.ts';
import { selectInitializers } from '../../initializers/config.ts';
import { failureValue, formatInitializers, newFailureReport, phaseFromUpdate } from '../../initializers/decide.ts';
import { INIT_PHASE, INITIALIZER_KEY } from '../../initializers/keys.ts';
import type { MutationOutcome, NamespaceMutationInput } from './mutate-namespace.ts';
import { optOutReason } from './mutate-namespace.ts';

export interface InitializerMutationInput extends NamespaceMutationInput {
  /** Configured initializers, merged (CREATE only: read fresh from the cluster). */
  configured: readonly Initializer[];
}

/** The initializer list a new namespace gets (undefined: none), from the configured initializers whose selectors match it. */
export function selectedInitializerList(input: NamespaceMutationInput, configured: readonly Initializer[]): string | undefined {
  // Furnish's own namespace is never initialized: its reconciler and webhooks' identity live there.
  const governed = optOutReason(input) === undefined && input.namespace.name !== input.settings.furnishNamespace;
  const selected = selectInitializers(input.namespace.labels, !governed, configured);
  return selected.length > 0 ? formatInitializers(selected) : undefined;
}

export function recordInitializers(input: InitializerMutationInput): MutationOutcome {
  const rule = 'record-initializers';
  if (input.operation !== 'CREATE') return { rule, skip: 'only at CREATE' };
  const given = input.namespace.annotations[INITIALIZER_KEY.initializers];
  const wanted = selectedInitializerList(input, input.configured);
  if (given === wanted) return { rule, skip: wanted === undefined ? 'no initializer: opted out' : `initializers already "${wanted}"` };
  // Whatever the request carried is replaced: only Furnish decides who initializes a namespace.
  const reason = wanted === undefined ? `removed ${INITIALIZER_KEY.initializers} (opted out: no initializer)` : `${INITIALIZER_KEY.initializers}=${wanted}`;
  return { rule, reason, annotations: { [INITIALIZER_KEY.initializers]: wanted ?? null } };
}

export function dropFailuresAtCreate(input: InitializerMutationInput): MutationOutcome {
  const rule = 'drop-failures-at-create';
  if (input.operation !== 'CREATE') return { rule, skip: 'only at CREATE' };
  const keys = [INITIALIZER_KEY.failure, INITIALIZER_KEY.initializerFailed].filter((k) => input.namespace.annotations[k] !== undefined);
  if (keys.length === 0) return { rule, skip: 'no failure recorded' };
  return { rule, reason: `removed ${keys.join(', ')}: a new namespace has not failed`, annotations: Object.fromEntries(keys.map((k) => [k, null])) };
}

/**
 * The phase this update leads to (phaseFromUpdate), when the requester left the phase as it was;
 * a requester who changes it is judged by validate-namespace instead (only Furnish sets it).
 */
function phaseToSet(input: InitializerMutationInput): string | undefined {
  if (input.operation !== 'UPDATE' || !input.old) return undefined;
  if (input.namespace.labels[KEY.phase] !== input.old.labels[KEY.phase]) return undefined;
  return phaseFromUpdate(input.old, input.namespace.annotations);
}

export function readyWhenInitialized(input: InitializerMutationInput): MutationOutcome {
  const rule = 'ready-when-initialized';
  if (phaseToSet(input) !== INIT_PHASE.ready) return { rule, skip: 'the last initializer has not removed itself' };
  return { rule, reason: `${KEY.phase}=${INIT_PHASE.ready}: every initializer has finished`, labels: { [KEY.phase]: INIT_PHASE.ready } };
}

export function failOnReport(input: InitializerMutationInput): MutationOutcome {
  const rule = 'fail-on-report';
  const reported = input.old && phaseToSet(input) === INIT_PHASE.failed ? newFailureReport(input.old.annotations, input.namespace.annotations)?.report : undefined;
  if (!reported) return { rule, skip: 'no new failure report on a pending namespace' };
  // validate-namespace then checks that the reporter is a principal of that initializer.
  return { rule, reason: `${KEY.phase}=${INIT_PHASE.failed}: ${failureValue(reported)}`, labels: { [KEY.phase]: INIT_PHASE.failed }, annotations: { [INITIALIZER_KEY.failure]: failureValue(reported) } };
}

/** A failed namespace whose failure record a holder of `initialize` removed is pending again. */
export function pendingWhenRepaired(input: InitializerMutationInput): MutationOutcome {
  const rule = 'pending-when-repaired';
  if (phaseToSet(input) !== INIT_PHASE.pending) return { rule, skip: 'no failure record removed from a failed namespace' };
  return { rule, reason: `${KEY.phase}=${INIT_PHASE.pending}: ${INITIALIZER_KEY.failure} removed (repaired); Furnish takes it from there`, labels: { [KEY.phase]: INIT_PHASE.pending } };
}

export const INITIALIZER_MUTATIONS = [recordInitializers, dropFailuresAtCreate, readyWhenInitialized, failOnReport, pendingWhenRepaired] as const;

export function initializerMutations(input: InitializerMutationInput): MutationOutcome[] {
  return INITIALIZER_MUTATIONS.map((rule) => rule(input));
}
