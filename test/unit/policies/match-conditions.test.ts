// Every request a webhook's matchConditions keep out is one that webhook would allow without a
// look-up: its rule functions, run on that request, allow it (and change nothing, for a mutating
// one). Where the policies hold a rule too, the requests considered are those the policies admit:
// both are installed together (shared/kube/features.ts).
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { PolicySettings } from '../../../shared/config/types.ts';
import { APPLYSET_PARENT_NAME, applySetId } from '../../../shared/render/applyset.ts';
import { FIELD_MANAGER, KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { organizationSettings } from '../../../shared/org/settings.ts';
import { webhookMatchConditions } from '../../../shared/policies/match-conditions.ts';
import { mayMatchNewTemplates, readyConditionOf } from '../../../shared/webhooks/handlers/validate-namespace.ts';
import { knownInitializers } from '../../../shared/webhooks/handlers/initializers.ts';
import { guardOutcome } from '../../../shared/webhooks/rules/guard-initializing.ts';
import { initializerMutations } from '../../../shared/webhooks/rules/initializers-mutate.ts';
import { initializerValidation } from '../../../shared/webhooks/rules/initializers-validate.ts';
import { isChange, mutationsFor, type NamespaceMutationInput } from '../../../shared/webhooks/rules/mutate-namespace.ts';
import { organizationExemption, organizationOutcomes } from '../../../shared/webhooks/rules/organization-namespace.ts';
import type { RuleOutcome } from '../../../shared/webhooks/rules/outcome.ts';
import { protectFirstStep } from '../../../shared/webhooks/rules/protect-objects.ts';
import { isRunOnceWithoutDeadline } from '../../../shared/webhooks/rules/run-once-pod.ts';
import { validationOutcomes } from '../../../shared/webhooks/rules/validate-namespace.ts';
import { matchConditionsMatch, type PolicyAttributes } from '../../support/kube-sim/policies.ts';
import { namespaceCreate, namespaceUpdate, SETTINGS, USERS } from './generators.ts';
import { authorizeFrom, judgeWith, mutated, namespaceRequest, type Grant, type UserInfo } from './harness.ts';

const ORGANIZATIONS: PolicySettings = { ...SETTINGS, organizations: { enabled: true, privileged: ['group:system:masters'] } };

/** Whether the webhook is called: the conditions hold. An evaluation error would fail the request (Fail) or skip it (Ignore): never expected. */
function called(settings: PolicySettings, webhook: keyof ReturnType<typeof webhookMatchConditions>, attrs: PolicyAttributes, grants: readonly Grant[] = []): boolean {
  const result = matchConditionsMatch(webhookMatchConditions(settings)[webhook]!, attrs, authorizeFrom(grants));
  if (result instanceof Error) throw result;
  return result;
}

function allows(outcomes: RuleOutcome[], grants: readonly Grant[]): boolean {
  const authorize = authorizeFrom(grants);
  return outcomes.every((o) => 'allow' in o || ('requires' in o && authorize(o.requires.user, { ...o.requires })));
}

/** As kube-apiserver leaves a namespace before validating admission (its strategy sets the name label, whatever the request said). */
const withNameLabel = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, [KEY.metadataName]: o.metadata.name! } } });

const info = (o: KubeObject) => ({ name: o.metadata.name!, labels: o.metadata.labels ?? {}, annotations: o.metadata.annotations ?? {} });

function mutationInput(settings: PolicySettings, a: PolicyAttributes): NamespaceMutationInput {
  return { operation: a.operation as 'CREATE' | 'UPDATE', user: a.userInfo, namespace: info(a.object!), ...(a.oldObject ? { old: info(a.oldObject) } : {}), settings };
}

/** validate-namespace's whole verdict, templates and Organizations at their worst for the request (every template requires `use`; no Organization exists). */
function validateNamespaceAllows(settings: PolicySettings, a: PolicyAttributes, grants: readonly Grant[]): boolean {
  const input = mutationInput(settings, a);
  const templatesNeedingPermission = mayMatchNewTemplates(input.namespace, input.old) ? ['privileged', 'quota'] : [];
  const readyCondition = a.oldObject ? { before: readyConditionOf(a.oldObject), after: readyConditionOf(a.object) } : undefined;
  const outcomes = [...validationOutcomes({ ...input, templatesNeedingPermission, ...(readyCondition ? { readyCondition } : {}) }), ...initializerValidation({ ...input, known: knownInitializers(settings, []) })];
  const ctx = { settings: organizationSettings(settings), systemNamespaces: settings.systemNamespaces, furnishNamespace: settings.furnishNamespace, furnishPrincipals: settings.guard.reconciler, trustedCreators: settings.trustedCreators };
  if (organizationExemption(a.userInfo, input.namespace.name, ctx) === undefined) {
    outcomes.push(...organizationOutcomes({ ...ctx, operation: input.operation, requester: a.userInfo, creator: a.userInfo, namespace: input.namespace, ...(input.old ? { old: input.old } : {}) }));
  }
  return allows(outcomes, grants);
}

