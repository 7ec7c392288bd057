// A list read in pages is one snapshot, the same on kube-sim and on a real kube-apiserver 1.26
// (FURNISH_TEST_KUBECONFIG): every continued page shows the collection as of the first page and
// carries its resourceVersion. reconcile-template relies on it: it compares the resourceVersions
// of its namespaces list and its ApplySet parents list to know which one shows the later state.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor } from '../integration/helpers.ts';

let cluster: TestCluster;
let kube: KubeClient;
const ns = `snapshot-${Math.random().toString(36).slice(2, 7)}`;
const CONFIGMAPS = `/api/v1/namespaces/${ns}/configmaps`;

beforeAll(async () => {
  cluster = await useTestCluster();
  kube = await clientFor(cluster.kubeconfigPath, 'admin');
});

afterAll(async () => {
  await kube.call({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` });
  await cluster.stop();
});

interface Page {
  items: KubeObject[];
  metadata: { resourceVersion: string; continue?: string };
}

async function page(cont?: string): Promise<Page> {
  const res = await kube.call<Page>({ method: 'GET', path: CONFIGMAPS, query: { labelSelector: 'snapshot=yes', limit: 1, continue: cont } });
  expect(res.status).toBe(200);
  return res.data!;
}

async function write(method: 'POST' | 'PUT' | 'DELETE', name: string, data: Record<string, string> = {}): Promise<void> {
  const body = method === 'DELETE' ? undefined : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { snapshot: 'yes' } }, data };
  const res = await kube.call({ method, path: method === 'POST' ? CONFIGMAPS : `${CONFIGMAPS}/${name}`, body });
  expect(res.ok).toBe(true);
}

describe('a list in pages', () => {
  it('shows the collection as of its first page on every page, with that page\'s resourceVersion', async () => {
    expect((await kube.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
    for (const name of ['c1', 'c2', 'c3']) await write('POST', name, { v: '1' });
    const first = await page();
    expect(first.items.map((o) => o.metadata.name)).toEqual(['c1']);
    // Changes after the first page: one changed, one deleted, one created.
    await write('PUT', 'c3', { v: '2' });
    await write('DELETE', 'c2');
    await write('POST', 'c4', { v: '1' });
    const pages = [first];
    while (pages[pages.length - 1]!.metadata.continue) pages.push(await page(pages[pages.length - 1]!.metadata.continue));
    expect(pages.flatMap((p) => p.items.map((o) => [o.metadata.name, o.data]))).toEqual([['c1', { v: '1' }], ['c2', { v: '1' }], ['c3', { v: '1' }]]);
    expect(new Set(pages.map((p) => p.metadata.resourceVersion))).toEqual(new Set([first.metadata.resourceVersion]));
    // A list started now shows the changes.
    const now = await kube.call<Page>({ method: 'GET', path: CONFIGMAPS, query: { labelSelector: 'snapshot=yes' } });
    expect(now.data!.items.map((o) => [o.metadata.name, o.data])).toEqual([['c1', { v: '1' }], ['c3', { v: '2' }], ['c4', { v: '1' }]]);
    expect(BigInt(now.data!.metadata.resourceVersion)).toBeGreaterThan(BigInt(first.metadata.resourceVersion));
  });
});
