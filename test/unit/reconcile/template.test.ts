import { describe, it, expect } from '@jest/globals';
import { createMemoryBus } from '../../../shared/bus/memory.ts';
import { KEY } from '../../../shared/keys.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { decodeMessage, encodeMessage } from '../../../shared/bus/envelope.ts';
import { batchesList, changedKinds, fanoutBase, fanoutTargets, parentsMissed } from '../../../shared/reconcile/fanout.ts';
import { fanoutEntries, parseFanoutEntries, templateFingerprint } from '../../../shared/reconcile/fingerprints.ts';
import { silentLogger } from '../../../shared/log.ts';
import { reconcileNamespace } from '../../../shared/reconcile/namespace.ts';
import { batchRequest, reconcileBatch } from '../../../shared/reconcile/namespace-batch.ts';
import { entriesAnnotation, fanoutMessages, readyUnraised, reconcileTemplate, type TemplateDeps } from '../../../shared/reconcile/template.ts';
import { heldBackBy, maybeCountedPending } from '../../../shared/reconcile/template-status.ts';
import { memoryApi } from './memory-api.ts';

// Furnished namespaces (phase ready): a fan-out converges them in batches. One not furnished yet is messaged alone (fanout-race.test.ts).
const ns = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.phase]: 'ready', ...labels }, annotations: { [KEY.creator]: 'alice' } } });
const tpl = (name: string, selector: Record<string, string>, data: Record<string, string> = { a: '1' }): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: selector } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-cm` }, data }] },
});

function setup() {
  const api = memoryApi();
  const bus = createMemoryBus();
  const received: string[] = [];
  bus.subscribe('ns', async (d) => {
    const m = decodeMessage(d.data);
    if (!m.ok) return;
    const nsDeps = { kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger };
    const batch = batchRequest(m.message);
    if (batch) {
      received.push(...batch.targets.map((t) => t.n));
      await reconcileBatch(nsDeps, batch);
    } else {
      received.push(m.message.name);
      await reconcileNamespace(nsDeps, m.message.name);
    }
  });
  // Two namespaces a message, so that the three namespaces of a test take two batches.
  const deps: TemplateDeps = { kube: api.client, bus, cluster: 'local', namespaceTopic: 'ns', log: silentLogger, progressEvery: 2, batch: 2, concurrency: 4, messagesPerSecond: 1e6 };
  return { api, bus, received, deps };
}

describe('reconcileTemplate', () => {
  it('publishes one message per matching namespace, records the fan-out and the counts', async () => {
    const { api, bus, received, deps } = setup();
    for (const n of ['a', 'b', 'c']) api.put(ns(n, { tier: 'gold' }));
    api.put(ns('d', { tier: 'silver' }));
    api.put(tpl('gold', { tier: 'gold' }));
    const r = await reconcileTemplate(deps, 'gold');
    expect(r).toMatchObject({ fannedOut: true, targets: 3, published: 3 });
    await bus.idle();
    expect(received.sort()).toEqual(['a', 'b', 'c']);
    const t = api.get('', 'NamespaceTemplate', undefined, 'gold') as NamespaceTemplate;
    expect(t.metadata.annotations?.[KEY.fanoutHash]).toMatch(/^[0-9a-f]{32}\/uid-/);
    expect(t.status?.matched).toBe(3);
    expect(t.status?.conditions?.find((c) => c.type === 'Propagated')?.status).toBe('True');
    // The next message (resync, or our own status write) fans out nothing; the counts now show the work done.
    const again = await reconcileTemplate(deps, 'gold');
    expect(again.fannedOut).toBe(false);
    const counted = api.get('', 'NamespaceTemplate', undefined, 'gold') as NamespaceTemplate;
    expect(counted.status).toMatchObject({ matched: 3, applied: 3, failed: 0 });
    expect(counted.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const writes = api.writes().length;
    expect((await reconcileTemplate(deps, 'gold')).statusWritten).toBe(false);
    expect(api.writes().length).toBe(writes);
  });

  it('a changed selector reaches the namespaces that matched before and those that match now', async () => {
    const { api, bus, received, deps } = setup();
    api.put(ns('a', { tier: 'gold' }));
    api.put(ns('b', { tier: 'silver' }));
    api.put(tpl('t', { tier: 'gold' }));
    await reconcileTemplate(deps, 't');
    await bus.idle();
    received.length = 0;
    const moved = api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate;
    api.put({ ...moved, spec: { ...moved.spec, namespaces: { labelSelector: { matchLabels: { tier: 'silver' } } } } });
    const r = await reconcileTemplate(deps, 't');
    expect(r.targets).toBe(2);
    await bus.idle();
    expect(received.sort()).toEqual(['a', 'b']);
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'b', 't-cm')).toBeDefined();
  });

  it('a deleted template reaches every namespace that carried it, whose objects are pruned; applied again from an export, the old fan-out record among its annotations, it fans out again', async () => {
    const { api, bus, deps } = setup();
    api.put(ns('a', { tier: 'gold' }));
    api.put(tpl('t', { tier: 'gold' }));
    await reconcileTemplate(deps, 't');
    await bus.idle();
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeDefined();
    // `kubectl get -o yaml`, less what the server sets: the annotations, the record among them, stay.
    const exported = api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate;
    expect(exported.metadata.annotations?.[KEY.fanoutHash]).toBe(`${templateFingerprint(exported)}/uid-t`);
    await api.client.call({ method: 'DELETE', path: '/apis/furnish.dev/v1alpha1/namespacetemplates/t' });
    const r = await reconcileTemplate(deps, 't');
    expect(r).toMatchObject({ deleted: true, targets: 1 });
    await bus.idle();
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeUndefined();
    api.put({ ...exported, metadata: { name: 't', annotations: exported.metadata.annotations, uid: 'uid-t-again' }, status: undefined });
    expect(await reconcileTemplate(deps, 't')).toMatchObject({ fannedOut: true, targets: 1 });
    await bus.idle();
    expect(api.get('v1', 'ConfigMap', 'a', 't-cm')).toBeDefined();
    expect((api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate).metadata.annotations?.[KEY.fanoutHash]).toBe(`${templateFingerprint(exported)}/uid-t-again`);
  });

  it('a namespace being deleted is not counted: one still pending no longer holds Ready back, and it names the templates to tell', async () => {
    const { api, bus, deps } = setup();
    for (const n of ['a', 'b']) api.put(ns(n, { tier: 'gold' }));
    api.put(tpl('gold', { tier: 'gold' }));
    api.put(tpl('silver', { tier: 'silver' }));
    await reconcileTemplate(deps, 'gold');
    await bus.idle();
    const stuck = ns('c', { tier: 'gold', [KEY.phase]: 'pending' });
    api.put(stuck);
    const recount = async () => {
      await reconcileTemplate(deps, 'gold', { recountOnly: true });
      const status = (api.get('', 'NamespaceTemplate', undefined, 'gold') as NamespaceTemplate).status;
      return { matched: status?.matched, ready: status?.conditions?.find((c) => c.type === 'Ready')?.status };
    };
    expect(await recount()).toEqual({ matched: 3, ready: 'False' });
    api.put({ ...stuck, metadata: { ...stuck.metadata, deletionTimestamp: '2026-11-23T08:00:00Z' } });
    expect(await recount()).toEqual({ matched: 2, ready: 'True' });
    const templates = ['gold', 'silver'].map((n) => api.get('', 'NamespaceTemplate', undefined, n) as NamespaceTemplate);
    const info = (labels: Record<string, string>, annotations: Record<string, string> = {}) => ({ name: 'c', labels: { tier: 'gold', ...labels }, annotations });
    expect(heldBackBy(info({ [KEY.phase]: 'pending' }), [], templates)).toEqual(['gold']);
    expect(heldBackBy(info({ [KEY.phase]: 'ready' }), ['silver'], null)).toEqual(['silver']);
    expect(maybeCountedPending(info({ [KEY.phase]: 'pending' }))).toBe(true);
    expect(maybeCountedPending(info({}))).toBe(true);
    expect(maybeCountedPending(info({ [KEY.phase]: 'ready' }))).toBe(false);
    expect(maybeCountedPending(info({}, { [KEY.optOut]: 'true' }))).toBe(false);
  });

  it('a fan-out reads cluster-wide only the kinds whose entries changed since a rollout seen complete; the namespaces judge the others by their record', async () => {
    const { api, bus, deps } = setup();
    const recounts: string[] = [];
    bus.subscribe('tpl', async (d) => {
      const m = decodeMessage(d.data);
      if (m.ok) recounts.push(`${m.message.type} ${m.message.name}`);
    });
    const withResolver = { ...deps, resolver: new ResourceResolver(api.client), templateTopic: 'tpl' };
    for (const n of ['a', 'b', 'c']) api.put(ns(n, { tier: 'gold' }));
    const two = (data: Record<string, string>, selector: Record<string, string> = { tier: 'gold' }): NamespaceTemplate => {
      const t = tpl('t', selector, data);
      return { ...t, spec: { ...t.spec, templates: [...t.spec.templates!, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 't-sa' } }] } };
    };
    // A spec change is a new generation.
    const change = async (next: NamespaceTemplate) => {
      const was = api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate;
      api.put({ ...was, metadata: { ...was.metadata, generation: (was.metadata.generation ?? 1) + 1 }, spec: next.spec });
      api.requests.length = 0;
      await reconcileTemplate(withResolver, 't');
      await bus.idle();
    };
    // The STATUS recount the namespaces' notices ask for.
    const recount = () => reconcileTemplate(withResolver, 't', { recountOnly: true });
    const listedCluster = (plural: string) => api.requests.filter((r) => r.method === 'GET' && r.path === `/api/v1/${plural}` && r.query?.labelSelector === `${KEY.template}=t`).length;
    const writes = (plural: string) => api.writes().filter((r) => r.path.includes(`/${plural}/`)).length;
    api.put({ ...two({ a: '1' }), metadata: { name: 't', generation: 1 } });
    api.requests.length = 0;
    await reconcileTemplate(withResolver, 't');
    await bus.idle();
    // No record of a fan-out yet: every kind; then the entries are recorded.
    expect([listedCluster('configmaps'), listedCluster('serviceaccounts')]).toEqual([1, 1]);
    expect(parseFanoutEntries((api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate).metadata.annotations?.[KEY.fanoutEntries])?.e).toEqual(fanoutEntries(two({ a: '1' })).e);
    expect(api.get('v1', 'ServiceAccount', 'b', 't-sa')).toBeDefined();
    // Not yet seen rolled out (no recount since): the next change reads every kind.
    await change(two({ a: '2' }));
    expect([listedCluster('configmaps'), listedCluster('serviceaccounts')]).toEqual([1, 1]);
    await recount();
    expect((api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate).status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', observedGeneration: 2 });

    // Seen rolled out at generation 2, the ConfigMap's entry changed: its kind alone is read before
    // the batches, whose namespaces converge without touching the ServiceAccounts.
    await change(two({ a: '3' }));
    expect([listedCluster('configmaps'), listedCluster('serviceaccounts')]).toEqual([1, 0]);
    for (const n of ['a', 'b', 'c']) expect(api.get('v1', 'ConfigMap', n, 't-cm')?.data).toEqual({ a: '3' });
    expect([writes('configmaps'), writes('serviceaccounts')]).toEqual([3, 0]);
    // Namespaces were pending: the batches that wrote them tell; the fan-out asked for no recount.
    expect(recounts).toEqual([]);
    await recount();

    // An entry that moved since the record and came back (edited twice before a fan-out): its kind is
    // read, nothing is pending, nothing written, so the fan-out asks for a recount of every kind to decide Ready.
    // (A new generation whose spec renders the same.) The fan-out's own count of some kinds does not
    // say Ready at the new generation: the recount of every kind does.
    const now = api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate;
    const record = parseFanoutEntries(now.metadata.annotations?.[KEY.fanoutEntries])!;
    const readyOf = () => (api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate).status?.conditions?.find((c) => c.type === 'Ready');
    api.put({ ...now, metadata: { ...now.metadata, generation: 4, annotations: { ...now.metadata.annotations, [KEY.fanoutHash]: 'moved', [KEY.fanoutEntries]: JSON.stringify({ ...record, e: { ...record.e, 'ConfigMap/t-cm': 'moved' } }) } } });
    api.requests.length = 0;
    await reconcileTemplate(withResolver, 't');
    await bus.idle();
    expect([listedCluster('configmaps'), listedCluster('serviceaccounts'), writes('configmaps')]).toEqual([1, 0, 0]);
    expect(recounts).toEqual(['STATUS t']);
    expect(readyOf()).toMatchObject({ status: 'False', observedGeneration: 4 });
    await recount();
    expect(readyOf()).toMatchObject({ status: 'True', observedGeneration: 4 });

    // A record from before it named the uid (README, Upgrading): this object is Ready at its
    // generation, so no fan-out. Not Ready at it (a rollout not seen complete): one. A record of the
    // same content for another uid is never taken (it may come from another cluster, beside an
    // annotation change no generation counts): one.
    const vouched = api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate;
    const recordAs = (record: string, status = vouched.status) => api.put({ ...vouched, metadata: { ...vouched.metadata, annotations: { ...vouched.metadata.annotations, [KEY.fanoutHash]: record } }, status });
    recordAs(templateFingerprint(vouched));
    expect(await reconcileTemplate(withResolver, 't')).toMatchObject({ fannedOut: false });
    recordAs(`${templateFingerprint(vouched)}/uid-of-another-cluster`);
    expect(await reconcileTemplate(withResolver, 't')).toMatchObject({ fannedOut: true });
    await bus.idle();
    await recount();
    recordAs(templateFingerprint(vouched), { ...vouched.status, conditions: vouched.status?.conditions?.map((c) => (c.type === 'Ready' ? { ...c, observedGeneration: 3 } : c)) });
    api.requests.length = 0;
    expect(await reconcileTemplate(withResolver, 't')).toMatchObject({ fannedOut: true, targets: 3 });
    await bus.idle();
    expect(api.writes().filter((r) => r.path.startsWith('/api/v1/namespaces/') && r.query?.dryRun === undefined)).toEqual([]);
    expect((api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate).metadata.annotations?.[KEY.fanoutHash]).toBe(`${templateFingerprint(vouched)}/uid-t`);
    await recount();

    // Around the entries (the selector): every kind again.
    await change(two({ a: '3' }, { tier: 'gold', extra: 'no' }));
    expect([listedCluster('configmaps'), listedCluster('serviceaccounts')]).toEqual([1, 1]);
  });

  it('changedKinds: the kinds of entries added or changed; every kind without a record or when anything around the entries moved', () => {
    const t = (data: Record<string, string>, selector: Record<string, string> = { tier: 'gold' }) => tpl('t', selector, data);
    const before = fanoutEntries(t({ a: '1' }));
    expect(changedKinds(fanoutEntries(t({ a: '1' })), before)).toEqual([]);
    expect(changedKinds(fanoutEntries(t({ a: '2' })), before)).toEqual(['ConfigMap']);
    const added = t({ a: '1' });
    added.spec.templates!.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'rb' } });
    expect(changedKinds(fanoutEntries(added), before)).toEqual(['RoleBinding.rbac.authorization.k8s.io']);
    // An entry removed: its kind too (an object recorded nowhere is still held, and released).
    expect(changedKinds(before, fanoutEntries(added))).toEqual(['RoleBinding.rbac.authorization.k8s.io']);
    // A name may hold a token with a slash: the kind is what comes before the first one.
    const tokened = t({ a: '1' });
    tokened.spec.templates!.push({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'quota-$(ANNOTATION:example.com/tier|standard)' } });
    expect(changedKinds(fanoutEntries(tokened), before)).toEqual(['ResourceQuota']);
    expect(changedKinds(fanoutEntries(t({ a: '1' }, { tier: 'silver' })), before)).toBeNull();
    expect(changedKinds(before, null)).toBeNull();
    expect(parseFanoutEntries('{"s":1}')).toBeNull();
    expect(parseFanoutEntries('{"s":"x","e":{}}')).toBeNull();
    expect(parseFanoutEntries('not json')).toBeNull();
    expect(parseFanoutEntries(JSON.stringify(before))).toEqual(before);
  });

  it('fanoutBase: the record is the base only while the status says Ready at its generation', () => {
    const t = { ...tpl('t', { tier: 'gold' }), metadata: { name: 't', generation: 3 } };
    const rec = { ...fanoutEntries(t), g: 2 };
    const withReady = (status: 'True' | 'False', observedGeneration: number): NamespaceTemplate => ({ ...t, status: { conditions: [{ type: 'Ready', status, reason: '', message: '', lastTransitionTime: '', observedGeneration }] } });
    expect(fanoutBase(withReady('True', 2), rec)).toBe(rec);
    expect(fanoutBase(withReady('False', 2), rec)).toBeNull();
    expect(fanoutBase(withReady('True', 1), rec)).toBeNull();
    expect(fanoutBase(t, rec)).toBeNull();
    expect(fanoutBase(withReady('True', 2), null)).toBeNull();
  });

  it('readyUnraised: a count of some kinds never raises Ready; it keeps what Ready said, or says Verifying', () => {
    const ready = (status: 'True' | 'False', observedGeneration: number) => ({ type: 'Ready', status, reason: '', message: '', lastTransitionTime: '', observedGeneration });
    const propagated = { type: 'Propagated', status: 'True' as const, reason: '', message: '', lastTransitionTime: '' };
    const next = { conditions: [propagated, ready('True', 4)] };
    expect(readyUnraised({ conditions: [ready('True', 3)] }, next).conditions).toEqual([propagated, ready('True', 3)]);
    expect(readyUnraised(undefined, next).conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Verifying', observedGeneration: 4 });
    const falling = { conditions: [propagated, ready('False', 4)] };
    expect(readyUnraised({ conditions: [ready('True', 3)] }, falling)).toBe(falling);
  });

  it('a record the API server refuses beside the other annotations (422) is left out: the fan-out is still recorded', async () => {
    const api = memoryApi((req) => (req.method === 'PATCH' && req.path.endsWith('/namespacetemplates/t') && (req.body as KubeObject).metadata.annotations?.[KEY.fanoutEntries] ? { status: 422, data: { kind: 'Status', code: 422, reason: 'Invalid', message: 'metadata.annotations: Too long: must have at most 262144 bytes' } } : undefined));
    const bus = createMemoryBus();
    api.put(ns('a', { tier: 'gold' }));
    api.put(tpl('t', { tier: 'gold' }));
    await reconcileTemplate({ kube: api.client, bus, cluster: 'local', namespaceTopic: 'ns', log: silentLogger }, 't');
    const t = api.get('', 'NamespaceTemplate', undefined, 't') as NamespaceTemplate;
    expect(t.metadata.annotations?.[KEY.fanoutHash]).toMatch(/^[0-9a-f]{32}\/uid-/);
    expect(t.metadata.annotations?.[KEY.fanoutEntries]).toBeUndefined();
  });

  it('a record too large to keep beside the other annotations is dropped: the next fan-out reads every kind', () => {
    const t = tpl('t', { tier: 'gold' });
    expect(entriesAnnotation(t)).toBe(JSON.stringify(fanoutEntries(t)));
    for (let i = 0; i < 1000; i++) t.spec.templates!.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `a-long-name-that-takes-room-in-the-record-${'x'.repeat(60)}-${i}` } });
    expect(entriesAnnotation(t)).toBeNull();
  });

  it('a STATUS message recounts and never fans out, even before the fan-out is recorded', async () => {
    const { api, deps } = setup();
    api.put(ns('a', { tier: 'gold' }));
    api.put(tpl('gold', { tier: 'gold' }));
    const r = await reconcileTemplate(deps, 'gold', { recountOnly: true });
    expect(r).toMatchObject({ fannedOut: false, published: 0 });
    expect((api.get('', 'NamespaceTemplate', undefined, 'gold') as NamespaceTemplate).status?.matched).toBe(1);
  });

  it('reports progress while publishing in batches', async () => {
    const { api, deps } = setup();
    for (const n of ['a', 'b', 'c', 'd', 'e']) api.put(ns(n, { tier: 'gold' }));
    api.put(tpl('gold', { tier: 'gold' }));
    await reconcileTemplate(deps, 'gold');
    const statusWrites = api.writes().filter((w) => w.path.endsWith('/status')).map((w) => (w.body as { status: NamespaceTemplate['status'] }).status?.conditions?.find((c) => c.type === 'Propagated')?.message);
    expect(statusWrites).toEqual(['published 2 of 5 reconcile messages', 'published 4 of 5 reconcile messages', 'published 5 of 5 reconcile messages']);
  });
});

describe('fanoutMessages', () => {
  const opts = { cluster: 'c', template: 'gold', cause: 'template/gold@7', digest: 'ab', batch: 2 };

  it('says which kinds the held hashes cover, and the decoder keeps it or names what is wrong', () => {
    const live = { hashes: new Map([['/ConfigMap/a/x', 'h1']]), byNamespace: new Map([['a', { '/ConfigMap/a/x': 'h1' }]]) };
    const [m] = fanoutMessages({ ...opts, heldKinds: ['ConfigMap'] }, { batched: ['a'], alone: [] }, live);
    const decoded = decodeMessage(Buffer.from(JSON.stringify(m!)));
    expect(decoded.ok && decoded.message.heldKinds).toEqual(['ConfigMap']);
    expect(decoded.ok && batchRequest(decoded.message)?.heldKinds).toEqual(['ConfigMap']);
    // Every kind read (null), or no objects read at all: nothing said.
    expect(fanoutMessages({ ...opts, heldKinds: null }, { batched: ['a'], alone: [] }, live)[0]!.heldKinds).toBeUndefined();
    expect(fanoutMessages({ ...opts, heldKinds: ['ConfigMap'] }, { batched: ['a'], alone: [] }, null)[0]!.heldKinds).toBeUndefined();
    const bad = decodeMessage(Buffer.from(JSON.stringify({ ...m!, heldKinds: [3] })));
    expect(!bad.ok && bad.reason).toMatch(/heldKinds/);
  });

  it('puts the targets in batches, each namespace with what it holds of the template (nothing held: an empty map)', () => {
    const live = { hashes: new Map([['/ConfigMap/a/x', 'h1']]), byNamespace: new Map([['a', { '/ConfigMap/a/x': 'h1' }]]) };
    const msgs = fanoutMessages(opts, { batched: ['a', 'b', 'c'], alone: [] }, live);
    expect(msgs.map((m) => m.name)).toEqual(['gold#0', 'gold#1']);
    expect(msgs.map((m) => m.targets)).toEqual([[{ n: 'a', h: { '/ConfigMap/a/x': 'h1' } }, { n: 'b', h: {} }], [{ n: 'c', h: {} }]]);
    expect(msgs.every((m) => m.type === 'FANOUT' && m.kind === 'Namespace' && m.template === 'gold' && m.templates === 'ab' && m.cause === 'template/gold@7')).toBe(true);
    expect(msgs.every((m) => decodeMessage(Buffer.from(JSON.stringify(m))).ok)).toBe(true);
  });

  it('tells a batch to list its namespaces when the cluster is small for the names it carries (fanout.ts batchesList), and the decoder keeps it', () => {
    // Batches of 2 and 1 in a cluster of 100: the pair lists, the lone namespace is read by its GET.
    const msgs = fanoutMessages({ ...opts, namespacesInCluster: 100 }, { batched: ['a', 'b', 'c'], alone: ['new'] }, null);
    expect(msgs.map((m) => m.listTargets)).toEqual([true, undefined, undefined]);
    const decoded = decodeMessage(Buffer.from(JSON.stringify(msgs[0])));
    expect(decoded.ok && decoded.message.listTargets).toBe(true);
    expect(fanoutMessages({ ...opts, namespacesInCluster: 101 }, { batched: ['a', 'b'], alone: [] }, null)[0]!.listTargets).toBeUndefined();
    // A batch of 1,000 names is 10 lists of 100: decided by 100 names, not 1,000.
    const big = Array.from({ length: 1000 }, (_, i) => `n${i}`);
    expect(fanoutMessages({ ...opts, batch: 1000, namespacesInCluster: 10_000 }, { batched: big, alone: [] }, null)[0]!.listTargets).toBeUndefined();
    expect(fanoutMessages({ ...opts, batch: 1000, namespacesInCluster: 5_000 }, { batched: big, alone: [] }, null)[0]!.listTargets).toBe(true);
  });

  it('without the objects read (a deleted template), the namespaces read their objects themselves', () => {
    expect(fanoutMessages(opts, { batched: ['a'], alone: [] }, null)[0]!.targets).toEqual([{ n: 'a' }]);
  });

  it('a namespace not furnished yet is sent alone, under its own ordering key, without the digest', () => {
    const msgs = fanoutMessages(opts, { batched: ['a'], alone: ['new'] }, null);
    expect(msgs.map((m) => [m.name, m.targets?.length, m.templates])).toEqual([['gold#0', 1, 'ab'], ['new', undefined, undefined]]);
    const alone = decodeMessage(Buffer.from(JSON.stringify(msgs[1])));
    expect(alone.ok && alone.message).toMatchObject({ kind: 'Namespace', name: 'new', type: 'FANOUT', cause: 'template/gold@7' });
    expect(encodeMessage(msgs[1]!).orderingKey).toBe('c/Namespace/new');
  });
});

describe('batchesList', () => {
  it('lists while the cluster holds at most 50 namespaces per name the list carries; above, a GET each', () => {
    expect(batchesList(1100, 50)).toBe(true);
    expect(batchesList(2500, 50)).toBe(true);
    expect(batchesList(2501, 50)).toBe(false);
    expect(batchesList(10_000, 50)).toBe(false);
    expect(batchesList(60, 1)).toBe(false);
  });
});

describe('fanoutTargets', () => {
  const info = (name: string, labels: Record<string, string>) => ({ name, labels, annotations: {} });
  const t = tpl('gold', { tier: 'gold' });

  it('batches the namespaces that match or carry the template; every one not furnished yet (pending) goes alone, matching or not, on the pending lane; one without the phase (opted out, or older than Furnish) only when it matches; system namespaces never', () => {
    const namespaces = [
      info('ready', { [KEY.phase]: 'ready', tier: 'gold' }),
      info('carried', { [KEY.phase]: 'failed' }),
      info('untouched', { [KEY.phase]: 'ready' }),
      info('pending', { [KEY.phase]: 'pending', tier: 'gold' }),
      info('pending-other', { [KEY.phase]: 'pending' }),
      info('predates', {}),
      info('predates-gold', { tier: 'gold' }),
      info('kube-system', {}),
      info('extra-system', { [KEY.phase]: 'pending' }),
    ];
    const parents = [{ namespace: 'carried', applied: [], failed: ['gold'] }, { namespace: 'gone', applied: ['gold'], failed: [] }];
    expect(fanoutTargets('gold', t, namespaces, parents, ['extra-system'])).toEqual({ batched: ['carried', 'predates-gold', 'ready'], alone: ['pending', 'pending-other'] });
    expect(fanoutTargets('gold', null, namespaces, parents, ['extra-system'])).toEqual({ batched: ['carried'], alone: ['pending', 'pending-other'] });
  });

  it('never messages a namespace being deleted, pending, matching or carrying the template', () => {
    const namespaces = [info('ready', { [KEY.phase]: 'ready', tier: 'gold' }), info('ending', { [KEY.phase]: 'ready', tier: 'gold' }), info('pending', { [KEY.phase]: 'pending' }), info('pending-ending', { [KEY.phase]: 'pending' }), info('carried-ending', { [KEY.phase]: 'ready' })];
    const parents = [{ namespace: 'carried-ending', applied: ['gold'], failed: [] }];
    const deleting = new Set(['ending', 'pending-ending', 'carried-ending']);
    expect(fanoutTargets('gold', t, namespaces, parents, [], deleting)).toEqual({ batched: ['ready'], alone: ['pending'] });
    expect(fanoutTargets('gold', null, namespaces, parents, [], deleting)).toEqual({ batched: [], alone: ['pending'] });
  });
});

describe('parentsMissed', () => {
  const parents = [{ namespace: 'with-parent', applied: ['gold'], failed: [] }];

  it('a namespace seen furnished, written after the parents list and missing from it, was furnished in between: list the parents again', () => {
    expect(parentsMissed([{ name: 'furnished-since', resourceVersion: '120' }], parents, '100')).toBe(true);
  });

  it('a quiet fan-out lists them once: namespaces written before the list, or with their parent in it, are seen as they were', () => {
    expect(parentsMissed([{ name: 'no-templates', resourceVersion: '90' }, { name: 'with-parent', resourceVersion: '130' }], parents, '100')).toBe(false);
    expect(parentsMissed([], parents, '100')).toBe(false);
  });

  it('a resourceVersion that cannot be compared counts as newer', () => {
    expect(parentsMissed([{ name: 'odd' }], parents, '100')).toBe(true);
    expect(parentsMissed([{ name: 'odd', resourceVersion: '5' }], parents, 'not-a-number')).toBe(true);
  });
});