describe.each([['organizations off', SETTINGS], ['organizations on', ORGANIZATIONS]] as const)('namespace webhooks (%s)', (_, settings) => {
  const judge = judgeWith(settings);

  it('mutate-namespace: a request kept out is one it changes nothing of', () => {
    let keptOut = 0;
    fc.assert(fc.property(namespaceUpdate, (u) => {
      const a = namespaceRequest('UPDATE', u.user, u.object, u.oldObject, u.subResource);
      if (called(settings, 'mutate-namespace', a)) return;
      keptOut++;
      const input = mutationInput(settings, a);
      expect([...mutationsFor(input), ...initializerMutations({ ...input, configured: [] })].filter(isChange)).toEqual([]);
    }), { numRuns: 2000 });
    expect(keptOut).toBeGreaterThan(0);
    fc.assert(fc.property(namespaceCreate, (c) => { expect(called(settings, 'mutate-namespace', namespaceRequest('CREATE', c.user, c.object))).toBe(true); }));
  });

  it('validate-namespace: a request the policies admit and the conditions keep out is one its rules allow without a look-up', () => {
    let keptOut = 0;
    const check = (request: PolicyAttributes, grants: readonly Grant[]) => {
      const a = { ...request, object: withNameLabel(request.object!) };
      if (!judge(a, grants).allowed || called(settings, 'validate-namespace', a, grants)) return;
      keptOut++;
      expect(validateNamespaceAllows(settings, a, grants)).toBe(true);
    };
    fc.assert(fc.property(namespaceUpdate, (u) => check(namespaceRequest('UPDATE', u.user, u.object, u.oldObject, u.subResource), u.grants)), { numRuns: 3000 });
    // CREATEs as mutate-namespace leaves them, and as they come when it did not run (it fails open).
    fc.assert(fc.property(namespaceCreate, fc.boolean(), (c, mutate) => check(namespaceRequest('CREATE', c.user, mutate ? mutated(settings, 'CREATE', c.user, c.object) : c.object), c.grants)), { numRuns: 4000 });
    expect(keptOut).toBeGreaterThan(0);
  });

  it('validate-namespace: an administrator\'s unmarked CREATE is kept out (it works while the functions are unreachable); a tenant\'s is not', () => {
    const root = USERS.find((u) => u.username === 'root')!;
    const use: Grant[] = [{ user: 'root', verb: 'use', resource: 'namespacetemplates' }];
    const create = (user: UserInfo) => namespaceRequest('CREATE', user, mutated(settings, 'CREATE', user, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } }));
    const unmarked = namespaceRequest('CREATE', root, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
    expect(called(settings, 'validate-namespace', unmarked, use)).toBe(false);
    // With mutate-namespace's marks, the identity it recorded is judged by validate-namespace.
    expect(called(settings, 'validate-namespace', create(root), use)).toBe(true);
    expect(called(settings, 'validate-namespace', unmarked, [{ ...use[0]!, name: 'one' } as Grant])).toBe(true);
    const tenant = namespaceRequest('CREATE', USERS[0]!, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
    expect(called(settings, 'validate-namespace', tenant, use.map((g) => ({ ...g, user: 'alice' })))).toBe(organizationSettings(settings).enabled);
  });

  it('validate-namespace: a tenant\'s change of annotations alone is kept out where the namespace names an organization (furnish-organization-metadata holds the allowlist), sent where it names none', () => {
    const alice = USERS[0]!;
    const update = (labels: Record<string, string>) => namespaceRequest('UPDATE', alice,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', labels, annotations: { description: 'new' } } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', labels, annotations: { description: 'old' } } });
    expect(called(settings, 'validate-namespace', update({ [KEY.organization]: 'acme' }))).toBe(false);
    expect(called(settings, 'validate-namespace', update({ [KEY.organization]: '' }))).toBe(organizationSettings(settings).enabled);
    expect(called(settings, 'validate-namespace', update({}))).toBe(organizationSettings(settings).enabled);
  });
});

