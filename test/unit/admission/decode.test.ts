import { describe, expect, it } from '@jest/globals';
import { AdmissionError, decodeAdmissionReview, parseAdmissionReview } from '../../../shared/admission/index.ts';
import type { AdmissionErrorCode } from '../../../shared/admission/index.ts';
import { ADMISSION_FIXTURES, admissionReview } from '../../support/fixtures.ts';

function failure(run: () => unknown): { code: AdmissionErrorCode; status: number; message: string } {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(AdmissionError);
    const err = e as AdmissionError;
    return { code: err.code, status: err.status, message: err.message };
  }
  throw new Error('expected an AdmissionError');
}

describe('decoding an AdmissionReview', () => {
  it('accepts every review kube-apiserver 1.26 really sent', () => {
    for (const name of ADMISSION_FIXTURES) {
      const review = admissionReview(name);
      expect(parseAdmissionReview(JSON.stringify(review)).request.uid).toBe(review.request.uid);
    }
  });

  it('tells apart an empty body, not JSON, not an AdmissionReview, no request and no uid', () => {
    const review = admissionReview('001-mutate-CREATE-namespaces-team-a-alice');
    const { uid: _uid, ...withoutUid } = review.request;
    const cases: [unknown, AdmissionErrorCode, number, RegExp][] = [
      ['', 'empty-body', 400, /body is empty/],
      ['{"kind": "AdmissionRev', 'not-json', 400, /not JSON/],
      ['[1,2]', 'not-admission-review', 400, /expected a JSON object, got an array/],
      [JSON.stringify({ ...review, kind: 'Pod' }), 'not-admission-review', 400, /kind is "Pod"/],
      [JSON.stringify({ ...review, apiVersion: 'admission.k8s.io/v1beta1' }), 'not-admission-review', 400, /admissionReviewVersions: \[v1\]/],
      [JSON.stringify({ ...review, request: undefined }), 'no-request', 400, /has no request/],
      [JSON.stringify({ ...review, request: withoutUid }), 'no-uid', 400, /request\.uid must be a non-empty string, got nothing/],
      [JSON.stringify({ ...review, request: { ...review.request, uid: '' } }), 'no-uid', 400, /request\.uid/],
    ];
    for (const [body, code, status, message] of cases) {
      const f = failure(() => parseAdmissionReview(body as string));
      expect(f).toMatchObject({ code, status });
      expect(f.message).toMatch(message);
    }
  });

  it('names the field of the wrong type, with its path', () => {
    const review = admissionReview('003-mutate-CREATE-namespaces-priv-b-bob');
    const wrong = (mutate: (r: Record<string, unknown>) => void) => {
      const copy = structuredClone(review) as unknown as { request: Record<string, unknown> };
      mutate(copy.request);
      return failure(() => decodeAdmissionReview(copy));
    };
    expect(wrong((r) => (r.operation = 'PATCH')).message).toBe('request.operation must be one of CREATE, UPDATE, DELETE, CONNECT, got "PATCH"');
    expect(wrong((r) => (r.kind = 'Namespace')).message).toBe('request.kind must be an object with group, version and kind, got a string');
    expect(wrong((r) => (r.userInfo = { username: 7 })).message).toBe('request.userInfo.username must be a string, got a number');
    expect(wrong((r) => ((r.object as { metadata: { labels: unknown } }).metadata.labels = { a: 1 })).message).toBe(
      'request.object.metadata.labels["a"] must be a string, got a number',
    );
    expect(wrong((r) => (r.object = 'x')).message).toBe('request.object must be a Kubernetes object or null, got a string');
    expect(wrong((r) => (r.dryRun = 'yes')).code).toBe('invalid-request');
  });

  it('refuses a body over the limit with 413 before parsing it', () => {
    expect(failure(() => parseAdmissionReview('x'.repeat(101), 100))).toMatchObject({ code: 'too-large', status: 413 });
  });
});
