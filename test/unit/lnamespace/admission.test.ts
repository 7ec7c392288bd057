// mutate-lnamespace: its rules on their own, and the handler on AdmissionRequests shaped as
// kube-apiserver sends them for a custom resource.
import { describe, expect, it } from '@jest/globals';
import { decodePatch } from '../../../shared/admission/response.ts';
import type { AdmissionRequest } from '../../../shared/admission/types.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { adoptionNeeded, creatorAnnotation, objectProblems, RESERVED_NAMES } from '../../../shared/lnamespace/admission.ts';
import { mutateLNamespace } from '../../../shared/webhooks/handlers/mutate-lnamespace.ts';
import type { NamespaceSource } from '../../../shared/webhooks/deps.ts';
import { memoryOrganizations } from '../../../shared/org/source.ts';
import type { Organization } from '../../../shared/org/types.ts';
import { fakeAuthorizer, testDeps, type Grant } from '../../support/fixtures.ts';

const lns = (name: string, spec: unknown = {}, annotations?: Record<string, string>): KubeObject => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name, ...(annotations ? { annotations } : {}) }, spec });

function request(operation: 'CREATE' | 'UPDATE', object: KubeObject, old?: KubeObject, username = 'alice'): AdmissionRequest {
  return {
    uid: 'u-1', operation, name: object.metadata.name,
    kind: { group: 'furnish.dev', version: 'v1alpha1', kind: 'LNamespace' },
    resource: { group: 'furnish.dev', version: 'v1alpha1', resource: 'lnamespaces' },
    userInfo: { username, groups: ['system:authenticated'] },
    object, ...(old ? { oldObject: old } : {}),
  } as AdmissionRequest;
}

const existing = (...names: string[]): NamespaceSource => ({ exists: async (n) => names.includes(n), state: async () => ({}) });
const deps = (opts: { grants?: Grant[]; namespaces?: NamespaceSource | null } = {}) => {
  const d = testDeps({ grants: opts.grants });
  return opts.namespaces === null ? d : { ...d, namespaces: opts.namespaces ?? existing('default', 'taken') };
};

describe('rules', () => {
  it('the creator is recorded at CREATE and restored when an UPDATE changes or removes it', () => {
    expect(creatorAnnotation('CREATE', { username: 'alice' }, lns('shop', {}, { 'furnish.dev/creator': 'mallory' }), undefined)).toEqual({ 'furnish.dev/creator': 'alice' });
    expect(creatorAnnotation('CREATE', { username: 'alice' }, lns('shop', {}, { 'furnish.dev/creator': 'alice' }), undefined)).toBeUndefined();
    const old = lns('shop', {}, { 'furnish.dev/creator': 'alice' });
    expect(creatorAnnotation('UPDATE', { username: 'bob' }, lns('shop', {}, { 'furnish.dev/creator': 'bob' }), old)).toEqual({ 'furnish.dev/creator': 'alice' });
    expect(creatorAnnotation('UPDATE', { username: 'bob' }, lns('shop'), old)).toEqual({ 'furnish.dev/creator': 'alice' });
    expect(creatorAnnotation('UPDATE', { username: 'bob' }, old, old)).toBeUndefined();
  });

  it('every malformed subject, name and billing field is named with its path', () => {
    const problems = objectProblems(lns('Shop_1', {
      users: [{ kind: 'Robot', name: 'r2' }, { kind: 'User' }],
      managers: 'alice',
      sudoers: [{ kind: 'ServiceAccount', name: 'ci' }, { kind: 'User', name: 'carol', namespace: 'x' }, { kind: 'ServiceAccount', name: 'Bad_Name', namespace: 'tools' }],
      billing: { 'cost center': '1', ok: 2 },
    }), RESERVED_NAMES);
    expect(problems.map((p) => p.path)).toEqual(['metadata.name', 'spec.users[0].kind', 'spec.users[1].name', 'spec.managers', 'spec.sudoers[0].namespace', 'spec.sudoers[1].namespace', 'spec.sudoers[2].name', 'spec.billing.cost center', 'spec.billing.ok']);
    expect(problems[3]!.message).toBe('must be a list of subjects');
  });

  it('reserved names are refused, wildcards included', () => {
    for (const name of ['kube-system', 'kube-anything', 'default', 'furnish-system', 'openshift-x']) {
      expect(objectProblems(lns(name), RESERVED_NAMES)).toEqual([expect.objectContaining({ path: 'metadata.name', message: expect.stringContaining('is reserved') })]);
    }
    expect(objectProblems(lns('shop', { users: [{ kind: 'ServiceAccount', name: 'ci', namespace: 'tools' }] }), RESERVED_NAMES)).toEqual([]);
  });

  it('adopting: an existing namespace at CREATE, or the adopt annotation changed at UPDATE', () => {
    expect(adoptionNeeded('CREATE', lns('shop'), undefined, false)).toBeUndefined();
    expect(adoptionNeeded('CREATE', lns('taken'), undefined, true)).toMatch(/set annotation furnish.dev\/adopt-namespace: "true"/);
    expect(adoptionNeeded('UPDATE', lns('shop', {}, { 'furnish.dev/adopt-namespace': 'true' }), lns('shop'), false)).toMatch(/was changed/);
    expect(adoptionNeeded('UPDATE', lns('shop', {}, { 'furnish.dev/adopt-namespace': 'true' }), lns('shop', {}, { 'furnish.dev/adopt-namespace': 'true' }), false)).toBeUndefined();
  });
});

