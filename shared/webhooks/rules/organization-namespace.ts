// Organization rules of namespace admission, one pure function per rule. Each takes what the
// handler read fresh (the Organizations named, the requester's ServiceAccount's organization)
// and answers allow or deny; every denial says who, what, and how to get it allowed. The quota
// is not here: it is a reservation (organization-quota.ts), taken only once every rule allows.
import { CREATOR_IDENTITY, REQUESTER_ANNOTATIONS } from '../../auth/creator.ts';
import { INITIALIZER_KEY } from '../../initializers/keys.ts';
import { KEY, LEGACY_KEY } from '../../keys.ts';
import type { PrincipalPattern } from '../../config/types.ts';
import type { UserInfo } from '../../kube/types.ts';
import { LNS_KEY } from '../../lnamespace/types.ts';
import { isSystemNamespace } from '../../render/match.ts';
import type { NamespaceInfo } from '../../render/types.ts';
import { defaultOrganizationOf, isMember, serviceAccountOf } from '../../org/members.ts';
import { matchesAny, type OrganizationSettings } from '../../org/settings.ts';
import type { Organization } from '../../org/types.ts';
import type { MetadataChange, MutationOutcome } from './mutate-namespace.ts';
import { allowBecause, denyBecause, type RuleOutcome } from './outcome.ts';
import { matchingPrincipal, who } from './principals.ts';

/**
 * Keys judged by their own rules, never by the allowlist, each in the field its rule reads: the
 * labels phase, organization and name; the annotations creator and the identity admission saw,
 * opt-out, the trusted requester, and the initializer list and its failure report
 * (shared/initializers). The same key in the other field is judged by nothing else, so the
 * allowlist judges it.
 */
export const OWN_RULE_KEYS: Readonly<Record<'labels' | 'annotations', ReadonlySet<string>>> = {
  labels: new Set([KEY.phase, KEY.organization, KEY.metadataName]),
  annotations: new Set([KEY.creator, CREATOR_IDENTITY, KEY.optOut, ...REQUESTER_ANNOTATIONS, INITIALIZER_KEY.initializers, INITIALIZER_KEY.initializerFailed]),
};

/**
 * Annotations only Furnish's own identity writes on a namespace (guard.reconciler): the
 * reconciler's failure report (and the record earlier versions kept there, which it removes), and
 * the billing fields the LNamespace reconciler carries over from an LNamespace (judged when the
 * LNamespace was admitted: organization-lnamespace.ts). Exempt from the allowlist for that identity
 * alone; anyone else who names them is judged like any other key.
 */
export const ANNOTATIONS_WRITTEN_BY_FURNISH: readonly string[] = [LEGACY_KEY.applied, KEY.failure, `${LNS_KEY.billingPrefix}*`];

export interface OrganizationContext {
  settings: OrganizationSettings;
  systemNamespaces: readonly string[];
  furnishNamespace: string;
  /** Furnish's own identity (guard.reconciler): writes its keys, and follows its LNamespaces' organizations. */
  furnishPrincipals: readonly PrincipalPattern[];
  /** Who may name a namespace's creator at CREATE (trustedCreators). */
  trustedCreators: readonly PrincipalPattern[];
}

export interface OrganizationRuleInput extends OrganizationContext {
  operation: 'CREATE' | 'UPDATE';
  /** Who sent the request (judged for privilege and, on UPDATE, membership). */
  requester: UserInfo;
  /** Who the namespace is created for: the requester, or the user a trusted creator named. */
  creator: UserInfo;
  namespace: NamespaceInfo;
  old?: NamespaceInfo;
  /** The organization the namespace is labelled with, read fresh; undefined when absent or unknown. */
  target?: Organization;
  /** UPDATE: the organization it was labelled with before. */
  source?: Organization;
  /** The organization of the namespace the creator's (CREATE) or requester's (UPDATE) ServiceAccount lives in. */
  serviceAccountOrganization?: string;
  /**
   * UPDATE by Furnish's own identity of a namespace an LNamespace controls: that LNamespace's name
   * and organization label, read fresh. Its organization change was judged as a transfer when the
   * LNamespace was relabelled (mutate-lnamespace), with the relabeller's memberships.
   */
  lnamespace?: { name: string; organization?: string };
}

