// Authentication: static bearer tokens, one per configured user (like kube-apiserver's
// --token-auth-file), ServiceAccount tokens from the TokenRequest API (tokens.ts), a token webhook
// (token-webhook.ts, --authentication-token-webhook-config-file) when configured, and the
// impersonation headers, each authorized as RBAC verb `impersonate`.
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { UserInfo } from '../../../shared/kube/types.ts';
import { forbidden, unauthorized } from './errors.ts';
import type { TokenWebhook } from './token-webhook.ts';
import type { ServiceAccountTokens } from './tokens.ts';

export interface UserSpec {
  name: string;
  groups?: string[];
}

export interface SimUser {
  name: string;
  /** The groups configured for the user, without the `system:*` ones the server adds. */
  groups: string[];
  token: string;
  context: string;
  uid: string;
}

export interface Authenticated extends UserInfo {
  username: string;
  groups: string[];
}

const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** The groups a user gets from the server on top of configured ones (service accounts get their two). */
export function withImplicitGroups(username: string, groups: string[]): string[] {
  const all = [...groups];
  const sa = SERVICE_ACCOUNT.exec(username);
  if (sa) all.push('system:serviceaccounts', `system:serviceaccounts:${sa[1]}`);
  if (username !== 'system:anonymous') all.push('system:authenticated');
  return [...new Set(all)];
}

export function makeUsers(specs: UserSpec[]): SimUser[] {
  return specs.map((spec) => ({
    name: spec.name,
    groups: spec.groups ?? [],
    token: `kube-sim-${spec.name.replace(/[^A-Za-z0-9]/g, '-')}-${randomBytes(12).toString('hex')}`,
    context: spec.name,
    uid: `${spec.name}-uid`,
  }));
}

export type ImpersonationCheck = (requester: Authenticated, resource: 'users' | 'groups' | 'serviceaccounts' | 'uids', name: string, namespace?: string) => boolean;

export class Authenticator {
  private readonly byToken: Map<string, SimUser>;
  private readonly serviceAccountTokens: ServiceAccountTokens | undefined;
  private readonly tokenWebhook: TokenWebhook | undefined;

  constructor(users: SimUser[], serviceAccountTokens?: ServiceAccountTokens, tokenWebhook?: TokenWebhook) {
    this.byToken = new Map(users.map((u) => [u.token, u]));
    this.serviceAccountTokens = serviceAccountTokens;
    this.tokenWebhook = tokenWebhook;
  }

  /**
   * The user behind `Authorization: Bearer ...`: a static token, a ServiceAccount token, else what
   * the token webhook (if configured) says; no or an unknown token is 401, as with anonymous auth off.
   */
  async authenticate(headers: IncomingHttpHeaders): Promise<Authenticated> {
    const header = headers.authorization ?? '';
    const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    if (token === undefined) throw unauthorized();
    const user = this.byToken.get(token);
    if (user) return { username: user.name, uid: user.uid, groups: withImplicitGroups(user.name, user.groups) };
    const serviceAccount = this.serviceAccountTokens?.authenticate(token);
    if (serviceAccount) return serviceAccount;
    const reviewed = await this.tokenWebhook?.review(token);
    if (!reviewed) throw unauthorized();
    return { username: reviewed.username, ...(reviewed.uid ? { uid: reviewed.uid } : {}), groups: withImplicitGroups(reviewed.username, reviewed.groups) };
  }

  /** Applies Impersonate-* headers, checking each against RBAC like the impersonation filter. */
  impersonate(requester: Authenticated, headers: IncomingHttpHeaders, allowed: ImpersonationCheck): Authenticated {
    const user = single(headers['impersonate-user']);
    const groups = many(headers['impersonate-group']);
    const uid = single(headers['impersonate-uid']);
    const extra = extraHeaders(headers);
    if (!user) {
      if (groups.length > 0 || uid || Object.keys(extra).length > 0) throw forbidden({ group: '', resource: 'users' }, undefined, 'requested impersonation without a user');
      return requester;
    }
    const deny = (resource: 'users' | 'groups' | 'serviceaccounts' | 'uids', name: string, namespace?: string): never => {
      const group = resource === 'uids' ? 'authentication.k8s.io' : '';
      const scope = namespace ? `in the namespace "${namespace}"` : 'at the cluster scope';
      throw forbidden({ group, resource }, name, `User "${requester.username}" cannot impersonate resource "${resource}" in API group "${group}" ${scope}`);
    };
    const sa = SERVICE_ACCOUNT.exec(user);
    if (sa) {
      if (!allowed(requester, 'serviceaccounts', sa[2]!, sa[1]!)) deny('serviceaccounts', sa[2]!, sa[1]!);
    } else if (!allowed(requester, 'users', user)) {
      deny('users', user);
    }
    for (const group of groups) if (!allowed(requester, 'groups', group)) deny('groups', group);
    if (uid && !allowed(requester, 'uids', uid)) deny('uids', uid);
    return {
      username: user,
      groups: withImplicitGroups(user, groups),
      ...(uid ? { uid } : {}),
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
    };
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Repeated headers arrive joined with ", " by node's HTTP parser. */
function many(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : value.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

function extraHeaders(headers: IncomingHttpHeaders): Record<string, string[]> {
  const extra: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith('impersonate-extra-')) extra[decodeURIComponent(name.slice('impersonate-extra-'.length))] = many(value);
  }
  return extra;
}
