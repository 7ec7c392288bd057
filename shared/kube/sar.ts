// "May this user do this?" as an injected answer. Rules never call the API server themselves:
// they name the AccessCheck they need, an Authorizer answers it. Three authorizers exist: the
// SubjectAccessReview client below (live clusters), the offline RBAC evaluator (shared/rbac) and
// fakes in tests. `cachedAuthorizer` wraps any of them with a small bounded TTL cache.
import type { UserInfo } from './types.ts';
import type { KubeHttp } from './http.ts';

export interface AccessCheck {
  user: UserInfo;
  verb: string;
  /** API group; '' for the core group. */
  group: string;
  resource: string;
  subresource?: string;
  name?: string;
  namespace?: string;
}

export interface AccessDecision {
  allowed: boolean;
  /** Why (RBAC's explanation, or why no answer could be had). */
  reason?: string;
  /** Set when no answer could be had: the caller must fail closed. */
  error?: string;
}

export interface Authorizer {
  check(check: AccessCheck): Promise<AccessDecision>;
  /** The answer without waiting when one is at hand (a cache hit), else undefined. */
  cached?(check: AccessCheck): AccessDecision | undefined;
}

/** How denials name the requester. */
export function who(user: UserInfo): string {
  return `user "${user.username ?? ''}"`;
}

/** `user "bob" may not use NamespaceTemplate "privileged": needs verb "use" on namespacetemplates.furnish.dev, resourceName "privileged"` */
export function refusal(user: UserInfo, refused: string, check: AccessCheck): string {
  return `${who(user)} may not ${refused}: needs ${describeAccess(check)}`;
}

/** The RBAC a check needs, as the denial messages spell it: `verb "use" on namespacetemplates.furnish.dev, resourceName "x"`. */
export function describeAccess(check: Pick<AccessCheck, 'verb' | 'group' | 'resource' | 'subresource' | 'name' | 'namespace'>): string {
  const resource = (check.group ? `${check.resource}.${check.group}` : check.resource) + (check.subresource ? `/${check.subresource}` : '');
  const name = check.name ? `, resourceName "${check.name}"` : '';
  const where = check.namespace ? ` in namespace "${check.namespace}"` : '';
  return `verb "${check.verb}" on ${resource}${name}${where}`;
}

export function subjectAccessReviewOf(check: AccessCheck): Record<string, unknown> {
  const { user } = check;
  const resourceAttributes: Record<string, string> = { verb: check.verb, group: check.group, resource: check.resource };
  if (check.subresource) resourceAttributes.subresource = check.subresource;
  if (check.name) resourceAttributes.name = check.name;
  if (check.namespace) resourceAttributes.namespace = check.namespace;
  const spec: Record<string, unknown> = { resourceAttributes, user: user.username ?? '' };
  if (user.groups?.length) spec.groups = user.groups;
  if (user.uid) spec.uid = user.uid;
  if (user.extra && Object.keys(user.extra).length > 0) spec.extra = user.extra;
  return { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec };
}

interface SarStatus {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/** Asks the API server (POST subjectaccessreviews) with the requester's user, groups, uid and extra. */
export function createSarAuthorizer(http: KubeHttp): Authorizer {
  return {
    async check(check) {
      const result = await http<SarStatus>({ method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body: subjectAccessReviewOf(check) });
      if (!result.ok || !result.data?.status) {
        return { allowed: false, error: `SubjectAccessReview failed: ${result.error ?? `HTTP ${result.status}`}` };
      }
      const { allowed, reason, evaluationError } = result.data.status;
      return { allowed: allowed === true, reason: reason ?? evaluationError ?? '' };
    },
  };
}

export interface CacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

export function accessCheckKey(c: AccessCheck): string {
  const u = c.user;
  const extra = u.extra ? Object.keys(u.extra).sort().map((k) => [k, u.extra![k]]) : [];
  return JSON.stringify([u.username, u.uid, u.groups, extra, c.verb, c.group, c.resource, c.subresource, c.name, c.namespace]);
}

/**
 * Remembers allowed answers for `ttlMs`, at most `maxEntries` of them (oldest evicted first).
 * Denials and errors are never remembered: a user just granted a verb is allowed at once, as
 * `kubectl auth can-i` says.
 */
export function cachedAuthorizer(inner: Authorizer, options: CacheOptions = {}): Authorizer {
  const ttl = options.ttlMs ?? 10_000;
  const max = options.maxEntries ?? 1000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { at: number; decision: AccessDecision }>();
  function fresh(key: string): AccessDecision | undefined {
    const hit = entries.get(key);
    if (hit && now() - hit.at < ttl) return hit.decision;
    if (hit) entries.delete(key);
    return undefined;
  }
  return {
    cached: (check) => fresh(accessCheckKey(check)),
    async check(check) {
      const key = accessCheckKey(check);
      const hit = fresh(key);
      if (hit) return hit;
      const decision = await inner.check(check);
      if (decision.error || !decision.allowed) return decision;
      if (entries.size >= max) entries.delete(entries.keys().next().value!);
      entries.set(key, { at: now(), decision });
      return decision;
    },
  };
}
