// A template change racing a namespace reconcile in flight: the reconcile listed the templates
// before the change and writes after the fan-out read which namespaces hold the template. Each
// interleaving is forced by holding requests in the in-memory API; the fan-out's messages are then
// answered as the runtime answers them, each after the reconcile already in flight (Pub/Sub
// delivers one ordering key's messages one at a time). test/integration/ready-race.test.ts forces
// the ready namespace's race on an API server.
import { describe, it, expect } from '@jest/globals';
import type { ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { KEY } from '../../../shared/keys.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { silentLogger } from '../../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../../shared/reconcile/namespace.ts';
import { answer, delivered, fanOut, gate, namedBy } from '../../support/fanout-race.ts';
import { memoryApi, type MemoryApi } from './memory-api.ts';

const TEMPLATE_PATH = '/apis/furnish.dev/v1alpha1/namespacetemplates/t';
const ns = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.metadataName]: name, [KEY.phase]: 'pending', team: 'x' }, annotations: { [KEY.creator]: 'alice' } } });
const tpl = (team: string, a = '1'): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 't' },
  spec: { namespaces: { labelSelector: { matchLabels: { team } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't-cm' }, data: { a } }] },
});

function setup(): { api: MemoryApi; deps: NamespaceDeps } {
  const api = memoryApi();
  api.put(ns('a'));
  api.put(tpl('x'));
  return { api, deps: { kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger } };
}

const changes: [string, (api: MemoryApi) => Promise<unknown>][] = [
  ['stops selecting it', async (api) => api.put(tpl('y'))],
  ['is deleted', (api) => api.client.call({ method: 'DELETE', path: TEMPLATE_PATH })],
];

describe('a template change while a namespace\'s first population is in flight', () => {
  it.each(changes)('a template that %s while it is being written leaves nothing of itself in the namespace', async (_what, change) => {
    const { api, deps } = setup();
    // The first population lists the templates (t selects a) and is held at its first write, the ApplySet parent.
    const writes = gate((req) => req.method !== 'GET' && req.path.startsWith('/api/v1/namespaces/a/'));
    api.hold = writes.hold;
    const first = reconcileNamespace(deps, 'a');
    await writes.reached;
    await change(api);
    const messages = await fanOut(deps, 't');
    writes.open();
    expect((await first).result).toBe('converged');
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeDefined();
    for (const { message } of messages) await answer(deps, message);
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'a', 'furnish-applyset')?.metadata.annotations?.[KEY.appliedTemplates]).toBe('');
    // The namespace was messaged alone, on the relay's topic for pending namespaces under its own
    // ordering key (so after the reconcile in flight), without the fan-out's digest: it lists the
    // templates as they are when it runs.
    const mine = messages.filter(({ message }) => message.name === 'a' || message.targets?.some((t) => t.n === 'a'));
    expect(mine.map(({ message, topic, key }) => ({ topic, key, type: message.type, templates: message.templates, targets: message.targets }))).toEqual([{ topic: 'ns-pending', key: 'local/Namespace/a', type: 'FANOUT', templates: undefined, targets: undefined }]);
  });

  it('a namespace that becomes ready between the fan-out\'s two lists is found by its ApplySet parent', async () => {
    const { api, deps } = setup();
    const writes = gate((req) => req.method !== 'GET' && req.path.startsWith('/api/v1/namespaces/a/'));
    // The fan-out lists the parents before the namespace is written, and the namespaces after it is ready.
    const namespaces = gate((req) => req.method === 'GET' && req.path === '/api/v1/namespaces' && req.query?.labelSelector === undefined);
    api.hold = (req) => writes.hold(req) ?? namespaces.hold(req);
    const first = reconcileNamespace(deps, 'a');
    await writes.reached;
    await api.client.call({ method: 'DELETE', path: TEMPLATE_PATH });
    const fanout = fanOut(deps, 't');
    await namespaces.reached;
    while (!api.requests.some((r) => r.path === '/api/v1/configmaps')) await new Promise((r) => setImmediate(r));
    writes.open();
    expect((await first).result).toBe('converged');
    expect(api.get('v1', 'Namespace', undefined, 'a')?.metadata.labels?.[KEY.phase]).toBe('ready');
    namespaces.open();
    const messages = await fanout;
    expect(namedBy(messages)).toEqual(['a']);
    for (const { message } of messages) await answer(deps, message);
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeUndefined();
  });
});

