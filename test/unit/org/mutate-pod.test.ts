import { describe, expect, it } from '@jest/globals';
import { decodePatch } from '../../../shared/admission/response.ts';
import type { AdmissionResponse } from '../../../shared/admission/types.ts';
import { mutatePod } from '../../../shared/webhooks/handlers/mutate-pod.ts';
import { isRunOnceWithoutDeadline, podDeadline } from '../../../shared/webhooks/rules/run-once-pod.ts';
import { namespaceObject, orgDeps, podReview } from '../../support/organizations.ts';

const ORG = { 'furnish.dev/organization': 'acme' };

describe('run-once Pods', () => {
  it('only Never and OnFailure Pods without a deadline need one', () => {
    expect(isRunOnceWithoutDeadline({ restartPolicy: 'Never' })).toBe(true);
    expect(isRunOnceWithoutDeadline({ restartPolicy: 'OnFailure' })).toBe(true);
    expect(isRunOnceWithoutDeadline({ restartPolicy: 'Always' })).toBe(false);
    expect(isRunOnceWithoutDeadline({})).toBe(false);
    expect(isRunOnceWithoutDeadline({ restartPolicy: 'Never', activeDeadlineSeconds: 10 })).toBe(false);
  });

  it('the default, a valid namespace override, and nothing outside organizations', () => {
    expect(podDeadline({ labels: ORG }, 3600)).toMatchObject({ set: 3600 });
    expect(podDeadline({ labels: ORG, annotations: { 'furnish.dev/pod-active-deadline-seconds': '600' } }, 3600)).toMatchObject({ set: 600 });
    expect(podDeadline({ labels: ORG, annotations: { 'furnish.dev/pod-active-deadline-seconds': '-5' } }, 3600)).toMatchObject({ set: 3600 });
    expect(podDeadline({ labels: {} }, 3600)).toEqual({ skip: 'namespace belongs to no organization' });
  });

  const deps = () => orgDeps({ namespaces: [namespaceObject('team-a', ORG, { 'furnish.dev/pod-active-deadline-seconds': '900' }), namespaceObject('loose')] });

  it('patches spec.activeDeadlineSeconds of a run-once Pod from the namespace annotation', async () => {
    const r = await mutatePod(podReview('team-a', { restartPolicy: 'Never' }).request, deps());
    expect(decodePatch(r)).toEqual([{ op: 'add', path: '/spec/activeDeadlineSeconds', value: 900 }]);
  });

  it('answers without a look-up (synchronously) for Pods that restart forever or set a deadline', () => {
    const d = deps();
    d.organizations.namespace = () => Promise.reject(new Error('must not be called'));
    for (const spec of [{ restartPolicy: 'Always' }, { restartPolicy: 'Never', activeDeadlineSeconds: 5 }]) {
      const r = mutatePod(podReview('team-a', spec).request, d) as AdmissionResponse;
      expect(r.allowed).toBe(true);
      expect(r.patch).toBeUndefined();
    }
  });

  it('leaves Pods outside organization namespaces alone, and admits with a warning when the namespace cannot be read', async () => {
    expect((await mutatePod(podReview('loose', { restartPolicy: 'Never' }).request, deps())).patch).toBeUndefined();
    const d = deps();
    d.organizations.namespace = () => Promise.reject(new Error('timeout'));
    const r = await mutatePod(podReview('other', { restartPolicy: 'OnFailure' }).request, d);
    expect(r).toMatchObject({ allowed: true, warnings: ['no default activeDeadlineSeconds: could not read namespace "other" (timeout)'] });
  });
});
