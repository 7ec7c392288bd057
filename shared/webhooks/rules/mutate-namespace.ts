// mutate-namespace, one rule per function. Each answers the metadata it wants changed and why, or
// why it has nothing to do; `mutationsFor` runs them all. Only Furnish's keys and the name label
// are ever touched.
import { canonicalIdentity, CREATOR_IDENTITY, currentSpelling, REQUESTER_ANNOTATIONS } from '../../auth/creator.ts';
import { KEY, PHASE } from '../../keys.ts';
import { isOptedOut, isSystemNamespace } from '../../render/match.ts';
import type { UserInfo } from '../../kube/types.ts';
import type { PolicySettings } from '../../config/types.ts';
import type { NamespaceInfo } from '../../render/types.ts';
import { matchingPrincipal } from './principals.ts';

export interface NamespaceMutationInput {
  operation: 'CREATE' | 'UPDATE';
  user: UserInfo;
  namespace: NamespaceInfo;
  /** The stored namespace (UPDATE only). */
  old?: NamespaceInfo;
  settings: PolicySettings;
}

/** Values to set; `null` removes the key. */
export interface MetadataChange {
  rule: string;
  reason: string;
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
}

export interface Skip {
  rule: string;
  skip: string;
}

export type MutationOutcome = MetadataChange | Skip;

export function isChange(o: MutationOutcome): o is MetadataChange {
  return !('skip' in o);
}

/**
 * Namespaces exempt by name: kube-system and the others, the configured ones, and Furnish's own.
 * Decided from the request's name only, never from labels (a requester writes those).
 */
export function exemptNamespaces(settings: PolicySettings): string[] {
  return [...settings.systemNamespaces, settings.furnishNamespace];
}

/** Why a namespace is opted out at CREATE, or undefined. Shared with validate-namespace. */
export function optOutReason(input: Pick<NamespaceMutationInput, 'user' | 'namespace' | 'settings'>): string | undefined {
  const { namespace, settings, user } = input;
  if (namespace.name && isSystemNamespace(namespace.name, exemptNamespaces(settings))) return `"${namespace.name}" is a system namespace`;
  if (isOptedOut(namespace)) return `annotation ${KEY.optOut} is "true"`;
  const principal = matchingPrincipal(user, settings.autoOptOutPrincipals);
  if (principal !== undefined) return `created by ${JSON.stringify(user.username ?? '')}, which matches auto-opt-out principal ${JSON.stringify(principal)}`;
  return undefined;
}

export interface Creator {
  name: string;
  /** canonicalIdentity of what admission checks permissions with. */
  identity: string;
  /** Set when a trusted creator named someone else: how. */
  namedBy?: string;
}

/**
 * Who a CREATE records as the creator: the requester; or, when the requester is a trusted creator
 * and names a user in furnish.dev/requester (or openshift.io/requester), that user. Nobody else can
 * name a creator other than themselves.
 */
export function creatorOf(input: Pick<NamespaceMutationInput, 'user' | 'namespace' | 'settings'>): Creator | undefined {
  const { user, namespace, settings } = input;
  if (!user.username) return undefined;
  const trusted = matchingPrincipal(user, settings.trustedCreators);
  if (trusted !== undefined) {
    for (const key of REQUESTER_ANNOTATIONS) {
      const named = namespace.annotations[key];
      if (named) return { name: named, identity: canonicalIdentity({ username: named }), namedBy: `trusted creator "${user.username}" named "${named}" in ${key}` };
    }
  }
  return { name: user.username, identity: canonicalIdentity(user) };
}

export function recordCreator(input: NamespaceMutationInput): MutationOutcome {
  const rule = 'record-creator';
  if (input.operation !== 'CREATE') return { rule, skip: 'only at CREATE' };
  const creator = creatorOf(input);
  if (!creator) return { rule, skip: 'the request names no user' };
  const { annotations } = input.namespace;
  if (annotations[KEY.creator] === creator.name && annotations[CREATOR_IDENTITY] === creator.identity) return { rule, skip: `creator is already "${creator.name}"` };
  const why = creator.namedBy ? ` (${creator.namedBy})` : '';
  return { rule, reason: `recorded creator "${creator.name}" and the identity admission saw${why}`, annotations: { [KEY.creator]: creator.name, [CREATOR_IDENTITY]: creator.identity } };
}