export const organizationOf = (ns: NamespaceInfo | undefined): string | undefined => ns?.labels[KEY.organization] || undefined;

/**
 * Whether the namespace names an organization, before or after the write: then the organization
 * rules hold even while no Organization exists (the in-tree floor, furnish-organization-metadata,
 * sees the label and nothing else).
 */
export function namesOrganization(namespace: NamespaceInfo, old: NamespaceInfo | undefined): boolean {
  return organizationOf(namespace) !== undefined || organizationOf(old) !== undefined;
}

/** System namespaces and Furnish's own belong to no organization. */
export function isOrganizationExempt(namespace: string, ctx: OrganizationContext): boolean {
  return isSystemNamespace(namespace, ctx.systemNamespaces) || namespace === ctx.furnishNamespace;
}

/** Why organization rules do not apply to this request at all, or undefined. */
export function organizationExemption(requester: UserInfo, namespace: string, ctx: OrganizationContext): string | undefined {
  if (!ctx.settings.enabled) return 'organizations are not enabled';
  const p = matchingPrincipal(requester, ctx.settings.privileged);
  if (p !== undefined) return `${who(requester)} is privileged ("${p}")`;
  if (isOrganizationExempt(namespace, ctx)) return `"${namespace}" is a system namespace`;
  return undefined;
}

/** Who acts for an UPDATE or a CREATE: the one whose memberships count. */
const actor = (input: OrganizationRuleInput): UserInfo => (input.operation === 'CREATE' ? input.creator : input.requester);

const HOW_TO_JOIN = 'ask an administrator to add you to the Organization\'s spec.members (kind User, Group or ServiceAccount)';

// ---- mutation ---------------------------------------------------------------------------------

/**
 * CREATE without the label: the creator's default organization (a ServiceAccount's is its
 * namespace's organization). No default: nothing to set; validation refuses and says why.
 */
export function setDefaultOrganization(input: { operation: 'CREATE' | 'UPDATE'; creator: UserInfo; namespace: NamespaceInfo; organizations: readonly Organization[]; serviceAccountOrganization?: string }): MutationOutcome {
  const rule = 'set-default-organization';
  if (input.operation !== 'CREATE') return { rule, skip: 'only at CREATE' };
  if (organizationOf(input.namespace)) return { rule, skip: 'organization named' };
  const sa = serviceAccountOf(input.creator);
  const name = sa ? input.serviceAccountOrganization : defaultOrganizationOf(input.creator.username, input.organizations)?.metadata.name;
  if (!name) return { rule, skip: sa ? 'the ServiceAccount\'s namespace belongs to no organization' : 'the creator has no default organization' };
  const change: MetadataChange = { rule, reason: `${KEY.organization}=${name} (${sa ? 'the ServiceAccount\'s namespace\'s organization' : `default organization of "${input.creator.username}"`})`, labels: { [KEY.organization]: name } };
  return change;
}

// ---- validation -------------------------------------------------------------------------------

export function organizationRequired(input: OrganizationRuleInput): RuleOutcome {
  const rule = 'organization-required';
  const name = organizationOf(input.namespace);
  if (name) return allowBecause(rule, `organization "${name}"`);
  const follows = followsLNamespace(input);
  if (follows) return allowBecause(rule, follows);
  const ns = `namespace "${input.namespace.name}"`;
  // A namespace from before organizations were enabled is not forced into one by an unrelated
  // update (its deletion, through /status and /finalize, among them).
  if (input.operation === 'UPDATE' && !organizationOf(input.old)) return allowBecause(rule, 'the namespace never had an organization');
  if (input.operation === 'UPDATE') {
    return denyBecause(rule, `${who(input.requester)} may not remove label ${KEY.organization}=${JSON.stringify(organizationOf(input.old) ?? '')} from ${ns}: every namespace belongs to an organization (to move it, set the label to another organization you belong to)`);
  }
  return denyBecause(rule, `${who(input.creator)} may not create ${ns} without an organization: you have no default organization; label it ${KEY.organization}=<organization you belong to>, or ${HOW_TO_JOIN} with default: true`);
}

