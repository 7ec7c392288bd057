// validate-namespace's initializer rules: the list only shrinks from the front, each entry removed
// by a principal of that initializer holding `initialize`; a failure is reported only by the
// working initializer's principals; Furnish's failure record needs `initialize`.
import type { Initializer } from '../../initializers/config.ts';
import { describePrincipals, principalOf } from '../../initializers/config.ts';
import { findInitializer, formatInitializers, listChange, newFailureReport, pendingInitializers } from '../../initializers/decide.ts';
import { INIT_PHASE, INITIALIZER_KEY } from '../../initializers/keys.ts';
import { KEY } from '../../keys.ts';
import { selectedInitializerList } from './initializers-mutate.ts';
import type { NamespaceMutationInput } from './mutate-namespace.ts';
import { allowBecause, denyBecause } from './outcome.ts';
import type { RuleOutcome } from './outcome.ts';
import { who } from './principals.ts';

export interface InitializerValidationInput extends NamespaceMutationInput {
  /** The built-in initializer and every configured one (read fresh when a principal matters). */
  known: readonly Initializer[];
}

function initialize(input: InitializerValidationInput, rule: string, refused: string): RuleOutcome {
  return { rule, refused, requires: { user: input.user, verb: 'initialize', group: '', resource: 'namespaces', name: input.namespace.name } };
}

/** Whether judging this request needs the configured initializers: a CREATE's list (their selectors), an UPDATE's completion or report (their principals). */
export function needsInitializers(input: NamespaceMutationInput): boolean {
  if (input.operation === 'CREATE') return true;
  if (!input.old) return false;
  return listChange(input.old.annotations, input.namespace.annotations).kind === 'completed' || newFailureReport(input.old.annotations, input.namespace.annotations) !== undefined;
}

/**
 * At CREATE a list given is the one mutate-namespace records (selectedInitializerList). Where in-tree
 * policies let mutate-namespace fail open, a requester could otherwise write a list that skips a
 * configured initializer.
 */
export function initializersAsSelected(input: InitializerValidationInput): RuleOutcome {
  const rule = 'initializers-as-selected';
  if (input.operation !== 'CREATE') return allowBecause(rule, 'recorded at CREATE only');
  const key = INITIALIZER_KEY.initializers;
  const list = pendingInitializers(input.namespace.annotations);
  const given = list?.length ? formatInitializers(list) : undefined;
  const wanted = selectedInitializerList(input, input.known.filter((i) => i.source !== 'built-in'));
  // Absent or empty: it waits for no initializer (furnish-namespace-marks lets only an administrator
  // create it so). Not governed (opted out, exempt) or not pending: nothing reads a list there.
  if (given === undefined) return allowBecause(rule, 'no initializer list given');
  if (wanted === undefined || input.namespace.labels[KEY.phase] !== INIT_PHASE.pending) return allowBecause(rule, 'not pending: no initializer runs');
  if (given === wanted) return allowBecause(rule, `initializers "${wanted}" as selected`);
  return denyBecause(rule, `${who(input.user)} may not create namespace "${input.namespace.name}" with annotation ${key}=${JSON.stringify(input.namespace.annotations[key])}: its initializers are ${JSON.stringify(wanted)}, those whose selectors match its labels (mutate-namespace records them)`);
}

export function initializersRemoveThemselvesInOrder(input: InitializerValidationInput): RuleOutcome {
  const rule = 'initializers-remove-themselves-in-order';
  if (input.operation !== 'UPDATE' || !input.old) return allowBecause(rule, 'set by mutate-namespace at CREATE');
  const key = INITIALIZER_KEY.initializers;
  const ns = `namespace "${input.namespace.name}"`;
  const before = input.old.annotations[key];
  const change = listChange(input.old.annotations, input.namespace.annotations);
  switch (change.kind) {
    case 'unchanged':
      return allowBecause(rule, 'initializers unchanged');
    case 'edited':
      return denyBecause(rule, `${who(input.user)} may not change annotation ${key} of ${ns} from ${JSON.stringify(before ?? null)} to ${JSON.stringify(input.namespace.annotations[key] ?? null)}: an initializer may only remove itself, when it is first`);
    case 'out-of-order':
      return denyBecause(rule, `${who(input.user)} may not remove initializer "${change.initializer}" from ${ns}: initializer "${change.current}" runs before it and has not finished (${key}=${JSON.stringify(before)})`);
    case 'completed': {
      const init = findInitializer(change.initializer, input.known);
      const refused = `remove initializer "${change.initializer}" from ${ns}`;
      // An initializer no configuration defines any more can only be cleared by an administrator.
      if (!init) return initialize(input, rule, `${refused} (no configuration defines it any more)`);
      if (principalOf(input.user, init) === undefined) return denyBecause(rule, `${who(input.user)} may not ${refused}: only its principals may (${describePrincipals(init)})`);
      return initialize(input, rule, refused);
    }
  }
}

export function failureReportedByItsInitializer(input: InitializerValidationInput): RuleOutcome {
  const rule = 'failure-reported-by-its-initializer';
  const key = INITIALIZER_KEY.initializerFailed;
  const ns = `namespace "${input.namespace.name}"`;
  const reported = input.old ? newFailureReport(input.old.annotations, input.namespace.annotations) : input.namespace.annotations[key] === undefined ? undefined : { value: input.namespace.annotations[key], report: undefined };
  if (!reported) return allowBecause(rule, 'no failure reported');
  if (input.operation === 'CREATE') return denyBecause(rule, `${who(input.user)} may not set annotation ${key} on ${ns} at creation: only a working initializer reports failure`);
  if (!reported.report) return denyBecause(rule, `${who(input.user)} may not set annotation ${key}=${JSON.stringify(reported.value)} on ${ns}: it must read "<initializer>: <reason>"`);
  const { initializer } = reported.report;
  const current = pendingInitializers(input.old!.annotations)?.[0];
  if (initializer !== current) return denyBecause(rule, `${who(input.user)} may not report initializer "${initializer}" failed on ${ns}: ${current === undefined ? 'no initializer is working' : `the working initializer is "${current}"`}`);
  const init = findInitializer(initializer, input.known);
  if (!init || principalOf(input.user, init) === undefined) return denyBecause(rule, `${who(input.user)} may not report initializer "${initializer}" failed on ${ns}: only its principals may (${init ? describePrincipals(init) : 'none configured'})`);
  return initialize(input, rule, `report initializer "${initializer}" failed on ${ns}`);
}

export function failureRecordNeedsInitialize(input: InitializerValidationInput): RuleOutcome {
  const rule = 'failure-record-needs-initialize';
  const key = INITIALIZER_KEY.failure;
  const after = input.namespace.annotations[key];
  const before = input.old?.annotations[key];
  if (after === before) return allowBecause(rule, 'failure record unchanged');
  return initialize(input, rule, `change annotation ${key} of namespace "${input.namespace.name}" to ${JSON.stringify(after ?? null)}`);
}

export function initializerValidation(input: InitializerValidationInput): RuleOutcome[] {
  return [initializersAsSelected(input), initializersRemoveThemselvesInOrder(input), failureReportedByItsInitializer(input), failureRecordNeedsInitialize(input)];
}