export function optOutAutomatically(input: NamespaceMutationInput): MutationOutcome {
  const rule = 'opt-out-automatically';
  if (input.operation !== 'CREATE') return { rule, skip: 'only at CREATE' };
  const principal = matchingPrincipal(input.user, input.settings.autoOptOutPrincipals);
  if (principal === undefined) return { rule, skip: 'creator is not an auto-opt-out principal' };
  if (input.namespace.annotations[KEY.optOut] === 'true') return { rule, skip: 'already opted out' };
  return { rule, reason: `opted out: creator matches auto-opt-out principal "${principal}"`, annotations: { [KEY.optOut]: 'true' } };
}

export function markPending(input: NamespaceMutationInput): MutationOutcome {
  const rule = 'mark-pending';
  if (input.operation !== 'CREATE') return { rule, skip: 'only at CREATE' };
  const optedOut = optOutReason(input);
  if (optedOut !== undefined) return { rule, skip: `opted out: ${optedOut}` };
  if (input.namespace.labels[KEY.phase] === PHASE.pending) return { rule, skip: 'already pending' };
  return { rule, reason: `${KEY.phase}=${PHASE.pending} until the templates are applied`, labels: { [KEY.phase]: PHASE.pending } };
}

export function ensureNameLabel(input: NamespaceMutationInput): MutationOutcome {
  const rule = 'ensure-name-label';
  const { name, labels } = input.namespace;
  // With generateName the name does not exist yet while mutating webhooks run.
  if (!name) return { rule, skip: 'the name is not generated yet' };
  if (labels[KEY.metadataName] === name) return { rule, skip: 'label already equals the name' };
  return { rule, reason: `${KEY.metadataName}=${name}`, labels: { [KEY.metadataName]: name } };
}

/** The annotations recorded at CREATE that no UPDATE may change. */
export const IMMUTABLE_ANNOTATIONS = [KEY.creator, CREATOR_IDENTITY] as const;

/** The immutable annotations an UPDATE keeps: as recorded, the identity in this version's spelling (currentSpelling). */
export function keptCreator(old: Readonly<Record<string, string>>): Record<(typeof IMMUTABLE_ANNOTATIONS)[number], string | undefined> {
  return { [KEY.creator]: old[KEY.creator], [CREATOR_IDENTITY]: currentSpelling(old[CREATOR_IDENTITY]) };
}

export function restoreCreator(input: NamespaceMutationInput): MutationOutcome {
  const rule = 'restore-creator';
  if (input.operation !== 'UPDATE' || !input.old) return { rule, skip: 'only at UPDATE' };
  const old = input.old.annotations;
  const kept = keptCreator(old);
  const changed = IMMUTABLE_ANNOTATIONS.filter((k) => kept[k] !== input.namespace.annotations[k]);
  if (changed.length === 0) return { rule, skip: 'creator unchanged' };
  const restored = Object.fromEntries(changed.map((k) => [k, kept[k] ?? null]));
  const respelled = kept[CREATOR_IDENTITY] !== old[CREATOR_IDENTITY];
  return { rule, reason: `restored ${changed.join(' and ')} (immutable)${respelled ? `, ${CREATOR_IDENTITY} in the current form (the same identity)` : ''}`, annotations: restored };
}

export const MUTATE_NAMESPACE_RULES = [recordCreator, optOutAutomatically, markPending, ensureNameLabel, restoreCreator] as const;

export function mutationsFor(input: NamespaceMutationInput): MutationOutcome[] {
  return MUTATE_NAMESPACE_RULES.map((rule) => rule(input));
}

/** The part of a namespace's metadata mutate-namespace may change. */
export interface MetadataMaps {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function applyMap(meta: MetadataMaps, field: 'labels' | 'annotations', values: Record<string, string | null> | undefined): void {
  if (!values) return;
  for (const [key, value] of Object.entries(values)) {
    if (value === null) {
      if (meta[field]) Reflect.deleteProperty(meta[field], key);
    } else {
      meta[field] ??= {};
      meta[field][key] = value;
    }
  }
}

/** Applies the changes to a (cloned) object's metadata. */
export function applyChanges(meta: MetadataMaps, outcomes: readonly MutationOutcome[]): void {
  for (const o of outcomes) {
    if (!isChange(o)) continue;
    applyMap(meta, 'labels', o.labels);
    applyMap(meta, 'annotations', o.annotations);
  }
}
