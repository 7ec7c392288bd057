// The relay against a scripted HTTP API server: list, watch from the list's resourceVersion with
// bookmarks, reconnect after a dropped watch, relist on 410 Gone, resync, flush on stop; writes of
// the namespaces' ApplySet parents sent as reconciles of their namespaces.
import { describe, it, expect, afterEach } from '@jest/globals';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { Agent } from 'node:http';
import { createMemoryBus, type MemoryBusOptions } from '../../../shared/bus/memory.ts';
import { PUBLISH_RETRY } from '../../../shared/kube/retry.ts';
import { createKubeClient, type KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { decodeMessage, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { silentLogger } from '../../../shared/log.ts';
import { createRelay, type Relay, type RelayObservers } from '../../../functions/watch-relay/lib/relay.ts';
import { metricsText } from '../../../functions/watch-relay/lib/relay-http.ts';
import { organizationsObserver } from '../../../functions/watch-relay/lib/wiring.ts';

interface Script {
  namespaces: Map<string, KubeObject>;
  rv: number;
  /** What to do with the next watch request on namespaces. */
  watches: ((res: ServerResponse, fromRv: string) => void)[];
  watchRequests: string[];
  lists: number;
  /** ApplySet parents by namespace, and what to do with the next watch request on them. */
  parents?: Map<string, KubeObject>;
  parentWatches?: ((res: ServerResponse) => void)[];
  /** The query of every parents request (list or watch). */
  parentQueries?: URLSearchParams[];
  /** The next watch of Furnish's templates' objects (drift, label furnish.dev/template). */
  driftWatch?: (res: ServerResponse) => void;
  /** The resourceVersion each drift watch asked for. */
  driftWatchRequests?: string[];
}

/** A ready namespace carries the Ready condition the reconciler writes with the phase. */
const nsObj = (name: string, rv: number, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid: `uid-${name}`, resourceVersion: String(rv), labels }, ...(labels['furnish.dev/phase'] === 'ready' ? { status: { conditions: [{ type: 'Ready', status: 'True' }] } } : {}) });
const parentObj = (namespace: string, rv: number): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'furnish-applyset', namespace, uid: `uid-parent-${namespace}`, resourceVersion: String(rv), labels: { 'applyset.kubernetes.io/id': `applyset-${namespace}-v1` } } });

