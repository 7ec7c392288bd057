// Who created a namespace, and the one permission rule both admission and the reconciler apply
// to that creator. Admission records, at CREATE and immutably, the creator's name
// (furnish.dev/creator) and the whole identity it saw (furnish.dev/creator-identity: user, uid,
// groups, extra as canonical JSON), so the reconciler asks `use` with exactly what admission asked:
// a grant through a group counts in both places or in neither.
import { KEY } from '../keys.ts';
import type { AccessCheck } from '../kube/sar.ts';
import type { UserInfo } from '../kube/types.ts';
import { GROUP } from '../render/types.ts';

/** Annotation: the creator's identity as admission saw it, canonical JSON. Immutable like the creator. */
export const CREATOR_IDENTITY = 'furnish.dev/creator-identity';

/**
 * Annotations through which a trusted creator (settings.trustedCreators) names the user it creates
 * a namespace for: Furnish's own (the LNamespace reconciler) first, then OpenShift's.
 */
export const REQUESTER_ANNOTATIONS = ['furnish.dev/requester', 'openshift.io/requester'] as const;

/** The identity with keys, groups and extra sorted, so that equal identities are equal strings. */
export function canonicalIdentity(user: UserInfo): string {
  const out: Record<string, unknown> = {};
  const extra = user.extra ?? {};
  const keys = Object.keys(extra).sort();
  if (keys.length > 0) out.extra = Object.fromEntries(keys.map((k) => [k, [...(extra[k] ?? [])].sort()]));
  if (user.groups?.length) out.groups = [...user.groups].sort();
  if (user.uid) out.uid = user.uid;
  out.username = user.username ?? '';
  return JSON.stringify(out);
}

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}

/** Reads a recorded identity; undefined when the annotation is not one `canonicalIdentity` wrote. */
export function parseIdentity(text: string | undefined): UserInfo | undefined {
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.username !== 'string') return undefined;
  const user: UserInfo = { username: o.username };
  if (typeof o.uid === 'string') user.uid = o.uid;
  if (isStringList(o.groups)) user.groups = o.groups;
  if (typeof o.extra === 'object' && o.extra !== null && Object.values(o.extra).every(isStringList)) user.extra = o.extra as Record<string, string[]>;
  return user;
}

/**
 * The identity to check a namespace's template permissions with: the recorded one when it names
 * the recorded creator, else the creator's name alone (namespaces created before identities were
 * recorded), else none.
 */
export function creatorIdentityOf(annotations: Readonly<Record<string, string>> | undefined): UserInfo | undefined {
  const creator = annotations?.[KEY.creator];
  if (!creator) return undefined;
  const recorded = parseIdentity(annotations?.[CREATOR_IDENTITY]);
  return recorded?.username === creator ? recorded : { username: creator };
}

/** The rule: a namespace may get a require-permission template only if its creator may `use` it. */
export function templateUseCheck(user: UserInfo, template: string): AccessCheck {
  return { user, verb: 'use', group: GROUP, resource: 'namespacetemplates', name: template };
}

/** How a refusal names the template. */
export function templateUseRefused(template: string): string {
  return `use NamespaceTemplate "${template}"`;
}
