// The relay against a scripted HTTP API server: list, watch from the list's resourceVersion with
// bookmarks, reconnect after a dropped watch, relist on 410 Gone, resync, flush on stop.
import { describe, it, expect, afterEach } from '@jest/globals';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { Agent } from 'node:http';
import { createMemoryBus, type MemoryBusOptions } from '../../../shared/bus/memory.ts';
import { PUBLISH_RETRY } from '../../../shared/kube/retry.ts';
import { createKubeClient, type KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { decodeMessage, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { silentLogger } from '../../../shared/log.ts';
import { createRelay, type Relay } from '../../../shared/reconcile/relay.ts';
import { metricsText } from '../../../shared/reconcile/relay-http.ts';

interface Script {
  namespaces: Map<string, KubeObject>;
  rv: number;
  /** What to do with the next watch request on namespaces. */
  watches: ((res: ServerResponse, fromRv: string) => void)[];
  watchRequests: string[];
  lists: number;
}

const nsObj = (name: string, rv: number, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid: `uid-${name}`, resourceVersion: String(rv), labels } });

function apiServer(script: Script): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const templates = url.pathname.includes('namespacetemplates');
    if (url.searchParams.get('watch')) {
      if (templates) return; // never answers: a quiet watch
      script.watchRequests.push(url.searchParams.get('resourceVersion') ?? '');
      const next = script.watches.shift();
      res.writeHead(200, { 'content-type': 'application/json' });
      if (next) next(res, url.searchParams.get('resourceVersion') ?? '');
      return;
    }
    if (!templates) script.lists += 1;
    const items = templates ? [] : [...script.namespaces.values()];
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items, metadata: { resourceVersion: String(script.rv) } }));
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })));
}

