// The organization rules through the mutate-namespace and validate-namespace handlers, on reviews
// derived from what kube-apiserver 1.26 sent for `kubectl create namespace team-a`.
import { describe, expect, it } from '@jest/globals';
import { decodePatch } from '../../../shared/admission/response.ts';
import type { AdmissionResponse } from '../../../shared/admission/types.ts';
import { mutateNamespace } from '../../../shared/webhooks/handlers/mutate-namespace.ts';
import { validateNamespace } from '../../../shared/webhooks/handlers/validate-namespace.ts';
import { changedKeys, followsLNamespace, metadataAllowlist, requesterSetByTrustedCreator, reservedName } from '../../../shared/webhooks/rules/organization-namespace.ts';
import type { AdmissionRequest } from '../../../shared/admission/types.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { DEFAULT_ORGANIZATION_SETTINGS } from '../../../shared/org/settings.ts';
import { namespaceRequest, organization, orgDeps, scenario } from '../../support/organizations.ts';

const alice = { username: 'alice', groups: ['system:authenticated'] };
const bob = { username: 'bob', groups: ['system:authenticated'] };
const mallory = { username: 'mallory', groups: ['system:authenticated'] };
const admin = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
const toolsBot = { username: 'system:serviceaccount:acme-tools:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:acme-tools'] };
const deployer = { username: 'system:serviceaccount:ci:deployer', groups: ['system:serviceaccounts'] };
const ORG = 'furnish.dev/organization';
/** What mutate-namespace recorded at CREATE (namespaceRequest's UPDATEs start from it). */
const CREATED = { 'furnish.dev/creator': 'alice' };
const RECONCILER = { username: 'system:serviceaccount:furnish-system:furnish-reconciler', groups: ['system:serviceaccounts', 'system:serviceaccounts:furnish-system', 'system:authenticated'] };

const message = (r: AdmissionResponse) => r.status?.message;
const orgPatch = (r: AdmissionResponse) => decodePatch(r).filter((op) => op.path.includes('organization'));

describe('mutate-namespace: the default organization', () => {
  it('gives alice\'s unlabelled namespace her default organization, acme', async () => {
    const r = await mutateNamespace(namespaceRequest({ webhook: 'mutate', user: alice }), orgDeps());
    expect(orgPatch(r)).toEqual([{ op: 'add', path: '/metadata/labels/furnish.dev~1organization', value: 'acme' }]);
    expect(r.auditAnnotations?.mutations).toContain('furnish.dev/organization=acme (default organization of "alice")');
  });

  it('gives a ServiceAccount\'s namespace the organization of the namespace it lives in', async () => {
    const r = await mutateNamespace(namespaceRequest({ webhook: 'mutate', user: toolsBot, name: 'acme-build' }), orgDeps());
    expect(orgPatch(r)).toEqual([{ op: 'add', path: '/metadata/labels/furnish.dev~1organization', value: 'acme' }]);
  });

  it('leaves a named organization, users without a default, and organizations off alone', async () => {
    expect(orgPatch(await mutateNamespace(namespaceRequest({ webhook: 'mutate', user: alice, labels: { [ORG]: 'globex' } }), orgDeps()))).toEqual([]);
    expect(orgPatch(await mutateNamespace(namespaceRequest({ webhook: 'mutate', user: mallory }), orgDeps()))).toEqual([]);
    const off = orgDeps({ settings: { enabled: false } });
    const r = mutateNamespace(namespaceRequest({ webhook: 'mutate', user: alice }), off);
    expect(r).not.toBeInstanceOf(Promise); // no look-up at all
    expect(orgPatch(r as AdmissionResponse)).toEqual([]);
  });

  it('refuses with 503 when organizations are on but the cluster has no API to read them', async () => {
    const { organizations: _none, ...deps } = orgDeps();
    const r = await mutateNamespace(namespaceRequest({ webhook: 'mutate', user: alice }), deps);
    expect(r.status).toMatchObject({ code: 503, message: 'could not read Organizations (this cluster has no API configured (clusters[].api.server)); retry' });
    const v = await validateNamespace(namespaceRequest({ user: alice, labels: { [ORG]: 'acme' } }), deps);
    expect(v.status).toMatchObject({ code: 503, message: 'could not read Organizations (this cluster has no API configured (clusters[].api.server)); retry' });
  });

  it('refuses with 503 when the organizations cannot be read (fails closed)', async () => {
    const deps = orgDeps();
    deps.organizations.list = () => Promise.reject(new Error('connection refused'));
    const r = await mutateNamespace(namespaceRequest({ webhook: 'mutate', user: alice }), deps);
    expect(r.status).toMatchObject({ code: 503, message: 'could not read Organizations (connection refused); retry' });
  });
});