function apiServer(script: Script): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const templates = url.pathname.includes('namespacetemplates');
    if (url.pathname === '/api/v1/configmaps' && url.searchParams.get('labelSelector') === 'furnish.dev/template') {
      if (!url.searchParams.get('watch')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [], metadata: { resourceVersion: String(script.rv) } }));
      script.driftWatchRequests?.push(url.searchParams.get('resourceVersion') ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      script.driftWatch?.(res);
      script.driftWatch = undefined;
      return;
    }
    if (url.pathname === '/api/v1/configmaps') {
      script.parentQueries?.push(url.searchParams);
      if (!url.searchParams.get('watch')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [...(script.parents ?? new Map()).values()], metadata: { resourceVersion: String(script.rv) } }));
      res.writeHead(200, { 'content-type': 'application/json' });
      script.parentWatches?.shift()?.(res);
      return; // otherwise a quiet watch
    }
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
/** The watch's resourceVersion is too old (410 Gone): the relay must relist. */
const expire = (res: ServerResponse) => {
  event(res, 'ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
  res.end();
};

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function setup(script: Script, watchSilenceSeconds?: number, pendingRedriveSeconds?: number, busOptions: MemoryBusOptions = {}, handed: RelayObservers = {}): Promise<{ relay: Relay; received: ReconcileMessage[]; topicOf: Map<string, string>; kube: KubeClient }> {
  const { server, url } = await apiServer(script);
  const kube = createKubeClient({ server: url, agent: new Agent({ keepAlive: true }), headers: async () => ({}) }, { sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))) });
  const bus = createMemoryBus(busOptions);
  const received: ReconcileMessage[] = [];
  /** `type name@rv` → the topic it arrived on. */
  const topicOf = new Map<string, string>();
  for (const topic of ['ns', 'tpl']) {
    bus.subscribe(topic, async (d) => {
      const m = decodeMessage(d.data);
      if (!m.ok) return;
      received.push(m.message);
      topicOf.set(`${m.message.type} ${m.message.name}@${m.message.resourceVersion}`, topic);
    });
  }
  const relay = createRelay({ kube, bus, config: { cluster: 'c', resyncSeconds: 0, watchTimeoutSeconds: 30, pageSize: 100, topics: { namespaces: 'ns', templates: 'tpl' }, ...(watchSilenceSeconds !== undefined ? { watchSilenceSeconds } : {}), ...(pendingRedriveSeconds !== undefined ? { pendingRedriveSeconds } : {}) }, log: silentLogger, observers: [organizationsObserver()], ...handed, sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))) });
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
      expire(res);
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
      expire(res);
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

  it('a pending namespace whose message was dropped after every retry is re-driven on the namespaces topic, with resync off', async () => {
    const script: Script = { namespaces: new Map([['new', nsObj('new', 5, { 'furnish.dev/phase': 'pending' })]]), rv: 10, watches: [], watchRequests: [], lists: 0 };
    // Pub/Sub refuses every attempt of the first publish (an outage); the redrive's publish goes through.
    let refusals = PUBLISH_RETRY.attempts;
    const { relay, received, topicOf } = await setup(script, undefined, 0.2, { dropTopic: (t) => t === 'ns' && refusals-- > 0 });
    await relay.start();
    await until(() => received.length >= 1);
    expect(relay.counters.publishFailed).toBe(1);
    expect(relay.counters.redriven).toBeGreaterThanOrEqual(1);
    expect(received[0]).toMatchObject({ name: 'new', type: 'SYNC' });
    expect(topicOf.get('SYNC new@5')).toBe('ns');
  });

  it("a drifted object's reconcile carries the object's resourceVersion (the reconcile reads at or after it) and moves no organization", async () => {
    const script: Script = { namespaces: new Map(), rv: 10, watches: [], watchRequests: [], lists: 0 };
    const cm = (type: string, rv: number, manager: string) => ({ type, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'quota', namespace: 'team-a', resourceVersion: String(rv), labels: { 'furnish.dev/template': 't' }, managedFields: [{ manager, operation: 'Update', time: '2026-01-01T00:00:00Z' }] } } });
    script.driftWatch = (res) => {
      res.write(`${JSON.stringify(cm('MODIFIED', 31, 'furnish'))}\n`); // the reconciler's own write: no drift
      res.write(`${JSON.stringify(cm('MODIFIED', 32, 'kubectl-edit'))}\n`);
      res.write(`${JSON.stringify(cm('DELETED', 33, 'kubectl-edit'))}\n`);
    };
    const { relay, received } = await setup(script, undefined, undefined, {}, { driftWatches: [{ kind: 'Namespace', resources: ['configmaps'] }] });
    await relay.start();
    await until(() => received.length >= 2);
    expect(received.map((m) => `${m.type} ${m.name}@${m.resourceVersion} ${JSON.stringify(m.organizations)}`)).toEqual(['MODIFIED team-a@32 []', 'MODIFIED team-a@33 []']);
    expect(relay.counters.drift).toBe(2);
  });

  it('a silent drift watch (a half-open connection) is ended by the watchdog and opened again from the last revision it saw, so drift is repaired again', async () => {
    const script: Script = { namespaces: new Map(), rv: 10, watches: [], watchRequests: [], lists: 0, driftWatchRequests: [] };
    const cm = (rv: number, manager: string) => `${JSON.stringify({ type: 'MODIFIED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'quota', namespace: 'team-a', resourceVersion: String(rv), labels: { 'furnish.dev/template': 't' }, managedFields: [{ manager, operation: 'Update', time: '2026-01-01T00:00:00Z' }] } } })}\n`;
    // The reconciler's own write, then nothing ever again (not even a bookmark).
    script.driftWatch = (res) => res.write(cm(31, 'furnish'));
    const { relay, received } = await setup(script, 0.3, undefined, {}, { driftWatches: [{ kind: 'Namespace', resources: ['configmaps'] }] });
    await relay.start();
    await until(() => script.driftWatchRequests!.length === 1);
    script.driftWatch = (res) => res.write(cm(40, 'kubectl-edit'));
    await until(() => received.some((m) => m.name === 'team-a' && m.resourceVersion === '40'), 8000);
    expect(relay.counters.silentDriftWatches).toBeGreaterThanOrEqual(1);
    expect(script.driftWatchRequests!.slice(0, 2)).toEqual(['10', '31']);
    expect(metricsText(relay, { published: 0, failed: 0, delivered: 0, redelivered: 0, deadLettered: 0 })).toMatch(/furnish_relay_silent_drift_watches_total [1-9]/);
  }, 15_000);

  it('a drift watch that expires (410 Gone) resumes from the current revision, and every namespace is resynced once that revision is known: drift in the gap is repaired now, not at the next periodic resync', async () => {
    const script: Script = { namespaces: new Map([['team-a', nsObj('team-a', 5)], ['team-b', nsObj('team-b', 6)]]), rv: 10, watches: [], watchRequests: [], lists: 0, driftWatchRequests: [] };
    script.driftWatch = (res) => expire(res);
    const { relay, received } = await setup(script, undefined, undefined, {}, { driftWatches: [{ kind: 'Namespace', resources: ['configmaps'] }] });
    await relay.start();
    await until(() => script.driftWatchRequests!.length >= 2 && received.filter((m) => m.type === 'SYNC').length >= 2);
    // The first list announced each namespace; the resync, after the watch had its new revision, sends each again.
    expect(received.map((m) => `${m.type} ${m.name}`).sort()).toEqual(['ADDED team-a', 'ADDED team-b', 'SYNC team-a', 'SYNC team-b']);
    expect([relay.counters.driftGaps, relay.counters.resyncs]).toEqual([1, 1]);
    expect(script.driftWatchRequests!.slice(0, 2)).toEqual(['10', '10']);
    expect(metricsText(relay, { published: 0, failed: 0, delivered: 0, redelivered: 0, deadLettered: 0 })).toMatch(/furnish_relay_drift_gaps_total 1/);
  });

  it("every write of a namespace's ApplySet parent, by anyone, is a reconcile of its namespace at the parent's resourceVersion; the first list and a resync send nothing for parents", async () => {
    const script: Script = { namespaces: new Map([['a', nsObj('a', 5)], ['b', nsObj('b', 6)]]), rv: 10, watches: [], watchRequests: [], lists: 0, parents: new Map([['a', parentObj('a', 7)]]), parentWatches: [], parentQueries: [] };
    script.parentWatches!.push((res) => {
      event(res, 'ADDED', parentObj('b', 12));
      event(res, 'MODIFIED', parentObj('a', 13));
      event(res, 'MODIFIED', parentObj('a', 13)); // a replay: same version, nothing
      event(res, 'DELETED', parentObj('b', 14));
    });
    const { relay, received, topicOf } = await setup(script);
    await relay.start();
    await until(() => received.length >= 5);
    // Both parents are named furnish-applyset: the relay tells them apart by namespace.
    expect(received.map((m) => `${m.kind} ${m.type} ${m.name}@${m.resourceVersion} uid=${m.uid} ${JSON.stringify(m.organizations)}`)).toEqual([
      'Namespace ADDED a@5 uid=uid-a []',
      'Namespace ADDED b@6 uid=uid-b []',
      'Namespace MODIFIED b@12 uid= []',
      'Namespace MODIFIED a@13 uid= []',
      'Namespace MODIFIED b@14 uid= []',
    ]);
    expect(topicOf.get('MODIFIED a@13')).toBe('ns');
    expect(relay.counters.parents).toBe(3);
    expect(metricsText(relay, { published: 5, failed: 0, delivered: 5, redelivered: 0, deadLettered: 0 })).toContain('furnish_relay_parents_total 3');
    // Only Furnish's parents: by the ApplySet id label and the parent's name, on the list and the watch.
    for (const q of script.parentQueries!) expect([q.get('labelSelector'), q.get('fieldSelector')]).toEqual(['applyset.kubernetes.io/id', 'metadata.name=furnish-applyset']);
    expect(script.parentQueries!.map((q) => q.get('watch'))).toEqual([null, '1']);
    await relay.resync();
    await until(() => received.length >= 7);
    expect(received.slice(5).map((m) => `${m.type} ${m.name}`)).toEqual(['SYNC a', 'SYNC b']);
    expect(script.parentQueries).toHaveLength(2); // the resync does not list parents
  });

  it('a relist of the parents after 410 Gone sends what changed meanwhile: a parent written or gone, at the version that saw it', async () => {
    const script: Script = { namespaces: new Map([['a', nsObj('a', 5)]]), rv: 10, watches: [], watchRequests: [], lists: 0, parents: new Map([['a', parentObj('a', 7)], ['b', parentObj('b', 8)], ['c', parentObj('c', 9)]]), parentWatches: [], parentQueries: [] };
    script.parentWatches!.push((res) => {
      script.parents!.set('a', parentObj('a', 20));
      script.parents!.delete('b');
      script.rv = 25;
      expire(res);
    });
    const { relay, received } = await setup(script);
    await relay.start();
    await until(() => received.length >= 3);
    expect(received.map((m) => `${m.type} ${m.name}@${m.resourceVersion}`)).toEqual(['ADDED a@5', 'MODIFIED a@20', 'MODIFIED b@25']);
    await new Promise((r) => setTimeout(r, 100));
    expect(received).toHaveLength(3); // c did not change: nothing
  });
});