const event = (res: ServerResponse, type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function setup(script: Script, watchSilenceSeconds?: number, pendingRedriveSeconds?: number, busOptions: MemoryBusOptions = {}): Promise<{ relay: Relay; received: ReconcileMessage[]; topicOf: Map<string, string>; kube: KubeClient }> {
  const { server, url } = await apiServer(script);
  const kube = createKubeClient({ server: url, agent: new Agent({ keepAlive: true }), headers: async () => ({}) }, { sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))) });
  const bus = createMemoryBus(busOptions);
  const received: ReconcileMessage[] = [];
  /** `type name@rv` → the topic it arrived on. */
  const topicOf = new Map<string, string>();
  for (const topic of ['ns', 'ns-pending']) {
    bus.subscribe(topic, async (d) => {
      const m = decodeMessage(d.data);
      if (!m.ok) return;
      received.push(m.message);
      topicOf.set(`${m.message.type} ${m.message.name}@${m.message.resourceVersion}`, topic);
    });
  }
  const relay = createRelay({ kube, bus, config: { cluster: 'c', resyncSeconds: 0, watchTimeoutSeconds: 30, pageSize: 100, topics: { namespaces: 'ns', templates: 'tpl', pending: 'ns-pending' }, ...(watchSilenceSeconds !== undefined ? { watchSilenceSeconds } : {}), ...(pendingRedriveSeconds !== undefined ? { pendingRedriveSeconds } : {}) }, log: silentLogger, sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))) });
  cleanup.push(async () => {
    await relay.stop();
    kube.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { relay, received, topicOf, kube };
}

const until = async (cond: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('watch relay', () => {
  it('lists, watches from the list version, follows bookmarks, and publishes one small message per change', async () => {
    const script: Script = { namespaces: new Map([['a', nsObj('a', 5)]]), rv: 10, watches: [], watchRequests: [], lists: 0 };
    script.watches.push((res) => {
      event(res, 'ADDED', nsObj('b', 11));
      event(res, 'BOOKMARK', { kind: 'Namespace', metadata: { resourceVersion: '15' } });
      event(res, 'MODIFIED', nsObj('a', 16, { tier: 'gold' }));
      event(res, 'MODIFIED', nsObj('a', 16, { tier: 'gold' })); // a replay: same version
      event(res, 'MODIFIED', nsObj('a', 17, { tier: 'gold', 'furnish.dev/phase': 'ready' })); // the reconciler's own write
      event(res, 'DELETED', nsObj('b', 18));
      res.end();
    });
    const { relay, received } = await setup(script);
    await relay.start();
    await until(() => received.length >= 4);
    expect(received.map((m) => `${m.type} ${m.name}@${m.resourceVersion}`)).toEqual(['ADDED a@5', 'ADDED b@11', 'MODIFIED a@16', 'DELETED b@18']);
    expect(script.watchRequests[0]).toBe('10');
    await until(() => script.watchRequests.length >= 2);
    expect(script.watchRequests[1]).toBe('18');
    expect(relay.counters).toMatchObject({ eventsSeen: 5, bookmarks: 1, published: 4, publishFailed: 0, suppressed: 1 });
    expect(relay.sizes().Namespace).toBe(1);
  });

  it('relists on 410 Gone and publishes only what changed meanwhile, deletions included', async () => {
    const script: Script = { namespaces: new Map([['a', nsObj('a', 5)], ['b', nsObj('b', 6)]]), rv: 10, watches: [], watchRequests: [], lists: 0 };
    script.watches.push((res) => {
      script.namespaces.delete('b');
      script.namespaces.set('c', nsObj('c', 30));
      script.rv = 31;
      event(res, 'ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
      res.end();
    });
    const { relay, received } = await setup(script);
    await relay.start();
    await until(() => received.length >= 4);
    expect(received.map((m) => `${m.type} ${m.name}`)).toEqual(['ADDED a', 'ADDED b', 'ADDED c', 'DELETED b']);
    expect(relay.counters.gone).toBe(1);
    await until(() => script.watchRequests.length >= 2);
    expect(script.watchRequests[1]).toBe('31');
  });

  it('names the organization(s) each namespace message concerns: now, before a transfer, of a namespace found gone', async () => {
    const org = (o: string) => ({ 'furnish.dev/organization': o });
    const script: Script = { namespaces: new Map([['a', nsObj('a', 5, org('acme'))], ['b', nsObj('b', 6, org('globex'))], ['c', nsObj('c', 7)]]), rv: 10, watches: [], watchRequests: [], lists: 0 };
    script.watches.push((res) => {
      event(res, 'MODIFIED', nsObj('a', 11, org('globex'))); // a transfer
      event(res, 'DELETED', nsObj('a', 12, org('globex')));
      script.namespaces.delete('a');
      script.namespaces.delete('b');
      script.rv = 20;
      event(res, 'ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
      res.end();
    });
    const { relay, received } = await setup(script);
    await relay.start();
    await until(() => received.length >= 6);
    expect(received.map((m) => `${m.type} ${m.name} ${JSON.stringify(m.organizations)}`)).toEqual([
      'ADDED a ["acme"]',
      'ADDED b ["globex"]',
      'ADDED c []',
      'MODIFIED a ["globex","acme"]',
      'DELETED a ["globex"]',
      'DELETED b ["globex"]', // found gone by the relist: the relay remembered its organization
    ]);
  });

  it('reconnects with backoff after a dropped connection, resuming from the last version', async () => {
    const script: Script = { namespaces: new Map(), rv: 10, watches: [], watchRequests: [], lists: 0 };
    script.watches.push((res) => {
      event(res, 'ADDED', nsObj('a', 12));
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const { relay, received } = await setup(script);
    await relay.start();
    await until(() => script.watchRequests.length >= 2);
    expect(script.watchRequests[1]).toBe('12');
    expect(received.map((m) => m.name)).toEqual(['a']);
  });

  it('a watch silent longer than the bound (a half-open connection) is ended and relisted; /readyz says not ready meanwhile', async () => {
    const script: Script = { namespaces: new Map([['a', nsObj('a', 5)]]), rv: 10, watches: [], watchRequests: [], lists: 0 };
    // The first watch says nothing at all and never ends; the relist then finds `b`.
    script.watches.push(() => {
      script.namespaces.set('b', nsObj('b', 20));
      script.rv = 20;
    });
    const { relay, received } = await setup(script, 0.3);
    await relay.start();
    await until(() => script.watchRequests.length >= 1);
    expect(relay.ready()).toBe(true);
    // The templates watch is silent too (this server never answers it): not ready until a relist.
    await until(() => !relay.ready(), 2000);
    await until(() => relay.counters.silentRelists >= 1 && received.some((m) => m.name === 'b'), 8000);
    expect(script.lists).toBeGreaterThanOrEqual(2);
    expect(received.map((m) => `${m.type} ${m.name}`)).toEqual(['ADDED a', 'ADDED b']);
  }, 15_000);

  it('a namespace still pending after the redrive period is published again (its message may have been lost); ready ones are not', async () => {
    const script: Script = { namespaces: new Map([['new', nsObj('new', 5, { 'furnish.dev/phase': 'pending' })], ['done', nsObj('done', 6, { 'furnish.dev/phase': 'ready' })]]), rv: 10, watches: [], watchRequests: [], lists: 0 };
    script.watches.push((res) => setTimeout(() => event(res, 'MODIFIED', nsObj('new', 12, { 'furnish.dev/phase': 'ready' })), 900));
    const { relay, received } = await setup(script, undefined, 0.2);
    await relay.start();
    await until(() => relay.counters.redriven >= 2);
    expect(relay.pending()).toBe(1);
    expect(received.filter((m) => m.name === 'new' && m.type === 'SYNC').length).toBeGreaterThanOrEqual(2);
    expect(received.filter((m) => m.name === 'done')).toHaveLength(1);
    // Ready now (the reconciler's own write, not published): no more redrives.
    await until(() => relay.counters.suppressed >= 1, 3000);
    const after = relay.counters.redriven;
    await new Promise((r) => setTimeout(r, 500));
    expect(relay.counters.redriven).toBe(after);
  });

  it('a resync publishes SYNC for every object; stop flushes; metrics expose the counters', async () => {
    const script: Script = { namespaces: new Map([['a', nsObj('a', 5)], ['b', nsObj('b', 6)]]), rv: 10, watches: [], watchRequests: [], lists: 0 };
    const { relay, received } = await setup(script);
    await relay.start();
    await until(() => received.length === 2);
    await relay.resync();
    await until(() => received.length === 4);
    expect(received.slice(2).map((m) => `${m.type} ${m.name}`)).toEqual(['SYNC a', 'SYNC b']);
    const text = metricsText(relay, { published: 4, failed: 0, delivered: 4, redelivered: 0, deadLettered: 0 });
    expect(text).toContain('furnish_relay_published_total 4');
    expect(text).toContain('furnish_relay_known_objects{kind="Namespace"} 2');
  });

  it('messages of pending namespaces take the pending topic (never behind a resync); others, and the same namespace once ready, the namespaces topic', async () => {
    const script: Script = { namespaces: new Map([['old', nsObj('old', 5, { 'furnish.dev/phase': 'ready' })], ['new', nsObj('new', 6, { 'furnish.dev/phase': 'pending' })]]), rv: 10, watches: [], watchRequests: [], lists: 0 };
    script.watches.push((res) => {
      event(res, 'ADDED', nsObj('newer', 11, { 'furnish.dev/phase': 'pending' }));
      event(res, 'MODIFIED', nsObj('new', 12, { 'furnish.dev/phase': 'ready', team: 'a' }));
      event(res, 'DELETED', nsObj('newer', 13, { 'furnish.dev/phase': 'pending' }));
    });
    const { relay, received, topicOf } = await setup(script);
    await relay.start();
    await until(() => received.length >= 5);
    await until(() => relay.pending() === 0);
    expect(metricsText(relay, { published: 5, failed: 0, delivered: 5, redelivered: 0, deadLettered: 0 })).toContain('furnish_relay_pending_namespaces 0');
    expect(Object.fromEntries(topicOf)).toEqual({
      'ADDED old@5': 'ns',
      'ADDED new@6': 'ns-pending',
      'ADDED newer@11': 'ns-pending',
      'MODIFIED new@12': 'ns',
      'DELETED newer@13': 'ns',
    });
  });

  it('a pending namespace whose message was dropped after every retry is re-driven on the pending topic, with resync off', async () => {
    const script: Script = { namespaces: new Map([['new', nsObj('new', 5, { 'furnish.dev/phase': 'pending' })]]), rv: 10, watches: [], watchRequests: [], lists: 0 };
    // Pub/Sub refuses every attempt of the first publish (an outage); the redrive's publish goes through.
    let refusals = PUBLISH_RETRY.attempts;
    const { relay, received, topicOf } = await setup(script, undefined, 0.2, { dropTopic: (t) => t === 'ns-pending' && refusals-- > 0 });
    await relay.start();
    await until(() => received.length >= 1);
    expect(relay.counters.publishFailed).toBe(1);
    expect(relay.counters.redriven).toBeGreaterThanOrEqual(1);
    expect(received[0]).toMatchObject({ name: 'new', type: 'SYNC' });
    expect(topicOf.get('SYNC new@5')).toBe('ns-pending');
  });
});
