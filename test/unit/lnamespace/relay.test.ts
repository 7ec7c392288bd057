// The relay's LNamespace stream against a scripted API server: LNamespaces published on their own
// topic, a status-only change (the reconciler's own write) not sent back, and a cluster without
// the LNamespace CRD (404) not holding the relay up.
import { afterEach, describe, expect, it } from '@jest/globals';
import { Agent, createServer, type Server, type ServerResponse } from 'node:http';
import { createMemoryBus } from '../../../shared/bus/memory.ts';
import { createKubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { silentLogger } from '../../../shared/log.ts';
import { decodeMessage, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { createRelay } from '../../../functions/watch-relay/lib/relay.ts';
import { relayObservers } from '../../../functions/watch-relay/lib/wiring.ts';
import { driftedLNamespaces, holdersOf } from '../../../shared/lnamespace/relay.ts';

const lns = (name: string, rv: number, spec: unknown, status?: unknown): KubeObject => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'LNamespace', metadata: { name, uid: `uid-${name}`, resourceVersion: String(rv) }, spec, ...(status ? { status } : {}) });

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** Empty namespaces and templates with quiet watches; LNamespaces as given (or 404), one scripted watch. */
async function start(items: KubeObject[] | null, watch?: (res: ServerResponse) => void) {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const isLns = url.pathname.endsWith('/lnamespaces');
    if (isLns && items === null) return void res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound' }));
    if (url.searchParams.get('watch')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (isLns && watch) {
        watch(res);
        watch = undefined;
      }
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: isLns ? items : [], metadata: { resourceVersion: '10' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const kube = createKubeClient({ server: `http://127.0.0.1:${(server.address() as { port: number }).port}`, agent: new Agent({ keepAlive: true }), headers: async () => ({}) }, { sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))) });
  const bus = createMemoryBus();
  const received: ReconcileMessage[] = [];
  bus.subscribe('lns', async (d) => {
    const m = decodeMessage(d.data);
    if (m.ok) received.push(m.message);
  });
  const config = { cluster: 'c', resyncSeconds: 0, watchTimeoutSeconds: 30, pageSize: 100, topics: { namespaces: 'ns', templates: 'tpl', lnamespaces: 'lns' } };
  // As deployed: the LNamespace stream and its drift watch are handed in by the wiring (billing off).
  const { observers, kinds, driftWatches } = relayObservers({ kube, bus, log: silentLogger, config, env: { FURNISH_TOPIC_BILLING: '' } });
  const relay = createRelay({ kube, bus, config, log: silentLogger, observers, kinds, driftWatches, sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))) });
  cleanup.push(async () => {
    await relay.stop();
    kube.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  await relay.start();
  return { relay, bus, received };
}

const until = async (cond: () => boolean) => {
  const end = Date.now() + 3000;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('the relay and LNamespaces', () => {
  it('publishes LNamespaces on their topic; a status-only change is suppressed, a spec change is not', async () => {
    const write = (res: ServerResponse, type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);
    const { relay, bus, received } = await start([lns('shop', 5, { users: [] })], (res) => {
      write(res, 'MODIFIED', lns('shop', 11, { users: [] }, { namespace: 'shop' }));
      write(res, 'MODIFIED', lns('shop', 12, { users: [{ kind: 'User', name: 'bob' }] }, { namespace: 'shop' }));
    });
    await until(() => received.length >= 2);
    await bus.flush();
    expect(received.map((m) => [m.kind, m.name, m.type, m.resourceVersion])).toEqual([['LNamespace', 'shop', 'ADDED', '5'], ['LNamespace', 'shop', 'MODIFIED', '12']]);
    expect(relay.counters.suppressed).toBe(1);
    expect(relay.sizes().LNamespace).toBe(1);
  });

  it('a cluster without the LNamespace CRD: the relay starts and reports ready', async () => {
    const { relay, received } = await start(null);
    await until(() => relay.ready());
    expect(received).toEqual([]);
    expect(relay.sizes().LNamespace).toBe(0);
  });
});

describe('drift on what LNamespaces hold', () => {
  const held = (managers: Array<[string, string]>): KubeObject => ({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding',
    metadata: { name: 'furnish:self-impersonate:carol', labels: { 'lns.furnish.dev/shop': 'true', 'lns.furnish.dev/lab': 'true', 'furnish.dev/self-impersonation': 'true', 'app.kubernetes.io/managed-by': 'furnish' }, managedFields: managers.map(([manager, time]) => ({ manager, time })) },
  });

  it('a deletion, or a change by anyone but Furnish, reconciles every LNamespace holding the object', () => {
    expect(holdersOf(held([]))).toEqual(['lab', 'shop']);
    expect(driftedLNamespaces('DELETED', held([['furnish-lns-shop', '2026-01-01T00:00:01Z']]))).toEqual(['lab', 'shop']);
    expect(driftedLNamespaces('MODIFIED', held([['furnish-lns-shop', '2026-01-01T00:00:01Z'], ['kubectl-edit', '2026-01-01T00:00:02Z']]))).toEqual(['lab', 'shop']);
  });

  it('Furnish\'s own writes (the reconciler, or a holder\'s share) and creations are not drift', () => {
    expect(driftedLNamespaces('MODIFIED', held([['kubectl-edit', '2026-01-01T00:00:01Z'], ['furnish-lns-lab', '2026-01-01T00:00:02Z']]))).toEqual([]);
    expect(driftedLNamespaces('MODIFIED', held([['furnish', '2026-01-01T00:00:02Z']]))).toEqual([]);
    expect(driftedLNamespaces('ADDED', held([['kubectl-edit', '2026-01-01T00:00:02Z']]))).toEqual([]);
    expect(driftedLNamespaces('DELETED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { 'app.kubernetes.io/managed-by': 'furnish' } } })).toEqual([]);
  });
});
