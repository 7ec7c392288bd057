import { describe, expect, it } from '@jest/globals';
import { allow, allowWithPatch, decodePatch, deny, mutateClone, toReview } from '../../../shared/admission/index.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

const request = { uid: 'c0ffee' };
const ns = (): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' } } });

describe('admission responses', () => {
  it('echo the uid and wrap into an admission.k8s.io/v1 AdmissionReview', () => {
    expect(toReview(allow(request))).toEqual({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'c0ffee', allowed: true } });
  });

  it('carry a base64 JSONPatch made by clone–mutate–diff, escaping "/" in keys', () => {
    const original = ns();
    const response = mutateClone(request, original, (draft) => {
      draft.metadata.annotations = { 'furnish.dev/creator': 'alice' };
      draft.metadata.labels!['furnish.dev/phase'] = 'pending';
    });
    expect(response.patchType).toBe('JSONPatch');
    expect(JSON.parse(Buffer.from(response.patch!, 'base64').toString())).toEqual(decodePatch(response));
    expect(decodePatch(response)).toEqual(
      expect.arrayContaining([
        { op: 'add', path: '/metadata/annotations', value: { 'furnish.dev/creator': 'alice' } },
        { op: 'add', path: '/metadata/labels/furnish.dev~1phase', value: 'pending' },
      ]),
    );
    expect(original.metadata.annotations).toBeUndefined();
  });

  it('carry no patch when nothing changed, and warnings when given', () => {
    const response = allowWithPatch(request, ns(), ns(), { warnings: ['heads up'] });
    expect(response).toEqual({ uid: 'c0ffee', allowed: true, warnings: ['heads up'] });
  });

  it('deny with a Failure status, code and message', () => {
    expect(deny(request, 'no', 403)).toEqual({ uid: 'c0ffee', allowed: false, status: { status: 'Failure', code: 403, reason: 'Forbidden', message: 'no' } });
    expect(deny(request, 'bad', 422).status?.reason).toBe('Invalid');
  });
});