describe('validate-namespace: organization rules', () => {
  it('admits alice into acme and reserves a slot keyed by the admission uid', async () => {
    const deps = orgDeps();
    const request = namespaceRequest({ user: alice, labels: { [ORG]: 'acme' } });
    expect((await validateNamespace(request, deps)).allowed).toBe(true);
    expect(deps.organizations.organizations.get('acme')!.status!.reservations).toEqual([{ uid: request.uid, namespace: 'team-a', expires: expect.any(String) }]);
  });

  it('refuses bob, who is not a member of acme, saying how to join', async () => {
    const r = await validateNamespace(namespaceRequest({ user: bob, labels: { [ORG]: 'acme' } }), orgDeps());
    expect(message(r)).toBe('user "bob" may not create namespace "team-a" into organization "acme": not a member; ask an administrator to add you to the Organization\'s spec.members (kind User, Group or ServiceAccount)');
  });

  it('admits a member by group and an explicitly listed ServiceAccount', async () => {
    expect((await validateNamespace(namespaceRequest({ user: { username: 'carol', groups: ['acme-devs'] }, labels: { [ORG]: 'acme' } }), orgDeps())).allowed).toBe(true);
    expect((await validateNamespace(namespaceRequest({ user: deployer, labels: { [ORG]: 'acme' } }), orgDeps())).allowed).toBe(true);
  });

  it('refuses a namespace without an organization, saying how to get one', async () => {
    const r = await validateNamespace(namespaceRequest({ user: mallory }), orgDeps());
    expect(message(r)).toBe('user "mallory" may not create namespace "team-a" without an organization: you have no default organization; label it furnish.dev/organization=<organization you belong to>, or ask an administrator to add you to the Organization\'s spec.members (kind User, Group or ServiceAccount) with default: true');
  });

  it('refuses an organization that does not exist', async () => {
    const r = await validateNamespace(namespaceRequest({ user: alice, labels: { [ORG]: 'umbrella' } }), orgDeps());
    expect(message(r)).toBe('user "alice" may not put namespace "team-a" in organization "umbrella": no such Organization (kubectl get organizations lists them)');
  });

  it('confines a ServiceAccount to its own namespace\'s organization', async () => {
    expect((await validateNamespace(namespaceRequest({ user: toolsBot, labels: { [ORG]: 'acme' } }), orgDeps())).allowed).toBe(true);
    const r = await validateNamespace(namespaceRequest({ user: toolsBot, labels: { [ORG]: 'globex' } }), orgDeps());
    expect(message(r)).toContain('user "system:serviceaccount:acme-tools:builder" may not put namespace "team-a" in organization "globex": a ServiceAccount may only create namespaces of its own namespace\'s organization "acme"');
  });

  it('lets a member of both move a namespace (counted against the target), refuses a member of one', async () => {
    const deps = orgDeps();
    const move = namespaceRequest({ operation: 'UPDATE', user: alice, labels: { [ORG]: 'globex' }, old: { labels: { [ORG]: 'acme' } } });
    expect((await validateNamespace(move, deps)).allowed).toBe(true);
    expect(deps.organizations.organizations.get('globex')!.status!.reservations).toEqual([{ uid: move.uid, namespace: 'team-a', expires: expect.any(String) }]);
    expect(deps.organizations.organizations.get('acme')!.status).toBeUndefined();
    const r = await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: bob, labels: { [ORG]: 'acme' }, old: { labels: { [ORG]: 'globex' } } }), orgDeps());
    expect(message(r)).toBe('user "bob" may not move namespace "team-a" into organization "acme": not a member; ask an administrator to add you to the Organization\'s spec.members (kind User, Group or ServiceAccount)');
    const from = await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: bob, labels: { [ORG]: 'globex' }, old: { labels: { [ORG]: 'acme' } } }), orgDeps());
    expect(message(from)).toBe('user "bob" may not move namespace "team-a" from organization "acme" to "globex": not a member of "acme"; a transfer needs membership of both organizations');
    const removed = await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: alice, old: { labels: { [ORG]: 'acme' } } }), orgDeps());
    expect(message(removed)).toContain('user "alice" may not remove label furnish.dev/organization="acme" from namespace "team-a"');
  });

  it('lets a namespace from before organizations be updated (and deleted) without one', async () => {
    const finalize = namespaceRequest({ operation: 'UPDATE', subResource: 'finalize', user: { username: 'system:serviceaccount:kube-system:namespace-controller' } });
    expect((await validateNamespace(finalize, orgDeps())).allowed).toBe(true);
  });

  it('judges label changes through namespaces/status and /finalize like the namespace itself', async () => {
    for (const subResource of ['status', 'finalize']) {
      const r = await validateNamespace(namespaceRequest({ operation: 'UPDATE', subResource, user: bob, labels: { [ORG]: 'acme', env: 'prod' }, old: { labels: { [ORG]: 'acme' } } }), orgDeps());
      expect(message(r)).toBe('user "bob" may not add, change or remove label env on namespace "team-a": only privileged principals may; others may change labels ["team","app.kubernetes.io/*"], annotations ["description","kubectl.kubernetes.io/last-applied-configuration"]');
    }
  });

  it('quota: refuses the 26th namespace with the count, and a dry run reserves nothing', async () => {
    const full = orgDeps({ organizations: [organization('acme', [{ kind: 'User', name: 'alice', default: true }], { quota: 25, status: { namespaces: 25 } })] });
    expect(message(await validateNamespace(namespaceRequest({ user: alice, labels: { [ORG]: 'acme' } }), full))).toBe('organization "acme" has 25 of 25 namespaces');
    const deps = orgDeps();
    expect((await validateNamespace(namespaceRequest({ user: alice, labels: { [ORG]: 'acme' }, dryRun: true }), deps)).allowed).toBe(true);
    expect(deps.organizations.organizations.get('acme')!.status).toBeUndefined();
  });

  it('privileged principals and system namespaces bypass every organization rule', async () => {
    const deps = orgDeps();
    expect((await validateNamespace(namespaceRequest({ user: admin, name: 'kube-extra', labels: { env: 'prod' } }), deps)).allowed).toBe(true);
    expect((await validateNamespace(namespaceRequest({ user: { username: 'platform-bot' }, labels: { [ORG]: 'acme' } }), orgDeps({ settings: { privileged: ['platform-*'] } }))).allowed).toBe(true);
    expect((await validateNamespace(namespaceRequest({ user: mallory, name: 'furnish-system' }), orgDeps())).allowed).toBe(true);
    expect(deps.organizations.organizations.get('acme')!.status).toBeUndefined();
  });

  it('fails closed with 503 when an organization cannot be read', async () => {
    const deps = orgDeps();
    deps.organizations.get = () => Promise.reject(new Error('timeout'));
    const r = await validateNamespace(namespaceRequest({ user: alice, labels: { [ORG]: 'acme' } }), deps);
    expect(r.status).toMatchObject({ code: 503, message: 'could not read Organizations (timeout); retry' });
  });
});

