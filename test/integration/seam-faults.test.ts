// The faults the population suites inject at the Kubernetes client seam when the test cluster has
// none of its own (a real cluster): matched and counted as kube-sim matches them, a watch cut
// after a delay ends as a server ends one, a 503 answers instead of the server and is retried.
// Needs only the test cluster's current context (kube-sim: admin), allowed to list namespaces.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { requestTarget, seamFaults } from './helpers.ts';

let cluster: TestCluster;
let kube: KubeClient;
const faults = seamFaults();

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  kube = createKubeClient(await connect({ kubeconfigPath: cluster.kubeconfigPath, context }), { faults: faults.hook, retry: { attempts: 4, baseMs: 1, maxMs: 2, factor: 1, jitter: 0 } });
}, 30_000);

afterAll(async () => {
  kube?.close();
  await cluster?.stop();
});

describe('faults at the client seam', () => {
  it('names requests as kube-sim does', () => {
    expect(requestTarget({ method: 'GET', path: '/api/v1/namespaces', query: { watch: 1 } })).toEqual({ verb: 'watch', resource: 'namespaces' });
    expect(requestTarget({ method: 'GET', path: '/api/v1/namespaces/a' })).toEqual({ verb: 'get', resource: 'namespaces' });
    expect(requestTarget({ method: 'PATCH', path: '/api/v1/namespaces/a/status' })).toEqual({ verb: 'patch', resource: 'namespaces/status' });
    expect(requestTarget({ method: 'GET', path: '/api/v1/namespaces/a/configmaps' })).toEqual({ verb: 'list', resource: 'configmaps', namespace: 'a' });
    expect(requestTarget({ method: 'POST', path: '/api/v1/namespaces/a/events' })).toEqual({ verb: 'create', resource: 'events', namespace: 'a' });
    expect(requestTarget({ method: 'GET', path: '/apis/furnish.dev/v1alpha1/namespacetemplates/t' })).toEqual({ verb: 'get', resource: 'namespacetemplates' });
  });

  it('a 503 answers instead of the server `times` times, and the seam retries past it', async () => {
    faults.inject({ verb: 'list', resource: 'namespaces', status: 503, times: 2 });
    const before = kube.metrics.byStatus['503'] ?? 0;
    const res = await kube.call({ method: 'GET', path: '/api/v1/namespaces' });
    expect(res).toMatchObject({ ok: true, status: 200, attempts: 3 });
    expect((kube.metrics.byStatus['503'] ?? 0) - before).toBe(2);
  });

  // No elapsed-time assertion (flaky under load): the watch asks the server for 30 s, so only the
  // cut can end it within the test's timeout; what it streamed before is counted.
  it('a cut watch streams until the delay, then ends as a server ends it (ok, 200)', async () => {
    const listed = await kube.call({ method: 'GET', path: '/api/v1/namespaces' });
    const names = (listed.data as { items: Array<{ metadata: { name: string } }> }).items.map((n) => n.metadata.name);
    faults.inject({ verb: 'watch', closeWatchAfterMs: 300, times: 1 });
    const events: Array<{ type: string; object: { metadata: { name: string } } }> = [];
    // From resourceVersion 0 (any), served from the watch cache at once: from the current revision,
    // kube-apiserver 1.32 over etcd 3.4 (no progress notifications) may wait 3 s for its cache.
    const handle = kube.watch({ method: 'GET', path: '/api/v1/namespaces', query: { watch: 1, resourceVersion: '0', timeoutSeconds: 30 } }, (e) => events.push(e as (typeof events)[number]));
    const res = await handle.done;
    expect(res).toMatchObject({ ok: true, status: 200 });
    expect(res.error).toBeUndefined();
    // The server starts with every namespace as ADDED: it streamed them all before the cut.
    expect(events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name)).toEqual(expect.arrayContaining(names));
    faults.clear();
  }, 20_000);
});
