// A template change racing a namespace reconcile, each interleaving forced by holding one request
// in the in-memory API. The namespace's messages go through the namespaces topic of the in-process
// bus, which delivers one ordering key's messages one at a time (as Pub/Sub does): a fan-out's
// message waits for the reconcile in flight, and plans from templates listed at or after the
// revision the fan-out read (docs/adr/0009). No reconcile re-checks after its writes: each test
// also says how many deliveries it took. test/integration/ready-race.test.ts forces the same on an
// API server with the relay.
import { describe, it, expect } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { silentLogger } from '../../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../../shared/reconcile/namespace.ts';
import { answer, fanOut, gate, namespaceLane, namespaceMessage, publishFanOut, writeIn, type NamespaceLane } from '../../support/fanout-race.ts';
import { memoryApi, type MemoryApi } from './memory-api.ts';

const TEMPLATES = '/apis/furnish.dev/v1alpha1/namespacetemplates';
const ns = (name: string, team = 'x', phase = 'pending'): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.metadataName]: name, [KEY.phase]: phase, team }, annotations: { [KEY.creator]: 'alice' } } });
const tpl = (team: string, a = '1'): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: 't' },
  spec: { namespaces: { labelSelector: { matchLabels: { team } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't-cm' }, data: { a } }] },
});

function setup(...templates: NamespaceTemplate[]): { api: MemoryApi; deps: NamespaceDeps; lane: NamespaceLane } {
  const api = memoryApi();
  for (const t of templates) api.put(t);
  const deps: NamespaceDeps = { kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger };
  return { api, deps, lane: namespaceLane(deps) };
}

const data = (api: MemoryApi): unknown => api.get('v1', 'ConfigMap', 'a', 't-cm')?.data;
const appliedTemplates = (api: MemoryApi): string | undefined => api.get('v1', 'ConfigMap', 'a', 'furnish-applyset')?.metadata.annotations?.[KEY.appliedTemplates];
const rvOf = (api: MemoryApi, ...ref: [string, string, string | undefined, string]): string => api.get(...ref)!.metadata.resourceVersion!;
/** Each delivery, in order: the message's type and how the reconcile ended (a failed delivery as `error`). */
const deliveries = (lane: NamespaceLane): string[][] => lane.answered.map((a) => [a.message.type, a.result?.result ?? 'error']);
/** Deliveries of fan-out messages started so far. */
const fanoutsStarted = (lane: NamespaceLane): number => lane.started.filter((m) => m.type === 'FANOUT').length;

