// `furnish admit`: what the function would answer, from a review file and a directory of objects.
import { describe, expect, it } from '@jest/globals';
import { decodePatch } from '../../../shared/admission/index.ts';
import { admitOffline, policySettings } from '../../../shared/webhooks/offline.ts';
import { defaultPolicySettings } from '../../../shared/config/types.ts';
import { admissionReview, SCENARIO_TEMPLATES } from '../../support/fixtures.ts';
import { grant } from '../../functions/fake-api-server.ts';

const bobPrivileged = () => {
  const review = admissionReview('004-validate-CREATE-namespaces-priv-b-bob');
  review.request.object!.metadata.annotations!['furnish.dev/creator'] = 'bob';
  return review;
};

describe('admitOffline', () => {
  it('refuses a template nested 2,000 levels with 422 and its path (no stack overflow)', async () => {
    const review = admissionReview('014-mutate-CREATE-namespacetemplates-default-admin');
    let deep: Record<string, unknown> = { leaf: 'x' };
    for (let i = 0; i < 2000; i++) deep = { a: deep };
    (review.request.object as unknown as { spec: { templates: unknown[] } }).spec.templates = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: deep }];
    const out = await admitOffline({ webhook: 'validate-template', review });
    expect(out.response).toMatchObject({ allowed: false, status: { code: 422, message: expect.stringMatching(/^spec\.templates\[0\]\.data(\.a)+: nested more than 100 levels deep/) } });
  });

  it('prints the AdmissionReview the mutating function would give', async () => {
    const out = await admitOffline({ webhook: 'mutate-namespace', review: admissionReview('001-mutate-CREATE-namespaces-team-a-alice') });
    expect(out).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: '2095e57a-0119-45fc-ba72-1f1f9ad2a9a9', allowed: true, patchType: 'JSONPatch' } });
    expect(decodePatch(out.response!)).toHaveLength(2);
  });

  it('answers permission checks from the RBAC objects and templates of --cluster', async () => {
    const objects = [...SCENARIO_TEMPLATES];
    const refused = await admitOffline({ webhook: 'validate-namespace', review: bobPrivileged(), cluster: { objects } });
    expect(refused.response!.status!.message).toBe('user "bob" may not use NamespaceTemplate "privileged": needs verb "use" on namespacetemplates.furnish.dev, resourceName "privileged"');
    const granted = await admitOffline({
      webhook: 'validate-namespace',
      review: bobPrivileged(),
      cluster: { objects: [...objects, ...grant('bob', 'use', 'furnish.dev', 'namespacetemplates', 'privileged')] },
    });
    expect(granted.response).toMatchObject({ allowed: true });
  });

  it('without --cluster, no templates and every check refused, saying why', async () => {
    const out = await admitOffline({ webhook: 'guard-initializing', review: admissionReview('021-guard-CREATE-configmaps-app-config-alice') });
    expect(out.response!.status!.message).toMatch(/^namespace "team-a" is still being furnished/);
  });

  it('takes policy settings, and refuses malformed reviews with clear errors', async () => {
    const ci = await admitOffline({
      webhook: 'mutate-namespace',
      review: admissionReview('016-mutate-CREATE-namespaces-from-ci-system_serviceaccount_team_a_ci_bot'),
      config: { autoOptOutPrincipals: ['system:serviceaccount:team-a:*'] },
    });
    expect(decodePatch(ci.response!)[0]).toMatchObject({ value: { 'furnish.dev/opt-out': 'true' } });
    await expect(admitOffline({ webhook: 'mutate-namespace', review: { kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1' } })).rejects.toThrow('AdmissionReview has no request');
  });

  it('keeps every default a partial configuration does not name, down to each guard list', () => {
    const settings = policySettings({ guard: { reconciler: ['furnish-dev'] }, systemNamespaces: undefined });
    expect(settings.guard.reconciler).toEqual(['furnish-dev']);
    expect(settings.guard.systemPrincipals).toEqual(defaultPolicySettings().guard.systemPrincipals);
    expect(settings.systemNamespaces).toEqual([]);
  });

  it('reads overrides with the functions\' reader: a wrong value is a ConfigError naming it', () => {
    expect(() => policySettings({ guard: { reconciler: 'alice' as unknown as string[] } })).toThrow('admitOffline config guard.reconciler: must be a list of strings');
    expect(policySettings({ furnishNamespace: 'furnish' }).guard.reconciler).toEqual(['system:serviceaccount:furnish:furnish-reconciler']);
  });
});
