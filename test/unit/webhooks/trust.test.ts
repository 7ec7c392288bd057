// Admission that cannot be stepped around (issue 9): exemptions by name, never by the submitted
// labels; the creator is the requester unless a trusted creator names someone; the identity
// admission saw is recorded and immutable; status and finalize writes are judged; deep objects are
// refused with a path.
import { describe, expect, it } from '@jest/globals';
import { decodePatch } from '../../../shared/admission/index.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../../shared/admission/index.ts';
import { canonicalIdentity, creatorIdentityOf, parseIdentity, templateUseCheck } from '../../../shared/auth/creator.ts';
import { HANDLERS } from '../../../shared/webhooks/handlers/index.ts';
import { admissionRequest, fakeAuthorizer, testDeps } from '../../support/fixtures.ts';

const mutate = (r: AdmissionRequest, settings = {}) => HANDLERS['mutate-namespace'](r, testDeps({ settings })) as AdmissionResponse;
const annotationsAfter = (r: AdmissionRequest, response: AdmissionResponse) => {
  const ops = decodePatch(response) as { op: string; path: string; value?: unknown }[];
  const out: Record<string, string> = { ...r.object!.metadata.annotations };
  for (const op of ops) {
    if (op.path === '/metadata/annotations') Object.assign(out, op.value);
    else if (op.path.startsWith('/metadata/annotations/')) out[op.path.slice('/metadata/annotations/'.length).replace('~1', '/')] = op.value as string;
  }
  return out;
};

/** alice's `kubectl create namespace` as kube-apiserver sent it, edited. */
function aliceCreates(edit: (r: AdmissionRequest) => void = () => {}): AdmissionRequest {
  const r = admissionRequest('001-mutate-CREATE-namespaces-team-a-alice');
  edit(r);
  return r;
}

describe('exemptions are decided by name, never by the submitted labels', () => {
  it('a generateName namespace (no name, no name label yet) gets the creator and phase=pending', () => {
    const r = aliceCreates((r) => {
      r.name = '';
      Object.assign(r.object!, { metadata: { generateName: 'team-', labels: {} } });
    });
    const ops = decodePatch(mutate(r));
    expect(ops).toContainEqual({ op: 'add', path: '/metadata/annotations', value: expect.objectContaining({ 'furnish.dev/creator': 'alice' }) });
    expect(ops).toContainEqual({ op: 'add', path: '/metadata/labels/furnish.dev~1phase', value: 'pending' });
  });

  it('a pre-set kubernetes.io/metadata.name=kube-system label exempts nothing: the label is corrected and the namespace pending', () => {
    const r = aliceCreates((r) => (r.object!.metadata.labels = { 'kubernetes.io/metadata.name': 'kube-system' }));
    const ops = decodePatch(mutate(r));
    expect(ops).toContainEqual({ op: 'replace', path: '/metadata/labels/kubernetes.io~1metadata.name', value: 'team-a' });
    expect(ops).toContainEqual({ op: 'add', path: '/metadata/labels/furnish.dev~1phase', value: 'pending' });
  });

  it('validate-namespace refuses a name label that differs from the name (the generateName case, after the name is set)', async () => {
    const r = admissionRequest('002-validate-CREATE-namespaces-team-a-alice');
    r.object!.metadata.labels = { ...r.object!.metadata.labels, 'kubernetes.io/metadata.name': 'furnish-system' };
    const response = await HANDLERS['validate-namespace'](r, testDeps());
    expect(response).toMatchObject({ allowed: false, status: { message: expect.stringContaining('it must equal the name') } });
  });

  it('Furnish\'s own namespace and kube-system are exempt by their name: no pending phase', () => {
    for (const name of ['furnish-system', 'kube-system']) {
      const r = aliceCreates((r) => {
        r.name = name;
        r.object!.metadata = { name, labels: { 'kubernetes.io/metadata.name': name } };
      });
      expect(decodePatch(mutate(r)).some((op) => op.path.includes('phase'))).toBe(false);
    }
  });
});

