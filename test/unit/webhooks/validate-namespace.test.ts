import { describe, expect, it } from '@jest/globals';
import { readyConditionOf, validateNamespace } from '../../../shared/webhooks/handlers/validate-namespace.ts';
import {
  creatorIsImmutable,
  nameLabelMatchesName,
  optOutNeedsPermission,
  phaseSetOnlyByFurnish,
  readyConditionSetOnlyByFurnish,
  templatesNeedUse,
} from '../../../shared/webhooks/rules/validate-namespace.ts';
import type { NamespaceValidationInput } from '../../../shared/webhooks/rules/validate-namespace.ts';
import { resolveOutcomes } from '../../../shared/webhooks/rules/outcome.ts';
import type { AdmissionRequest } from '../../../shared/admission/index.ts';
import { admissionRequest, fakeAuthorizer, namespaceTemplate, SCENARIO_TEMPLATES, testDeps, testSettings } from '../../support/fixtures.ts';

const alice = { username: 'alice', groups: ['system:authenticated'] };

function input(overrides: Partial<NamespaceValidationInput> = {}): NamespaceValidationInput {
  return {
    operation: 'CREATE',
    user: alice,
    namespace: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a', 'furnish.dev/phase': 'pending' }, annotations: { 'furnish.dev/creator': 'alice' } },
    settings: testSettings(),
    templatesNeedingPermission: [],
    ...overrides,
  };
}

function updated(change: (ns: NamespaceValidationInput['namespace']) => void, user = alice): NamespaceValidationInput {
  const base = input();
  const namespace = structuredClone(base.namespace);
  change(namespace);
  return { ...base, operation: 'UPDATE', user, old: base.namespace, namespace };
}

