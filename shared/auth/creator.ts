// Who created a namespace, and the one permission rule both admission and the reconciler apply
// to that creator. Admission records, at CREATE and immutably, the creator's name
// (furnish.dev/creator) and the whole identity it saw (furnish.dev/creator-identity: user, uid,
// groups, extra as canonical form-urlencoded text), so the reconciler asks `use` with exactly what
// admission asked: a grant through a group counts in both places or in neither.
import { KEY } from '../keys.ts';
import type { AccessCheck } from '../kube/sar.ts';
import type { UserInfo } from '../kube/types.ts';
import { GROUP } from '../render/types.ts';

/**
 * Annotation: the creator's identity as admission saw it, immutable like the creator. Readable
 * `application/x-www-form-urlencoded` text, e.g.
 * `user=alice%40example.com&uid=u1&group=dev&group=system%3Aauthenticated&extra.scopes=read`.
 */
export const CREATOR_IDENTITY = 'furnish.dev/creator-identity';

/** Prefix of the parameters that carry `extra`: `extra.<key>=<value>`, one per value. */
const EXTRA = 'extra.';

/**
 * Annotations through which a trusted creator (settings.trustedCreators) names the user it creates
 * a namespace for: Furnish's own (the LNamespace reconciler) first, then OpenShift's.
 */
export const REQUESTER_ANNOTATIONS = ['furnish.dev/requester', 'openshift.io/requester'] as const;

/**
 * The identity as canonical form-urlencoded text (URLSearchParams does all escaping): `user` first,
 * then `uid`, one `group` per group, one `extra.<key>` per value, groups, keys and values sorted, so
 * that equal identities are equal strings. Empty parts are left out, as the JSON form left out empty
 * groups and uid; an extra key without values, which the form cannot state, is left out too.
 */
export function canonicalIdentity(user: UserInfo): string {
  const form = new URLSearchParams({ user: user.username ?? '' });
  if (user.uid) form.append('uid', user.uid);
  for (const group of [...(user.groups ?? [])].sort()) form.append('group', group);
  const extra = user.extra ?? {};
  for (const key of Object.keys(extra).sort()) for (const value of [...(extra[key] ?? [])].sort()) form.append(EXTRA + key, value);
  return form.toString();
}

/**
 * Reads a recorded identity; undefined when the annotation is not one `canonicalIdentity` wrote:
 * a form that does not re-encode to itself (unknown or repeated parameters, other escaping, order)
 * or, from namespaces created before the form, JSON that is not an identity.
 */
export function parseIdentity(text: string | undefined): UserInfo | undefined {
  if (text === undefined) return undefined;
  if (text.startsWith('{')) return parseLegacyIdentity(text);
  const form = new URLSearchParams(text);
  const username = form.get('user');
  if (username === null) return undefined;
  const user: UserInfo = { username };
  const uid = form.get('uid');
  if (uid) user.uid = uid;
  const groups = form.getAll('group');
  if (groups.length > 0) user.groups = groups;
  // A Map, not an object: an extra key may be `__proto__` or `constructor`.
  const extra = new Map<string, string[]>();
  for (const [name, value] of form) {
    if (!name.startsWith(EXTRA)) continue;
    const key = name.slice(EXTRA.length);
    extra.set(key, [...(extra.get(key) ?? []), value]);
  }
  if (extra.size > 0) user.extra = Object.fromEntries(extra);
  return canonicalIdentity(user) === text ? user : undefined;
}

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}

/**
 * The identity annotation as this version spells it: a JSON identity of an earlier version as the
 * same identity in canonical form-urlencoded text; anything else (current form, absent, unreadable)
 * as it is. mutate-namespace re-spells it at a namespace's next UPDATE, and validate-namespace
 * accepts exactly that change: the identity recorded stays the one admission saw.
 */
export function currentSpelling(text: string | undefined): string | undefined {
  const legacy = text?.startsWith('{') ? parseLegacyIdentity(text) : undefined;
  return legacy ? canonicalIdentity(legacy) : text;
}

/** The canonical JSON earlier versions recorded (`{"groups":[…],"username":…}`), read as before. */
function parseLegacyIdentity(text: string): UserInfo | undefined {
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
