// Calls per namespace reconcile, counted at the client seam (every API call passes it). A fan-out
// message costs a namespace its GET, the list of each kind it may hold (the ApplySet parent comes
// with the ConfigMaps, else by its own GET) and a write per object that changed; the templates are
// listed a few times per fan-out (a list recent enough for the message's revision is shared by the
// reconciles of one instance: namespace-reads.ts readTemplates), not per namespace. A no-op
// resync writes nothing.
import { describe, it, expect } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import type { ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { silentLogger } from '../../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../../shared/reconcile/namespace.ts';
import { answer, fanOut as collectFanOut } from '../../support/fanout-race.ts';
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

/** The template's fan-out, each message answered as the runtime does, all at once (as many namespaces' messages are): the calls they made, in order. */
async function fanOut(api: MemoryApi, deps: NamespaceDeps, template: string): Promise<{ calls: string[]; templateLists: number; messages: ReconcileMessage[] }> {
  const messages = (await collectFanOut(deps, template)).map((s) => s.message);
  const sent = api.requests.length;
  await Promise.all(messages.map((m) => answer(deps, m)));
  const calls = api.requests.slice(sent).map((q) => `${q.method} ${q.path}`);
  return { calls, templateLists: calls.filter((c) => c === `GET ${TEMPLATES_PATH}`).length, messages };
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

  it('a first population lists the kinds its templates render (the parent comes with the ConfigMaps), never the kinds of templates elsewhere', async () => {
    const { api, deps } = setup();
    const rb: KubeObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'viewers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [] };
    api.put(ns('a'));
    api.put(tpl('base', [quota('50')]));
    api.put({ ...tpl('elsewhere', [rb]), spec: { ...tpl('elsewhere', [rb]).spec, namespaces: { labelSelector: { matchLabels: { team: 'other' } } } } });
    const sent = api.requests.length;
    expect((await reconcileNamespace(deps, 'a')).result).toBe('converged');
    // The namespace, the templates, the ConfigMaps (the parent among them); no RoleBindings.
    expect(api.requests.slice(sent).filter((q) => q.method === 'GET').map((q) => q.path)).toEqual(['/api/v1/namespaces/a', TEMPLATES_PATH, '/api/v1/namespaces/a/configmaps']);
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
    // As if the reconcile had stopped after its writes, before the namespace's: pending, parent and objects there.
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
    // The template drops its ConfigMap: the parent still names the kind, and Furnish owns the object.
    api.put(tpl('base', [rb('viewers')]));
    const sent = api.requests.length;
    await reconcileNamespace(deps, 'a');
    const reads = api.requests.slice(sent).filter((q) => q.method === 'GET').map((q) => q.path);
    expect(reads).toEqual(expect.arrayContaining(['/api/v1/namespaces/a/configmaps', '/apis/rbac.authorization.k8s.io/v1/namespaces/a/rolebindings']));
    expect(api.get('v1', 'ConfigMap', 'a', 'owner')).toBeUndefined();
    // Again: the parent, read by its own GET (no ConfigMap to render), names the ConfigMaps: listed after it.
    api.put(tpl('base', [rb('viewers'), cm('owner')]));
    await reconcileNamespace(deps, 'a');
    api.put(tpl('base', [rb('viewers')]));
    const again = api.requests.length;
    await reconcileNamespace(deps, 'a');
    const paths = api.requests.slice(again).filter((q) => q.method === 'GET').map((q) => q.path);
    expect(paths).toContain('/api/v1/namespaces/a/configmaps/furnish-applyset');
    expect(paths.indexOf('/api/v1/namespaces/a/configmaps')).toBeGreaterThan(paths.indexOf('/api/v1/namespaces/a/configmaps/furnish-applyset'));
    expect(api.get('v1', 'ConfigMap', 'a', 'owner')).toBeUndefined();
  });

  it('a ready namespace that a template selects for the first time (a label change) lists the templates once: nothing re-lists them after its writes; its resync writes nothing', async () => {
    const { api, deps } = setup();
    const a = ns('a');
    api.put({ ...a, metadata: { ...a.metadata, labels: { ...a.metadata.labels, team: 'z' } } });
    api.put(tpl('base', [quota('50'), cm('owner')]));
    await reconcileNamespace(deps, 'a');
    const ready = api.get('v1', 'Namespace', undefined, 'a')!;
    api.put({ ...ready, metadata: { ...ready.metadata, labels: { ...ready.metadata.labels, team: 'x' } } });
    const sent = api.requests.length;
    expect((await reconcileNamespace(deps, 'a', { resourceVersion: api.get('v1', 'Namespace', undefined, 'a')!.metadata.resourceVersion })).result).toBe('converged');
    expect(api.requests.slice(sent).filter((q) => q.path === TEMPLATES_PATH)).toHaveLength(1);
    const again = api.requests.length;
    expect((await reconcileNamespace(deps, 'a')).writes).toBe(0);
    expect(api.requests.slice(again).filter((q) => q.path === TEMPLATES_PATH)).toHaveLength(1);
  });

  it('a no-op fan-out: per namespace its GET and the list of its kinds (the parent comes with the ConfigMaps), no write; the templates listed once', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put(tpl('base', [quota('50'), cm('owner')]));
    await reconcileNamespace(deps, 'a');
    const written = api.writes().length;
    const r = await fanOut(api, deps, 'base');
    expect(r.messages.map((m) => [m.name, m.type])).toEqual([['a', 'FANOUT']]);
    expect(r.calls).toEqual(['GET /api/v1/namespaces/a', `GET ${TEMPLATES_PATH}`, 'GET /api/v1/namespaces/a/configmaps']);
    expect(api.writes().slice(written).filter((w) => w.path.includes('/namespaces/a'))).toHaveLength(0);
  });

  it('one object changed: that object\'s apply and nothing else; and the next resync, which reads everything, writes nothing', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put(tpl('base', [quota('50'), cm('owner')]));
    await reconcileNamespace(deps, 'a');
    api.put(tpl('base', [quota('60'), cm('owner')]));
    const r = await fanOut(api, deps, 'base');
    expect(r.calls).toEqual(['GET /api/v1/namespaces/a', `GET ${TEMPLATES_PATH}`, 'GET /api/v1/namespaces/a/configmaps', 'PATCH /api/v1/namespaces/a/configmaps/quota']);
    expect((api.get('v1', 'ConfigMap', 'a', 'quota')?.data as Record<string, string>).pods).toBe('60');
    const writes = api.writes().length;
    expect((await reconcileNamespace(deps, 'a')).writes).toBe(0);
    expect(api.writes().length).toBe(writes);
  });

  it('a fan-out to N namespaces: per namespace its GET, the list of its kinds and its one changed object; the templates listed once for all (the list is shared), not per namespace', async () => {
    const { api, deps } = setup();
    const n = 12;
    for (let i = 0; i < n; i++) api.put(ns(`ns-${i}`));
    api.put(tpl('base', [quota('50'), cm('owner')]));
    for (let i = 0; i < n; i++) await reconcileNamespace(deps, `ns-${i}`);
    api.put(tpl('base', [quota('60'), cm('owner')]));
    const r = await fanOut(api, deps, 'base');
    expect(r.messages.map((m) => m.name).sort()).toEqual(Array.from({ length: n }, (_, i) => `ns-${i}`).sort());
    expect(r.templateLists).toBe(1);
    expect(r.calls.length).toBe(3 * n + 1);
    process.stdout.write(`fan-out to ${n} namespaces, one object changed each: ${r.calls.length} calls (${(r.calls.length / n).toFixed(2)} per namespace), ${r.templateLists} list of the templates\n`);
    for (let i = 0; i < n; i++) expect((api.get('v1', 'ConfigMap', `ns-${i}`, 'quota')?.data as Record<string, string>).pods).toBe('60');
  });

  it('a template of other kinds than ConfigMaps: per namespace its GET, its parent\'s GET beside the list of the kind, and the apply', async () => {
    const { api, deps } = setup();
    const rb = (subject: string): KubeObject => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'viewers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: subject }] });
    api.put(ns('a'));
    api.put(tpl('base', [rb('team')]));
    await reconcileNamespace(deps, 'a');
    api.put(tpl('base', [rb('team-2')]));
    const r = await fanOut(api, deps, 'base');
    expect(r.calls.sort()).toEqual([
      'GET /api/v1/namespaces/a', `GET ${TEMPLATES_PATH}`, 'GET /api/v1/namespaces/a/configmaps/furnish-applyset',
      'GET /apis/rbac.authorization.k8s.io/v1/namespaces/a/rolebindings', 'PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/a/rolebindings/viewers',
    ].sort());
  });

  it('a no-op resync: the namespace, the templates, the list of its kinds; no write', async () => {
    const { api, deps } = setup();
    api.put(ns('a'));
    api.put(tpl('base', [quota('50'), cm('owner')]));
    await reconcileNamespace(deps, 'a');
    const sent = api.requests.length;
    expect((await reconcileNamespace(deps, 'a')).writes).toBe(0);
    expect(api.requests.slice(sent).map((q) => `${q.method} ${q.path}`)).toEqual(['GET /api/v1/namespaces/a', `GET ${TEMPLATES_PATH}`, 'GET /api/v1/namespaces/a/configmaps']);
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

  it('a namespace being deleted costs its read and its parent\'s (the templates it failed, to tell), and no fan-out messages it; one not ready lists the templates too, to tell those that count it pending', async () => {
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
      return api.requests.slice(sent).map((q) => `${q.method} ${q.path}`).sort();
    };
    expect(await callsOf('ending')).toEqual(['GET /api/v1/namespaces/ending', 'GET /api/v1/namespaces/ending/configmaps/furnish-applyset']);
    expect(told).toEqual([]);
    expect(await callsOf('ending-pending')).toEqual(['GET /api/v1/namespaces/ending-pending', 'GET /api/v1/namespaces/ending-pending/configmaps/furnish-applyset', `GET ${TEMPLATES_PATH}`].sort());
    expect(told).toEqual([['base']]);
    const { messages } = await fanOut(api, deps, 'base');
    expect(messages.map((m) => m.name)).toEqual(['live']);
  });
});
