// Behaviour LNamespaces rely on, checked on kube-sim and on a real API server alike
// (FURNISH_TEST_KUBECONFIG): the garbage collector with cluster-scoped owners and several owner
// references, percent-encoded names in paths, and apps/v1 Deployments served for RBAC.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor, get, waitFor } from './helpers.ts';

let cluster: TestCluster;
let admin: KubeClient;
const run = `${process.pid % 1000}${Date.now().toString(36).slice(-4)}`;
const ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
const role = (name: string, owners: KubeObject[] = []): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole',
  metadata: { name, ...(owners.length > 0 ? { ownerReferences: owners.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid })) } : {}) },
  rules: [],
});

async function create(obj: KubeObject): Promise<KubeObject> {
  const res = await admin.call<KubeObject>({ method: 'POST', path: ROLES, body: obj });
  if (!res.ok) throw new Error(`create ${obj.metadata.name}: ${res.status} ${res.error}`);
  return { ...res.data!, apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' };
}
const del = (name: string) => admin.call({ method: 'DELETE', path: `${ROLES}/${encodeURIComponent(name)}` });
const owners = async (name: string) => ((await get(admin, `${ROLES}/${encodeURIComponent(name)}`))?.metadata.ownerReferences as Array<{ name: string }> | undefined)?.map((r) => r.name);

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, cluster.isSimulated ? cluster.users.admin!.context : undefined);
});
afterAll(async () => {
  for (const n of ['a', 'b', 'dep', 'late', 'gone']) await del(`fid-${n}-${run}`);
  admin?.close();
  await cluster?.stop();
});

describe('garbage collection of cluster-scoped dependents', () => {
  it('with two owners: the first owner deleted leaves it with one reference; the second deleted removes it', async () => {
    const a = await create(role(`fid-a-${run}`));
    const b = await create(role(`fid-b-${run}`));
    const dep = `fid-dep-${run}`;
    await create(role(dep, [a, b]));
    await del(a.metadata.name!);
    await waitFor('reference to a dropped', async () => (await owners(dep))?.join() === b.metadata.name, 30_000);
    await del(b.metadata.name!);
    await waitFor('dependent collected', async () => !(await get(admin, `${ROLES}/${dep}`)), 30_000);
  });

  it('a dependent written after its only owner was deleted is collected', async () => {
    const gone = await create(role(`fid-gone-${run}`));
    await del(gone.metadata.name!);
    await waitFor('owner gone', async () => !(await get(admin, `${ROLES}/${gone.metadata.name}`)));
    const late = `fid-late-${run}`;
    await create(role(late, [gone]));
    await waitFor('late dependent collected', async () => !(await get(admin, `${ROLES}/${late}`)), 30_000);
  });
});

describe('garbage collection of an owned namespace', () => {
  it('the owner deleted: the namespace terminates, is emptied and goes', async () => {
    const owner = await create(role(`fid-nsowner-${run}`));
    const ns = `fid-ns-${run}`;
    const ref = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: owner.metadata.name, uid: owner.metadata.uid };
    expect((await admin.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, ownerReferences: [ref] } } })).status).toBe(201);
    expect((await admin.call({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'inside' }, data: {} } })).status).toBe(201);
    await del(owner.metadata.name!);
    await waitFor('namespace and its contents gone', async () => !(await get(admin, `/api/v1/namespaces/${ns}`)) && !(await get(admin, `/api/v1/namespaces/${ns}/configmaps/inside`)), 60_000);
  }, 70_000);
});

describe('paths and kinds', () => {
  it('a name with ":" can be spelt percent-encoded in the path', async () => {
    const name = `furnish:fid:${run}`;
    await create(role(name));
    const res = await admin.call<KubeObject>({ method: 'GET', path: `${ROLES}/${encodeURIComponent(name)}` });
    expect(res.status).toBe(200);
    expect(res.data?.metadata.name).toBe(name);
    await del(name);
  });

  it('serves apps/v1 deployments, which the edit role lets a user create', async () => {
    const apps = await admin.call<{ resources: Array<{ name: string; namespaced: boolean; kind: string }> }>({ method: 'GET', path: '/apis/apps/v1' });
    expect(apps.data?.resources).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'deployments', namespaced: true, kind: 'Deployment' })]));
    const sar = await admin.call<{ status: { allowed: boolean } }>({ method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body: {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: { user: 'someone', groups: ['system:masters'], resourceAttributes: { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'default' } },
    } });
    expect(sar.data?.status.allowed).toBe(true);
  });
});
