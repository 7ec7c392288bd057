// deployments/scale, the same on kube-sim and on a real kube-apiserver 1.26 (FURNISH_TEST_KUBECONFIG):
// an autoscaling/v1 Scale that carries the Deployment's name, namespace, uid and resourceVersion but
// none of its labels (why protect-objects cannot select scales by label, issue 25 finding 12), and
// writes through it change the Deployment's spec.replicas.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor } from '../integration/helpers.ts';

let cluster: TestCluster;
let kube: KubeClient;
const NS = `scale-${Math.random().toString(36).slice(2, 7)}`;
const DEPLOYMENTS = `/apis/apps/v1/namespaces/${NS}/deployments`;
const SCALE = `${DEPLOYMENTS}/web/scale`;

beforeAll(async () => {
  cluster = await useTestCluster();
  kube = await clientFor(cluster.kubeconfigPath, 'admin');
  expect((await kube.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status).toBe(201);
  const web = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { 'furnish.dev/template': 't', app: 'web' } },
    spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'registry.k8s.io/pause:3.9' }] } } },
  };
  expect((await kube.call({ method: 'POST', path: DEPLOYMENTS, body: web })).status).toBe(201);
});

afterAll(async () => {
  await kube.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` });
  kube.close();
  await cluster.stop();
});

describe('deployments/scale', () => {
  it('GET: a Scale with the replicas and selector, and no labels', async () => {
    const res = await kube.call<KubeObject>({ method: 'GET', path: SCALE });
    expect(res.status).toBe(200);
    const deployment = (await kube.call<KubeObject>({ method: 'GET', path: `${DEPLOYMENTS}/web` })).data!;
    expect(res.data).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 2 }, status: { selector: 'app=web' } });
    expect(res.data!.metadata).toMatchObject({ name: 'web', namespace: NS, uid: deployment.metadata.uid, resourceVersion: deployment.metadata.resourceVersion });
    expect(res.data!.metadata.labels).toBeUndefined();
  });

  it('PATCH (what kubectl scale sends) changes the Deployment\'s spec.replicas', async () => {
    const res = await kube.call<KubeObject>({ method: 'PATCH', path: SCALE, contentType: 'application/merge-patch+json', body: { spec: { replicas: 4 } } });
    expect(res.status).toBe(200);
    expect((res.data as { spec?: { replicas?: number } }).spec?.replicas).toBe(4);
    const after = (await kube.call<KubeObject>({ method: 'GET', path: `${DEPLOYMENTS}/web` })).data as KubeObject & { spec: { replicas: number } };
    expect(after.spec.replicas).toBe(4);
    expect(after.metadata.generation).toBe(2);
  });

  it('PUT with a stale resourceVersion is a conflict', async () => {
    const scale = (await kube.call<KubeObject>({ method: 'GET', path: SCALE })).data!;
    const res = await kube.call({ method: 'PUT', path: SCALE, body: { ...scale, metadata: { ...scale.metadata, resourceVersion: '1' }, spec: { replicas: 5 } } });
    expect(res.status).toBe(409);
  });
});
