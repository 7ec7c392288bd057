import { describe, expect, it } from '@jest/globals';
import { decodePatch } from '../../../shared/admission/index.ts';
import type { AdmissionResponse } from '../../../shared/admission/index.ts';
import { mutateNamespace } from '../../../shared/webhooks/handlers/mutate-namespace.ts';
import {
  ensureNameLabel,
  markPending,
  optOutAutomatically,
  recordCreator,
  restoreCreator,
} from '../../../shared/webhooks/rules/mutate-namespace.ts';
import type { NamespaceMutationInput } from '../../../shared/webhooks/rules/mutate-namespace.ts';
import { admissionRequest, testDeps, testSettings } from '../../support/fixtures.ts';

/** The patch's operations in path order (fast-json-patch emits them in its own order). */
function patchOf(response: AdmissionResponse) {
  return decodePatch(response).sort((a, b) => a.path.localeCompare(b.path));
}

function input(overrides: Partial<NamespaceMutationInput> = {}): NamespaceMutationInput {
  return {
    operation: 'CREATE',
    user: { username: 'alice', groups: ['system:authenticated'] },
    namespace: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' }, annotations: {} },
    settings: testSettings(),
    ...overrides,
  };
}

describe('mutate-namespace rules', () => {
  it('record-creator: records the requester at CREATE, overriding a forged value', () => {
    expect(recordCreator(input())).toMatchObject({ annotations: { 'furnish.dev/creator': 'alice' }, reason: 'recorded creator "alice" and the identity admission saw' });
    const forged = input({ namespace: { name: 'x', labels: {}, annotations: { 'furnish.dev/creator': 'mallory' } } });
    expect(recordCreator(forged)).toMatchObject({ annotations: { 'furnish.dev/creator': 'alice' } });
    expect(recordCreator(input({ operation: 'UPDATE' }))).toEqual({ rule: 'record-creator', skip: 'only at CREATE' });
    expect(recordCreator(input({ user: {} }))).toMatchObject({ skip: 'the request names no user' });
  });

  it('mark-pending: pending at CREATE unless opted out (annotation, system namespace, CI principal)', () => {
    expect(markPending(input())).toMatchObject({ labels: { 'furnish.dev/phase': 'pending' } });
    expect(markPending(input({ namespace: { name: 'x', labels: {}, annotations: { 'furnish.dev/opt-out': 'true' } } }))).toMatchObject({
      skip: 'opted out: annotation furnish.dev/opt-out is "true"',
    });
    expect(markPending(input({ namespace: { name: 'kube-public', labels: {}, annotations: {} } }))).toMatchObject({ skip: expect.stringContaining('system namespace') });
    expect(markPending(input({ settings: testSettings({ systemNamespaces: ['team-a'] }) }))).toMatchObject({ skip: expect.stringContaining('system namespace') });
    expect(markPending(input({ user: { username: 'system:serviceaccount:team-a:ci-bot' } }))).toMatchObject({ skip: expect.stringContaining('auto-opt-out principal') });
    expect(markPending(input({ operation: 'UPDATE' }))).toMatchObject({ skip: 'only at CREATE' });
  });

  it('opt-out-automatically: namespaces created by configured principals (users, groups, wildcards)', () => {
    const ci = { username: 'system:serviceaccount:team-a:ci-bot', groups: ['system:serviceaccounts'] };
    expect(optOutAutomatically(input({ user: ci }))).toMatchObject({ annotations: { 'furnish.dev/opt-out': 'true' } });
    const byGroup = input({ user: { username: 'pipeline', groups: ['ci-runners'] }, settings: testSettings({ autoOptOutPrincipals: ['group:ci-*'] }) });
    expect(optOutAutomatically(byGroup)).toMatchObject({ reason: 'opted out: creator matches auto-opt-out principal "group:ci-*"' });
    expect(optOutAutomatically(input())).toMatchObject({ skip: 'creator is not an auto-opt-out principal' });
  });

  it('ensure-name-label: sets or corrects kubernetes.io/metadata.name, waits for generateName', () => {
    expect(ensureNameLabel(input({ namespace: { name: 'a', labels: {}, annotations: {} } }))).toMatchObject({ labels: { 'kubernetes.io/metadata.name': 'a' } });
    expect(ensureNameLabel(input({ operation: 'UPDATE', namespace: { name: 'a', labels: { 'kubernetes.io/metadata.name': 'b' }, annotations: {} } }))).toMatchObject({
      labels: { 'kubernetes.io/metadata.name': 'a' },
    });
    expect(ensureNameLabel(input())).toMatchObject({ skip: 'label already equals the name' });
    expect(ensureNameLabel(input({ namespace: { name: '', labels: {}, annotations: {} } }))).toMatchObject({ skip: 'the name is not generated yet' });
  });

  it('restore-creator: at UPDATE puts back a changed or removed creator', () => {
    const old = { name: 'team-a', labels: {}, annotations: { 'furnish.dev/creator': 'alice' } };
    const changed = input({ operation: 'UPDATE', old, namespace: { ...old, annotations: { 'furnish.dev/creator': 'mallory' } } });
    expect(restoreCreator(changed)).toMatchObject({ annotations: { 'furnish.dev/creator': 'alice' } });
    const removed = input({ operation: 'UPDATE', old, namespace: { ...old, annotations: {} } });
    expect(restoreCreator(removed)).toMatchObject({ annotations: { 'furnish.dev/creator': 'alice' } });
    const added = input({ operation: 'UPDATE', old: { ...old, annotations: {} }, namespace: old });
    expect(restoreCreator(added)).toMatchObject({ annotations: { 'furnish.dev/creator': null } });
    expect(restoreCreator(input({ operation: 'UPDATE', old, namespace: old }))).toMatchObject({ skip: 'creator unchanged' });
  });

  it('restore-creator: an identity recorded as JSON by an earlier version is re-spelled at the next UPDATE, as the same identity', () => {
    const legacy = '{"groups":["dev","system:authenticated"],"uid":"u1","username":"alice"}';
    const old = { name: 'team-a', labels: {}, annotations: { 'furnish.dev/creator': 'alice', 'furnish.dev/creator-identity': legacy } };
    const respelled = 'user=alice&uid=u1&group=dev&group=system%3Aauthenticated';
    expect(restoreCreator(input({ operation: 'UPDATE', old, namespace: old }))).toMatchObject({
      reason: 'restored furnish.dev/creator-identity (immutable), furnish.dev/creator-identity in the current form (the same identity)',
      annotations: { 'furnish.dev/creator-identity': respelled },
    });
    expect(restoreCreator(input({ operation: 'UPDATE', old, namespace: { ...old, annotations: { ...old.annotations, 'furnish.dev/creator-identity': respelled } } }))).toMatchObject({ skip: 'creator unchanged' });
    // JSON that is no identity is kept as it is (read as the creator's name alone, which grants no more).
    const odd = { ...old, annotations: { ...old.annotations, 'furnish.dev/creator-identity': '{"user":"alice"}' } };
    expect(restoreCreator(input({ operation: 'UPDATE', old: odd, namespace: odd }))).toMatchObject({ skip: 'creator unchanged' });
  });
});