/** The organization is changed (CREATE: set; UPDATE: a transfer). */
function organizationChanges(input: OrganizationRuleInput): boolean {
  return input.operation === 'CREATE' || organizationOf(input.namespace) !== organizationOf(input.old);
}

export function organizationExists(input: OrganizationRuleInput): RuleOutcome {
  const rule = 'organization-exists';
  const name = organizationOf(input.namespace);
  if (!name || input.target) return allowBecause(rule, name ? `organization "${name}" exists` : 'no organization named');
  // A deleted Organization never blocks its namespaces' other updates: the namespace controller's
  // /status and /finalize writes of a namespace being deleted among them.
  if (!organizationChanges(input)) return allowBecause(rule, `organization "${name}" unchanged (it no longer exists)`);
  return denyBecause(rule, `${who(actor(input))} may not put namespace "${input.namespace.name}" in organization "${name}": no such Organization (kubectl get organizations lists them)`);
}

/**
 * Furnish's own identity writing the organization of a namespace an LNamespace controls (creating
 * it, or moving it) as that LNamespace names it: judged with the LNamespace's requester when the
 * LNamespace was created or relabelled (mutate-lnamespace). Only that organization: Furnish is
 * nobody's deputy for any other. Undefined when this is not such a write.
 */
export function followsLNamespace(input: OrganizationRuleInput): string | undefined {
  const lns = input.lnamespace;
  const to = organizationOf(input.namespace);
  if (!lns || lns.organization !== to || !isFurnish(input.requester, input)) return undefined;
  return `Furnish follows LNamespace "${lns.name}" ${to ? `into "${to}"` : 'without an organization'} (judged when the LNamespace was created or relabelled)`;
}

export function actorIsMember(input: OrganizationRuleInput): RuleOutcome {
  const rule = 'member-of-organization';
  const { target } = input;
  if (!target || !organizationChanges(input)) return allowBecause(rule, 'organization unchanged');
  const follows = followsLNamespace(input);
  if (follows) return allowBecause(rule, follows);
  const user = actor(input);
  const sa = serviceAccountOf(user);
  if (isMember(target, user) || (sa && input.serviceAccountOrganization === target.metadata.name)) return allowBecause(rule, `${who(user)} is a member of "${target.metadata.name}"`);
  const verb = input.operation === 'CREATE' ? 'create namespace' : 'move namespace';
  return denyBecause(rule, `${who(user)} may not ${verb} "${input.namespace.name}" into organization "${target.metadata.name}": not a member; ${HOW_TO_JOIN}`);
}

export function serviceAccountConfined(input: OrganizationRuleInput): RuleOutcome {
  const rule = 'service-account-confined';
  const user = actor(input);
  const sa = serviceAccountOf(user);
  const own = input.serviceAccountOrganization;
  const name = organizationOf(input.namespace);
  if (!sa || !own || !name || !organizationChanges(input) || name === own) return allowBecause(rule, 'not a ServiceAccount leaving its organization');
  return denyBecause(rule, `${who(user)} may not put namespace "${input.namespace.name}" in organization "${name}": a ServiceAccount may only create namespaces of its own namespace's organization "${own}"`);
}

export function transferNeedsBothMemberships(input: OrganizationRuleInput): RuleOutcome {
  const rule = 'transfer-needs-both-memberships';
  const from = organizationOf(input.old);
  const to = organizationOf(input.namespace);
  if (input.operation !== 'UPDATE' || !from || !to || from === to) return allowBecause(rule, 'not a transfer');
  const follows = followsLNamespace(input);
  if (follows) return allowBecause(rule, follows);
  if (input.source && isMember(input.source, input.requester)) return allowBecause(rule, `${who(input.requester)} is a member of "${from}"`);
  return denyBecause(rule, `${who(input.requester)} may not move namespace "${input.namespace.name}" from organization "${from}" to "${to}": not a member of "${from}"; a transfer needs membership of both organizations`);
}

