// `npm start` installs Furnish's CRDs and returns only once they can be listed: kube-apiserver 1.31+
// names a new CRD in discovery while lists of it still answer 429 "storage is (re)initializing"
// (its watch cache is filling), and mutate-namespace, started next, would refuse an
// administrator's namespace on that answer. The answer is injected at the client seam (as the real
// server gives it, captured from 1.32.0-rc.0), so this runs the same on kube-sim and a real cluster.
// Needs the test cluster's current context (kube-sim: admin): it may install the CRDs.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import type { KubeRequest } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import { ensureCrd } from '../../scripts/start/cluster.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';

const LIST = '/apis/furnish.dev/v1alpha1/namespaceinitializationconfigurations';
let cluster: TestCluster;
let kube: KubeClient;
let initializing = 0;

/** The first `initializing` lists of NamespaceInitializationConfigurations answer as a filling watch cache does. */
function filling(req: KubeRequest) {
  if (req.method !== 'GET' || req.path !== LIST || req.query?.watch || initializing === 0) return undefined;
  initializing -= 1;
  return { status: 429, error: 'storage is (re)initializing', retryAfterSeconds: 1 };
}

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  // As npm start's own client (probeCluster): no retries, so only ensureCrd's wait gets past the 429.
  kube = createKubeClient(await connect({ kubeconfigPath: cluster.kubeconfigPath, context }), { faults: filling, retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 } });
}, 30_000);

afterAll(async () => {
  kube?.close();
  await cluster?.stop();
});

describe('npm start and a CRD whose lists are not answered yet', () => {
  it('waits until each CRD lists, not only until discovery names it', async () => {
    initializing = 2;
    await ensureCrd(kube, silentLogger);
    expect(initializing).toBe(0);
    expect(kube.metrics.byStatus['429']).toBe(2);
    expect(await kube.call({ method: 'GET', path: LIST })).toMatchObject({ ok: true, status: 200 });
  }, 60_000);
});