describe('organization rules on their own', () => {
  const base = { ...ruleBase(), requester: alice, creator: alice, target: scenario().organizations[0] };

  it('changedKeys: added, changed and removed keys only', () => {
    expect(changedKeys({ a: '1', b: '2', c: '3' }, { a: '1', b: 'x', d: '4' })).toEqual(['b', 'c', 'd']);
  });

  it('metadata-allowlist judges only keys that differ, with wildcards; Furnish\'s keys keep their own rules', () => {
    const ns = (labels: Record<string, string>, annotations: Record<string, string> = {}) => ({ name: 'team-a', labels, annotations });
    const old = ns({ env: 'prod', [ORG]: 'acme' });
    expect(metadataAllowlist({ ...base, old, namespace: ns({ env: 'prod', [ORG]: 'acme', team: 'x', 'app.kubernetes.io/name': 'y' }) })).toMatchObject({ allow: 'only allowlisted keys changed' });
    expect(metadataAllowlist({ ...base, old, namespace: ns({ env: 'prod', [ORG]: 'globex', 'furnish.dev/phase': 'ready' }) })).toMatchObject({ allow: 'only allowlisted keys changed' });
    expect(metadataAllowlist({ ...base, old, namespace: ns({ [ORG]: 'acme' }, { 'furnish.dev/quota-pods': '500' }) })).toMatchObject({
      deny: expect.stringContaining('may not add, change or remove label env, annotation furnish.dev/quota-pods on namespace "team-a"'),
    });
  });

  it('reserved-name refuses reserved patterns at CREATE only', () => {
    const ns = { name: 'openshift-x', labels: {}, annotations: {} };
    expect(reservedName({ ...base, operation: 'CREATE', namespace: ns })).toMatchObject({ deny: 'user "alice" may not create namespace "openshift-x": names matching "openshift-*" are reserved; choose another name' });
    expect(reservedName({ ...base, namespace: ns })).toMatchObject({ allow: 'name not reserved' });
  });
});

