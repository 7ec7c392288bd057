import { describe, it, expect } from '@jest/globals';
import { createMemoryBus } from '../../../shared/bus/memory.ts';
import { KEY, LEGACY_KEY } from '../../../shared/keys.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { decodeMessage, encodeMessage, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { fanoutNeeded, fanoutTargets } from '../../../shared/reconcile/fanout.ts';
import { silentLogger } from '../../../shared/log.ts';
import { reconcileNamespace } from '../../../shared/reconcile/namespace.ts';
import { fanoutMessage, legacyTemplateKeys, reconcileTemplate, type TemplateDeps } from '../../../shared/reconcile/template.ts';
import { heldBackBy, maybeCountedPending } from '../../../shared/reconcile/template-status.ts';
import { memoryApi } from './memory-api.ts';
import { gate, holdingClient } from '../../support/fanout-race.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';

const ns = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.phase]: 'ready', ...labels }, annotations: { [KEY.creator]: 'alice' } } });
const tpl = (name: string, selector: Record<string, string>, data: Record<string, string> = { a: '1' }): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: selector } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-cm` }, data }] },
});
const TEMPLATES = '/apis/furnish.dev/v1alpha1/namespacetemplates';

/** A fan-out (the relay's ADDED, MODIFIED or DELETED) and a recount (SYNC, STATUS), as the runtime asks for them. */
const fanOut = { fanOut: true };

function setup() {
  const api = memoryApi();
  const bus = createMemoryBus();
  const received: ReconcileMessage[] = [];
  const keys: string[] = [];
  bus.subscribe('ns', async (d) => {
    const m = decodeMessage(d.data);
    if (!m.ok) return;
    received.push(m.message);
    keys.push(d.orderingKey);
    await reconcileNamespace({ kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger }, m.message.name, { resourceVersion: m.message.resourceVersion });
  });
  // Progress every two messages, so that the five namespaces of a test report twice before the end.
  const deps: TemplateDeps = { kube: api.client, resolver: new ResourceResolver(api.client), bus, cluster: 'local', namespaceTopic: 'ns', log: silentLogger, progressEvery: 2, concurrency: 4, messagesPerSecond: 1e6 };
  const names = () => received.map((m) => m.name).sort();
  return { api, bus, received, keys, names, deps };
}

const template = (api: ReturnType<typeof memoryApi>, name: string) => api.get('', 'NamespaceTemplate', undefined, name) as NamespaceTemplate;

describe('reconcileTemplate', () => {
  it('a fan-out publishes one message per namespace, on its own ordering key, naming only the namespace, the cause and the revision the fan-out read; then counts', async () => {
    const { api, bus, received, keys, names, deps } = setup();
    for (const n of ['a', 'b', 'c']) api.put(ns(n, { tier: 'gold' }));
    api.put(ns('d', { tier: 'silver' }));
    api.put(tpl('gold', { tier: 'gold' }));
    const rv = template(api, 'gold').metadata.resourceVersion!;
    const r = await reconcileTemplate(deps, 'gold', fanOut);
    expect(r).toMatchObject({ fannedOut: true, targets: 3, published: 3 });
    await bus.idle();
    expect(names()).toEqual(['a', 'b', 'c']);
    expect(keys.sort()).toEqual(['local/Namespace/a', 'local/Namespace/b', 'local/Namespace/c']);
    // Nothing the receiver would trust: the name, the revision (at or after the template's), the cause for logs.
    const listed = received[0]!.resourceVersion!;
    expect(Number(listed)).toBeGreaterThanOrEqual(Number(rv));
    expect(received.map((m) => Object.keys(m).sort())).toEqual(Array(3).fill(['cause', 'cluster', 'kind', 'name', 'resourceVersion', 'type', 'v']));
    expect(received.every((m) => m.type === 'FANOUT' && m.kind === 'Namespace' && m.cause === `template/gold@${rv}` && m.resourceVersion === listed)).toBe(true);
    const t = template(api, 'gold');
    expect(t.metadata.annotations?.[LEGACY_KEY.fanoutHash]).toBeUndefined();
    expect(t.status?.matched).toBe(3);
    expect(t.status?.conditions?.find((c) => c.type === 'Propagated')).toMatchObject({ status: 'True', message: 'published 3 of 3 reconcile messages' });
    // A recount (SYNC, STATUS) publishes nothing; the counts now show the work done.
    received.length = 0;
    const again = await reconcileTemplate(deps, 'gold');
    expect(again).toMatchObject({ fannedOut: false, published: 0 });
    await bus.idle();
    expect(received).toEqual([]);
    expect(template(api, 'gold').status).toMatchObject({ matched: 3, applied: 3, failed: 0 });
    expect(template(api, 'gold').status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    // And writes nothing once the status says it all.
    const writes = api.writes().length;
    expect((await reconcileTemplate(deps, 'gold')).statusWritten).toBe(false);
    expect(api.writes().length).toBe(writes);
  });

  it('fans out on every create, change or deletion the relay sees (no record of an earlier fan-out decides), never on a resync or a namespace\'s notice', () => {
    expect(['ADDED', 'MODIFIED', 'DELETED'].map(fanoutNeeded)).toEqual([true, true, true]);
    expect(['SYNC', 'STATUS', 'FANOUT'].map(fanoutNeeded)).toEqual([false, false, false]);
  });

  it('a template changed twice fans out twice: its status (Ready at this generation) decides nothing', async () => {
    const { api, bus, names, deps } = setup();
    api.put(ns('a', { tier: 'gold' }));
    api.put(tpl('gold', { tier: 'gold' }));
    await reconcileTemplate(deps, 'gold', fanOut);
    await bus.idle();
    await reconcileTemplate(deps, 'gold');
    expect(template(api, 'gold').status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(await reconcileTemplate(deps, 'gold', fanOut)).toMatchObject({ fannedOut: true, published: 1 });
    await bus.idle();
    expect(names()).toEqual(['a', 'a']);
  });

  it('a changed selector reaches the namespaces that matched before (their parent names it) and those that match now', async () => {
    const { api, bus, received, names, deps } = setup();
    api.put(ns('a', { tier: 'gold' }));
    api.put(ns('b', { tier: 'silver' }));
    api.put(tpl('t', { tier: 'gold' }));
    await reconcileTemplate(deps, 't', fanOut);
    await bus.idle();
    received.length = 0;
    const moved = template(api, 't');
    api.put({ ...moved, spec: { ...moved.spec, namespaces: { labelSelector: { matchLabels: { tier: 'silver' } } } } });
    const r = await reconcileTemplate(deps, 't', fanOut);
    expect(r.targets).toBe(2);
    await bus.idle();
    expect(names()).toEqual(['a', 'b']);
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'b', 't-cm')).toBeDefined();
  });

  it('a deleted template reaches every namespace whose parent names it, whose objects are pruned; applied again, it fans out again', async () => {
    const { api, bus, deps } = setup();
    api.put(ns('a', { tier: 'gold' }));
    api.put(tpl('t', { tier: 'gold' }));
    await reconcileTemplate(deps, 't', fanOut);
    await bus.idle();
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeDefined();
    const exported = template(api, 't');
    await api.client.call({ method: 'DELETE', path: `${TEMPLATES}/t` });
    const r = await reconcileTemplate(deps, 't', fanOut);
    expect(r).toMatchObject({ deleted: true, targets: 1, published: 1 });
    await bus.idle();
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeUndefined();
    api.put({ ...exported, metadata: { name: 't', uid: 'uid-t-again' }, status: undefined });
    expect(await reconcileTemplate(deps, 't', fanOut)).toMatchObject({ fannedOut: true, targets: 1 });
    await bus.idle();
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeDefined();
  });

  it('removes the fan-out bookkeeping earlier versions kept on a template at its next reconcile (a recount too), and writes nothing for it once gone', async () => {
    const { api, deps } = setup();
    api.put(ns('a', { tier: 'gold' }));
    const t = tpl('t', { tier: 'gold' });
    api.put({ ...t, metadata: { ...t.metadata, annotations: { [LEGACY_KEY.fanoutHash]: 'abc/uid-t', [LEGACY_KEY.fanoutEntries]: '{"s":"x","e":{}}', keep: 'me' } } });
    expect(legacyTemplateKeys(template(api, 't'))).toEqual({ metadata: { annotations: { [LEGACY_KEY.fanoutHash]: null, [LEGACY_KEY.fanoutEntries]: null } } });
    await reconcileTemplate(deps, 't');
    expect(template(api, 't').metadata.annotations).toEqual({ keep: 'me' });
    expect(legacyTemplateKeys(template(api, 't'))).toBeNull();
    const writes = api.writes().length;
    await reconcileTemplate(deps, 't');
    expect(api.writes().slice(writes).filter((w) => w.path === `${TEMPLATES}/t`)).toEqual([]);
  });

  it('a namespace being deleted is not counted: one still pending no longer holds Ready back, and it names the templates to tell', async () => {
    const { api, bus, deps } = setup();
    for (const n of ['a', 'b']) api.put(ns(n, { tier: 'gold' }));
    api.put(tpl('gold', { tier: 'gold' }));
    api.put(tpl('silver', { tier: 'silver' }));
    await reconcileTemplate(deps, 'gold', fanOut);
    await bus.idle();
    const stuck = ns('c', { tier: 'gold', [KEY.phase]: 'pending' });
    api.put(stuck);
    const recount = async () => {
      await reconcileTemplate(deps, 'gold');
      const status = template(api, 'gold').status;
      return { matched: status?.matched, ready: status?.conditions?.find((c) => c.type === 'Ready')?.status };
    };
    expect(await recount()).toEqual({ matched: 3, ready: 'False' });
    api.put({ ...stuck, metadata: { ...stuck.metadata, deletionTimestamp: '2026-11-23T08:00:00Z' } });
    expect(await recount()).toEqual({ matched: 2, ready: 'True' });
    const templates = ['gold', 'silver'].map((n) => template(api, n));
    const info = (labels: Record<string, string>, annotations: Record<string, string> = {}) => ({ name: 'c', labels: { tier: 'gold', ...labels }, annotations });
    expect(heldBackBy(info({ [KEY.phase]: 'pending' }), [], templates)).toEqual(['gold']);
    expect(heldBackBy(info({ [KEY.phase]: 'ready' }), ['silver'], null)).toEqual(['silver']);
    expect(maybeCountedPending(info({ [KEY.phase]: 'pending' }))).toBe(true);
    expect(maybeCountedPending(info({}))).toBe(true);
    expect(maybeCountedPending(info({ [KEY.phase]: 'ready' }))).toBe(false);
    expect(maybeCountedPending(info({}, { [KEY.optOut]: 'true' }))).toBe(false);
  });

  it('a recount reads the template\'s objects cluster-wide, every kind: a namespace counts applied only once it holds this generation\'s objects', async () => {
    const { api, bus, deps } = setup();
    api.put(ns('a', { tier: 'gold' }));
    api.put(tpl('t', { tier: 'gold' }));
    await reconcileTemplate(deps, 't', fanOut);
    await bus.idle();
    // v2, not yet fanned out: the parent still names t, the object holds v1.
    const was = template(api, 't');
    api.put({ ...tpl('t', { tier: 'gold' }, { a: '2' }), metadata: { ...was.metadata, generation: 2 }, status: was.status });
    api.requests.length = 0;
    await reconcileTemplate(deps, 't');
    expect(api.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/configmaps' && r.query?.labelSelector === `${KEY.template}=t`)).toHaveLength(1);
    expect(template(api, 't').status).toMatchObject({ matched: 1, applied: 0 });
    expect(template(api, 't').status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', observedGeneration: 2 });
  });

  it('reports progress while publishing', async () => {
    const { api, deps } = setup();
    for (const n of ['a', 'b', 'c', 'd', 'e']) api.put(ns(n, { tier: 'gold' }));
    api.put(tpl('gold', { tier: 'gold' }));
    await reconcileTemplate(deps, 'gold', fanOut);
    const statusWrites = api.writes().filter((w) => w.path.startsWith(`${TEMPLATES}/gold/status`)).map((w) => (w.body as { status: NamespaceTemplate['status'] }).status?.conditions?.find((c) => c.type === 'Propagated')?.message);
    // Each report once (the recount after it keeps the last), in order.
    expect(statusWrites.filter((m, i) => m !== statusWrites[i - 1])).toEqual(['published 2 of 5 reconcile messages', 'published 4 of 5 reconcile messages', 'published 5 of 5 reconcile messages']);
    // No report says Ready before a count does: a new template's status has no counts yet, and
    // kubectl wait --for=condition=Ready must not return on a report (it did, once, on the real server).
    const ready = api.writes().filter((w) => w.path.startsWith(`${TEMPLATES}/gold/status`)).map((w) => (w.body as { status: NamespaceTemplate['status'] }).status)
      .filter((st) => st?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    for (const st of ready) expect(st).toMatchObject({ matched: 5, applied: 5 });
  });

  it('a publish that fails fails the delivery (the fan-out runs again: harmless)', async () => {
    const api = memoryApi();
    api.put(ns('a', { tier: 'gold' }));
    api.put(tpl('gold', { tier: 'gold' }));
    const bus = createMemoryBus({ dropTopic: () => true });
    await expect(reconcileTemplate({ kube: api.client, bus, cluster: 'local', namespaceTopic: 'ns', log: silentLogger }, 'gold', fanOut)).rejects.toThrow('template gold: 1 of 1 publishes failed');
  });

  it('two recounts side by side: the one that read earlier never lands its count over the later one\'s; refused (409), it reads and recounts', async () => {
    const api = memoryApi();
    const held = holdingClient(api.client);
    api.put(ns('a', { [KEY.phase]: 'pending', tier: 'gold' }));
    api.put(tpl('gold', { tier: 'gold' }));
    const deps = (kube: KubeClient): TemplateDeps => ({ kube, resolver: new ResourceResolver(kube), bus: createMemoryBus(), cluster: 'local', namespaceTopic: 'ns', log: silentLogger });
    const statusOf = () => (api.get('furnish.dev/v1alpha1', 'NamespaceTemplate', undefined, 'gold') as NamespaceTemplate).status;
    const g = gate((req) => req.method === 'PATCH' && req.path.endsWith('/status'), true);
    held.set(g.hold);
    // Reads before the namespace is furnished (0 of 1), and its write waits.
    const early = reconcileTemplate(deps(held.kube), 'gold');
    await g.reached;
    await reconcileNamespace({ kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger }, 'a');
    await reconcileTemplate(deps(api.client), 'gold');
    expect(statusOf()).toMatchObject({ matched: 1, applied: 1 });
    g.open();
    await expect(early).resolves.toMatchObject({ statusWritten: false });
    expect(statusOf()).toMatchObject({ matched: 1, applied: 1 });
    expect(statusOf()?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('a fan-out\'s progress lands though recounts write the status beside it: each report read and written again on a conflict, the counts they wrote kept', async () => {
    const { api, deps } = setup();
    for (const n of ['a', 'b', 'c', 'd', 'e']) api.put(ns(n, { tier: 'gold' }));
    api.put(tpl('gold', { tier: 'gold' }));
    const bumped = new Set<string>();
    // Before each progress report's first attempt, a recount elsewhere writes the status (counts 9 of 9).
    const held = holdingClient(api.client);
    held.set((req) => {
      const message = (req.body as { status?: NamespaceTemplate['status'] } | undefined)?.status?.conditions?.find((c) => c.type === 'Propagated')?.message;
      if (req.method !== 'PATCH' || !message || bumped.has(message)) return undefined;
      bumped.add(message);
      const live = api.get('furnish.dev/v1alpha1', 'NamespaceTemplate', undefined, 'gold')!;
      api.put({ ...live, status: { ...(live.status as object), matched: 9, applied: 9 } });
      return undefined;
    });
    await expect(reconcileTemplate({ ...deps, kube: held.kube }, 'gold', fanOut)).resolves.toMatchObject({ fannedOut: true, published: 5 });
    const reports = api.writes().filter((w) => w.path.startsWith(`${TEMPLATES}/gold/status`)).map((w) => (w.body as { status: NamespaceTemplate['status'] }).status);
    const propagated = reports.map((st) => st?.conditions?.find((c) => c.type === 'Propagated')?.message);
    expect(propagated.filter((m, i) => m !== propagated[i - 1])).toEqual(['published 2 of 5 reconcile messages', 'published 4 of 5 reconcile messages', 'published 5 of 5 reconcile messages']);
    // A report written again keeps the counts the recount wrote (the fan-out's own recount then writes its own).
    expect(reports[1]).toMatchObject({ matched: 9, applied: 9, conditions: expect.arrayContaining([expect.objectContaining({ type: 'Propagated', message: 'published 2 of 5 reconcile messages' })]) });
  });

  it('a fan-out overtaken by a newer generation never marks that generation Propagated', async () => {
    const { api, deps } = setup();
    for (const n of ['a', 'b', 'c']) api.put(ns(n, { tier: 'gold' }));
    api.put({ ...tpl('gold', { tier: 'gold' }), metadata: { name: 'gold', generation: 1 } });
    const held = holdingClient(api.client);
    let edited = false;
    // An administrator edits the spec just as the fan-out reports it is done.
    held.set((req) => {
      const done = (req.body as { status?: NamespaceTemplate['status'] } | undefined)?.status?.conditions?.some((c) => c.type === 'Propagated' && c.status === 'True');
      if (req.method !== 'PATCH' || !done || edited) return undefined;
      edited = true;
      const live = api.get('furnish.dev/v1alpha1', 'NamespaceTemplate', undefined, 'gold')!;
      api.put({ ...tpl('gold', { tier: 'gold' }, { a: '2' }), metadata: { ...live.metadata, generation: 2 }, status: live.status } as KubeObject);
      return undefined;
    });
    await reconcileTemplate({ ...deps, kube: held.kube, progressEvery: 1 }, 'gold', fanOut);
    expect(edited).toBe(true);
    const t = api.get('furnish.dev/v1alpha1', 'NamespaceTemplate', undefined, 'gold') as NamespaceTemplate;
    expect(t.status?.conditions?.find((c) => c.type === 'Propagated')).toMatchObject({ status: 'False', observedGeneration: 1 });
  });

  it('a status written by someone else at each of its recounts fails a recount\'s delivery, saying so (Pub/Sub redelivers it); a fan-out\'s is acknowledged', async () => {
    let refused = 0;
    const api = memoryApi((req) => (req.method === 'PATCH' && req.path.endsWith('/status') && ++refused ? { status: 409, error: 'the object has been modified' } : undefined));
    api.put(ns('a', { tier: 'gold' }));
    api.put(tpl('gold', { tier: 'gold' }));
    const deps: TemplateDeps = { kube: api.client, resolver: new ResourceResolver(api.client), bus: createMemoryBus(), cluster: 'local', namespaceTopic: 'ns', log: silentLogger };
    await expect(reconcileTemplate(deps, 'gold')).rejects.toThrow('template gold: written by someone else during each of 3 recounts');
    expect(refused).toBe(3);
    // After a fan-out, the delivery is acknowledged: its namespaces' STATUS messages recount; publishing them all again would not help.
    await expect(reconcileTemplate(deps, 'gold', fanOut)).resolves.toMatchObject({ fannedOut: true, published: 1, statusWritten: false });
  });
});

describe('fanoutMessage', () => {
  it('names the namespace, on its ordering key, with the revision the fan-out read; the decoder keeps exactly that', () => {
    const m = fanoutMessage('c', 'team-a', 'template/gold@7', '120');
    expect(m).toEqual({ v: 1, cluster: 'c', kind: 'Namespace', name: 'team-a', type: 'FANOUT', cause: 'template/gold@7', resourceVersion: '120' });
    expect(encodeMessage(m).orderingKey).toBe('c/Namespace/team-a');
    const decoded = decodeMessage(encodeMessage(m).data);
    expect(decoded.ok && decoded.message).toEqual(m);
    // A list without a revision (never from an API server): none named, the receiver lists anew.
    expect(fanoutMessage('c', 'team-a', 'x', '').resourceVersion).toBeUndefined();
  });
});

describe('fanoutTargets', () => {
  const info = (name: string, labels: Record<string, string>) => ({ name, labels, annotations: {} });
  const t = tpl('gold', { tier: 'gold' });
  const namespaces = [
    info('ready', { [KEY.phase]: 'ready', tier: 'gold' }),
    info('carried', { [KEY.phase]: 'failed' }),
    info('untouched', { [KEY.phase]: 'ready' }),
    info('pending', { [KEY.phase]: 'pending', tier: 'gold' }),
    info('pending-other', { [KEY.phase]: 'pending' }),
    info('predates-gold', { tier: 'gold' }),
    info('kube-system', { tier: 'gold' }),
    info('extra-system', { [KEY.phase]: 'pending', tier: 'gold' }),
  ];
  const parents = [{ namespace: 'carried', applied: [], failed: ['gold'] }, { namespace: 'untouched', applied: ['silver'], failed: [] }, { namespace: 'gone', applied: ['gold'], failed: [] }];

  it('the namespaces it selects now, whatever their phase, and those whose parent names it (applied or failed); system namespaces and namespaces gone never', () => {
    expect(fanoutTargets('gold', t, namespaces, parents, ['extra-system'])).toEqual(['carried', 'pending', 'predates-gold', 'ready']);
  });

  it('a deleted template (or one being deleted) reaches only the namespaces whose parent names it', () => {
    expect(fanoutTargets('gold', null, namespaces, parents, ['extra-system'])).toEqual(['carried']);
    expect(fanoutTargets('gold', { ...t, metadata: { ...t.metadata, deletionTimestamp: '2026-11-23T08:00:00Z' } }, namespaces, parents, ['extra-system'])).toEqual(['carried']);
  });

  it('never messages a namespace being deleted, matching or carrying the template', () => {
    const deleting = new Set(['ready', 'carried']);
    expect(fanoutTargets('gold', t, namespaces, parents, ['extra-system'], deleting)).toEqual(['pending', 'predates-gold']);
  });
});
