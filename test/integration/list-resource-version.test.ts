// A list at a resourceVersion (resourceVersionMatch NotOlderThan / Exact), checked on kube-sim and
// on a real API server alike (FURNISH_TEST_KUBECONFIG): reconcile-organization lists an
// organization's namespaces from the watch cache at a namespace event's revision and falls back to
// etcd on the 504 a revision the cache has not reached gets. The real answers are captured in
// test/fixtures/kube-apiserver-1.26/api/list-namespaces-{not-older-than,rv-too-large,match-without-rv}.http.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeClient, KubeResponse } from '../../shared/kube/client.ts';
import { API_RETRY } from '../../shared/kube/retry.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { cacheCannotAnswer } from '../../shared/org/reconcile.ts';
import { fixture } from '../kube-sim/helpers.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor } from './helpers.ts';

let cluster: TestCluster;
let admin: KubeClient;
const run = `${process.pid % 1000}${Date.now().toString(36).slice(-4)}`;
const NS = `lrv-${run}`;
let created: KubeObject;

type List = { metadata?: { resourceVersion?: string }; items?: KubeObject[] };

/** One attempt: a 504 is the answer under test, not a fault to retry. */
function list(query: string): Promise<KubeResponse<List>> {
  return admin.call<List>({ method: 'GET', path: `/api/v1/namespaces?labelSelector=lrv%3D${run}&${query}`, retry: { ...API_RETRY, attempts: 1 } });
}
const names = (r: KubeResponse<List>) => (r.data?.items ?? []).map((n) => n.metadata.name);
/** The Status body without what differs from run to run (the revisions in the message). */
const statusOf = (body: unknown) => ({ ...(body as object), message: String((body as { message?: string }).message).replace(/\d+/g, 'N') });

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, cluster.isSimulated ? cluster.users.admin!.context : undefined);
  const r = await admin.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { lrv: run } } } });
  if (!r.ok || !r.data) throw new Error(`create ${NS}: ${r.status} ${r.error}`);
  created = r.data;
}, 60_000);

afterAll(async () => {
  await admin?.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` });
  admin?.close();
  await cluster?.stop();
});

describe('a list at a resourceVersion', () => {
  it('NotOlderThan a namespace event\'s revision, without limit: 200, with that namespace, at a revision not older', async () => {
    const rv = created.metadata.resourceVersion!;
    const r = await list(`resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
    expect(r.status).toBe(fixture('list-namespaces-not-older-than').status);
    expect(names(r)).toEqual([NS]);
    expect(BigInt(r.data!.metadata!.resourceVersion!)).toBeGreaterThanOrEqual(BigInt(rv));
  });

  it('NotOlderThan a revision not reached: 504 Too large resource version after the cache waited ~3 s; with limit too (at once on 1.26)', async () => {
    const future = String(BigInt(created.metadata.resourceVersion!) + 1_000_000n);
    const captured = fixture('list-namespaces-rv-too-large');
    const started = Date.now();
    const r = await list(`resourceVersion=${future}&resourceVersionMatch=NotOlderThan`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
    expect(r.status).toBe(captured.status);
    expect(statusOf(r.data)).toEqual(statusOf(captured.body));
    expect(String((r.data as { message?: string }).message)).toMatch(new RegExp(`^Timeout: Too large resource version: ${future}, current: \\d+$`));
    expect(r.headers?.['retry-after']).toBe(captured.headers['retry-after']);
    expect(cacheCannotAnswer({ status: r.status, data: r.data, error: r.error })).toBe(true);
    const paged = Date.now();
    expect((await list(`resourceVersion=${future}&resourceVersionMatch=NotOlderThan&limit=5`)).status).toBe(504);
    // kube-apiserver 1.26 (and kube-sim, which follows it) sends a paged list to etcd and answers at
    // once; 1.32 serves it from the watch cache too, so after the same wait. A 504 either way, which
    // reconcile-organization answers with a list from etcd.
    if (cluster.isSimulated) expect(Date.now() - paged).toBeLessThan(2_000);
  }, 20_000);

  it('validates the pair as ListOptions: 422 with every cause', async () => {
    const withoutVersion = await list('resourceVersionMatch=NotOlderThan');
    const captured = fixture('list-namespaces-match-without-rv');
    expect(withoutVersion.status).toBe(captured.status);
    expect(withoutVersion.data).toEqual(captured.body);
    const exactZero = await list('resourceVersion=0&resourceVersionMatch=Exact');
    expect(exactZero.status).toBe(422);
    expect((exactZero.data as { message?: string }).message).toBe('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    const bogus = await list('resourceVersionMatch=Bogus');
    expect(bogus.status).toBe(422);
    expect((bogus.data as { details?: { causes?: unknown[] } }).details?.causes).toEqual([
      { reason: 'FieldValueForbidden', message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided', field: 'resourceVersionMatch' },
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""', field: 'resourceVersionMatch' },
    ]);
  });

  it('a resourceVersion that is not a number: 500 without a reason', async () => {
    const r = await list('resourceVersion=abc&resourceVersionMatch=NotOlderThan');
    expect(r.status).toBe(500);
    expect(r.data).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax', code: 500 });
  });

  it('Exact: the collection as it stood then (before the namespace: without it); a future revision is etcd\'s 500', async () => {
    const before = String(BigInt(created.metadata.resourceVersion!) - 1n);
    const r = await list(`resourceVersion=${before}&resourceVersionMatch=Exact`);
    expect(r.status).toBe(200);
    expect(names(r)).toEqual([]);
    expect(r.data?.metadata?.resourceVersion).toBe(before);
    expect(names(await list(`resourceVersion=${created.metadata.resourceVersion}&resourceVersionMatch=Exact`))).toEqual([NS]);
    const future = await list(`resourceVersion=${BigInt(created.metadata.resourceVersion!) + 1_000_000n}&resourceVersionMatch=Exact`);
    expect(future.status).toBe(500);
    expect((future.data as { message?: string }).message).toBe('etcdserver: mvcc: required revision is a future revision');
  });
});
