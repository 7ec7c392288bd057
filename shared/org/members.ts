// Who belongs to an organization: pure functions of a requester and the Organization objects.
import type { UserInfo } from '../kube/types.ts';
import { subjectMatches } from '../rbac/authorizer.ts';
import type { Organization, OrganizationMember } from './types.ts';
import { organizationName } from './types.ts';

const SA_PREFIX = 'system:serviceaccount:';

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** The ServiceAccount a requester authenticates as (`system:serviceaccount:<ns>:<name>`), or undefined. */
export function serviceAccountOf(user: UserInfo): ServiceAccountRef | undefined {
  const username = user.username ?? '';
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const [namespace, name, ...rest] = username.slice(SA_PREFIX.length).split(':');
  if (!namespace || !name || rest.length > 0) return undefined;
  return { namespace, name };
}

/** The member entry that makes `user` a member of `org` (RBAC's subject rules), or undefined. */
export function membershipOf(org: Organization, user: UserInfo): OrganizationMember | undefined {
  return (org.spec?.members ?? []).find((m) => subjectMatches(m, user));
}

export function isMember(org: Organization, user: UserInfo): boolean {
  return membershipOf(org, user) !== undefined;
}

/** The organization where `username` is a User member marked `default: true` (validation keeps it to one). */
export function defaultOrganizationOf(username: string | undefined, orgs: readonly Organization[]): Organization | undefined {
  if (!username) return undefined;
  return orgs.find((o) => (o.spec?.members ?? []).some((m) => m.kind === 'User' && m.name === username && m.default === true));
}

export function findOrganization(orgs: readonly Organization[], name: string): Organization | undefined {
  return orgs.find((o) => organizationName(o) === name);
}