describe('guard-initializing', () => {
  it('keeps out exactly the requesters its rules allow without a look-up (reconciler, system principals)', () => {
    for (const user of [...USERS, { username: 'system:node:n1', groups: ['system:nodes'] }, { username: 'system:serviceaccount:kube-system:namespace-controller' }]) {
      const a = { operation: 'CREATE', userInfo: user, object: {}, oldObject: null, namespaceObject: null, resource: { group: '', version: 'v1', resource: 'configmaps' }, name: 'c', namespace: 'n', kind: { group: '', version: 'v1', kind: 'ConfigMap' } } as unknown as PolicyAttributes;
      const outcome = guardOutcome({ user, namespace: 'n', settings: SETTINGS });
      expect(called(SETTINGS, 'guard-initializing', a)).toBe(!('allow' in outcome));
    }
  });
});

describe('protect-objects', () => {
  const ns = 'team-a';
  const managed = (manager: string) => [{ manager, operation: 'Apply', time: 't', fieldsV1: { 'f:metadata': { 'f:labels': { [`f:${KEY.applySetPartOf}`]: {} } } } }];
  const objectArb = fc.record({
    kind: fc.constantFrom('ConfigMap', 'Deployment'),
    name: fc.constantFrom('x', APPLYSET_PARENT_NAME),
    template: fc.constantFrom(undefined, 't'),
    partOf: fc.constantFrom(undefined, applySetId(ns), 'applyset-other-v1'),
    id: fc.constantFrom(undefined, applySetId(ns)),
    manager: fc.constantFrom(undefined, FIELD_MANAGER, 'kubectl'),
    data: fc.constantFrom('a', 'b'),
  }).map((o): KubeObject => ({
    apiVersion: o.kind === 'ConfigMap' ? 'v1' : 'apps/v1', kind: o.kind,
    metadata: {
      name: o.name, namespace: ns,
      labels: Object.fromEntries([[KEY.template, o.template], [KEY.applySetPartOf, o.partOf], [KEY.applySetId, o.id]].filter((e): e is [string, string] => e[1] !== undefined)),
      ...(o.manager ? { managedFields: managed(o.manager) } : {}),
    },
    data: { k: o.data },
  }));

  it('keeps out only requests protectFirstStep allows (never one it refuses or looks a template up for)', () => {
    const users = [...USERS, { username: 'system:serviceaccount:kube-system:generic-garbage-collector' }];
    let keptOut = 0;
    fc.assert(fc.property(fc.constantFrom('CREATE', 'UPDATE', 'DELETE') as fc.Arbitrary<'CREATE' | 'UPDATE' | 'DELETE'>, objectArb, objectArb, fc.constantFrom(...users), fc.constantFrom(undefined, 'scale'), (operation, object, oldObject, user, subResource) => {
      if (subResource && operation !== 'UPDATE') return;
      const a = {
        operation, userInfo: user, object: operation === 'DELETE' ? null : object, oldObject: operation === 'CREATE' ? null : oldObject, namespaceObject: null,
        resource: { group: '', version: 'v1', resource: 'configmaps' }, ...(subResource ? { subResource } : {}), name: 'x', namespace: ns, kind: { group: '', version: 'v1', kind: object.kind },
      } as PolicyAttributes;
      if (called(SETTINGS, 'protect-objects', a)) return;
      keptOut++;
      const first = protectFirstStep({ operation, user, object: a.object, oldObject: a.oldObject, kind: object.kind, name: 'x', namespace: ns, ...(subResource ? { subResource } : {}), settings: SETTINGS });
      expect(first).toEqual(expect.objectContaining({ allow: expect.any(String) }));
    }), { numRuns: 2000 });
    expect(keptOut).toBeGreaterThan(0);
  });
});

describe('mutate-pod', () => {
  const pod = (spec: Record<string, unknown>) => ({
    operation: 'CREATE', userInfo: { username: 'alice' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n' }, spec }, oldObject: null, namespaceObject: null,
    resource: { group: '', version: 'v1', resource: 'pods' }, name: 'p', namespace: 'n', kind: { group: '', version: 'v1', kind: 'Pod' },
  } as unknown as PolicyAttributes);

  it('is called for exactly the Pods it may give a deadline (run-once, none set), and none while organizations are off', () => {
    for (const restartPolicy of [undefined, 'Always', 'Never', 'OnFailure']) {
      for (const activeDeadlineSeconds of [undefined, 30]) {
        const spec = { containers: [], ...(restartPolicy ? { restartPolicy } : {}), ...(activeDeadlineSeconds ? { activeDeadlineSeconds } : {}) };
        expect(called(ORGANIZATIONS, 'mutate-pod', pod(spec))).toBe(isRunOnceWithoutDeadline(spec));
        expect(called(SETTINGS, 'mutate-pod', pod(spec))).toBe(false);
      }
    }
  });
});