describe('the handler', () => {
  it('CREATE: allowed with the creator recorded (a patch under /metadata)', async () => {
    const res = await mutateLNamespace(request('CREATE', lns('shop', { users: [{ kind: 'User', name: 'bob' }] })), deps());
    expect(res.allowed).toBe(true);
    expect(decodePatch(res)).toEqual([{ op: 'add', path: '/metadata/annotations', value: { 'furnish.dev/creator': 'alice' } }]);
  });

  it('UPDATE: a changed creator is put back', async () => {
    const old = lns('shop', {}, { 'furnish.dev/creator': 'alice' });
    const res = await mutateLNamespace(request('UPDATE', lns('shop', {}, { 'furnish.dev/creator': 'bob' }), old, 'bob'), deps());
    expect(decodePatch(res)).toEqual([{ op: 'replace', path: '/metadata/annotations/furnish.dev~1creator', value: 'alice' }]);
  });

  it('malformed: one 422 listing every problem', async () => {
    const res = await mutateLNamespace(request('CREATE', lns('shop', { sudoers: [{ kind: 'ServiceAccount', name: 'ci' }] })), deps());
    expect(res.status).toMatchObject({ code: 422, message: 'LNamespace "shop" is invalid: spec.sudoers[0].namespace: is required for a ServiceAccount' });
  });

  it('an existing namespace: refused unless annotated and asked by a holder of verb adopt', async () => {
    const plain = await mutateLNamespace(request('CREATE', lns('taken')), deps());
    expect(plain.status).toMatchObject({ code: 403, message: 'user "alice" may not take over namespace "taken": namespace "taken" already exists; to put an LNamespace around it, set annotation furnish.dev/adopt-namespace: "true", which needs verb "adopt" on lnamespaces.furnish.dev, resourceName "taken"' });
    const annotated = lns('taken', {}, { 'furnish.dev/adopt-namespace': 'true' });
    expect((await mutateLNamespace(request('CREATE', annotated), deps())).allowed).toBe(false);
    expect((await mutateLNamespace(request('CREATE', annotated, undefined, 'admin'), deps({ grants: [{ user: 'admin', verb: 'adopt', resource: 'lnamespaces' }] }))).allowed).toBe(true);
  });

  it('fails closed when it cannot tell whether the namespace exists or whether the requester may adopt', async () => {
    expect((await mutateLNamespace(request('CREATE', lns('shop')), deps({ namespaces: null }))).status).toMatchObject({ code: 503 });
    expect((await mutateLNamespace(request('CREATE', lns('shop')), deps({ namespaces: { exists: async () => Promise.reject(new Error('timeout')), state: async () => ({}) } }))).status).toMatchObject({ code: 503, message: expect.stringContaining('timeout; retry') });
    const d = { ...deps(), authorizer: fakeAuthorizer([], 'SAR down') };
    expect((await mutateLNamespace(request('CREATE', lns('taken', {}, { 'furnish.dev/adopt-namespace': 'true' })), d)).status).toMatchObject({ code: 503 });
  });

  it('status updates and deletes pass untouched; a request for another resource is a 400', async () => {
    expect((await mutateLNamespace({ ...request('UPDATE', lns('shop'), lns('shop')), subResource: 'status' }, deps())).allowed).toBe(true);
    expect((await mutateLNamespace({ ...request('CREATE', lns('shop')), operation: 'DELETE' }, deps())).allowed).toBe(true);
    await expect(Promise.resolve().then(() => mutateLNamespace({ ...request('CREATE', lns('shop')), resource: { group: '', version: 'v1', resource: 'namespaces' } }, deps()))).rejects.toThrow('webhook mutate-lnamespace judges lnamespaces.furnish.dev, not namespaces');
  });
});