describe('the creator is the requester, unless a trusted creator names one', () => {
  const forApp = (r: AdmissionRequest, key = 'furnish.dev/requester') => (r.object!.metadata.annotations = { [key]: 'dora' });

  it('an untrusted requester naming someone in furnish.dev/requester is still the creator', () => {
    const r = aliceCreates(forApp);
    expect(annotationsAfter(r, mutate(r))['furnish.dev/creator']).toBe('alice');
  });

  it('a trusted creator (by group or name) may name the creator, through either annotation; the identity recorded is that user\'s', () => {
    for (const [pattern, key] of [['group:system:authenticated', 'furnish.dev/requester'], ['alice', 'openshift.io/requester']] as const) {
      const r = aliceCreates((r) => forApp(r, key));
      const after = annotationsAfter(r, mutate(r, { trustedCreators: [pattern] }));
      expect(after['furnish.dev/creator']).toBe('dora');
      expect(after['furnish.dev/creator-identity']).toBe('user=dora');
    }
  });

  it('validate-namespace refuses a creator other than the requester, except for a trusted creator', async () => {
    const r = admissionRequest('002-validate-CREATE-namespaces-team-a-alice');
    r.object!.metadata.annotations = { 'furnish.dev/creator': 'dora', 'furnish.dev/requester': 'dora' };
    expect(await HANDLERS['validate-namespace'](r, testDeps())).toMatchObject({ allowed: false, status: { message: expect.stringContaining('only a trusted creator may name another user') } });
    expect(await HANDLERS['validate-namespace'](r, testDeps({ settings: { trustedCreators: ['alice'] } }))).toMatchObject({ allowed: true });
  });

  it('records the whole identity admission saw at CREATE and refuses a forged one', async () => {
    const r = aliceCreates((r) => (r.userInfo = { username: 'alice', uid: 'alice-uid', groups: ['platform', 'dev'], extra: { scopes: ['b', 'a'] } }));
    const identity = annotationsAfter(r, mutate(r))['furnish.dev/creator-identity'];
    expect(identity).toBe('user=alice&uid=alice-uid&group=dev&group=platform&extra.scopes=a&extra.scopes=b');
    const v = admissionRequest('002-validate-CREATE-namespaces-team-a-alice');
    v.object!.metadata.annotations = { 'furnish.dev/creator': 'alice', 'furnish.dev/creator-identity': canonicalIdentity({ username: 'alice', groups: ['system:masters'] }) };
    expect(await HANDLERS['validate-namespace'](v, testDeps())).toMatchObject({ allowed: false, status: { message: expect.stringContaining('furnish.dev/creator-identity') } });
    // The JSON earlier versions recorded is still read, so it must not be a way in at CREATE either.
    v.object!.metadata.annotations['furnish.dev/creator-identity'] = '{"groups":["system:masters"],"username":"alice"}';
    expect(await HANDLERS['validate-namespace'](v, testDeps())).toMatchObject({ allowed: false, status: { message: expect.stringContaining('furnish.dev/creator-identity') } });
  });

  it('the identity is immutable: restored by mutate-namespace, refused by validate-namespace', async () => {
    const r = admissionRequest('009-mutate-UPDATE-namespaces-team-a-admin');
    r.oldObject!.metadata.annotations = { 'furnish.dev/creator': 'alice', 'furnish.dev/creator-identity': '{"username":"alice"}' };
    r.object!.metadata.annotations = { 'furnish.dev/creator': 'alice', 'furnish.dev/creator-identity': '{"groups":["system:masters"],"username":"alice"}' };
    // Put back as the identity recorded, in the current spelling (an earlier version's JSON is re-spelled, never widened).
    expect(decodePatch(mutate(r))).toEqual([{ op: 'replace', path: '/metadata/annotations/furnish.dev~1creator-identity', value: 'user=alice' }]);
    const v = structuredClone(r);
    v.kind.kind = 'Namespace';
    expect(await HANDLERS['validate-namespace'](v, testDeps())).toMatchObject({ allowed: false, status: { message: expect.stringContaining('may not change annotation furnish.dev/creator-identity') } });
  });
});

