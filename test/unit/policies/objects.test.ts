// furnish-subresource-metadata: an ApplySet member's labels, annotations, owner references and
// finalizers change through a subresource only by Furnish's reconciler and the system controllers.
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
  it('refuses a tenant changing an ApplySet member\'s metadata through /status, naming what changed', () => {
    const detached = judge(write(alice, withMeta({ labels: { [KEY.template]: 'quotas' } })));
    expect(detached).toEqual({ allowed: false, message: expect.stringContaining(`user "alice" may not change the labels of ResourceQuota "compute" in namespace "team-a" through its status subresource: it is a member of an ApplySet (label ${KEY.applySetPartOf}), whose metadata changes only through the object itself`) });
    const owned = judge(write(alice, withMeta({ ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'mine', uid: 'u1' }], annotations: {} })));
    expect(owned.message).toContain('may not change the annotations, ownerReferences of ResourceQuota "compute"');
    expect(judge(write(alice, withMeta({ finalizers: ['example.com/hold'] }))).message).toContain('may not change the finalizers of');
    // Being made a member counts too (the new object carries the label).
    const plain = withMeta({ labels: {} });
    expect(judge(write(alice, withMeta({ labels: { [KEY.applySetPartOf]: applySetId('team-a') } }), plain)).allowed).toBe(false);
  });

  it('allows status alone, the reconciler, the system controllers, objects outside any ApplySet, and the object itself (protect-objects judges that)', () => {
    expect(judge(write(alice, withMeta({}, { used: { pods: '3' } }))).allowed).toBe(true);
    expect(judge(write(RECONCILER, withMeta({ labels: {} }))).allowed).toBe(true);
    // The deployment controller writes a Deployment's revision annotation through its status.
    expect(judge(write({ username: 'system:serviceaccount:kube-system:deployment-controller' }, withMeta({ annotations: { 'deployment.kubernetes.io/revision': '2' } }))).allowed).toBe(true);
    const plain = withMeta({ labels: {} });
    expect(judge(write(alice, { ...plain, metadata: { ...plain.metadata, annotations: { x: 'y' } } }, plain)).allowed).toBe(true);
    expect(judge(write(alice, withMeta({ labels: {} }), quota, '')).allowed).toBe(true);
  });

  it('leaves a Scale alone: it carries no labels', () => {
    const scale: KubeObject = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'team-a' }, spec: { replicas: 3 } };
    expect(judge({ ...write(alice, scale, { ...scale, spec: { replicas: 1 } }, 'scale'), resource: { group: 'apps', version: 'v1', resource: 'deployments' } }).allowed).toBe(true);
  });
});
