// Does a requester match a configured principal pattern? `alice`, `group:ci`, and either with a
// trailing `*` as a prefix wildcard (`system:serviceaccount:ci:*`).
import type { UserInfo } from '../../kube/types.ts';
import type { PrincipalPattern } from '../../config/types.ts';

function matchesName(value: string, pattern: string): boolean {
  return pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : value === pattern;
}

export function matchesPrincipal(user: UserInfo, pattern: PrincipalPattern): boolean {
  if (pattern.startsWith('group:')) {
    const group = pattern.slice('group:'.length);
    return (user.groups ?? []).some((g) => matchesName(g, group));
  }
  return user.username !== undefined && matchesName(user.username, pattern);
}

/** The first pattern the user matches, for explaining why. */
export function matchingPrincipal(user: UserInfo, patterns: readonly PrincipalPattern[]): PrincipalPattern | undefined {
  return patterns.find((p) => matchesPrincipal(user, p));
}

export { who } from '../../kube/sar.ts';
