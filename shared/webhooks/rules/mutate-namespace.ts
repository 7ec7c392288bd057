// mutate-namespace, one rule per function. Each answers the metadata it wants changed and why, or
// why it has nothing to do; `mutationsFor` runs them all. Only Furnish's keys and the name label
// are ever touched.
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

/** Why a namespace is opted out at CREATE, or undefined. Shared with validate-namespace. */
export function optOutReason(input: Pick<NamespaceMutationInput, 'user' | 'namespace' | 'settings'>): string | undefined {
  const { namespace, settings, user } = input;
  if (isSystemNamespace(namespace.name, settings.systemNamespaces)) return `"${namespace.name}" is a system namespace`;
  if (isOptedOut(namespace)) return `annotation ${KEY.optOut} is "true"`;
  const principal = matchingPrincipal(user, settings.autoOptOutPrincipals);
  if (principal !== undefined) return `created by ${JSON.stringify(user.username ?? '')}, which matches auto-opt-out principal ${JSON.stringify(principal)}`;
  return undefined;
}

export function recordCreator(input: NamespaceMutationInput): MutationOutcome {
  const rule = 'record-creator';
  if (input.operation !== 'CREATE') return { rule, skip: 'only at CREATE' };
  const username = input.user.username;
  if (!username) return { rule, skip: 'the request names no user' };
  if (input.namespace.annotations[KEY.creator] === username) return { rule, skip: `creator is already "${username}"` };
  return { rule, reason: `recorded creator "${username}"`, annotations: { [KEY.creator]: username } };
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

export function restoreCreator(input: NamespaceMutationInput): MutationOutcome {
  const rule = 'restore-creator';
  if (input.operation !== 'UPDATE' || !input.old) return { rule, skip: 'only at UPDATE' };
  const before = input.old.annotations[KEY.creator];
  const after = input.namespace.annotations[KEY.creator];
  if (before === after) return { rule, skip: 'creator unchanged' };
  const what = before === undefined ? 'removed the added creator annotation' : `restored creator "${before}"`;
  return { rule, reason: `${what} (${KEY.creator} is immutable)`, annotations: { [KEY.creator]: before ?? null } };
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
