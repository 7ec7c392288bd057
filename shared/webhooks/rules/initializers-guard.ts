// guard-initializing's initializer rule: while a namespace's initializers are pending, only the
// principals of the one working now may write into it; a failed namespace stays closed to all but
// holders of `initialize`, and never opens to an initializer whose turn has not come. No opinion (undefined) for a namespace without an initializer list:
// the guard's own rules decide.
import { KEY } from '../../keys.ts';
import type { UserInfo } from '../../kube/types.ts';
import type { NamespaceInfo } from '../../render/types.ts';
import type { Initializer } from '../../initializers/config.ts';
import { principalOf } from '../../initializers/config.ts';
import { findInitializer, guardWhileInitializing, pendingInitializers } from '../../initializers/decide.ts';
import { INIT_PHASE, INITIALIZER_KEY } from '../../initializers/keys.ts';
import { recoveryAdvice } from './guard-initializing.ts';
import { allowBecause, denyBecause } from './outcome.ts';
import type { RuleOutcome } from './outcome.ts';

export interface InitializerGuardInput {
  user: UserInfo;
  /** The namespace written into, as stored now. */
  namespace: NamespaceInfo;
  known: readonly Initializer[];
}

/** Whether the rule needs the configured initializers (their principals) for this namespace. */
export function guardNeedsInitializers(ns: NamespaceInfo): boolean {
  const phase = ns.labels[KEY.phase];
  return (phase === INIT_PHASE.pending || phase === INIT_PHASE.failed) && (pendingInitializers(ns.annotations)?.length ?? 0) > 0;
}

/** The later initializer (not the one working now) that `user` is a principal of, if any. */
export function laterInitializerOf(user: UserInfo, pending: readonly string[], known: readonly Initializer[]): string | undefined {
  return pending.slice(1).find((name) => {
    const init = findInitializer(name, known);
    return init !== undefined && principalOf(user, init) !== undefined;
  });
}

export function writesWaitForInitializers(input: InitializerGuardInput): RuleOutcome | undefined {
  const rule = 'writes-wait-for-initializers';
  const { namespace: ns, user } = input;
  if (ns.labels[KEY.phase] === INIT_PHASE.failed) {
    const why = ns.annotations[INITIALIZER_KEY.failure];
    const pending = pendingInitializers(ns.annotations) ?? [];
    const later = laterInitializerOf(user, pending, input.known);
    if (later) return denyBecause(rule, `namespace "${ns.name}" failed to initialize${why ? ` (${why})` : ''}: user "${user.username ?? ''}" may not write into it as initializer "${later}", whose turn comes after "${pending[0]}"`);
    return {
      rule,
      refused: `write into namespace "${ns.name}", which failed to initialize${why ? ` (${why})` : ''}`,
      requires: { user, verb: 'initialize', group: '', resource: 'namespaces', name: ns.name },
      advice: recoveryAdvice(ns.name, why ?? ''),
    };
  }
  if (!guardNeedsInitializers(ns)) return undefined;
  const decision = guardWhileInitializing(user, ns.name, pendingInitializers(ns.annotations)!, input.known);
  return 'allow' in decision ? allowBecause(rule, decision.allow) : denyBecause(rule, decision.deny);
}
