// Pending namespaces first (issue 10 item 8): with a resync of many namespaces in flight, a new
// namespace (pending, its user blocked by the guard) is reconciled on its own lane instead of
// queueing behind every namespace of the resync. Asserted as queue position, not wall time: the
// order in which the reconcilers first read each namespace, seen at their Kubernetes client seam.
// Runs on kube-sim, or on the cluster FURNISH_TEST_KUBECONFIG names.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KEY, PHASE } from '../../shared/keys.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor, createNamespace, get, waitFor } from './helpers.ts';

const BULK = 300;
const run = `${process.pid % 1000}${Date.now().toString(36).slice(-4)}`;
const bulk = Array.from({ length: BULK }, (_, i) => `bulk-${run}-${i}`);
const fresh = `fresh-${run}`;
let cluster: TestCluster;
let stack: LocalStack;
let admin: KubeClient;
/** Namespaces the reconcilers read one by one (GET /api/v1/namespaces/<name>), in order. */
const reads: string[] = [];
let recording = false;

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  stack = await startLocalStack({
    kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhooks: false, resyncSeconds: 0, log: silentLogger,
    env: { FURNISH_WATCH_TIMEOUT_SECONDS: '5', FURNISH_DRIFT_RESOURCES: '' },
    // An observer at the client seam, not a fault: it never answers in the server's place.
    faults: (req) => {
      const m = recording && req.method === 'GET' ? /^\/api\/v1\/namespaces\/([^/?]+)$/.exec(req.path) : null;
      if (m) reads.push(m[1]!);
      return undefined;
    },
  });
  for (let i = 0; i < BULK; i += 50) await Promise.all(bulk.slice(i, i + 50).map((n) => createNamespace(admin, n)));
  await waitFor('every bulk namespace ready', async () => {
    for (const n of bulk) if ((await get(admin, `/api/v1/namespaces/${n}`))?.metadata.labels?.[KEY.phase] !== PHASE.ready) return false;
    return true;
  }, 120_000, 500);
  await stack.idle();
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  if (admin) for (const n of [...bulk, fresh]) await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${n}` });
  admin?.close();
  await cluster?.stop();
}, 120_000);

describe('pending namespaces first', () => {
  it('a namespace created during a resync of hundreds is reconciled ahead of the resync\'s queue, not behind it', async () => {
    recording = true;
    const resync = stack.relay.relay.resync();
    // The resync is under way: its messages are queued and the reconcilers are working through them.
    await waitFor('resync reconciles started', async () => reads.filter((n) => n.startsWith(`bulk-${run}-`)).length >= 10, 60_000, 5);
    await createNamespace(admin, fresh);
    await waitFor('the new namespace ready', async () => (await get(admin, `/api/v1/namespaces/${fresh}`))?.metadata.labels?.[KEY.phase] === PHASE.ready, 60_000, 20);
    await resync;
    await stack.idle();
    recording = false;

    const firstFresh = reads.indexOf(fresh);
    const bulkBefore = new Set(reads.slice(0, firstFresh).filter((n) => n.startsWith(`bulk-${run}-`)));
    const bulkAll = new Set(reads.filter((n) => n.startsWith(`bulk-${run}-`)));
    expect(firstFresh).toBeGreaterThanOrEqual(0);
    // The whole resync did reach the reconcilers...
    expect(bulkAll.size).toBe(BULK);
    // ...and the new namespace was read while most of it was still queued (on one shared queue
    // it would come after all of them: the resync's messages were published first).
    expect(bulkBefore.size).toBeLessThan(BULK / 2);
  }, 180_000);
});
