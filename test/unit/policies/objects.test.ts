// furnish-subresource-metadata: Furnish's marks on an ApplySet member, and its owner references,
// change through a subresource only by Furnish's reconciler and the system controllers.
import { describe, expect, it } from '@jest/globals';
import { defaultPolicySettings } from '../../../shared/config/types.ts';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { applySetId } from '../../../shared/render/applyset.ts';
import type { PolicyAttributes, UserInfo } from '../../support/kube-sim/policies.ts';
import { judgeWith, namespace } from './harness.ts';

const settings = defaultPolicySettings();
const judge = judgeWith(settings);
const alice: UserInfo = { username: 'alice', groups: ['dev'] };
const RECONCILER: UserInfo = { username: settings.guard.reconciler[0]! };
const team = namespace({ name: 'team-a', labels: { [KEY.phase]: 'ready' } });

const quota: KubeObject = {
  apiVersion: 'v1', kind: 'ResourceQuota',
  metadata: { name: 'compute', namespace: 'team-a', labels: { [KEY.template]: 'quotas', [KEY.applySetPartOf]: applySetId('team-a') }, annotations: { [KEY.appliedHash]: 'h1' } },
  spec: { hard: { pods: '10' } },
  status: { hard: { pods: '10' }, used: { pods: '0' } },
};

function write(user: UserInfo, next: KubeObject, old: KubeObject = quota, subResource = 'status'): PolicyAttributes {
  return {
    operation: 'UPDATE', userInfo: user, object: next, oldObject: old, namespaceObject: team, name: old.metadata.name!, namespace: 'team-a',
    resource: { group: '', version: 'v1', resource: 'resourcequotas' }, kind: { group: '', version: 'v1', kind: 'ResourceQuota' }, ...(subResource ? { subResource } : {}),
  };
}

const withMeta = (meta: Partial<KubeObject['metadata']>, status = quota.status): KubeObject => ({ ...quota, metadata: { ...quota.metadata, ...meta }, status });

describe('furnish-subresource-metadata', () => {
  it('refuses a tenant changing Furnish\'s marks or the owner references of an ApplySet member through /status, naming what changed', () => {
    const detached = judge(write(alice, withMeta({ labels: { [KEY.template]: 'quotas' } })));
    expect(detached).toEqual({ allowed: false, message: expect.stringContaining(`user "alice" may not change the label ${KEY.applySetPartOf} of ResourceQuota "compute" in namespace "team-a" through its status subresource: it is a member of an ApplySet (label ${KEY.applySetPartOf}), whose marks and owner references change only through the object itself`) });
    const owned = judge(write(alice, withMeta({ ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'mine', uid: 'u1' }], annotations: {} })));
    expect(owned.message).toContain(`may not change the annotation ${KEY.appliedHash}, ownerReferences of ResourceQuota "compute"`);
    expect(judge(write(alice, withMeta({ annotations: { [KEY.appliedHash]: 'h1', [KEY.deletionPolicy]: 'Orphan' } }))).message).toContain(`may not change the annotation ${KEY.deletionPolicy} of`);
    // Being made a member counts too (the new object carries the label).
    const plain = withMeta({ labels: {} });
    expect(judge(write(alice, withMeta({ labels: { [KEY.applySetPartOf]: applySetId('team-a') } }), plain)).allowed).toBe(false);
  });

  it('allows status alone, other labels, annotations and finalizers (controllers write them through status), the reconciler, the system controllers, and the object itself (protect-objects judges that)', () => {
    expect(judge(write(alice, withMeta({}, { used: { pods: '3' } }))).allowed).toBe(true);
    // A cloud provider's load-balancer finalizer and annotations, written through a Service's status.
    expect(judge(write({ username: 'system:serviceaccount:kube-system:cloud-controller-manager' }, withMeta({ finalizers: ['service.kubernetes.io/load-balancer-cleanup'], annotations: { ...quota.metadata.annotations, 'cloud.google.com/neg-status': '{}' }, labels: { ...quota.metadata.labels, team: 'a' } }))).allowed).toBe(true);
    expect(judge(write(RECONCILER, withMeta({ labels: {} }))).allowed).toBe(true);
    expect(judge(write({ username: 'system:serviceaccount:kube-system:resourcequota-controller' }, withMeta({ ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'u' }] }))).allowed).toBe(true);
    expect(judge(write(alice, withMeta({ labels: {} }), quota, '')).allowed).toBe(true);
  });

  it('judges ApplySet members in namespaces Furnish governs only; a Scale carries no labels', () => {
    const plain = withMeta({ labels: {} });
    expect(judge(write(alice, { ...plain, metadata: { ...plain.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'u' }] } }, plain)).allowed).toBe(true);
    const ungoverned = namespace({ name: 'team-a' });
    expect(judge({ ...write(alice, withMeta({ labels: {} })), namespaceObject: ungoverned }).allowed).toBe(true);
    const scale: KubeObject = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'team-a' }, spec: { replicas: 3 } };
    expect(judge({ ...write(alice, scale, { ...scale, spec: { replicas: 1 } }, 'scale'), resource: { group: 'apps', version: 'v1', resource: 'deployments' } }).allowed).toBe(true);
  });
});