describe('one permission rule with one identity (admission and the reconciler)', () => {
  it('the reconciler reads back exactly the identity admission checked', () => {
    const seen = { username: 'alice', uid: 'u1', groups: ['platform'], extra: { k: ['v'] } };
    const annotations = { 'furnish.dev/creator': 'alice', 'furnish.dev/creator-identity': canonicalIdentity(seen) };
    expect(creatorIdentityOf(annotations)).toEqual(seen);
    expect(templateUseCheck(creatorIdentityOf(annotations)!, 'privileged')).toEqual({ user: seen, verb: 'use', group: 'furnish.dev', resource: 'namespacetemplates', name: 'privileged' });
    // An identity that does not name the recorded creator is not trusted: the name alone is checked.
    expect(creatorIdentityOf({ 'furnish.dev/creator': 'bob', 'furnish.dev/creator-identity': canonicalIdentity(seen) })).toEqual({ username: 'bob' });
    expect(parseIdentity('not an identity')).toBeUndefined();
    expect(creatorIdentityOf({})).toBeUndefined();
  });

  it('admission asks `use` with the requester\'s groups, so a grant through a group admits', async () => {
    const v = admissionRequest('004-validate-CREATE-namespaces-priv-b-bob');
    v.object!.metadata.annotations = { 'furnish.dev/creator': 'bob' };
    v.userInfo = { username: 'bob', groups: ['platform'] };
    const authorizer = fakeAuthorizer();
    await HANDLERS['validate-namespace'](v, { ...testDeps(), authorizer });
    expect(authorizer.calls.find((c) => c.verb === 'use')).toEqual(templateUseCheck({ username: 'bob', groups: ['platform'] }, 'privileged'));
  });
});

describe('namespaces/status and namespaces/finalize are judged like the namespace', () => {
  for (const subResource of ['status', 'finalize']) {
    it(`${subResource}: a changed creator is restored and refused; the phase needs initialize`, async () => {
      const r = admissionRequest('009-mutate-UPDATE-namespaces-team-a-admin');
      r.subResource = subResource;
      r.oldObject!.metadata.annotations = { 'furnish.dev/creator': 'alice' };
      r.object!.metadata.annotations = { 'furnish.dev/creator': 'mallory' };
      expect(decodePatch(mutate(r))).toEqual([{ op: 'replace', path: '/metadata/annotations/furnish.dev~1creator', value: 'alice' }]);
      const v = structuredClone(r);
      v.userInfo = { username: 'mallory' };
      v.object!.metadata.labels = { ...v.oldObject!.metadata.labels, 'furnish.dev/phase': 'ready' };
      v.oldObject!.metadata.labels = { ...v.oldObject!.metadata.labels, 'furnish.dev/phase': 'pending' };
      const response = await HANDLERS['validate-namespace'](v, testDeps());
      expect(response.allowed).toBe(false);
      expect(response.status!.message).toContain('may not change annotation furnish.dev/creator');
      expect(response.status!.message).toContain('only Furnish sets the phase');
    });
  }
});

describe('deep nesting is refused with 422 and a path, never a stack overflow', () => {
  function nested(levels: number): Record<string, unknown> {
    let v: Record<string, unknown> = { leaf: 'x' };
    for (let i = 0; i < levels; i++) v = { a: v };
    return v;
  }
  it('a template nested 2,000 levels', async () => {
    const r = admissionRequest('014-mutate-CREATE-namespacetemplates-default-admin');
    (r.object as unknown as { spec: { templates: unknown[] } }).spec.templates = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deep' }, data: nested(2000) }];
    const response = await HANDLERS['validate-template'](r, testDeps());
    expect(response).toMatchObject({ allowed: false, status: { code: 422, message: expect.stringMatching(/^spec\.templates\[0\]\.data(\.a)+: nested more than 100 levels deep/) } });
  });
  it('every webhook, on object and oldObject', async () => {
    for (const [webhook, fixture] of [['mutate-namespace', '009-mutate-UPDATE-namespaces-team-a-admin'], ['guard-initializing', '023-guard-UPDATE-configmaps-ssa-config-alice']] as const) {
      const r = admissionRequest(fixture);
      (r.oldObject as Record<string, unknown>).deep = nested(5000);
      expect(await HANDLERS[webhook](r, testDeps())).toMatchObject({ allowed: false, status: { code: 422, message: expect.stringMatching(/^oldObject\.deep\.a/) } });
    }
  });
});