/** Namespace a, ready, selected by no template (team z); then labelled so that t (v1) selects it: the relay's message for that change is reconciled. */
async function readyThenSelected(api: MemoryApi, deps: NamespaceDeps): Promise<void> {
  const a = ns('a');
  api.put({ ...a, metadata: { ...a.metadata, labels: { ...a.metadata.labels, team: 'z' } } });
  expect((await reconcileNamespace(deps, 'a')).result).toBe('converged');
  const ready = api.get('v1', 'Namespace', undefined, 'a')!;
  expect(ready.metadata.labels?.[KEY.phase]).toBe('ready');
  api.put({ ...ready, metadata: { ...ready.metadata, labels: { ...ready.metadata.labels, team: 'x' } } });
}

/** a's reconcile, delivered until it succeeds, held at its first write in a (its ApplySet parent): open the gate to let it go on. */
async function heldAtFirstWrite(api: MemoryApi, deps: NamespaceDeps): Promise<{ first: ReturnType<typeof gate>; reconcile: Promise<number> }> {
  const first = gate((req) => req.method !== 'GET' && req.path.startsWith('/api/v1/namespaces/a/'), true);
  api.hold = first.hold;
  const reconcile = delivered(() => reconcileNamespace(deps, 'a'));
  await first.reached;
  return { first, reconcile };
}

const data = (api: MemoryApi): unknown => api.get('v1', 'ConfigMap', 'a', 't-cm')?.data;

describe('a template change while a ready namespace is being selected by it', () => {
  const readyChanges: [string, (api: MemoryApi) => Promise<unknown>, unknown][] = [
    ...changes.map(([what, change]): [string, (api: MemoryApi) => Promise<unknown>, unknown] => [what, change, undefined]),
    ['changes its objects', async (api) => api.put(tpl('x', '2')), { a: '2' }],
  ];

  it.each(readyChanges)('a template that %s while the reconcile that first names it is in flight: that reconcile fails, and its redelivery plans from the new version', async (_what, change, want) => {
    const { api, deps } = setup();
    await readyThenSelected(api, deps);
    // The reconcile of the label change lists the templates (t v1 selects a) and is held at its first write, the parent naming t.
    const { first, reconcile } = await heldAtFirstWrite(api, deps);
    await change(api);
    // The fan-out reads the parents before that write, and a is ready: not messaged alone. A template
    // that still selects a sends it in a batch, answered here before the held reconcile writes.
    const messages = await fanOut(deps, 't');
    expect(messages.filter(({ message }) => message.name === 'a')).toEqual([]);
    for (const { message } of messages) await delivered(() => answer(deps, message));
    first.open();
    const deliveries = await reconcile;
    expect(data(api)).toEqual(want);
    expect(api.get('v1', 'ConfigMap', 'a', 'furnish-applyset')?.metadata.annotations?.[KEY.appliedTemplates]).toBe(want ? 't' : '');
    // Its one list after the writes saw the change: the delivery failed and was redelivered.
    expect(deliveries).toBe(2);
  });

  /** Namespaces a and b ready, selected by no template, then labelled team x; t (v1, selecting team x) is created: its fan-out, collected. */
  async function createdForTwo(): Promise<{ api: MemoryApi; deps: NamespaceDeps; batch: ReconcileMessage }> {
    const api = memoryApi();
    const deps: NamespaceDeps = { kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger };
    for (const name of ['a', 'b']) {
      api.put({ ...ns(name), metadata: { ...ns(name).metadata, labels: { ...ns(name).metadata.labels, team: 'z' } } });
      expect((await reconcileNamespace(deps, name)).result).toBe('converged');
      const ready = api.get('v1', 'Namespace', undefined, name)!;
      api.put({ ...ready, metadata: { ...ready.metadata, labels: { ...ready.metadata.labels, team: 'x' } } });
    }
    api.put(tpl('x'));
    const messages = await fanOut(deps, 't');
    expect(messages.map(({ message }) => message.targets?.map((t) => t.n))).toEqual([['a', 'b']]);
    return { api, deps, batch: messages[0]!.message };
  }

  const templateLists = (api: MemoryApi): number => api.requests.filter((r) => r.method === 'GET' && r.path === '/apis/furnish.dev/v1alpha1/namespacetemplates').length;

  it('a fan-out batch whose namespaces name a template for the first time lists the templates once more for the whole batch, after its writes', async () => {
    const { api, deps, batch } = await createdForTwo();
    const before = templateLists(api);
    expect(await delivered(() => answer(deps, batch))).toBe(1);
    // One list when the batch runs, one after the writes of both namespaces.
    expect(templateLists(api) - before).toBe(2);
    for (const name of ['a', 'b']) expect(api.get('v1', 'ConfigMap', name, 't-cm')?.data).toEqual({ a: '1' });
  });

  it('a fan-out batch that names a template for the first time while it stops selecting its namespaces is redelivered, and leaves nothing of it there', async () => {
    const { api, deps, batch } = await createdForTwo();
    // The batch is held at a's first write (its parent, naming t); t then stops selecting team x.
    const first = gate((req) => req.method !== 'GET' && req.path.startsWith('/api/v1/namespaces/a/'), true);
    api.hold = first.hold;
    const delivering = delivered(() => answer(deps, batch));
    await first.reached;
    api.put(tpl('w'));
    // The fan-out of that change reads the parents before a's is written: a is not among its targets.
    const next = await fanOut(deps, 't');
    expect(namedBy(next)).not.toContain('a');
    first.open();
    const deliveries = await delivering;
    for (const { message } of next) await delivered(() => answer(deps, message));
    for (const name of ['a', 'b']) expect(api.get('v1', 'ConfigMap', name, 't-cm')).toBeUndefined();
    expect(deliveries).toBe(2);
  });
});

