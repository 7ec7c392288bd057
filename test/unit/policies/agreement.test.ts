// The policies and the webhook rules they mirror agree: for generated namespace writes (each key
// kept, changed, added or removed; every path; requesters with and without the grants), a policy
// refuses exactly when the rule functions refuse, given the same requester and grants. Where the
// webhook also needs state (which initializer's principals may act), the test's configuration
// makes every user a principal of every initializer, so that only the part the policy holds differs.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { canonicalIdentity, CREATOR_IDENTITY } from '../../../shared/auth/creator.ts';
import type { Initializer } from '../../../shared/initializers/config.ts';
import { furnishInitializer } from '../../../shared/initializers/config.ts';
import { INITIALIZER_KEY } from '../../../shared/initializers/keys.ts';
import { KEY, PHASE } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { readyConditionOf } from '../../../shared/webhooks/handlers/validate-namespace.ts';
import { guardOutcome } from '../../../shared/webhooks/rules/guard-initializing.ts';
import { writesWaitForInitializers } from '../../../shared/webhooks/rules/initializers-guard.ts';
import { initializerValidation } from '../../../shared/webhooks/rules/initializers-validate.ts';
import { metadataAllowlist, namesOrganization, organizationExemption, reservedName, type OrganizationContext } from '../../../shared/webhooks/rules/organization-namespace.ts';
import type { RuleOutcome } from '../../../shared/webhooks/rules/outcome.ts';
import { organizationSettings } from '../../../shared/org/settings.ts';
import type { PolicySettings } from '../../../shared/config/types.ts';
import { creatorIsImmutable, optOutNeedsPermission, phaseSetOnlyByFurnish, readyConditionSetOnlyByFurnish, type NamespaceValidationInput } from '../../../shared/webhooks/rules/validate-namespace.ts';
import { authorizeFrom, judgeWith, mutated, namespaceRequest, writeInto, type Grant, type UserInfo } from './harness.ts';
import { ANNOTATION_VALUES, defined, grants, LABEL_VALUES, NAME, namespaceCreate, namespaceOf, namespaceUpdate, SETTINGS, USERS } from './generators.ts';

const settings = SETTINGS;
const judge = judgeWith(settings);
const ANYONE: Initializer[] = ['furnish', 'vault', 'b'].map((name) => ({ ...furnishInitializer(['*']), name }));

/** Whether the rules refuse, resolving each `requires` from the grant table as the authorizer would. */
function webhookRefuses(outcomes: RuleOutcome[], grants: readonly Grant[]): boolean {
  const authorize = authorizeFrom(grants);
  return outcomes.some((o) => 'deny' in o || ('requires' in o && !authorize(o.requires.user, { ...o.requires })));
}

function info(o: KubeObject) {
  return { name: o.metadata.name!, labels: o.metadata.labels ?? {}, annotations: o.metadata.annotations ?? {} };
}

/** The validate-namespace rules the namespace policies hold (creator, opt-out, phase, Ready, initializer keys). */
function namespaceRules(operation: 'CREATE' | 'UPDATE', user: UserInfo, object: KubeObject, oldObject?: KubeObject): RuleOutcome[] {
  const input: NamespaceValidationInput = {
    operation, user, namespace: info(object), ...(oldObject ? { old: info(oldObject) } : {}), settings, templatesNeedingPermission: [],
    ...(oldObject ? { readyCondition: { before: readyConditionOf(oldObject), after: readyConditionOf(object) } } : {}),
  };
  return [creatorIsImmutable(input), optOutNeedsPermission(input), phaseSetOnlyByFurnish(input), readyConditionSetOnlyByFurnish(input), ...initializerValidation({ ...input, known: ANYONE })];
}

describe('the namespace policies refuse exactly when validate-namespace\'s rules do', () => {
  it('for generated UPDATEs (the namespace, /status, /finalize)', () => {
    fc.assert(fc.property(namespaceUpdate, ({ object, oldObject, ...u }) => {
      const policy = judge(namespaceRequest('UPDATE', u.user, object, oldObject, u.subResource), u.grants);
      expect({ refused: !policy.allowed, message: policy.message }).toEqual({ refused: webhookRefuses(namespaceRules('UPDATE', u.user, object, oldObject), u.grants), message: expect.any(String) });
    }), { numRuns: 3000 });
  });

  it('for generated CREATEs, as mutate-namespace leaves them', () => {
    fc.assert(fc.property(namespaceCreate, (c) => {
      const object = mutated(settings, 'CREATE', c.user, c.object);
      const policy = judge(namespaceRequest('CREATE', c.user, object), c.grants);
      expect(!policy.allowed).toBe(webhookRefuses(namespaceRules('CREATE', c.user, object), c.grants));
    }), { numRuns: 1000 });
  });

  it('an identity of the earlier JSON form: the policy refuses no change validate-namespace allows (it judges the re-spelling)', () => {
    const legacy = JSON.stringify({ groups: ['dev'], username: 'alice' });
    const withIdentity = (o: KubeObject, identity: string | undefined) => ({ ...o, metadata: { ...o.metadata, annotations: defined({ ...o.metadata.annotations, [CREATOR_IDENTITY]: identity }) } });
    fc.assert(fc.property(namespaceUpdate, fc.constantFrom(canonicalIdentity({ username: 'alice', groups: ['dev'] }), legacy, 'user=mallory', undefined), (u, identity) => {
      const oldObject = withIdentity(u.oldObject, legacy);
      const object = withIdentity(u.object, identity);
      const refused = !judge(namespaceRequest('UPDATE', u.user, object, oldObject, u.subResource), u.grants).allowed;
      if (refused) expect(webhookRefuses(namespaceRules('UPDATE', u.user, object, oldObject), u.grants)).toBe(true);
    }), { numRuns: 500 });
  });
});

