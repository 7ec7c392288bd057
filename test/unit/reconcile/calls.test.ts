// Calls per namespace reconcile, counted by the client's own metrics (every API call passes the
// seam): a fan-out reconcile costs the namespace's read plus the objects that changed (the issue's
// bound is changed + 2), and a fan-out to N namespaces lists the templates per batch (as they are
// when the batch runs, and after its writes), not per namespace, and reads the template's objects
// once, cluster-wide.
import { describe, it, expect } from '@jest/globals';
import { createMemoryBus } from '../../../shared/bus/memory.ts';
import { decodeMessage, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { KEY } from '../../../shared/keys.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { silentLogger } from '../../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../../shared/reconcile/namespace.ts';
import { batchRequest, reconcileBatch } from '../../../shared/reconcile/namespace-batch.ts';
import { reconcileTemplate } from '../../../shared/reconcile/template.ts';
import { templatesDigest } from '../../../shared/reconcile/fingerprints.ts';
import { memoryApi, type MemoryApi } from './memory-api.ts';

const ns = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.metadataName]: name, [KEY.phase]: 'pending', team: 'x' }, annotations: { [KEY.creator]: 'alice' } } });
const quota = (pods: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'quota' }, data: { pods } });
const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { owner: '$(CREATOR)' } });
const tpl = (name: string, objects: KubeObject[]): NamespaceTemplate => ({
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: { matchLabels: { team: 'x' } } }, templates: objects, deletionPolicy: 'Delete', mode: 'Enforce' },
});

const TEMPLATES_PATH = '/apis/furnish.dev/v1alpha1/namespacetemplates';

function setup(): { api: MemoryApi; deps: NamespaceDeps } {
  const api = memoryApi();
  return { api, deps: { kube: api.client, resolver: new ResourceResolver(api.client), log: silentLogger } };
}

/** Publishes the template's fan-out and answers each message as the runtime does; returns the API calls the namespace reconciles made. */
async function fanOut(api: MemoryApi, deps: NamespaceDeps, template: string): Promise<{ calls: number; templateLists: number; messages: ReconcileMessage[] }> {
  const bus = createMemoryBus();
  const messages: ReconcileMessage[] = [];
  bus.subscribe('ns', async (d) => {
    const m = decodeMessage(d.data);
    if (m.ok) messages.push(m.message);
  });
  await reconcileTemplate({ kube: api.client, resolver: deps.resolver, bus, cluster: 'local', namespaceTopic: 'ns', log: silentLogger, messagesPerSecond: 1e6, batch: 5 }, template);
  await bus.idle();
  const before = api.client.metrics.requests;
  const listsBefore = api.requests.filter((r) => r.path === TEMPLATES_PATH).length;
  await Promise.all(messages.map((m) => {
    const batch = batchRequest(m);
    return batch ? reconcileBatch(deps, batch) : reconcileNamespace(deps, m.name, { fanout: m.type === 'FANOUT', templates: m.templates });
  }));
  return { calls: api.client.metrics.requests - before, templateLists: api.requests.filter((r) => r.path === TEMPLATES_PATH).length - listsBefore, messages };
}