/** Keys of a map whose value differs between old and new (added, changed or removed). */
export function changedKeys(before: Record<string, string> | undefined, after: Record<string, string>): string[] {
  const old = before ?? {};
  const keys = new Set([...Object.keys(old), ...Object.keys(after)]);
  return [...keys].filter((k) => old[k] !== after[k]).sort();
}

/** Is this requester Furnish's own identity (guard.reconciler)? */
export function isFurnish(requester: UserInfo, ctx: Pick<OrganizationContext, 'furnishPrincipals'>): boolean {
  return matchingPrincipal(requester, ctx.furnishPrincipals) !== undefined;
}

export function metadataAllowlist(input: OrganizationRuleInput): RuleOutcome {
  const rule = 'metadata-allowlist';
  const { settings } = input;
  const furnish = isFurnish(input.requester, input);
  const exempt = (field: 'labels' | 'annotations', k: string) =>
    OWN_RULE_KEYS[field].has(k) || (field === 'annotations' && furnish && matchesAny(k, ANNOTATIONS_WRITTEN_BY_FURNISH) !== undefined);
  const refused = (field: 'labels' | 'annotations', allowed: readonly string[]) =>
    changedKeys(input.old?.[field], input.namespace[field]).filter((k) => !exempt(field, k) && matchesAny(k, allowed) === undefined).map((k) => `${field === 'labels' ? 'label' : 'annotation'} ${k}`);
  const bad = [...refused('labels', settings.allowedLabels), ...refused('annotations', settings.allowedAnnotations)];
  if (bad.length === 0) return allowBecause(rule, 'only allowlisted keys changed');
  const allowed = `labels ${JSON.stringify(settings.allowedLabels)}, annotations ${JSON.stringify(settings.allowedAnnotations)}`;
  return denyBecause(rule, `${who(input.requester)} may not add, change or remove ${bad.join(', ')} on namespace "${input.namespace.name}": only privileged principals may; others may change ${allowed}`);
}

/**
 * furnish.dev/requester and openshift.io/requester name the user a trusted creator creates a
 * namespace for: set at CREATE by a trusted creator only; afterwards changed by nobody but
 * Furnish's own identity (the LNamespace reconciler adopting a namespace).
 */
export function requesterSetByTrustedCreator(input: OrganizationRuleInput): RuleOutcome {
  const rule = 'requester-set-by-trusted-creator';
  const changed = REQUESTER_ANNOTATIONS.filter((k) => input.old?.annotations[k] !== input.namespace.annotations[k]);
  if (changed.length === 0) return allowBecause(rule, 'requester unchanged');
  const keys = changed.join(' and ');
  if (input.operation === 'CREATE') {
    if (matchingPrincipal(input.requester, input.trustedCreators) !== undefined) return allowBecause(rule, `${who(input.requester)} is a trusted creator`);
    return denyBecause(rule, `${who(input.requester)} may not set annotation ${keys} on namespace "${input.namespace.name}": only a trusted creator names the user it creates a namespace for`);
  }
  if (isFurnish(input.requester, input)) return allowBecause(rule, `${who(input.requester)} is Furnish`);
  return denyBecause(rule, `${who(input.requester)} may not add, change or remove annotation ${keys} on namespace "${input.namespace.name}": it names who the namespace was created for, set once by a trusted creator`);
}

export function reservedName(input: OrganizationRuleInput): RuleOutcome {
  const rule = 'reserved-name';
  const pattern = input.operation === 'CREATE' ? matchesAny(input.namespace.name, input.settings.reservedNames) : undefined;
  if (pattern === undefined) return allowBecause(rule, 'name not reserved');
  return denyBecause(rule, `${who(input.requester)} may not create namespace "${input.namespace.name}": names matching "${pattern}" are reserved; choose another name`);
}

export const ORGANIZATION_NAMESPACE_RULES = [reservedName, organizationRequired, organizationExists, actorIsMember, serviceAccountConfined, transferNeedsBothMemberships, metadataAllowlist, requesterSetByTrustedCreator] as const;

export function organizationOutcomes(input: OrganizationRuleInput): RuleOutcome[] {
  return ORGANIZATION_NAMESPACE_RULES.map((rule) => rule(input));
}