describe('validate-namespace rules', () => {
  it('name-label-matches-name refuses a mismatch, saying who and why', () => {
    expect(nameLabelMatchesName(input())).toMatchObject({ allow: 'label equals the name' });
    expect(nameLabelMatchesName(updated((ns) => (ns.labels['kubernetes.io/metadata.name'] = 'other')))).toEqual({
      rule: 'name-label-matches-name',
      deny: 'user "alice" may not set label kubernetes.io/metadata.name="other" on namespace "team-a": it must equal the name',
    });
  });

  it('creator-is-immutable: unchanged at UPDATE, the requester at CREATE', () => {
    expect(creatorIsImmutable(input())).toMatchObject({ allow: 'creator is the requester' });
    expect(creatorIsImmutable(updated((ns) => (ns.annotations['furnish.dev/creator'] = 'mallory'), { username: 'admin', groups: [] }))).toMatchObject({
      deny: 'user "admin" may not change annotation furnish.dev/creator of namespace "team-a" from "alice" to "mallory": it is immutable',
    });
    expect(creatorIsImmutable(updated((ns) => delete ns.annotations['furnish.dev/creator']))).toMatchObject({ deny: expect.stringContaining('from "alice" to null') });
    expect(creatorIsImmutable(input({ user: { username: 'bob' } }))).toMatchObject({ deny: expect.stringContaining('user "bob" may not set annotation furnish.dev/creator="alice"') });
  });

  it('creator-is-immutable: an identity recorded as JSON may change only to the same identity in the current form', () => {
    const legacy = '{"groups":["dev"],"username":"alice"}';
    const withIdentity = (text: string) => (ns: { annotations: Record<string, string> }) => (ns.annotations['furnish.dev/creator-identity'] = text);
    const from = (text: string) => { const i = updated(withIdentity(text)); return { ...i, old: { ...i.old!, annotations: { ...i.old!.annotations, 'furnish.dev/creator-identity': legacy } } }; };
    expect(creatorIsImmutable(from('user=alice&group=dev'))).toMatchObject({ allow: 'creator unchanged (furnish.dev/creator-identity in the current form)' });
    expect(creatorIsImmutable(from(legacy))).toMatchObject({ allow: 'creator unchanged' });
    expect(creatorIsImmutable(from('user=alice&group=dev&group=platform-admins'))).toMatchObject({ deny: expect.stringContaining('may not change annotation furnish.dev/creator-identity') });
  });

  it('ready-condition-set-only-by-furnish: nobody but the reconciler changes the Ready condition (kubectl wait reads it)', () => {
    const pending = readyConditionOf({ status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Pending', message: 'being furnished' }] } });
    const forged = readyConditionOf({ status: { conditions: [{ type: 'NamespaceDeletionContentFailure', status: 'False' }, { type: 'Ready', status: 'True', reason: 'Ready', message: 'trust me' }] } });
    expect(readyConditionOf({ status: { phase: 'Active' } })).toBeUndefined();
    // kubectl wait --for=condition=Ready takes the type in any case (EqualFold): a `ready` condition is a Ready condition.
    expect(readyConditionOf({ status: { conditions: [{ type: 'ready', status: 'True' }] } })).toBe(readyConditionOf({ status: { conditions: [{ type: 'Ready', status: 'True' }] } }));
    expect(readyConditionOf({ status: { conditions: [{ type: 'READY', status: 'True' }] } })).toBeDefined();
    expect(readyConditionOf({ status: { conditions: [{ type: 'Readyz', status: 'True' }] } })).toBeUndefined();
    // The server keeps a second Ready condition (a PUT of namespaces/status): adding one is a change too.
    const second = readyConditionOf({ status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Pending', message: 'being furnished' }, { type: 'Ready', status: 'True', reason: 'Ready' }] } });
    expect(readyConditionSetOnlyByFurnish({ ...updated(() => {}), readyCondition: { before: pending, after: second } })).toMatchObject({ deny: expect.stringContaining('may not change the Ready condition') });
    expect(readyConditionSetOnlyByFurnish(input())).toMatchObject({ allow: 'Ready condition unchanged' });
    expect(readyConditionSetOnlyByFurnish({ ...updated(() => {}), readyCondition: { before: pending, after: pending } })).toMatchObject({ allow: 'Ready condition unchanged' });
    expect(readyConditionSetOnlyByFurnish({ ...updated(() => {}), readyCondition: { before: pending, after: forged } })).toEqual({
      rule: 'ready-condition-set-only-by-furnish',
      deny: `user "alice" may not change the Ready condition of namespace "team-a" (${pending} to ${forged}): only Furnish sets it, with the phase`,
    });
    expect(readyConditionSetOnlyByFurnish({ ...updated(() => {}), readyCondition: { before: undefined, after: forged } })).toMatchObject({ deny: expect.stringContaining('(none to') });
    const reconciler = { username: 'system:serviceaccount:furnish-system:furnish-reconciler', groups: [] };
    expect(readyConditionSetOnlyByFurnish({ ...updated(() => {}, reconciler), readyCondition: { before: pending, after: forged } })).toMatchObject({ allow: expect.stringContaining('the reconciler') });
  });

  it('opt-out-needs-permission: setting the opt-out needs verb optout on namespacetemplates', () => {
    const optingOut = updated((ns) => (ns.annotations['furnish.dev/opt-out'] = 'true'));
    expect(optOutNeedsPermission(optingOut)).toMatchObject({ requires: { verb: 'optout', group: 'furnish.dev', resource: 'namespacetemplates', user: alice } });
    expect(optOutNeedsPermission(input())).toMatchObject({ allow: 'not opting out' });
    const ci = input({ user: { username: 'system:serviceaccount:team-a:ci-bot' }, namespace: { name: 'ci', labels: {}, annotations: { 'furnish.dev/opt-out': 'true' } } });
    expect(optOutNeedsPermission(ci)).toMatchObject({ allow: expect.stringContaining('auto-opt-out') });
  });

  it('phase-set-only-by-furnish: any change of furnish.dev/phase but the pending mutate-namespace sets, the reconciler\'s, or one the update\'s initializer annotations dictate', () => {
    const only = 'only Furnish sets the phase (its reconciler, or mutate-namespace: ready when the last initializer removes itself, failed when the working one reports failure, pending when a holder of verb "initialize" removes annotation furnish.dev/failure of a failed namespace)';
    expect(phaseSetOnlyByFurnish(input())).toMatchObject({ allow: 'phase unchanged' });
    const ready = updated((ns) => (ns.labels['furnish.dev/phase'] = 'ready'));
    expect(phaseSetOnlyByFurnish(ready)).toEqual({ rule: 'phase-set-only-by-furnish', deny: `user "alice" may not change label furnish.dev/phase from "pending" to "ready" on namespace "team-a": ${only}` });
    const createdReady = input({ namespace: { name: 'n', labels: { 'furnish.dev/phase': 'ready' }, annotations: {} } });
    expect(phaseSetOnlyByFurnish(createdReady)).toMatchObject({ deny: expect.stringContaining('may not change label furnish.dev/phase from "pending" to "ready" on namespace "n"') });
    expect(phaseSetOnlyByFurnish(updated((ns) => delete ns.labels['furnish.dev/phase']))).toMatchObject({ deny: expect.stringContaining('from "pending" to null') });
    // The reconciler sets it; so does mutate-namespace when the last initializer removes itself.
    expect(phaseSetOnlyByFurnish({ ...ready, user: { username: 'system:serviceaccount:furnish-system:furnish-reconciler' } })).toMatchObject({ allow: expect.stringContaining('the reconciler') });
    const last = { ...ready, old: { ...ready.old!, annotations: { ...ready.old!.annotations, 'furnish.dev/initializers': 'secret-seeder' } }, namespace: { ...ready.namespace, annotations: { ...ready.namespace.annotations, 'furnish.dev/initializers': '' } } };
    expect(phaseSetOnlyByFurnish(last)).toMatchObject({ allow: expect.stringContaining('set by mutate-namespace') });
  });

  it('templates-need-use: one check per template, named after it', () => {
    expect(templatesNeedUse(input({ templatesNeedingPermission: ['a', 'b'] })).map((o) => 'requires' in o && o.requires.name)).toEqual(['a', 'b']);
  });

  it('denials carry who, what, and the exact RBAC; an unanswerable check fails closed', async () => {
    const outcomes = templatesNeedUse(input({ user: { username: 'bob' }, templatesNeedingPermission: ['privileged'] }));
    expect((await resolveOutcomes(outcomes, fakeAuthorizer())).denials).toEqual([
      'user "bob" may not use NamespaceTemplate "privileged": needs verb "use" on namespacetemplates.furnish.dev, resourceName "privileged"',
    ]);
    expect(await resolveOutcomes(outcomes, fakeAuthorizer([{ user: 'bob', verb: 'use', name: 'privileged' }]))).toMatchObject({ allowed: true });
    const down = await resolveOutcomes(outcomes, fakeAuthorizer([], 'SubjectAccessReview failed: connect ECONNREFUSED'));
    expect(down).toMatchObject({ allowed: false, unavailable: true });
    expect(down.denials[0]).toMatch(/^could not check whether user "bob" may use NamespaceTemplate "privileged" \(SubjectAccessReview failed/);
  });
});

/** The request with `creator` recorded on the namespace before and after (an UPDATE of a namespace Furnish admitted). */
function withCreator(request: AdmissionRequest, creator: string): AdmissionRequest {
  for (const o of [request.object, request.oldObject]) if (o) o.metadata.annotations = { ...o.metadata.annotations, 'furnish.dev/creator': creator };
  return request;
}

describe('validate-namespace handler on what kube-apiserver sent', () => {
  /** What the request looks like after mutate-namespace ran. */
  function mutated(request: AdmissionRequest, creator = request.userInfo.username!): AdmissionRequest {
    const meta = request.object!.metadata;
    meta.annotations = { ...meta.annotations, 'furnish.dev/creator': creator };
    meta.labels = { ...meta.labels, 'furnish.dev/phase': 'pending' };
    return request;
  }

  it('bob creating a privileged namespace without `use` is refused with the exact RBAC', async () => {
    const deps = testDeps();
    const response = await validateNamespace(mutated(admissionRequest('004-validate-CREATE-namespaces-priv-b-bob')), deps);
    expect(response).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(response.status!.message).toBe(
      'user "bob" may not use NamespaceTemplate "privileged": needs verb "use" on namespacetemplates.furnish.dev, resourceName "privileged"',
    );
  });

  it('asks with the requester\'s user, groups, uid and extra, and allows once `use` is granted', async () => {
    const authorizer = fakeAuthorizer([{ user: 'bob', verb: 'use', name: 'privileged' }]);
    const request = mutated(admissionRequest('004-validate-CREATE-namespaces-priv-b-bob'));
    request.userInfo = { ...request.userInfo, uid: 'bob-uid', extra: { scopes: ['a'] } };
    expect(await validateNamespace(request, testDeps({ authorizer }))).toMatchObject({ allowed: true });
    expect(authorizer.calls).toEqual([
      { user: request.userInfo, verb: 'use', group: 'furnish.dev', resource: 'namespacetemplates', name: 'privileged' },
    ]);
  });

  it('alice creating team-a (no privileged template selected) asks nothing', async () => {
    const authorizer = fakeAuthorizer();
    expect(await validateNamespace(mutated(admissionRequest('002-validate-CREATE-namespaces-team-a-alice')), testDeps({ authorizer }))).toMatchObject({ allowed: true });
    expect(authorizer.calls).toEqual([]);
  });

  it('at UPDATE only templates newly matched because labels changed are checked', async () => {
    const templates = [...SCENARIO_TEMPLATES, namespaceTemplate('blue', { matchLabels: { team: 'blue' }, requirePermission: true })];
    const authorizer = fakeAuthorizer();
    // As in a Furnish cluster: the creator admission recorded at CREATE, whose `use` counts.
    const request = withCreator(admissionRequest('008-validate-UPDATE-namespaces-team-a-alice'), 'alice');
    const response = await validateNamespace(request, testDeps({ authorizer, templates }));
    expect(response.status?.message).toBe('user "alice" may not use NamespaceTemplate "blue": needs verb "use" on namespacetemplates.furnish.dev, resourceName "blue"');
    // The same labels again (an unrelated change): nothing newly matched, nothing asked.
    request.oldObject = structuredClone(request.object);
    authorizer.calls.length = 0;
    expect(await validateNamespace(request, testDeps({ authorizer, templates }))).toMatchObject({ allowed: true });
    expect(authorizer.calls).toEqual([]);
  });

  it('refuses the creator change admin tried, if it reached validation unrestored', async () => {
    const request = admissionRequest('010-validate-UPDATE-namespaces-team-a-admin');
    request.oldObject!.metadata.annotations = { 'furnish.dev/creator': 'alice' };
    const response = await validateNamespace(request, testDeps());
    expect(response.status?.message).toBe('user "admin" may not change annotation furnish.dev/creator of namespace "team-a" from "alice" to "mallory": it is immutable');
  });

  it('lists every refusal of one request, and fails closed when templates cannot be listed', async () => {
    const request = mutated(admissionRequest('004-validate-CREATE-namespaces-priv-b-bob'));
    request.object!.metadata.annotations!['furnish.dev/opt-out'] = 'true';
    request.object!.metadata.labels!['furnish.dev/phase'] = 'ready';
    const response = await validateNamespace(request, testDeps());
    expect(response.status!.message!.split('; ')).toEqual([
      'user "bob" may not opt namespace "priv-b" out of NamespaceTemplates (annotation furnish.dev/opt-out="true"): needs verb "optout" on namespacetemplates.furnish.dev',
      'user "bob" may not set label furnish.dev/phase="ready" on namespace "priv-b": only Furnish sets the phase (its reconciler, or mutate-namespace: ready when the last initializer removes itself, failed when the working one reports failure, pending when a holder of verb "initialize" removes annotation furnish.dev/failure of a failed namespace)',
    ]);
    const broken = { ...testDeps(), templates: { list: () => Promise.reject(new Error('HTTP 503')) } };
    expect(await validateNamespace(mutated(admissionRequest('002-validate-CREATE-namespaces-team-a-alice')), broken)).toMatchObject({
      allowed: false,
      status: { code: 503, message: 'could not list NamespaceTemplates (HTTP 503); retry' },
    });
  });

  it('allows DELETE without looking', async () => {
    expect(await validateNamespace(admissionRequest('019-validate-DELETE-namespaces-priv-b-admin'), testDeps())).toMatchObject({ allowed: true });
  });
});
