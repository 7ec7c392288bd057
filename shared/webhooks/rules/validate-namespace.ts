// validate-namespace, one rule per function. Every refusal names who, what was refused, and the
// exact RBAC that would allow it.
import { CREATOR_IDENTITY, creatorIdentityOf } from '../../auth/creator.ts';
import { useOf } from '../../auth/template-use.ts';
import type { UserInfo } from '../../kube/types.ts';
import { KEY, PHASE } from '../../keys.ts';
import { phaseFromUpdate } from '../../initializers/decide.ts';
import { GROUP } from '../../render/types.ts';
import type { NamespaceMutationInput } from './mutate-namespace.ts';
import { creatorOf, IMMUTABLE_ANNOTATIONS, keptCreator, optOutReason } from './mutate-namespace.ts';
import { allowBecause, denyBecause } from './outcome.ts';
import type { RuleOutcome } from './outcome.ts';
import { matchingPrincipal, who } from './principals.ts';

export interface NamespaceValidationInput extends NamespaceMutationInput {
  /**
   * Templates annotated furnish.dev/require-permission that this request makes the namespace
   * match: all of them at CREATE, only the newly matched ones at UPDATE (templatesToAuthorize).
   */
  templatesNeedingPermission: string[];
  /** The namespace's Ready condition (status, reason, message) before and after an UPDATE; absent elsewhere. */
  readyCondition?: { before?: string; after?: string };
}

const TEMPLATES = 'namespacetemplates';

export function nameLabelMatchesName(input: NamespaceValidationInput): RuleOutcome {
  const rule = 'name-label-matches-name';
  const { name, labels } = input.namespace;
  const value = labels[KEY.metadataName];
  if (value === undefined || value === name) return allowBecause(rule, value === undefined ? 'label absent' : 'label equals the name');
  return denyBecause(rule, `${who(input.user)} may not set label ${KEY.metadataName}=${JSON.stringify(value)} on namespace "${name}": it must equal the name`);
}

/**
 * At CREATE the creator (and the identity recorded with it) must be what mutate-namespace records:
 * the requester, or the user a trusted creator named. Afterwards neither changes.
 */
export function creatorIsImmutable(input: NamespaceValidationInput): RuleOutcome {
  const rule = 'creator-is-immutable';
  const { annotations } = input.namespace;
  const ns = `namespace "${input.namespace.name}"`;
  if (input.operation === 'CREATE') {
    const expected = creatorOf(input);
    const after = annotations[KEY.creator];
    if (after !== undefined && after !== expected?.name) {
      return denyBecause(rule, `${who(input.user)} may not set annotation ${KEY.creator}=${JSON.stringify(after)} on ${ns}: it records who created the namespace (only a trusted creator may name another user)`);
    }
    // Absent is safe (the reconciler then checks the creator's name alone, which grants no more);
    // present, it must be exactly what admission saw, or a requester could claim groups.
    const identity = annotations[CREATOR_IDENTITY];
    if (expected && identity !== undefined && identity !== expected.identity) {
      return denyBecause(rule, `${who(input.user)} may not set annotation ${CREATOR_IDENTITY} on ${ns}: it records the identity admission saw`);
    }
    return allowBecause(rule, expected?.namedBy ?? 'creator is the requester');
  }
  const old = input.old?.annotations ?? {};
  const kept = keptCreator(old);
  const changed = IMMUTABLE_ANNOTATIONS.find((k) => old[k] !== annotations[k] && kept[k] !== annotations[k]);
  if (changed === undefined) return allowBecause(rule, old[CREATOR_IDENTITY] === annotations[CREATOR_IDENTITY] ? 'creator unchanged' : `creator unchanged (${CREATOR_IDENTITY} in the current form)`);
  return denyBecause(rule, `${who(input.user)} may not change annotation ${changed} of ${ns} from ${JSON.stringify(old[changed] ?? null)} to ${JSON.stringify(annotations[changed] ?? null)}: it is immutable`);
}

export function optOutNeedsPermission(input: NamespaceValidationInput): RuleOutcome {
  const rule = 'opt-out-needs-permission';
  const now = input.namespace.annotations[KEY.optOut] === 'true';
  const before = input.old?.annotations[KEY.optOut] === 'true';
  if (!now || before) return allowBecause(rule, now ? 'already opted out' : 'not opting out');
  if (input.operation === 'CREATE' && matchingPrincipal(input.user, input.settings.autoOptOutPrincipals) !== undefined) {
    return allowBecause(rule, 'opted out automatically (auto-opt-out principal)');
  }
  return {
    rule,
    refused: `opt namespace "${input.namespace.name}" out of NamespaceTemplates (annotation ${KEY.optOut}="true")`,
    requires: { user: input.user, verb: 'optout', group: GROUP, resource: TEMPLATES },
  };
}