describe('a template change while a reconcile of the namespace is in flight', () => {
  it('(a) a reconcile planned from v1 writes v1; the fan-out of v2 waits for it on the namespace\'s ordering key and leaves v2, with no re-check', async () => {
    const { api, deps, lane } = setup(tpl('x'));
    api.put(ns('a'));
    // The namespace's first population lists the templates (t v1) and is held at its first write, the ApplySet parent.
    const first = gate(writeIn('a'), true);
    api.hold = first.hold;
    await lane.send(namespaceMessage('a', rvOf(api, 'v1', 'Namespace', undefined, 'a'), 'ADDED'));
    await first.reached;
    api.put(tpl('x', '2'));
    const v2 = rvOf(api, 'furnish.dev/v1alpha1', 'NamespaceTemplate', undefined, 't');
    const fanout = await publishFanOut(deps, lane.bus, 't');
    expect(fanout).toMatchObject({ fannedOut: true, targets: 1, published: 1 });
    // Its message waits behind the reconcile in flight: not started.
    expect(fanoutsStarted(lane)).toBe(0);
    first.open();
    await lane.bus.idle();
    expect(deliveries(lane)).toEqual([['ADDED', 'converged'], ['FANOUT', 'converged']]);
    // The first wrote v1 (delivered once: nothing re-checked it); the fan-out's, listed at or after the change, v2.
    expect(lane.answered[0]!.result!.writes).toBeGreaterThan(0);
    expect(Number(lane.answered[1]!.message.resourceVersion)).toBeGreaterThanOrEqual(Number(v2));
    expect(data(api)).toEqual({ a: '2' });
  });

  it('(b) a namespace newly selected by v1 while v2 (which no longer selects it) fans out before the parent names it: the parent\'s write, sent on by the relay, leaves it without the template', async () => {
    const { api, deps, lane } = setup(tpl('x'));
    api.put(ns('a', 'z'));
    await lane.send(namespaceMessage('a'));
    await lane.bus.idle();
    expect(api.get('v1', 'Namespace', undefined, 'a')?.metadata.labels?.[KEY.phase]).toBe('ready');
    // Relabelled team x: its reconcile lists t v1 (it selects a) and is held at its first write, the parent naming t.
    const ready = api.get('v1', 'Namespace', undefined, 'a')!;
    api.put({ ...ready, metadata: { ...ready.metadata, labels: { ...ready.metadata.labels, team: 'x' } } });
    const first = gate(writeIn('a'), true);
    api.hold = first.hold;
    await lane.send(namespaceMessage('a', rvOf(api, 'v1', 'Namespace', undefined, 'a')));
    await first.reached;
    // t v2 selects team w: its fan-out reads the namespaces and the parents before a's is written.
    api.put(tpl('w', '2'));
    expect(await publishFanOut(deps, lane.bus, 't')).toMatchObject({ targets: 0 });
    first.open();
    await lane.bus.idle();
    expect(data(api)).toEqual({ a: '1' });
    expect(appliedTemplates(api)).toBe('t');
    // The relay sends every write of a parent as a reconcile at the parent's revision (functions/watch-relay: parentMessage).
    await lane.send(namespaceMessage('a', rvOf(api, 'v1', 'ConfigMap', 'a', 'furnish-applyset')));
    await lane.bus.idle();
    expect(deliveries(lane)).toEqual([['MODIFIED', 'converged'], ['MODIFIED', 'converged'], ['MODIFIED', 'converged']]);
    expect(data(api)).toBeUndefined();
    expect(appliedTemplates(api)).toBe('');
  });

  it('(c) a fan-out message delivered late, to an instance whose last list holds v1, after another wrote v2: v1 is not put back (its writes are newer than the list)', async () => {
    const { api, deps } = setup(tpl('x'));
    api.put(ns('a'));
    // This instance answers the fan-out of v1: its last list of the templates holds v1.
    const [late] = await fanOut(deps, 't');
    expect((await answer(deps, late!.message)).result).toBe('converged');
    expect(data(api)).toEqual({ a: '1' });
    // t v2; another instance (its own list) answers its fan-out.
    api.put(tpl('x', '2'));
    const other: NamespaceDeps = { ...deps, kube: api.newClient() };
    other.resolver = new ResourceResolver(other.kube);
    for (const { message } of await fanOut(other, 't')) expect((await answer(other, message)).result).toBe('converged');
    expect(data(api)).toEqual({ a: '2' });
    // v1's message, redelivered late to the first instance: its list is recent enough for the message,
    // not for the parent and the object v2 wrote: listed once more, nothing written.
    const lists = api.requests.filter((r) => r.path === TEMPLATES).length;
    const r = await answer(deps, late!.message);
    expect(r).toMatchObject({ result: 'converged', writes: 0 });
    expect(data(api)).toEqual({ a: '2' });
    expect(api.requests.filter((r) => r.path === TEMPLATES).length).toBe(lists + 1);
  });

  it('(d) a template created while a namespace is created: the namespace\'s reconcile listed none, the fan-out\'s message after it applies the template', async () => {
    const { api, deps, lane } = setup();
    api.put(ns('a'));
    // The namespace's reconcile lists the templates (none yet) and is held at its read of the parent.
    const parent = gate((req) => req.method === 'GET' && req.path === '/api/v1/namespaces/a/configmaps/furnish-applyset', true);
    api.hold = parent.hold;
    await lane.send(namespaceMessage('a', rvOf(api, 'v1', 'Namespace', undefined, 'a'), 'ADDED'));
    await parent.reached;
    api.put(tpl('x'));
    // a, pending, matches t now: messaged like any other namespace it selects.
    expect(await publishFanOut(deps, lane.bus, 't')).toMatchObject({ targets: 1 });
    expect(fanoutsStarted(lane)).toBe(0);
    parent.open();
    await lane.bus.idle();
    expect(deliveries(lane)).toEqual([['ADDED', 'converged'], ['FANOUT', 'converged']]);
    expect(data(api)).toEqual({ a: '1' });
    expect(appliedTemplates(api)).toBe('t');
    expect(api.get('v1', 'Namespace', undefined, 'a')?.metadata.labels?.[KEY.phase]).toBe('ready');
  });

  it('a template deleted while a first population that names it is in flight: the parent\'s write brings the reconcile that prunes it', async () => {
    const { api, deps, lane } = setup(tpl('x'));
    api.put(ns('a'));
    const first = gate(writeIn('a'), true);
    api.hold = first.hold;
    await lane.send(namespaceMessage('a', undefined, 'ADDED'));
    await first.reached;
    await api.client.call({ method: 'DELETE', path: `${TEMPLATES}/t` });
    // Deleted, t selects nothing; a's parent does not name it yet: no target.
    expect(await publishFanOut(deps, lane.bus, 't')).toMatchObject({ deleted: true, targets: 0 });
    first.open();
    await lane.bus.idle();
    expect(data(api)).toEqual({ a: '1' });
    await lane.send(namespaceMessage('a', rvOf(api, 'v1', 'ConfigMap', 'a', 'furnish-applyset')));
    await lane.bus.idle();
    expect(data(api)).toBeUndefined();
    expect(appliedTemplates(api)).toBe('');
    expect(deliveries(lane).every(([, r]) => r === 'converged')).toBe(true);
  });

  it('a message whose revision is newer than the instance\'s last list lists the templates again, one list shared by the namespaces that ask at once', async () => {
    const { api, deps } = setup(tpl('x'));
    for (const n of ['a', 'b', 'c']) api.put(ns(n));
    expect((await reconcileNamespace(deps, 'a')).result).toBe('converged');
    api.put(tpl('x', '2'));
    const messages = await fanOut(deps, 't');
    expect(messages.map((m) => [m.message.name, m.key])).toEqual([['a', 'local/Namespace/a'], ['b', 'local/Namespace/b'], ['c', 'local/Namespace/c']]);
    const lists = api.requests.filter((r) => r.path === TEMPLATES).length;
    const results = await Promise.all(messages.map((m) => answer(deps, m.message)));
    expect(results.map((r) => r.result)).toEqual(['converged', 'converged', 'converged']);
    expect(api.requests.filter((r) => r.path === TEMPLATES).length).toBe(lists + 1);
    for (const n of ['a', 'b', 'c']) expect(api.get('v1', 'ConfigMap', n, 't-cm')?.data).toEqual({ a: '2' });
  });
});
