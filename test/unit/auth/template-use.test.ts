// "Which templates this identity may use": one rule (shared/auth/template-use.ts) for admission,
// the reconciler and the CLI, so the three give one answer.
import { describe, expect, it } from '@jest/globals';
import { canonicalIdentity, CREATOR_IDENTITY, creatorIdentityOf } from '../../../shared/auth/creator.ts';
import { templateUse, templatesToAuthorize } from '../../../shared/auth/template-use.ts';
import type { NamespaceInfo } from '../../../shared/render/types.ts';
import { validateNamespace } from '../../../shared/webhooks/handlers/validate-namespace.ts';
import { admissionRequest, fakeAuthorizer, namespaceTemplate, testDeps } from '../../support/fixtures.ts';

const templates = [
  namespaceTemplate('open', { matchLabels: { team: 'a' } }),
  namespaceTemplate('red', { matchLabels: { team: 'a' }, requirePermission: true }),
  namespaceTemplate('blue', { matchLabels: { tier: 'gold' }, requirePermission: true }),
  namespaceTemplate('amber', { matchLabels: { team: 'a' }, requirePermission: true }),
];

function ns(labels: Record<string, string>, annotations: Record<string, string> = { 'furnish.dev/creator': 'alice' }, name = 'team-a'): NamespaceInfo {
  return { name, labels: { 'kubernetes.io/metadata.name': name, ...labels }, annotations };
}

const alice = { username: 'alice' };

describe('templateUse: the rule', () => {
  it('asks `use` for every selected template requiring permission, in name order, with the creator', () => {
    expect(templateUse({ namespace: ns({ team: 'a' }), templates, identity: alice })).toEqual([
      { template: 'amber', check: { user: alice, verb: 'use', group: 'furnish.dev', resource: 'namespacetemplates', name: 'amber' }, refused: 'use NamespaceTemplate "amber"' },
      { template: 'red', check: { user: alice, verb: 'use', group: 'furnish.dev', resource: 'namespacetemplates', name: 'red' }, refused: 'use NamespaceTemplate "red"' },
    ]);
  });

  it('asks nothing for system, exempt or opted-out namespaces, nor for templates not selected', () => {
    expect(templateUse({ namespace: ns({ team: 'a' }, {}, 'kube-system'), templates, identity: alice })).toEqual([]);
    expect(templateUse({ namespace: ns({ team: 'a' }, {}, 'infra'), templates, systemNamespaces: ['infra'], identity: alice })).toEqual([]);
    expect(templateUse({ namespace: ns({ team: 'a' }, { 'furnish.dev/opt-out': 'true' }), templates, identity: alice })).toEqual([]);
    expect(templateUse({ namespace: ns({ team: 'b' }), templates, identity: alice })).toEqual([]);
  });

  it('at UPDATE asks only about the templates the change newly selects', () => {
    expect(templatesToAuthorize(ns({ team: 'a', tier: 'gold' }), ns({ team: 'a' }), templates)).toEqual(['blue']);
    expect(templatesToAuthorize(ns({ team: 'a' }), ns({ team: 'a' }), templates)).toEqual([]);
  });

  it('without a recorded creator, every template requiring permission is refused, saying why', () => {
    expect(templateUse({ namespace: ns({ tier: 'gold' }, {}), templates, identity: undefined })).toEqual([
      { template: 'blue', deny: 'template "blue" requires permission and namespace "team-a" records no creator' },
    ]);
  });
});

describe('one answer: admission asks what the reconciler asks', () => {
  it('a relabel by someone allowed to use the template is judged by the creator, as the reconciler will', async () => {
    // bob may use blue, alice (the creator) may not: the reconciler would refuse blue, so admission does.
    const authorizer = fakeAuthorizer([{ user: 'bob', verb: 'use', name: 'blue' }]);
    const request = admissionRequest('008-validate-UPDATE-namespaces-team-a-alice');
    request.userInfo = { username: 'bob', groups: ['system:authenticated'] };
    const identity = canonicalIdentity({ username: 'alice', groups: ['system:authenticated', 'team-a'] });
    for (const o of [request.object!, request.oldObject!]) o.metadata.annotations = { 'furnish.dev/creator': 'alice', [CREATOR_IDENTITY]: identity };
    request.object!.metadata.labels = { ...request.object!.metadata.labels, tier: 'gold' };
    const response = await validateNamespace(request, testDeps({ authorizer, templates }));
    expect(response.status?.message).toBe('user "alice" may not use NamespaceTemplate "blue": needs verb "use" on namespacetemplates.furnish.dev, resourceName "blue"');
    // The check admission asked is exactly the reconciler's: the recorded identity, groups included.
    const reconcilerAsks = templateUse({ namespace: ns({ tier: 'gold' }, request.object!.metadata.annotations), templates, identity: creatorIdentityOf(request.object!.metadata.annotations) });
    expect(authorizer.calls).toEqual(reconcilerAsks.map((u) => ('check' in u ? u.check : undefined)));
  });

  it('a relabel of a namespace that records no creator is refused, as the reconciler would', async () => {
    const request = admissionRequest('008-validate-UPDATE-namespaces-team-a-alice');
    request.object!.metadata.labels = { ...request.object!.metadata.labels, tier: 'gold' };
    const response = await validateNamespace(request, testDeps({ grants: [{ user: 'alice', verb: 'use', name: 'blue' }], templates }));
    expect(response).toMatchObject({ allowed: false, status: { code: 403, message: 'template "blue" requires permission and namespace "team-a" records no creator' } });
  });

  it('a creator allowed to use the template may have it selected by another editor', async () => {
    const request = admissionRequest('008-validate-UPDATE-namespaces-team-a-alice');
    request.userInfo = { username: 'carol' };
    for (const o of [request.object!, request.oldObject!]) o.metadata.annotations = { 'furnish.dev/creator': 'alice' };
    request.object!.metadata.labels = { ...request.object!.metadata.labels, tier: 'gold' };
    expect(await validateNamespace(request, testDeps({ grants: [{ user: 'alice', verb: 'use', name: 'blue' }], templates }))).toMatchObject({ allowed: true });
  });
});
