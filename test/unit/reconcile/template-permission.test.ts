// The reconciler checks `use` with the identity admission recorded (issue 9, item 5): a grant
// through a group admitted by admission is applied, and a template refused for permission is a
// reported failure (an Event, the template's status), never a silent skip.
import { describe, expect, it } from '@jest/globals';
import { canonicalIdentity, CREATOR_IDENTITY } from '../../../shared/auth/creator.ts';
import { KEY } from '../../../shared/keys.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../../shared/reconcile/namespace.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { fakeAuthorizer } from '../../support/fixtures.ts';
import { memoryApi } from './memory-api.ts';

const privileged: NamespaceTemplate = {
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate',
  metadata: { name: 'privileged', annotations: { [KEY.requirePermission]: 'true' } },
  spec: { namespaces: { labelSelector: {} }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'granted' }, data: { by: '$(CREATOR)' } }], deletionPolicy: 'Delete', mode: 'Enforce' },
};

function setup(identity: string | undefined) {
  const api = memoryApi();
  const annotations: Record<string, string> = { [KEY.creator]: 'alice' };
  if (identity) annotations[CREATOR_IDENTITY] = identity;
  api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { [KEY.phase]: 'pending' }, annotations } } as KubeObject);
  api.put(privileged);
  // `use` is granted to group platform only, as a ClusterRoleBinding to a Group would.
  const authorizer = fakeAuthorizer();
  const groupGrant = { ...authorizer, check: async (c: Parameters<typeof authorizer.check>[0]) => (authorizer.calls.push(c), { allowed: (c.user.groups ?? []).includes('platform') }) };
  const deps: NamespaceDeps = { kube: api.client, resolver: new ResourceResolver(api.client), log: collectingLogger(), authorizer: groupGrant, now: () => new Date('2026-01-01T00:00:00Z') };
  return { api, deps, calls: authorizer.calls };
}

describe('template permission in the reconciler', () => {
  it('asks with the recorded identity: a grant through a group is applied', async () => {
    const seen = { username: 'alice', uid: 'alice-uid', groups: ['platform', 'system:authenticated'] };
    const { api, deps, calls } = setup(canonicalIdentity(seen));
    const r = await reconcileNamespace(deps, 'team-a');
    expect(calls[0]).toEqual({ user: seen, verb: 'use', group: 'furnish.dev', resource: 'namespacetemplates', name: 'privileged' });
    expect(r.result).toBe('converged');
    expect(api.get('v1', 'ConfigMap', 'team-a', 'granted')?.data).toEqual({ by: 'alice' });
  });

  it('a template refused for permission is a reported failure, not a silent skip', async () => {
    const { api, deps } = setup(undefined);
    const r = await reconcileNamespace(deps, 'team-a');
    expect(r.result).toBe('failed');
    expect(r.outcome?.failures).toContainEqual(expect.objectContaining({ template: 'privileged', status: 403, reason: 'Forbidden', message: expect.stringContaining('user "alice" may not use NamespaceTemplate "privileged"') }));
    expect(api.get('v1', 'ConfigMap', 'team-a', 'granted')).toBeUndefined();
    const events = api.all('Event');
    expect(events.some((e) => String(e.message).includes('privileged'))).toBe(true);
    // Like any template that cannot be applied: the namespace says so (phase failed, the reason on it).
    const ns = api.get('v1', 'Namespace', undefined, 'team-a');
    expect(ns?.metadata.labels?.[KEY.phase]).toBe('failed');
    expect(ns?.metadata.annotations?.[KEY.failure]).toMatch(/^template privileged: \(permission\): Forbidden \(HTTP 403\)/);
  });
});
