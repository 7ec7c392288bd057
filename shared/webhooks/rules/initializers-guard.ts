// guard-initializing's initializer rule: while a namespace's initializers are pending, only the
// principals of the one working now may write into it; a failed namespace stays closed to all but
// holders of `initialize`. No opinion (undefined) for a namespace without an initializer list:
// the guard's own rules decide.
import { KEY } from '../../keys.ts';
import type { UserInfo } from '../../kube/types.ts';
import type { NamespaceInfo } from '../../render/types.ts';
import type { Initializer } from '../../initializers/config.ts';
import { guardWhileInitializing, pendingInitializers } from '../../initializers/decide.ts';
import { INIT_PHASE, INITIALIZER_KEY } from '../../initializers/keys.ts';
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
  return ns.labels[KEY.phase] === INIT_PHASE.pending && (pendingInitializers(ns.annotations)?.length ?? 0) > 0;
}

export function writesWaitForInitializers(input: InitializerGuardInput): RuleOutcome | undefined {
  const rule = 'writes-wait-for-initializers';
  const { namespace: ns, user } = input;
  if (ns.labels[KEY.phase] === INIT_PHASE.failed) {
    const why = ns.annotations[INITIALIZER_KEY.failure];
    return { rule, refused: `write into namespace "${ns.name}", which failed to initialize${why ? ` (${why})` : ''}`, requires: { user, verb: 'initialize', group: '', resource: 'namespaces', name: ns.name } };
  }
  if (!guardNeedsInitializers(ns)) return undefined;
  const decision = guardWhileInitializing(user, ns.name, pendingInitializers(ns.annotations)!, input.known);
  return 'allow' in decision ? allowBecause(rule, decision.allow) : denyBecause(rule, decision.deny);
}
