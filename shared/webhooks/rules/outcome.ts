// What a rule answers. Rules are pure: a rule that needs an RBAC answer says so (`requires`)
// and `resolveOutcomes` asks the Authorizer, so every rule tests without a cluster.
import type { UserInfo } from '../../kube/types.ts';
import { describeAccess } from '../../kube/sar.ts';
import type { AccessCheck, Authorizer } from '../../kube/sar.ts';
import { who } from './principals.ts';

export type RuleOutcome =
  | { rule: string; allow: string }
  | { rule: string; deny: string }
  /** Allowed only if `check` is granted; `refused` says what ("use NamespaceTemplate \"x\""). */
  | { rule: string; requires: AccessCheck; refused: string };

export const allowBecause = (rule: string, allow: string): RuleOutcome => ({ rule, allow });
export const denyBecause = (rule: string, deny: string): RuleOutcome => ({ rule, deny });

/** `user "bob" may not use NamespaceTemplate "privileged": needs verb "use" on namespacetemplates.furnish.dev, resourceName "privileged"` */
export function refusal(user: UserInfo, refused: string, check: AccessCheck): string {
  return `${who(user)} may not ${refused}: needs ${describeAccess(check)}`;
}

export interface Verdict {
  allowed: boolean;
  /** One message per refusal, each complete on its own. */
  denials: string[];
  /** Why each rule allowed (for audit annotations and tests). */
  reasons: string[];
  /** True when a denial came from an unanswered check (the API server could not be asked). */
  unavailable: boolean;
}

/** Every outcome must allow; `requires` are asked of the authorizer concurrently; errors fail closed. */
export async function resolveOutcomes(outcomes: RuleOutcome[], authorizer: Authorizer): Promise<Verdict> {
  const verdict: Verdict = { allowed: true, denials: [], reasons: [], unavailable: false };
  const answers = await Promise.all(outcomes.map((o) => ('requires' in o ? authorizer.check(o.requires) : undefined)));
  outcomes.forEach((o, i) => {
    if ('allow' in o) verdict.reasons.push(`${o.rule}: ${o.allow}`);
    else if ('deny' in o) verdict.denials.push(o.deny);
    else {
      const answer = answers[i]!;
      if (answer.error) {
        verdict.unavailable = true;
        verdict.denials.push(`could not check whether ${who(o.requires.user)} may ${o.refused} (${answer.error}); retry`);
      } else if (answer.allowed) verdict.reasons.push(`${o.rule}: granted ${describeAccess(o.requires)}`);
      else verdict.denials.push(refusal(o.requires.user, o.refused, o.requires));
    }
  });
  verdict.allowed = verdict.denials.length === 0;
  return verdict;
}

