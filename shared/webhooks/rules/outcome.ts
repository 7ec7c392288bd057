// What a rule answers. Rules are pure: a rule that needs an RBAC answer says so (`requires`)
// and `resolveOutcomes` asks the Authorizer, so every rule tests without a cluster.
import { describeAccess, refusal, who, type AccessCheck, type AccessDecision, type Authorizer } from '../../kube/sar.ts';

export type RuleOutcome =
  | { rule: string; allow: string }
  | { rule: string; deny: string }
  /**
   * Allowed only if `check` is granted; `refused` says what ("use NamespaceTemplate \"x\""),
   * `advice` (optional) what else would help, after the permission it needs.
   */
  | { rule: string; requires: AccessCheck; refused: string; advice?: string };

export const allowBecause = (rule: string, allow: string): RuleOutcome => ({ rule, allow });
export const denyBecause = (rule: string, deny: string): RuleOutcome => ({ rule, deny });

export { refusal };

export interface Verdict {
  allowed: boolean;
  /** One message per refusal, each complete on its own. */
  denials: string[];
  /** Why each rule allowed (for audit annotations and tests). */
  reasons: string[];
  /** True when a denial came from an unanswered check (the API server could not be asked). */
  unavailable: boolean;
}

type Answers = readonly (AccessDecision | undefined)[];

function verdictOf(outcomes: readonly RuleOutcome[], answers: Answers): Verdict {
  const verdict: Verdict = { allowed: true, denials: [], reasons: [], unavailable: false };
  outcomes.forEach((o, i) => {
    if ('allow' in o) verdict.reasons.push(`${o.rule}: ${o.allow}`);
    else if ('deny' in o) verdict.denials.push(o.deny);
    else {
      const answer = answers[i]!;
      if (answer.error) {
        verdict.unavailable = true;
        verdict.denials.push(`could not check whether ${who(o.requires.user)} may ${o.refused} (${answer.error}); retry`);
      } else if (answer.allowed) verdict.reasons.push(`${o.rule}: granted ${describeAccess(o.requires)}`);
      else verdict.denials.push(refusal(o.requires.user, o.refused, o.requires) + (o.advice ? `; ${o.advice}` : ''));
    }
  });
  verdict.allowed = verdict.denials.length === 0;
  return verdict;
}

/** Every outcome must allow; `requires` are asked of the authorizer concurrently; errors fail closed. */
export async function resolveOutcomes(outcomes: readonly RuleOutcome[], authorizer: Authorizer): Promise<Verdict> {
  return verdictOf(outcomes, await Promise.all(outcomes.map((o) => ('requires' in o ? authorizer.check(o.requires) : undefined))));
}

/** The verdict without waiting, when every needed answer is at hand (cached); else undefined. */
export function resolveNow(outcomes: readonly RuleOutcome[], authorizer: Authorizer): Verdict | undefined {
  const answers: (AccessDecision | undefined)[] = [];
  for (const o of outcomes) {
    if (!('requires' in o)) answers.push(undefined);
    else {
      const answer = authorizer.cached?.(o.requires);
      if (!answer) return undefined;
      answers.push(answer);
    }
  }
  return verdictOf(outcomes, answers);
}

/** Synchronously when the answers are cached (no promise on the hot path), else asking. */
export function resolve(outcomes: readonly RuleOutcome[], authorizer: Authorizer): Verdict | Promise<Verdict> {
  return resolveNow(outcomes, authorizer) ?? resolveOutcomes(outcomes, authorizer);
}