describe('calls per namespace reconcile', () => {
  it('a first population writes each object, the ApplySet parent once, the namespace once and its event', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put(tpl('base', [quota('50'), cm('owner')]));
    const sent = api.requests.length;
    const r = await reconcileNamespace(deps, 'a');
    expect(r.result).toBe('converged');
    const writes = api.requests.slice(sent).filter((q) => q.method !== 'GET').map((q) => `${q.method} ${q.path}`);
    expect(writes.sort()).toEqual([
      'PATCH /api/v1/namespaces/a/status',
      'PATCH /api/v1/namespaces/a/configmaps/owner',
      'PATCH /api/v1/namespaces/a/configmaps/quota',
      'PATCH /api/v1/namespaces/a/configmaps/furnish-applyset',
      'POST /api/v1/namespaces/a/events',
    ].sort());
    expect(r.writes).toBe(writes.length);
    // Its reads: the namespace, the templates, and the ConfigMaps (a template of two writes is written at once only if it sees them absent), which bring the ApplySet parent along.
    expect(api.requests.slice(sent).filter((q) => q.method === 'GET').map((q) => q.path)).toEqual(['/api/v1/namespaces/a', TEMPLATES_PATH, '/api/v1/namespaces/a/configmaps']);
  });

  it('a first population lists only the kinds whose absence spares a template its dry run: a single write and the kinds of templates elsewhere need none', async () => {
    const { api, deps } = setup();
    const rb: KubeObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'viewers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [] };
    api.put(ns('a'));
    api.put(tpl('base', [quota('50')]));
    api.put({ ...tpl('elsewhere', [rb]), spec: { ...tpl('elsewhere', [rb]).spec, namespaces: { labelSelector: { matchLabels: { team: 'other' } } } } });
    const sent = api.requests.length;
    expect((await reconcileNamespace(deps, 'a')).result).toBe('converged');
    // The namespace, the templates, the parent (absent: nothing of Furnish's is there); no list.
    expect(api.requests.slice(sent).filter((q) => q.method === 'GET').map((q) => q.path)).toEqual(['/api/v1/namespaces/a', TEMPLATES_PATH, '/api/v1/namespaces/a/configmaps/furnish-applyset']);
  });

  it('an object someone wrote into the pending namespace before Furnish (an initialize holder, a system principal) makes its template dry-run first: refused, the template changes nothing', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'a' }, data: { theirs: 'yes' } });
    api.rejectWhen = (o) => (o.metadata.name === 'bad' ? 'data: Invalid value' : undefined);
    api.put(tpl('base', [{ ...cm('settings'), data: { ours: 'yes' } }, cm('bad')]));
    const r = await reconcileNamespace(deps, 'a');
    expect(r.result).toBe('failed');
    expect(api.requests.some((q) => q.query?.dryRun === 'All')).toBe(true);
    const settings = api.get('v1', 'ConfigMap', 'a', 'settings')!;
    expect(settings.data).toEqual({ theirs: 'yes' });
    expect(settings.metadata.labels?.[KEY.template]).toBeUndefined();
  });

  it('a first population posts its event and writes the namespace side by side, not one after the other', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put(tpl('base', [quota('50')]));
    // The event's POST is held until the namespace's PATCH arrives (at most 500 ms): sent one after the other, it would not.
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    let eventHeld = false;
    let patchedWhileEventHeld = false;
    const kube: KubeClient = {
      ...api.client,
      call: async (req) => {
        if (req.method === 'POST' && req.path.endsWith('/events')) {
          eventHeld = true;
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([held, new Promise((r) => (timer = setTimeout(r, 500)))]);
          clearTimeout(timer);
          eventHeld = false;
        }
        if (req.method === 'PATCH' && req.path === '/api/v1/namespaces/a/status' && eventHeld) {
          patchedWhileEventHeld = true;
          release();
        }
        return api.client.call(req);
      },
    };
    const r = await reconcileNamespace({ ...deps, kube, resolver: new ResourceResolver(kube) }, 'a');
    expect(r.result).toBe('converged');
    expect(patchedWhileEventHeld).toBe(true);
    expect(api.get('v1', 'Namespace', undefined, 'a')?.metadata.labels?.[KEY.phase]).toBe('ready');
  });

  it('a pending namespace whose parent is there (a first population cut short) is read in full, and what Furnish left of a template that no longer selects it is pruned', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put(tpl('base', [quota('50')]));
    api.put(tpl('extra', [cm('extra')]));
    await reconcileNamespace(deps, 'a');
    expect(api.get('v1', 'ConfigMap', 'a', 'extra')).toBeDefined();
    // As if the reconcile had stopped after its writes, before the namespace's: pending, no record, parent and objects there.
    const live = api.get('v1', 'Namespace', undefined, 'a')!;
    api.put({ ...live, metadata: { ...live.metadata, labels: { ...live.metadata.labels, [KEY.phase]: 'pending' }, annotations: { [KEY.creator]: 'alice' } } });
    api.put({ ...tpl('extra', [cm('extra')]), spec: { ...tpl('extra', [cm('extra')]).spec, namespaces: { labelSelector: { matchLabels: { team: 'other' } } } } });
    const sent = api.requests.length;
    const r = await reconcileNamespace(deps, 'a');
    expect(r.result).toBe('converged');
    expect(api.requests.slice(sent).filter((q) => q.method === 'GET').map((q) => q.path)).toContain('/api/v1/namespaces/a/configmaps');
    expect(api.get('v1', 'ConfigMap', 'a', 'extra')).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'a', 'quota')).toBeDefined();
  });

  it('a namespace that existed before its templates (no phase) is read in full: a same-named object of its users makes the template dry-run first', async () => {
    const { api, deps } = setup();
    const before = ns('a');
    api.put({ ...before, metadata: { ...before.metadata, labels: { [KEY.metadataName]: 'a', team: 'x' } } });
    api.put({ ...cm('owner'), metadata: { name: 'owner', namespace: 'a' }, data: { owner: 'the team' } });
    api.put(tpl('base', [quota('50'), cm('owner')]));
    const sent = api.requests.length;
    await reconcileNamespace(deps, 'a');
    const sentNow = api.requests.slice(sent);
    expect(sentNow.filter((q) => q.method === 'GET').map((q) => q.path)).toContain('/api/v1/namespaces/a/configmaps');
    expect(sentNow.some((q) => q.method === 'PATCH' && q.query?.dryRun === 'All')).toBe(true);
  });

  it('without ConfigMaps to list, the parent is read by itself; a kind only the parent names is listed too, and what Furnish left there is pruned', async () => {
    const { api, deps } = setup();
    const rb = (name: string): KubeObject => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [] });
    api.put(ns('a'));
    api.put(tpl('base', [rb('viewers'), cm('owner')]));
    await reconcileNamespace(deps, 'a');
    // The template drops its ConfigMap: the parent still names the kind, the record the object.
    api.put(tpl('base', [rb('viewers')]));
    const sent = api.requests.length;
    await reconcileNamespace(deps, 'a');
    const reads = api.requests.slice(sent).filter((q) => q.method === 'GET').map((q) => q.path);
    expect(reads).toEqual(expect.arrayContaining(['/api/v1/namespaces/a/configmaps', '/apis/rbac.authorization.k8s.io/v1/namespaces/a/rolebindings']));
    expect(api.get('v1', 'ConfigMap', 'a', 'owner')).toBeUndefined();
    // A namespace whose record is gone still has its parent name the ConfigMaps: read by GET, then listed.
    api.put(tpl('base', [rb('viewers'), cm('owner')]));
    await reconcileNamespace(deps, 'a');
    const live = api.get('v1', 'Namespace', undefined, 'a')!;
    api.put({ ...live, metadata: { ...live.metadata, annotations: { [KEY.creator]: 'alice' } } });
    api.put(tpl('base', [rb('viewers')]));
    const again = api.requests.length;
    await reconcileNamespace(deps, 'a');
    const paths = api.requests.slice(again).filter((q) => q.method === 'GET').map((q) => q.path);
    expect(paths).toContain('/api/v1/namespaces/a/configmaps/furnish-applyset');
    expect(paths.indexOf('/api/v1/namespaces/a/configmaps')).toBeGreaterThan(paths.indexOf('/api/v1/namespaces/a/configmaps/furnish-applyset'));
    expect(api.get('v1', 'ConfigMap', 'a', 'owner')).toBeUndefined();
  });

  it('a ready namespace that a template selects for the first time (a label change) lists the templates once more, after all its writes; its resync does not', async () => {
    const { api, deps } = setup();
    const a = ns('a');
    api.put({ ...a, metadata: { ...a.metadata, labels: { ...a.metadata.labels, team: 'z' } } });
    api.put(tpl('base', [quota('50'), cm('owner')]));
    await reconcileNamespace(deps, 'a');
    const ready = api.get('v1', 'Namespace', undefined, 'a')!;
    api.put({ ...ready, metadata: { ...ready.metadata, labels: { ...ready.metadata.labels, team: 'x' } } });
    const sent = api.requests.length;
    expect((await reconcileNamespace(deps, 'a')).result).toBe('converged');
    const calls = api.requests.slice(sent).map((q) => `${q.method} ${q.path}`);
    expect(calls.filter((c) => c === `GET ${TEMPLATES_PATH}`)).toHaveLength(2);
    expect(calls.lastIndexOf(`GET ${TEMPLATES_PATH}`)).toBe(calls.length - 1);
    const again = api.requests.length;
    expect((await reconcileNamespace(deps, 'a')).writes).toBe(0);
    expect(api.requests.slice(again).filter((q) => q.path === TEMPLATES_PATH)).toHaveLength(1);
  });

  it('a late fan-out message whose digest names templates older than what the namespace already holds lists them afresh', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put(ns('b'));
    const v1 = [tpl('base', [quota('50')])];
    api.put(v1[0]!);
    // This instance lists the templates (v1) for a.
    await reconcileNamespace(deps, 'a');
    // The template changes; another instance (its own cache) populates b with v2, as the fan-out would.
    api.put(tpl('base', [quota('60')]));
    const other = { ...deps, kube: api.newClient() };
    await reconcileNamespace({ ...other, resolver: new ResourceResolver(other.kube) }, 'b');
    expect((api.get('v1', 'ConfigMap', 'b', 'quota')?.data as Record<string, string>).pods).toBe('60');
    // A fan-out message of v1's time, redelivered late, reaches the instance that holds v1.
    const lists = api.requests.filter((q) => q.path === TEMPLATES_PATH).length;
    const r = await reconcileNamespace(deps, 'b', { fanout: true, templates: templatesDigest(v1) });
    expect(r.result).toBe('converged');
    expect((api.get('v1', 'ConfigMap', 'b', 'quota')?.data as Record<string, string>).pods).toBe('60');
    expect(api.requests.filter((q) => q.path === TEMPLATES_PATH).length).toBe(lists + 1);
  });

  it('a no-op fan-out costs one call per namespace: the namespace, its record saying everything is in place', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put(tpl('base', [quota('50'), cm('owner')]));
    await reconcileNamespace(deps, 'a');
    const written = api.writes().length;
    const r = await fanOut(api, deps, 'base');
    expect(r.messages).toHaveLength(1);
    expect(r.messages[0]!.templates).toMatch(/^[0-9a-f]{32}$/);
    // The batch's list of its namespaces and its list of the templates.
    expect(r.calls).toBeLessThanOrEqual(2);
    expect(api.writes().slice(written).filter((w) => w.path.includes('/namespaces/a'))).toHaveLength(0);
  });

  it('one object changed: that object\'s apply and nothing else, the batch listing its namespaces at once in a small cluster', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put(tpl('base', [quota('50'), cm('owner')]));
    await reconcileNamespace(deps, 'a');
    await fanOut(api, deps, 'base');
    api.put(tpl('base', [quota('60'), cm('owner')]));
    const sent = api.requests.length;
    const r = await fanOut(api, deps, 'base');
    const mine = api.requests.slice(sent).filter((q) => q.path.includes('/namespaces/a'));
    expect(r.calls - r.templateLists).toBe(1 + 1);
    // The record holds nothing a clean apply changes: no namespace write; the namespace came with its batch's list.
    expect(mine.map((q) => `${q.method} ${q.path}`)).toEqual(['PATCH /api/v1/namespaces/a/configmaps/quota']);
    expect(api.requests.slice(sent).filter((q) => q.path === '/api/v1/namespaces' && q.query?.labelSelector).map((q) => q.query?.labelSelector)).toEqual([`${KEY.metadataName} in (a)`]);
    expect((api.get('v1', 'ConfigMap', 'a', 'quota')?.data as Record<string, string>).pods).toBe('60');
    // And the next resync, which reads everything, finds nothing to write.
    const writes = api.writes().length;
    expect((await reconcileNamespace(deps, 'a')).writes).toBe(0);
    expect(api.writes().length).toBe(writes);
  });

  it('a fan-out to N namespaces lists the templates per batch (twice: as it runs, and after its writes), not per namespace', async () => {
    const { api, deps } = setup();
    const n = 12;
    for (let i = 0; i < n; i++) api.put(ns(`ns-${i}`));
    api.put(tpl('base', [quota('50'), cm('owner')]));
    for (let i = 0; i < n; i++) await reconcileNamespace(deps, `ns-${i}`);
    api.put(tpl('base', [quota('60'), cm('owner')]));
    const r = await fanOut(api, deps, 'base');
    // In batches of five: three messages for twelve namespaces.
    expect(r.messages).toHaveLength(3);
    expect(r.messages.flatMap((m) => m.targets!.map((t) => t.n)).sort()).toEqual(Array.from({ length: n }, (_, i) => `ns-${i}`).sort());
    // Per batch: when it runs, and once more after its writes (recheck.ts: a batch of the next version may have written meanwhile).
    expect(r.templateLists).toBe(3 * 2);
    // Per namespace its one changed object; per batch one list of its namespaces (a small cluster).
    expect(r.calls).toBe(n + 3 + 3 * 2);
    for (let i = 0; i < n; i++) expect((api.get('v1', 'ConfigMap', `ns-${i}`, 'quota')?.data as Record<string, string>).pods).toBe('60');
  });

  it('a fan-out that must release an object reads the objects first, and prunes only what Furnish owns', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put(tpl('base', [quota('50'), cm('owner'), cm('extra')]));
    await reconcileNamespace(deps, 'a');
    api.put(tpl('base', [quota('50'), cm('owner')]));
    const sent = api.requests.length;
    await fanOut(api, deps, 'base');
    const mine = api.requests.slice(sent).filter((q) => q.path.includes('/namespaces/a'));
    expect(mine.some((q) => q.method === 'GET' && q.path === '/api/v1/namespaces/a/configmaps')).toBe(true);
    expect(mine.filter((q) => q.method === 'DELETE').map((q) => q.path)).toEqual(['/api/v1/namespaces/a/configmaps/extra']);
    expect(api.get('v1', 'ConfigMap', 'a', 'extra')).toBeUndefined();
  });

  it('a namespace being deleted costs its read alone, and no fan-out messages it; one not ready lists the templates to tell those that count it pending', async () => {
    const { api, deps } = setup();
    const told: string[][] = [];
    const telling = { ...deps, notifyTemplates: async (t: string[]) => void told.push(t) };
    api.put(tpl('base', [quota('50')]));
    api.put({ ...tpl('elsewhere', [quota('1')]), spec: { ...tpl('elsewhere', []).spec, namespaces: { labelSelector: { matchLabels: { team: 'y' } } } } });
    api.put(ns('live'));
    const deleting = (name: string, phase: string) => {
      const n = ns(name);
      api.put({ ...n, metadata: { ...n.metadata, labels: { ...n.metadata.labels, [KEY.phase]: phase }, deletionTimestamp: '2026-11-23T08:00:00Z' } });
    };
    deleting('ending', 'ready');
    deleting('ending-pending', 'pending');
    const callsOf = async (name: string) => {
      const sent = api.requests.length;
      expect(await reconcileNamespace(telling, name)).toMatchObject({ result: 'skipped', reason: 'namespace is being deleted', writes: 0 });
      return api.requests.slice(sent).map((q) => `${q.method} ${q.path}`);
    };
    expect(await callsOf('ending')).toEqual(['GET /api/v1/namespaces/ending']);
    expect(told).toEqual([]);
    expect(await callsOf('ending-pending')).toEqual(['GET /api/v1/namespaces/ending-pending', `GET ${TEMPLATES_PATH}`]);
    expect(told).toEqual([['base']]);
    const { messages } = await fanOut(api, deps, 'base');
    expect(messages.map((m) => m.name)).toEqual(['live']);
  });
});