/** The phase a namespace is created with: what mutate-namespace sets (none when opted out). */
function phaseSetByFurnish(input: NamespaceValidationInput): string | undefined {
  return optOutReason(input) === undefined ? PHASE.pending : undefined;
}

/**
 * Only Furnish sets the phase: its reconciler, or mutate-namespace as this update's annotation
 * change dictates (phaseFromUpdate: the last initializer removed itself, the working one reported
 * failure, a failure record was removed). Not a holder of `initialize`: an initializer whose turn
 * has not come could open the namespace, and `initialize` is granted cluster-wide.
 */
export function phaseSetOnlyByFurnish(input: NamespaceValidationInput): RuleOutcome {
  const rule = 'phase-set-only-by-furnish';
  const after = input.namespace.labels[KEY.phase];
  const before = input.operation === 'CREATE' ? phaseSetByFurnish(input) : input.old?.labels[KEY.phase];
  if (after === before || (input.operation === 'CREATE' && after === undefined)) return allowBecause(rule, 'phase unchanged');
  const reconciler = matchingPrincipal(input.user, input.settings.guard.reconciler);
  if (reconciler !== undefined) return allowBecause(rule, `the reconciler ("${reconciler}") sets the phase`);
  if (input.old && after !== undefined && after === phaseFromUpdate(input.old, input.namespace.annotations)) {
    return allowBecause(rule, `${KEY.phase}=${after} follows from this update's initializer annotations (set by mutate-namespace)`);
  }
  const change = before === undefined ? `set label ${KEY.phase}=${JSON.stringify(after ?? null)}` : `change label ${KEY.phase} from ${JSON.stringify(before)} to ${JSON.stringify(after ?? null)}`;
  return denyBecause(rule, `${who(input.user)} may not ${change} on namespace "${input.namespace.name}": only Furnish sets the phase `
    + `(its reconciler, or mutate-namespace: ${PHASE.ready} when the last initializer removes itself, ${PHASE.failed} when the working one reports failure, ${PHASE.pending} when a holder of verb "initialize" removes annotation ${KEY.failure} of a failed namespace)`);
}

/**
 * The Ready condition is Furnish's output, written with the phase (shared/reconcile/phase.ts): a
 * change of it through namespaces/status by anyone else would let `kubectl wait` pass early.
 */
export function readyConditionSetOnlyByFurnish(input: NamespaceValidationInput): RuleOutcome {
  const rule = 'ready-condition-set-only-by-furnish';
  const { before, after } = input.readyCondition ?? {};
  if (before === after) return allowBecause(rule, 'Ready condition unchanged');
  const reconciler = matchingPrincipal(input.user, input.settings.guard.reconciler);
  if (reconciler !== undefined) return allowBecause(rule, `the reconciler ("${reconciler}") keeps the Ready condition`);
  return denyBecause(rule, `${who(input.user)} may not change the Ready condition of namespace "${input.namespace.name}" (${before ?? 'none'} to ${after ?? 'none'}): only Furnish sets it, with the phase`);
}

/**
 * Whose `use` counts: the creator, as the reconciler asks. At CREATE the one about to be recorded
 * (a trusted creator's named user, else the requester); at UPDATE the recorded one, not whoever
 * relabels the namespace (the reconciler would refuse what that person's grant let through).
 */
function useIdentity(input: NamespaceValidationInput): UserInfo | undefined {
  if (input.operation !== 'CREATE') return creatorIdentityOf(input.old?.annotations);
  const creator = creatorOf(input);
  return creator?.namedBy ? { username: creator.name } : input.user;
}

/** The one rule of template use (shared/auth/template-use.ts), as admission outcomes. */
export function templatesNeedUse(input: NamespaceValidationInput): RuleOutcome[] {
  const rule = 'templates-need-use';
  if (input.templatesNeedingPermission.length === 0) return [allowBecause(rule, 'no newly matched template requires permission')];
  return useOf(input.templatesNeedingPermission, useIdentity(input), input.namespace.name).map((u) => ('check' in u ? { rule, refused: u.refused, requires: u.check } : denyBecause(rule, u.deny)));
}

export function validationOutcomes(input: NamespaceValidationInput): RuleOutcome[] {
  return [
    nameLabelMatchesName(input),
    creatorIsImmutable(input),
    optOutNeedsPermission(input),
    phaseSetOnlyByFurnish(input),
    readyConditionSetOnlyByFurnish(input),
    ...templatesNeedUse(input),
  ];
}
