// The order of a list after a strategic merge patch, the same on kube-sim and on a real
// kube-apiserver (FURNISH_TEST_KUBECONFIG): items the patch adds come before the stored ones
// (strategicpatch's normalizeElementOrder), a `$setElementOrder` directive reorders, and a stored
// item the patch names keeps the patch's place relative to the other named items.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor } from '../integration/helpers.ts';

let cluster: TestCluster;
let kube: KubeClient;
const ns = `smp-order-${Math.random().toString(36).slice(2, 7)}`;
const SMP = 'application/strategic-merge-patch+json';

beforeAll(async () => {
  cluster = await useTestCluster();
  kube = await clientFor(cluster.kubeconfigPath, 'admin');
  expect((await kube.call({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } })).status).toBe(201);
});

afterAll(async () => {
  await kube.call({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` });
  await cluster.stop();
});

// A ServiceAccount's `secrets`: a list merged by name that neither server fills in or reorders.
const secrets = (...names: string[]) => names.map((name) => ({ name }));

async function serviceAccount(name: string, held: string[]): Promise<void> {
  const body = { metadata: { name }, secrets: secrets(...held) };
  expect((await kube.call({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts`, body })).status).toBe(201);
}

async function patched(name: string, body: unknown): Promise<string[]> {
  const res = await kube.call<KubeObject & { secrets: { name: string }[] }>({ method: 'PATCH', path: `/api/v1/namespaces/${ns}/serviceaccounts/${name}`, contentType: SMP, body });
  expect(res.status).toBe(200);
  return res.data!.secrets.map((s) => s.name);
}

describe('strategic merge patch: the order of a merged list', () => {
  it('puts an item the patch adds before the stored items', async () => {
    await serviceAccount('added', ['a']);
    expect(await patched('added', { secrets: secrets('b') })).toEqual(['b', 'a']);
  });

  it('interleaves: added items first, then stored ones in their order, a named stored item where the stored order puts it', async () => {
    await serviceAccount('interleaved', ['a', 'b']);
    expect(await patched('interleaved', { secrets: secrets('c', 'b') })).toEqual(['c', 'a', 'b']);
    expect(await patched('interleaved', { secrets: secrets('d', 'a') })).toEqual(['d', 'c', 'a', 'b']);
  });

  it('follows $setElementOrder, with or without the list in the patch', async () => {
    await serviceAccount('ordered', ['a', 'b', 'c']);
    expect(await patched('ordered', { '$setElementOrder/secrets': secrets('c', 'a', 'b') })).toEqual(['c', 'a', 'b']);
    expect(await patched('ordered', { '$setElementOrder/secrets': secrets('b', 'd', 'c', 'a'), secrets: secrets('d') })).toEqual(['b', 'd', 'c', 'a']);
  });

  it('refuses a list out of its $setElementOrder\'s order (500), and changes nothing', async () => {
    await serviceAccount('misordered', ['a', 'b']);
    const res = await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${ns}/serviceaccounts/misordered`, contentType: SMP, body: { '$setElementOrder/secrets': secrets('b', 'a'), secrets: secrets('a', 'b') } });
    expect(res.status).toBe(500);
    expect(res.error).toContain("doesn't match $setElementOrder list");
    expect(await patched('misordered', {})).toEqual(['a', 'b']);
  });

  it('removes with $patch: delete and orders what stays as the stored list', async () => {
    await serviceAccount('deleted', ['a', 'b', 'c']);
    expect(await patched('deleted', { secrets: [{ name: 'b', $patch: 'delete' }, { name: 'd' }] })).toEqual(['d', 'a', 'c']);
  });

  it('re-adds an item a $patch: delete removed as an added one: first (how a duplicated Ready condition is collapsed)', async () => {
    await serviceAccount('readded', ['a', 'b', 'c']);
    expect(await patched('readded', { secrets: [{ name: 'b', $patch: 'delete' }, { name: 'b' }] })).toEqual(['b', 'a', 'c']);
  });

  it('orders by the patch, then by an empty $setElementOrder (which refuses nothing)', async () => {
    await serviceAccount('empty-order', ['a']);
    expect(await patched('empty-order', { '$setElementOrder/secrets': [], secrets: secrets('b') })).toEqual(['a', 'b']);
  });

  it('refuses a list out of its $setElementOrder\'s order where nothing is stored yet', async () => {
    await serviceAccount('unstored', []);
    const res = await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${ns}/serviceaccounts/unstored`, contentType: SMP, body: { '$setElementOrder/secrets': secrets('b', 'a'), secrets: secrets('a', 'b') } });
    expect(res.status).toBe(500);
    expect(await patched('unstored', { '$setElementOrder/secrets': secrets('b', 'a'), secrets: secrets('b', 'a') })).toEqual(['b', 'a']);
  });

  it('puts an added value of a set (finalizers) first too', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    expect((await kube.call({ method: 'POST', path, body: { metadata: { name: 'fin', finalizers: ['example.com/a'] } } })).status).toBe(201);
    const res = await kube.call<KubeObject>({ method: 'PATCH', path: `${path}/fin`, contentType: SMP, body: { metadata: { finalizers: ['example.com/b'] } } });
    expect(res.data!.metadata.finalizers).toEqual(['example.com/b', 'example.com/a']);
    await kube.call({ method: 'PATCH', path: `${path}/fin`, contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } });
  });
});