describe('a template change while a reconcile of a ready namespace that holds it is in flight', () => {
  it('a reconcile that listed the templates before the change and reads the objects after the fan-out\'s batch wrote them plans from the templates as they are now: the older version is not put back', async () => {
    const { api, deps } = setup();
    expect((await reconcileNamespace(deps, 'a')).result).toBe('converged');
    // A resync's reconcile lists the templates (v1) and is held at its read of the objects.
    const objects = gate((req) => req.method === 'GET' && req.path === '/api/v1/namespaces/a/configmaps', true);
    api.hold = objects.hold;
    const resync = reconcileNamespace(deps, 'a');
    await objects.reached;
    api.put(tpl('x', '2'));
    const messages = await fanOut(deps, 't');
    expect(namedBy(messages)).toEqual(['a']);
    for (const { message } of messages) await delivered(() => answer(deps, message));
    expect(data(api)).toEqual({ a: '2' });
    objects.open();
    const r = await resync;
    expect(r.result).toBe('converged');
    expect(data(api)).toEqual({ a: '2' });
    // It found the batch's write newer than its list, listed them again, and had nothing left to write.
    expect(r.writes).toBe(0);
  });

  it('a drift repair that listed the templates before the change and writes after the fan-out\'s batch fails its delivery, and its redelivery keeps the new version', async () => {
    const { api, deps } = setup();
    expect((await reconcileNamespace(deps, 'a')).result).toBe('converged');
    // A tenant edits t-cm; the drift watch's reconcile lists t v1, reads the objects, and is held at its repair.
    api.put({ ...api.get('v1', 'ConfigMap', 'a', 't-cm')!, data: { a: 'tenant' } });
    const repair = gate((req) => req.method !== 'GET' && req.path.startsWith('/api/v1/namespaces/a/configmaps/t-cm'), true);
    api.hold = repair.hold;
    const reconcile = delivered(() => reconcileNamespace(deps, 'a'));
    await repair.reached;
    api.hold = undefined;
    // t v2; its fan-out's batch writes a before the held repair does.
    api.put(tpl('x', '2'));
    for (const { message } of await fanOut(deps, 't')) await delivered(() => answer(deps, message));
    expect(data(api)).toEqual({ a: '2' });
    repair.open();
    // The repair wrote v1 over it, then its list after the writes saw v2: redelivered, it puts v2 back.
    expect(await reconcile).toBe(2);
    expect(data(api)).toEqual({ a: '2' });
  });

  it('a reconcile whose list after its writes fails the delivery has told reconcile-template first (its redelivery may find nothing left to write)', async () => {
    const { api } = setup();
    const notified: string[][] = [];
    const deps: NamespaceDeps = { kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger, notifyTemplates: async (t) => void notified.push(t) };
    await readyThenSelected(api, deps);
    notified.length = 0;
    const { first, reconcile } = await heldAtFirstWrite(api, deps);
    api.hold = undefined;
    // t changes meanwhile, but not what it puts in a (its selector, spelled otherwise): the delivery
    // fails after its writes, and the redelivery finds nothing left to write.
    const same = tpl('x');
    api.put({ ...same, spec: { ...same.spec, namespaces: { labelSelector: { matchLabels: { team: 'x' }, matchExpressions: [] } } } });
    first.open();
    expect(await reconcile).toBe(2);
    expect(notified[0]).toContain('t');
  });

  it('a change to a template that the writes do not concern fails nothing (a batch would otherwise fail at every unrelated edit)', async () => {
    const { api, deps } = setup();
    await readyThenSelected(api, deps);
    const { first, reconcile } = await heldAtFirstWrite(api, deps);
    api.hold = undefined;
    api.put({ ...tpl('other'), metadata: { name: 'u' } });
    first.open();
    expect(await reconcile).toBe(1);
    expect(data(api)).toEqual({ a: '1' });
  });
});