describe('the Organization rules judge the namespace an LNamespace will create, at kubectl apply time', () => {
  const org = (name: string, members: unknown[], namespaces = 0, quota = 2) => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'Organization', metadata: { name }, spec: { members, namespaceQuota: quota }, status: { namespaces } }) as Organization;
  const withOrgs = (organizations: Organization[], enabled = true) => ({
    ...testDeps({ settings: { organizations: { enabled } } }),
    namespaces: existing('default'),
    organizations: memoryOrganizations(organizations),
  });
  const labelled = (name: string, organization: string) => ({ ...lns(name), metadata: { name, labels: { 'furnish.dev/organization': organization } } });

  it('admits a member, in her default organization or one she names', async () => {
    const deps = withOrgs([org('acme', [{ kind: 'User', name: 'alice', default: true }])]);
    expect((await mutateLNamespace(request('CREATE', lns('shop')), deps)).allowed).toBe(true);
    expect((await mutateLNamespace(request('CREATE', labelled('shop', 'acme')), deps)).allowed).toBe(true);
  });

  it('refuses a non-member, and a creator with no organization at all', async () => {
    const deps = withOrgs([org('acme', [{ kind: 'User', name: 'alice', default: true }])]);
    const bob = await mutateLNamespace(request('CREATE', labelled('shop', 'acme'), undefined, 'bob'), deps);
    expect(bob.allowed).toBe(false);
    expect(bob.status).toMatchObject({ code: 403, message: expect.stringMatching(/^the namespace of LNamespace "shop": user "bob" may not create namespace "shop" into organization "acme": not a member/) });
    const nobody = await mutateLNamespace(request('CREATE', lns('shop'), undefined, 'mallory'), deps);
    expect(nobody.status?.message).toMatch(/without an organization: you have no default organization/);
  });

  it('refuses when the organization is full, and otherwise takes a real slot the namespace create then finds held', async () => {
    const deps = withOrgs([org('acme', [{ kind: 'User', name: 'alice', default: true }], 2, 2)]);
    const full = await mutateLNamespace(request('CREATE', lns('shop')), deps);
    expect(full.status).toMatchObject({ code: 403, message: 'the namespace of LNamespace "shop": organization "acme" has 2 of 2 namespaces' });
    const roomy = withOrgs([org('acme', [{ kind: 'User', name: 'alice', default: true }], 1, 2)]);
    expect((await mutateLNamespace(request('CREATE', lns('shop')), roomy)).allowed).toBe(true);
    expect((await roomy.organizations.get('acme'))?.status?.reservations).toEqual([{ uid: 'u-1', namespace: 'shop', expires: expect.any(String) }]);
  });

  it('says nothing when organizations are off, nor on an UPDATE that changes neither organization nor billing', async () => {
    expect((await mutateLNamespace(request('CREATE', lns('shop'), undefined, 'mallory'), withOrgs([], false))).allowed).toBe(true);
    const old = lns('shop', {}, { 'furnish.dev/creator': 'mallory' });
    expect((await mutateLNamespace(request('UPDATE', lns('shop', {}, { 'furnish.dev/creator': 'mallory' }), old, 'mallory'), withOrgs([]))).allowed).toBe(true);
  });
});