describe('furnish-guard refuses exactly when guard-initializing does, but for pending initializers (left to the webhook)', () => {
  it('for generated writes into namespaces in every phase', () => {
    const write = fc.record({
      labels: fc.record({ [KEY.phase]: LABEL_VALUES[KEY.phase] }),
      annotations: fc.record({ [INITIALIZER_KEY.initializers]: ANNOTATION_VALUES[INITIALIZER_KEY.initializers], [KEY.failure]: ANNOTATION_VALUES[KEY.failure] }),
      user: fc.constantFrom(...USERS, { username: 'system:node:n', groups: ['system:nodes'] }),
      grants,
      operation: fc.constantFrom('CREATE' as const, 'UPDATE' as const, 'DELETE' as const),
    });
    fc.assert(fc.property(write, (w) => {
      const ns = namespaceOf(w.labels, w.annotations);
      const policyRefuses = !judge(writeInto(w.operation, w.user, ns), w.grants).allowed;
      const phase = ns.metadata.labels?.[KEY.phase];
      // The webhook's namespaceSelector: only pending and failed namespaces reach it.
      const selected = phase === PHASE.pending || phase === PHASE.failed;
      const input = { user: w.user, namespace: NAME, settings };
      const outcome = (selected ? (guardOutcome(input).rule !== 'require-initialize' ? guardOutcome(input) : writesWaitForInitializers({ user: w.user, namespace: info(ns), known: [] }) ?? guardOutcome(input)) : undefined);
      const webhookRefuses = outcome !== undefined && (('deny' in outcome) || ('requires' in outcome && !authorizeFrom(w.grants)(outcome.requires.user, { ...outcome.requires })));
      const initializing = phase === PHASE.pending && (ns.metadata.annotations?.[INITIALIZER_KEY.initializers] ?? '').split(',').some((s) => s.trim() !== '');
      if (initializing) expect(policyRefuses ? webhookRefuses : true).toBe(true);
      else expect(policyRefuses).toBe(webhookRefuses);
    }), { numRuns: 1000 });
  });
});

describe('furnish-organization-metadata refuses exactly when reserved-name and metadata-allowlist do, on a namespace that names an organization', () => {
  // `ci` privileged; allowlist wildcards with a regular expression's metacharacters in them.
  const orgSettings: PolicySettings = { ...settings, organizations: { enabled: true, privileged: ['group:system:masters', 'ci'] } };
  const judgeOrg = judgeWith(orgSettings, ['furnish-organization-metadata']);
  const ctx: OrganizationContext = {
    settings: organizationSettings(orgSettings), systemNamespaces: orgSettings.systemNamespaces, furnishNamespace: orgSettings.furnishNamespace,
    furnishPrincipals: orgSettings.guard.reconciler, trustedCreators: orgSettings.trustedCreators,
  };
  /** The two rules' denials, where the webhook applies them (not exempt) and the namespace names an organization; [] elsewhere. */
  function denials(operation: 'CREATE' | 'UPDATE', user: UserInfo, object: KubeObject, oldObject?: KubeObject): string[] {
    const namespace = info(object);
    const old = oldObject ? info(oldObject) : undefined;
    if (organizationExemption(user, namespace.name, ctx) !== undefined || !namesOrganization(namespace, old)) return [];
    const input = { ...ctx, operation, requester: user, creator: user, namespace, ...(old ? { old } : {}) };
    return [reservedName(input), metadataAllowlist(input)].flatMap((o) => ('deny' in o ? [o.deny] : []));
  }
  /** The keys a denial names (`label a, annotation b`), in any order: CEL keeps no order of a map's keys. */
  const keysNamed = (message: string) => /remove (.*) on namespace/.exec(message)?.[1]?.split(', ').sort();
  function agree(policy: { allowed: boolean; message: string }, expected: string[]): void {
    expect(!policy.allowed).toBe(expected.length > 0);
    if (expected.length === 0) return;
    const [first] = expected;
    // The API server words the first validation that fails (reserved-name comes first) after its own prefix.
    const keysLeftOut = (m: string) => m.replace(/remove .* on namespace/, 'remove … on namespace');
    expect(policy.message).toMatch(/^namespaces "[^"]*" is forbidden: ValidatingAdmissionPolicy 'furnish-organization-metadata' with binding 'furnish-organization-metadata' denied request: /);
    const words = keysLeftOut(first!);
    expect([keysNamed(policy.message), keysLeftOut(policy.message).slice(-words.length)]).toEqual([keysNamed(first!), words]);
  }

  it('for generated UPDATEs (the namespace, /status, /finalize)', () => {
    let refused = 0;
    fc.assert(fc.property(namespaceUpdate, ({ object, oldObject, ...u }) => {
      const expected = denials('UPDATE', u.user, object, oldObject);
      refused += expected.length > 0 ? 1 : 0;
      agree(judgeOrg(namespaceRequest('UPDATE', u.user, object, oldObject, u.subResource), u.grants), expected);
    }), { numRuns: 3000 });
    expect(refused).toBeGreaterThan(100);
  });

  it('for generated CREATEs, as mutate-namespace leaves them', () => {
    let reserved = 0;
    fc.assert(fc.property(namespaceCreate, (c) => {
      const object = mutated(orgSettings, 'CREATE', c.user, c.object);
      const expected = denials('CREATE', c.user, object);
      reserved += expected.some((d) => d.includes('are reserved')) ? 1 : 0;
      agree(judgeOrg(namespaceRequest('CREATE', c.user, object), c.grants), expected);
    }), { numRuns: 2000 });
    expect(reserved).toBeGreaterThan(20);
  });
});