describe('mutate-namespace handler on what kube-apiserver sent', () => {
  it('kubectl create ns team-a as alice: creator and phase=pending, nothing else', async () => {
    const response = await mutateNamespace(admissionRequest('001-mutate-CREATE-namespaces-team-a-alice'), testDeps());
    expect(response.uid).toBe('2095e57a-0119-45fc-ba72-1f1f9ad2a9a9');
    expect(patchOf(response)).toEqual([
      { op: 'add', path: '/metadata/annotations', value: { 'furnish.dev/creator': 'alice', 'furnish.dev/creator-identity': 'user=alice&group=system%3Aauthenticated' } },
      { op: 'add', path: '/metadata/labels/furnish.dev~1phase', value: 'pending' },
    ]);
  });

  it('keeps labels and annotations that are not ours (bob, priv-b)', async () => {
    const response = await mutateNamespace(admissionRequest('003-mutate-CREATE-namespaces-priv-b-bob'), testDeps());
    expect(patchOf(response)).toEqual([
      { op: 'add', path: '/metadata/annotations/furnish.dev~1creator', value: 'bob' },
      { op: 'add', path: '/metadata/annotations/furnish.dev~1creator-identity', value: 'user=bob&group=system%3Aauthenticated' },
      { op: 'add', path: '/metadata/labels/furnish.dev~1phase', value: 'pending' },
    ]);
  });

  it('kubectl annotate --overwrite furnish.dev/creator=mallory leaves the creator in place', async () => {
    const request = admissionRequest('009-mutate-UPDATE-namespaces-team-a-admin');
    request.oldObject!.metadata.annotations = { 'furnish.dev/creator': 'alice' };
    const response = await mutateNamespace(request, testDeps());
    expect(patchOf(response)).toEqual([{ op: 'replace', path: '/metadata/annotations/furnish.dev~1creator', value: 'alice' }]);
  });

  it('a CI service account creating a namespace opts it out instead of marking it pending', async () => {
    const response = await mutateNamespace(admissionRequest('016-mutate-CREATE-namespaces-from-ci-system_serviceaccount_team_a_ci_bot'), testDeps());
    expect(patchOf(response)).toEqual([
      { op: 'add', path: '/metadata/annotations', value: {
        'furnish.dev/creator': 'system:serviceaccount:team-a:ci-bot',
        'furnish.dev/creator-identity': 'user=system%3Aserviceaccount%3Ateam-a%3Aci-bot&group=system%3Aauthenticated&group=system%3Aserviceaccounts&group=system%3Aserviceaccounts%3Ateam-a',
        'furnish.dev/opt-out': 'true',
      } },
    ]);
  });

  it('answers a label change that needs nothing with no patch, and DELETE with a plain allow', async () => {
    expect(await mutateNamespace(admissionRequest('007-mutate-UPDATE-namespaces-team-a-alice'), testDeps())).toEqual({
      uid: admissionRequest('007-mutate-UPDATE-namespaces-team-a-alice').uid,
      allowed: true,
    });
    expect((await mutateNamespace(admissionRequest('018-mutate-DELETE-namespaces-priv-b-admin'), testDeps())).patch).toBeUndefined();
  });

  it('refuses to judge another resource (a misregistered rule) with a 400', async () => {
    const judge = async () => mutateNamespace(admissionRequest('014-mutate-CREATE-namespacetemplates-default-admin'), testDeps());
    await expect(judge()).rejects.toMatchObject({
      status: 400,
      message: 'webhook mutate-namespace judges namespaces, not namespacetemplates.furnish.dev (kind NamespaceTemplate): check its rules',
    });
  });
});
