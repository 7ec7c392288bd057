// The `Enforced` condition of an Organization: whether the organization rules (membership, the
// namespace quota, the default organization) apply in this cluster. With them off an Organization
// is stored and counted but decides nothing; the condition says so, so that it does not fail silently.
import type { OrganizationCondition, OrganizationStatus } from './types.ts';

export const ENFORCED = 'Enforced';

/** The condition for rules on or off, without its transition time. */
export function enforcedCondition(enabled: boolean): Omit<OrganizationCondition, 'lastTransitionTime'> {
  return enabled
    ? { type: ENFORCED, status: 'True', reason: 'RulesOn', message: 'the organization rules apply: membership and the namespace quota are checked when namespaces are created or moved' }
    : { type: ENFORCED, status: 'False', reason: 'RulesOff', message: 'the organization rules are off in this cluster (FURNISH_ORGANIZATIONS, or clusters[].organizations.enabled in the webhooks\' configuration file, is not true): this Organization is counted but decides nothing; nobody is refused for its membership or quota' };
}

/**
 * The status with the `Enforced` condition that `enabled` says (undefined: the reconciler was not
 * told, so it leaves the conditions as they are). Undefined when the condition is already so; its
 * transition time changes only with its status. Other conditions are kept.
 */
export function withEnforcement(status: OrganizationStatus | undefined, enabled: boolean | undefined, now: number): OrganizationStatus | undefined {
  if (enabled === undefined) return undefined;
  const want = enforcedCondition(enabled);
  const conditions = status?.conditions ?? [];
  const have = conditions.find((c) => c.type === ENFORCED);
  if (have && have.status === want.status && have.reason === want.reason && have.message === want.message) return undefined;
  const lastTransitionTime = have && have.status === want.status ? have.lastTransitionTime : new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { ...status, conditions: [...conditions.filter((c) => c.type !== ENFORCED), { ...want, lastTransitionTime }] };
}
