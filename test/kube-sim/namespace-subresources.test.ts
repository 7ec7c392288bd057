// Namespace behaviours admission depends on (issue 9), the same on kube-sim and on a real
// kube-apiserver 1.26 (FURNISH_TEST_KUBECONFIG): label and annotation changes made through
// namespaces/status and namespaces/finalize are kept (so the webhooks must judge them), and a
// generateName namespace gets its name and name label only after mutating admission.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor } from '../integration/helpers.ts';

let cluster: TestCluster;
let kube: KubeClient;
const suffix = Math.random().toString(36).slice(2, 7);
const made: string[] = [];

beforeAll(async () => {
  cluster = await useTestCluster();
  kube = await clientFor(cluster.kubeconfigPath, 'admin');
});

afterAll(async () => {
  for (const name of made) await kube.call({ method: 'DELETE', path: `/api/v1/namespaces/${name}` });
  await cluster.stop();
});

async function namespace(name: string): Promise<KubeObject> {
  const res = await kube.call<KubeObject>({ method: 'GET', path: `/api/v1/namespaces/${name}` });
  expect(res.status).toBe(200);
  return res.data!;
}

async function created(name: string): Promise<KubeObject> {
  const res = await kube.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  expect(res.status).toBe(201);
  made.push(name);
  return res.data!;
}

describe('a namespace\'s status is the server\'s but through namespaces/status', () => {
  it('a create or an update of the namespace itself cannot set conditions (a forged Ready); namespaces/status can', async () => {
    const name = `status-${suffix}`;
    const forged = { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'forged' }] };
    const res = await kube.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: forged } });
    expect(res.status).toBe(201);
    made.push(name);
    expect((await namespace(name)).status).toEqual({ phase: 'Active' });
    await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${name}`, contentType: 'application/merge-patch+json', body: { status: forged } });
    expect((await namespace(name)).status).toEqual({ phase: 'Active' });
    const viaStatus = await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${name}/status`, contentType: 'application/strategic-merge-patch+json', body: { status: forged } });
    expect(viaStatus.status).toBe(200);
    expect((await namespace(name)).status).toMatchObject({ phase: 'Active', conditions: [expect.objectContaining({ type: 'Ready', status: 'True' })] });
  });
});

describe('namespace subresources keep metadata changes', () => {
  for (const sub of ['status', 'finalize']) {
    it(`PUT namespaces/${sub} keeps a changed label and annotation`, async () => {
      const name = `sub-${sub}-${suffix}`;
      const ns = await created(name);
      ns.metadata.labels = { ...ns.metadata.labels, 'furnish.dev/phase': 'ready' };
      ns.metadata.annotations = { 'furnish.dev/creator': 'mallory' };
      const res = await kube.call<KubeObject>({ method: 'PUT', path: `/api/v1/namespaces/${name}/${sub}`, body: ns });
      expect(res.status).toBe(200);
      const after = await namespace(name);
      expect(after.metadata.labels?.['furnish.dev/phase']).toBe('ready');
      expect(after.metadata.annotations?.['furnish.dev/creator']).toBe('mallory');
    });
  }
});

describe('generateName', () => {
  it('a generated name, and the name label set to it', async () => {
    const res = await kube.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { generateName: `gen-${suffix}-` } } });
    expect(res.status).toBe(201);
    const name = res.data!.metadata.name!;
    made.push(name);
    expect(name).toMatch(new RegExp(`^gen-${suffix}-[a-z0-9]{5}$`));
    expect(res.data!.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': name });
  });
});
