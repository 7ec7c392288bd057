// @kubernetes/client-node driving kube-sim: the calls Furnish's reconcilers make.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CoreV1Api, KubeConfig, KubernetesObjectApi, makeInformer, PatchStrategy, setHeaderOptions, Watch, type V1ConfigMap,
} from '@kubernetes/client-node';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';

let cluster: SimCluster;
let kc: KubeConfig;
let core: CoreV1Api;

beforeAll(async () => {
  cluster = await startCluster({ namespaceDefaultObjects: false });
  kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'team-a' } } });
});
afterAll(() => cluster.stop());

const configMap = (name: string, data: Record<string, string>, labels: Record<string, string> = {}): V1ConfigMap => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'team-a', labels }, data,
});

describe('@kubernetes/client-node against kube-sim', () => {
  it('creates, lists with a selector and pages', async () => {
    for (const n of ['a', 'b', 'c']) await core.createNamespacedConfigMap({ namespace: 'team-a', body: configMap(n, { n }, { app: n === 'b' ? 'other' : 'demo' }) });
    const selected = await core.listNamespacedConfigMap({ namespace: 'team-a', labelSelector: 'app=demo' });
    expect(selected.items.map((i) => i.metadata?.name)).toEqual(['a', 'c']);
    const page = await core.listNamespacedConfigMap({ namespace: 'team-a', limit: 2 });
    expect(page.items).toHaveLength(2);
    const rest = await core.listNamespacedConfigMap({ namespace: 'team-a', limit: 2, _continue: page.metadata!._continue! });
    expect(rest.items.map((i) => i.metadata?.name)).toEqual(['c']);
  });

  it('surfaces Status errors with their code', async () => {
    await expect(core.readNamespacedConfigMap({ name: 'nope', namespace: 'team-a' })).rejects.toMatchObject({ code: 404 });
  });

  it('patches with JSON patch and merge patch', async () => {
    await core.patchNamespacedConfigMap({ name: 'a', namespace: 'team-a', body: [{ op: 'add', path: '/data/x', value: '1' }] });
    const merged = await core.patchNamespacedConfigMap({ name: 'a', namespace: 'team-a', body: { data: { y: '2' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(merged.data).toEqual({ n: 'a', x: '1', y: '2' });
  });

  it('server-side applies, with conflicts between managers', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const applied = await objects.patch(configMap('furnished', { a: '1' }), undefined, undefined, 'furnish', true, PatchStrategy.ServerSideApply);
    expect(applied.metadata?.managedFields?.[0]).toMatchObject({ manager: 'furnish', operation: 'Apply' });
    const again = await objects.patch(configMap('furnished', { a: '1' }), undefined, undefined, 'furnish', true, PatchStrategy.ServerSideApply);
    expect(again.metadata?.resourceVersion).toBe(applied.metadata?.resourceVersion);
    await expect(objects.patch(configMap('furnished', { a: '2' }), undefined, undefined, 'intruder', false, PatchStrategy.ServerSideApply))
      .rejects.toMatchObject({ code: 409 });
  });

  it('watches', async () => {
    const seen: string[] = [];
    const watcher = new Watch(kc);
    const controller = await watcher.watch('/api/v1/namespaces/team-a/configmaps', { resourceVersion: String(cluster.sim.store.currentResourceVersion()) },
      (type, obj: V1ConfigMap) => { seen.push(`${type} ${obj.metadata?.name}`); }, () => {});
    await core.createNamespacedConfigMap({ namespace: 'team-a', body: configMap('watched', {}) });
    await core.deleteNamespacedConfigMap({ name: 'watched', namespace: 'team-a' });
    await waitUntil(() => seen.length >= 2);
    controller.abort();
    expect(seen).toEqual(['ADDED watched', 'DELETED watched']);
  });

  it('keeps an informer in sync, relisting after a 410', async () => {
    const informer = makeInformer(kc, '/api/v1/namespaces/team-a/configmaps', () => core.listNamespacedConfigMap({ namespace: 'team-a' }));
    await informer.start();
    try {
      await core.createNamespacedConfigMap({ namespace: 'team-a', body: configMap('informed', {}) });
      await waitUntil(() => informer.get('informed', 'team-a') !== undefined);
      const stop = cluster.faults.inject({ verb: 'watch', resource: 'configmaps', closeWatchAfterMs: 10, times: 1 });
      cluster.sim.store.compact();
      await core.createNamespacedConfigMap({ namespace: 'team-a', body: configMap('after-compaction', {}) });
      await waitUntil(() => informer.get('after-compaction', 'team-a') !== undefined, 5000);
      stop();
    } finally {
      await informer.stop();
    }
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
