// validate-namespace, one rule per function. Every refusal names who, what was refused, and the
// exact RBAC that would allow it.
import { KEY, PHASE } from '../../keys.ts';
import { GROUP } from '../../render/types.ts';
import type { NamespaceMutationInput } from './mutate-namespace.ts';
import { optOutReason } from './mutate-namespace.ts';
import { allowBecause, denyBecause } from './outcome.ts';
import type { RuleOutcome } from './outcome.ts';
import { matchingPrincipal, who } from './principals.ts';

export interface NamespaceValidationInput extends NamespaceMutationInput {
  /**
   * Templates annotated furnish.dev/require-permission that this request makes the namespace
   * match: all of them at CREATE, only the newly matched ones at UPDATE.
   */
  templatesNeedingPermission: string[];
}

const TEMPLATES = 'namespacetemplates';

export function nameLabelMatchesName(input: NamespaceValidationInput): RuleOutcome {
  const rule = 'name-label-matches-name';
  const { name, labels } = input.namespace;
  const value = labels[KEY.metadataName];
  if (value === undefined || value === name) return allowBecause(rule, value === undefined ? 'label absent' : 'label equals the name');
  return denyBecause(rule, `${who(input.user)} may not set label ${KEY.metadataName}=${JSON.stringify(value)} on namespace "${name}": it must equal the name`);
}

export function creatorIsImmutable(input: NamespaceValidationInput): RuleOutcome {
  const rule = 'creator-is-immutable';
  const after = input.namespace.annotations[KEY.creator];
  const ns = `namespace "${input.namespace.name}"`;
  if (input.operation === 'CREATE') {
    if (after === undefined || after === input.user.username) return allowBecause(rule, 'creator is the requester');
    return denyBecause(rule, `${who(input.user)} may not set annotation ${KEY.creator}=${JSON.stringify(after)} on ${ns}: it records who created the namespace`);
  }
  const before = input.old?.annotations[KEY.creator];
  if (before === after) return allowBecause(rule, 'creator unchanged');
  return denyBecause(rule, `${who(input.user)} may not change annotation ${KEY.creator} of ${ns} from ${JSON.stringify(before ?? null)} to ${JSON.stringify(after ?? null)}: it is immutable`);
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

/** The phase the requester may set without `initialize`: what mutate-namespace sets at CREATE. */
function phaseSetByFurnish(input: NamespaceValidationInput): string | undefined {
  return optOutReason(input) === undefined ? PHASE.pending : undefined;
}

export function phaseChangeNeedsInitialize(input: NamespaceValidationInput): RuleOutcome {
  const rule = 'phase-change-needs-initialize';
  const after = input.namespace.labels[KEY.phase];
  const before = input.operation === 'CREATE' ? phaseSetByFurnish(input) : input.old?.labels[KEY.phase];
  if (after === before || (input.operation === 'CREATE' && after === undefined)) return allowBecause(rule, 'phase unchanged');
  const change = before === undefined ? `set label ${KEY.phase}=${JSON.stringify(after ?? null)}` : `change label ${KEY.phase} from ${JSON.stringify(before)} to ${JSON.stringify(after ?? null)}`;
  return {
    rule,
    refused: `${change} on namespace "${input.namespace.name}"`,
    requires: { user: input.user, verb: 'initialize', group: '', resource: 'namespaces', name: input.namespace.name },
  };
}

export function templatesNeedUse(input: NamespaceValidationInput): RuleOutcome[] {
  const rule = 'templates-need-use';
  if (input.templatesNeedingPermission.length === 0) return [allowBecause(rule, 'no newly matched template requires permission')];
  return input.templatesNeedingPermission.map((name) => ({
    rule,
    refused: `use NamespaceTemplate "${name}"`,
    requires: { user: input.user, verb: 'use', group: GROUP, resource: TEMPLATES, name },
  }));
}

export function validationOutcomes(input: NamespaceValidationInput): RuleOutcome[] {
  return [
    nameLabelMatchesName(input),
    creatorIsImmutable(input),
    optOutNeedsPermission(input),
    phaseChangeNeedsInitialize(input),
    ...templatesNeedUse(input),
  ];
}