describe('as deployed: Furnish\'s own identity is not privileged (issue 25)', () => {
  const ownedBy = (request: AdmissionRequest, uid: string): AdmissionRequest => {
    request.object!.metadata.ownerReferences = [{ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', name: request.name!, uid, controller: true }];
    return request;
  };
  const shop = (organization: string, uid = 'lns-uid'): KubeObject => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name: 'team-a', uid, labels: { [ORG]: organization } } });

  it('finding 1: the reconciler writes its record, failure report and an LNamespace\'s billing fields; anyone else naming them is refused', async () => {
    const deps = orgDeps();
    const own = { 'furnish.dev/applied': '{}', 'furnish.dev/failure': 'template t: ...', 'furnish.dev/billing.costCenter': '4711' };
    expect((await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: RECONCILER, labels: { [ORG]: 'acme' }, annotations: { ...CREATED, ...own }, old: { labels: { [ORG]: 'acme' } } }), deps)).allowed).toBe(true);
    // `default` (no organization) becomes ready too.
    expect((await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: RECONCILER, name: 'default', annotations: { ...CREATED, ...own } }), deps)).allowed).toBe(true);
    for (const [key, value] of Object.entries(own)) {
      const r = await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: alice, labels: { [ORG]: 'acme' }, annotations: { ...CREATED, [key]: value }, old: { labels: { [ORG]: 'acme' } } }), deps);
      expect(message(r)).toContain(`user "alice" may not add, change or remove annotation ${key} on namespace "team-a": only privileged principals may`);
    }
    // Not in organizations.privileged: the other organization rules still judge it.
    expect(message(await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: RECONCILER, labels: { [ORG]: 'acme', env: 'prod' }, old: { labels: { [ORG]: 'acme' } } }), deps))).toContain('may not add, change or remove label env');
  });

  it('finding 1: the reconciler creates an LNamespace\'s namespace with its billing fields, for its creator, in the slot the LNamespace holds', async () => {
    const deps = orgDeps({ organizations: [organization('acme', [{ kind: 'User', name: 'alice', default: true }], { quota: 1, status: { namespaces: 0, reservations: [{ uid: 'lns-create', namespace: 'team-a', expires: new Date(Date.now() + 60_000).toISOString() }] } })] });
    const create = ownedBy(namespaceRequest({ user: RECONCILER, labels: { [ORG]: 'acme' }, annotations: { 'furnish.dev/creator': 'alice', 'furnish.dev/requester': 'alice', 'furnish.dev/billing.costCenter': '4711' } }), 'lns-uid');
    const r = await validateNamespace(create, deps);
    expect(r.allowed).toBe(true);
    // The quota of 1 is the LNamespace's slot: found held by the namespace's name, not counted twice.
    expect(deps.organizations.organizations.get('acme')!.status!.reservations).toHaveLength(1);
  });

  it('a cluster with organizations on that never created an Organization behaves as before for a namespace that names none: no "no organization", no allowlist', async () => {
    const none = orgDeps({ organizations: [] });
    expect((await validateNamespace(namespaceRequest({ user: mallory }), none)).allowed).toBe(true);
    expect((await validateNamespace(namespaceRequest({ user: mallory, name: 'kube-mine' }), none)).allowed).toBe(true);
    expect((await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: alice, labels: { env: 'prod' }, annotations: { ...CREATED, 'furnish.dev/requester': 'bob' } }), none)).allowed).toBe(true);
    expect((await mutateNamespace(namespaceRequest({ user: mallory, webhook: 'mutate' }), none)).allowed).toBe(true);
    // The first Organization turns the rules on.
    expect(message(await validateNamespace(namespaceRequest({ user: mallory }), orgDeps({ organizations: [organization('acme')] })))).toContain('without an organization');
  });

  it('an own-rule key in the field its rule does not read is judged by the allowlist (annotation furnish.dev/phase, label furnish.dev/creator)', async () => {
    const deps = orgDeps();
    const update = (labels: Record<string, string>, annotations: Record<string, string>) =>
      validateNamespace(namespaceRequest({ operation: 'UPDATE', user: alice, labels: { [ORG]: 'acme', ...labels }, annotations: { ...CREATED, ...annotations }, old: { labels: { [ORG]: 'acme' }, annotations: CREATED } }), deps);
    expect(message(await update({}, { 'furnish.dev/phase': 'ready' }))).toContain('annotation furnish.dev/phase on');
    expect(message(await update({ 'furnish.dev/creator': 'alice' }, {}))).toContain('label furnish.dev/creator on');
    expect(message(await update({}, { 'furnish.dev/organization': 'globex' }))).toContain('annotation furnish.dev/organization on');
  });

  it('a namespace that names an organization is under the rules while no Organization exists, as furnish-organization-metadata holds them in-tree', async () => {
    const none = orgDeps({ organizations: [] });
    expect(message(await validateNamespace(namespaceRequest({ user: mallory, labels: { [ORG]: 'anything' } }), none))).toContain('organization "anything": no such Organization');
    expect(message(await validateNamespace(namespaceRequest({ user: mallory, name: 'kube-mine', labels: { [ORG]: 'anything' } }), none))).toContain('names matching "kube-*" are reserved');
    // A namespace of a deleted Organization (the last one): unchanged, it may still be updated, within the allowlist.
    const orphan = { labels: { [ORG]: 'gone' }, annotations: CREATED };
    expect((await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: alice, labels: { [ORG]: 'gone', team: 'x' }, annotations: CREATED, old: orphan }), none)).allowed).toBe(true);
    expect(message(await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: alice, labels: { [ORG]: 'gone', env: 'prod' }, annotations: CREATED, old: orphan }), none))).toContain('may not add, change or remove label env');
  });

  it('finding 2: Furnish moves a namespace only into the organization its controlling LNamespace names', async () => {
    const move = () => ownedBy(namespaceRequest({ operation: 'UPDATE', user: RECONCILER, labels: { [ORG]: 'globex' }, old: { labels: { [ORG]: 'acme' } } }), 'lns-uid');
    // The LNamespace was relabelled globex (judged then, with a slot in globex): followed, the slot found held.
    const held = { namespaces: 0, reservations: [{ uid: 'lns-relabel', namespace: 'team-a', expires: new Date(Date.now() + 60_000).toISOString() }] };
    const deps = orgDeps({ organizations: [organization('acme', [], { quota: 5 }), organization('globex', [], { quota: 1, status: held })], lnamespaces: [shop('globex')] });
    expect((await validateNamespace(move(), deps)).allowed).toBe(true);
    expect(deps.organizations.organizations.get('globex')!.status!.reservations).toHaveLength(1);
    // Not into any other: the LNamespace names acme, or another object of the same name (another uid), or none.
    for (const lnamespaces of [[shop('acme')], [shop('globex', 'another-uid')], []]) {
      const r = await validateNamespace(move(), orgDeps({ lnamespaces }));
      expect(message(r)).toContain('user "system:serviceaccount:furnish-system:furnish-reconciler" may not move namespace "team-a" into organization "globex": not a member');
    }
    // An administrator's LNamespace (privileged when judged) gets its namespace created as it names it, even without an organization.
    const adminsShop: KubeObject = { apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name: 'team-a', uid: 'lns-uid' } };
    const forAdmin = () => ownedBy(namespaceRequest({ user: RECONCILER, annotations: { 'furnish.dev/creator': 'admin', 'furnish.dev/requester': 'admin' } }), 'lns-uid');
    expect((await validateNamespace(forAdmin(), orgDeps({ lnamespaces: [adminsShop] }))).allowed).toBe(true);
    expect(message(await validateNamespace(forAdmin(), orgDeps({ lnamespaces: [shop('acme')] })))).toContain('user "admin" may not create namespace "team-a" without an organization');
    // Nobody else follows an LNamespace.
    expect(followsLNamespace({ ...ruleBase(), requester: alice, lnamespace: { name: 'team-a', organization: 'globex' } })).toBeUndefined();
  });

  it('finding 14: a namespace of a deleted Organization is never blocked for "no such Organization" (the namespace controller finalizing it)', async () => {
    const gone = orgDeps({ organizations: [organization('globex')] });
    const controller = { username: 'system:serviceaccount:kube-system:namespace-controller' };
    for (const subResource of ['status', 'finalize']) {
      expect((await validateNamespace(namespaceRequest({ operation: 'UPDATE', subResource, user: controller, labels: { [ORG]: 'acme' }, old: { labels: { [ORG]: 'acme' } } }), gone)).allowed).toBe(true);
    }
    expect(message(await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: alice, labels: { [ORG]: 'acme' }, old: { labels: { [ORG]: 'globex' } } }), gone))).toContain('no such Organization');
  });

  it('finding 18: the requester annotations are set by a trusted creator at CREATE, and changed by nobody but Furnish', async () => {
    const deps = orgDeps();
    for (const key of ['furnish.dev/requester', 'openshift.io/requester']) {
      const update = await validateNamespace(namespaceRequest({ operation: 'UPDATE', user: alice, labels: { [ORG]: 'acme' }, annotations: { ...CREATED, [key]: 'bob' }, old: { labels: { [ORG]: 'acme' } } }), deps);
      expect(message(update)).toBe(`user "alice" may not add, change or remove annotation ${key} on namespace "team-a": it names who the namespace was created for, set once by a trusted creator`);
      const create = await validateNamespace(namespaceRequest({ user: alice, labels: { [ORG]: 'acme' }, annotations: { 'furnish.dev/creator': 'alice', [key]: 'bob' } }), deps);
      expect(message(create)).toContain(`user "alice" may not set annotation ${key} on namespace "team-a": only a trusted creator names the user it creates a namespace for`);
    }
    const input = { ...ruleBase(), old: { name: 'team-a', labels: {}, annotations: { 'furnish.dev/requester': 'alice' } }, namespace: { name: 'team-a', labels: {}, annotations: { 'furnish.dev/requester': 'dora' } } };
    expect(requesterSetByTrustedCreator({ ...input, requester: RECONCILER })).toMatchObject({ allow: expect.stringContaining('is Furnish') });
    expect(requesterSetByTrustedCreator({ ...input, operation: 'CREATE', old: undefined, requester: RECONCILER })).toMatchObject({ allow: expect.stringContaining('trusted creator') });
    expect(requesterSetByTrustedCreator({ ...input, namespace: input.old })).toMatchObject({ allow: 'requester unchanged' });
  });
});

function ruleBase() {
  return {
    settings: { ...DEFAULT_ORGANIZATION_SETTINGS, enabled: true },
    systemNamespaces: [],
    furnishNamespace: 'furnish-system',
    furnishPrincipals: [RECONCILER.username],
    trustedCreators: [RECONCILER.username],
    operation: 'UPDATE' as const,
    requester: RECONCILER,
    creator: RECONCILER,
    namespace: { name: 'team-a', labels: { [ORG]: 'globex' }, annotations: {} },
    old: { name: 'team-a', labels: { [ORG]: 'acme' }, annotations: {} },
  };
}
