import { describe, expect, it } from '@jest/globals';
import { deletionRefusal, validateOrganization } from '../../../shared/org/validate.ts';
import { validateOrganizationHandler } from '../../../shared/webhooks/handlers/validate-organization.ts';
import { namespaceObject, organization, organizationReview, orgDeps, scenario } from '../../support/organizations.ts';
import type { AdmissionRequest } from '../../../shared/admission/types.ts';
import type { Organization } from '../../../shared/org/types.ts';

describe('validateOrganization', () => {
  it('accepts the scenario organizations', () => {
    for (const o of scenario().organizations) expect(validateOrganization(o)).toEqual([]);
  });

  it('names every problem with its path', () => {
    const bad = {
      apiVersion: 'furnish.dev/v1alpha1',
      kind: 'Organization',
      metadata: { name: 'Acme_Corp' },
      spec: {
        members: [
          { kind: 'Robot', name: 'r2' },
          { kind: 'User', name: '' },
          { kind: 'ServiceAccount', name: 'deployer' },
          { kind: 'Group', name: 'devs', namespace: 'x', default: true },
          { kind: 'User', name: 'alice', default: 'yes' },
          { kind: 'User', name: 'carol' },
          { kind: 'User', name: 'carol' },
        ],
        namespaceQuota: -1,
        billing: { costCenter: 4711 },
        extra: true,
      },
    };
    expect(validateOrganization(bad).map((p) => p.path)).toEqual([
      'metadata.name',
      'spec.extra',
      'spec.members[0].kind',
      'spec.members[1].name',
      'spec.members[2].namespace',
      'spec.members[3].namespace',
      'spec.members[3].default',
      'spec.members[4].default',
      'spec.members[6]',
      'spec.namespaceQuota',
      'spec.billing.costCenter',
    ]);
    expect(validateOrganization({ ...bad, spec: { namespaceQuota: 2.5 } })).toContainEqual({ path: 'spec.namespaceQuota', message: 'must be a non-negative integer, found 2.5' });
    expect(validateOrganization({ ...bad, spec: { namespaceQuota: 0 } }).map((p) => p.path)).toEqual(['metadata.name']);
  });

  it('refuses a second default organization for a user, naming the first', () => {
    const second = organization('initech', [{ kind: 'User', name: 'alice', default: true }]);
    expect(validateOrganization(second, scenario().organizations)).toEqual([
      {
        path: 'spec.members[0].default',
        message: 'user "alice" is already default in organization "acme": a user has at most one default organization (set default: false here, or remove it there)',
      },
    ]);
    // Updating acme itself is not a conflict with acme.
    expect(validateOrganization(scenario().organizations[0], scenario().organizations)).toEqual([]);
  });
});

describe('validate-organization webhook', () => {
  it('answers 422 with every problem, and reads the other organizations fresh only for defaults', async () => {
    const deps = orgDeps();
    let listed = 0;
    const list = deps.organizations.list.bind(deps.organizations);
    deps.organizations.list = () => ((listed += 1), list());
    const plain = await validateOrganizationHandler(organizationReview(organization('initech', [{ kind: 'User', name: 'carol' }])).request, deps);
    expect(plain.allowed).toBe(true);
    expect(listed).toBe(0);
    const second = await validateOrganizationHandler(organizationReview(organization('initech', [{ kind: 'User', name: 'bob', default: true }])).request, deps);
    expect(listed).toBe(1);
    expect(second.status).toMatchObject({ code: 422, message: 'Organization "initech" is invalid (1 problem): spec.members[0].default: user "bob" is already default in organization "globex": a user has at most one default organization (set default: false here, or remove it there)' });
  });

  it('with the rules off it keeps the Organization and says at once that it enforces nothing (a warning kubectl prints)', async () => {
    const review = organizationReview(organization('initech', [{ kind: 'User', name: 'carol' }])).request;
    const off = await validateOrganizationHandler(review, orgDeps({ settings: { enabled: false } }));
    expect(off).toMatchObject({ allowed: true, warnings: ['the organization rules are off in this cluster (FURNISH_ORGANIZATIONS, clusters[].organizations.enabled): Organization "initech" is kept, and enforces nothing until they are on'] });
    expect((await validateOrganizationHandler(review, orgDeps())).warnings).toBeUndefined();
  });

  it('fails closed with 503 when the others cannot be read', async () => {
    const deps = orgDeps();
    deps.organizations.list = () => Promise.reject(new Error('connection refused'));
    const r = await validateOrganizationHandler(organizationReview(organization('initech', [{ kind: 'User', name: 'dave', default: true }])).request, deps);
    expect(r.status).toMatchObject({ code: 503, message: 'could not read the other Organizations (connection refused); retry' });
  });
});

describe('finding 14: an Organization with namespaces is not deleted', () => {
  const deletion = (org: Organization): AdmissionRequest => {
    const r = organizationReview(org).request;
    return { ...r, operation: 'DELETE', object: undefined, oldObject: org } as AdmissionRequest;
  };
  const ORG = 'furnish.dev/organization';

  it('refuses while it has live namespaces, naming how many and how to move them; terminating ones do not count', async () => {
    const terminating = { ...namespaceObject('old', { [ORG]: 'acme' }), metadata: { ...namespaceObject('old', { [ORG]: 'acme' }).metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
    const deps = orgDeps({ namespaces: [namespaceObject('team-b', { [ORG]: 'acme' }), namespaceObject('team-a', { [ORG]: 'acme' }), terminating, namespaceObject('g', { [ORG]: 'globex' })] });
    const r = await validateOrganizationHandler(deletion(scenario().organizations[0]!), deps);
    expect(r.status).toMatchObject({ code: 403, message: 'Organization "acme" may not be deleted: it still has 2 namespaces (team-a, team-b); move each to another organization (kubectl label namespace <name> furnish.dev/organization=<other> --overwrite, or relabel its LNamespace) or delete it, then delete the Organization' });
    expect((await validateOrganizationHandler(deletion(organization('empty')), deps)).allowed).toBe(true);
    expect((await validateOrganizationHandler(deletion(organization('old-only', [])), orgDeps({ namespaces: [terminating] }))).allowed).toBe(true);
  });

  it('refuses while a namespace create holds a slot; fails closed when the namespaces cannot be read', async () => {
    const busy = organization('acme', [], { status: { namespaces: 0, reservations: [{ uid: 'u', namespace: 'x', expires: new Date(Date.now() + 30_000).toISOString() }] } });
    expect((await validateOrganizationHandler(deletion(busy), orgDeps({ namespaces: [] }))).status?.message).toContain('may not be deleted: 1 namespace create is in flight');
    const deps = orgDeps();
    deps.organizations.namespacesOf = () => Promise.reject(new Error('connection refused'));
    expect((await validateOrganizationHandler(deletion(organization('acme')), deps)).status).toMatchObject({ code: 503, message: 'could not read the namespaces of organization "acme" (connection refused); retry' });
  });

  it('pure: lists at most five names', () => {
    expect(deletionRefusal('acme', ['a', 'b', 'c', 'd', 'e', 'f', 'g'], 0)).toContain('it still has 7 namespaces (a, b, c, d, e, and 2 more)');
    expect(deletionRefusal('acme', [], 0)).toBeUndefined();
  });
});
