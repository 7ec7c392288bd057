// All or nothing without dry runs: a template whose writes all create absent objects (a new
// namespace) is written at once, and what it created is deleted again, by uid, when one of its
// writes fails. Updates of live objects are still dry-run first. The fake API is memory-api.ts
// under the real client seam; writes are sent one at a time (applyConcurrency 1), in template order.
import { describe, it, expect } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import type { FaultHook, KubeRequest } from '../../../shared/kube/client.ts';
import { TransientError } from '../../../shared/kube/errors.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../../shared/reconcile/namespace.ts';
import { ownedObjects } from '../../../shared/reconcile/plan.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { memoryApi, type MemoryApi } from './memory-api.ts';

const ns = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.phase]: 'pending' }, annotations: { [KEY.creator]: 'alice' } } });
const cm = (name: string, data: Record<string, string> = { owner: '$(CREATOR)' }): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const tpl = (name: string, objects: KubeObject[], spec: Partial<NamespaceTemplate['spec']> = {}): NamespaceTemplate =>
  ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: {} }, templates: objects, deletionPolicy: 'Delete', mode: 'Enforce', ...spec } });

function setup(faults?: FaultHook): { api: MemoryApi; deps: NamespaceDeps } {
  const api = memoryApi(faults);
  api.put(ns('team-a'));
  return { api, deps: { kube: api.client, resolver: new ResourceResolver(api.client), log: collectingLogger(), applyConcurrency: 1, now: () => new Date('2026-01-01T00:00:00Z') } };
}

const isDryRun = (r: KubeRequest) => r.query?.dryRun === 'All';
const objectWrites = (api: MemoryApi) => api.requests.filter((r) => r.method !== 'GET' && r.path.includes('/configmaps/') && !r.path.endsWith('/furnish-applyset'));
const namespaceOf = (api: MemoryApi) => api.get('v1', 'Namespace', undefined, 'team-a')!;
/** What Furnish holds in the namespace, as the next reconcile reads it: the objects it owns, and its parent's annotations. */
const ownedKeys = (api: MemoryApi) => [...ownedObjects(api.all('ConfigMap')).keys()].sort();
const parentSays = (api: MemoryApi, key: string) => api.get('v1', 'ConfigMap', 'team-a', 'furnish-applyset')?.metadata.annotations?.[key];
/** A refusal of `name`'s real write (not its dry run), as a server whose state changed after the dry run would answer. */
const refuseWrite = (name: string, status = 422): FaultHook => (req) =>
  (req.method === 'PATCH' && req.path.endsWith(`/configmaps/${name}`) && !isDryRun(req) ? { status, reason: status === 422 ? 'Invalid' : undefined, error: `injected ${status}` } : undefined);

describe('a template of new objects: no dry runs, rolled back when a write is refused', () => {
  it('a good template in a new namespace is applied with no dry run at all', async () => {
    const { api, deps } = setup();
    api.put(tpl('base', [cm('first'), cm('second'), cm('third')]));
    expect((await reconcileNamespace(deps, 'team-a')).result).toBe('converged');
    expect(api.requests.filter(isDryRun)).toEqual([]);
    expect(objectWrites(api).map((r) => `${r.method} ${r.path.split('/').pop()}`)).toEqual(['PATCH first', 'PATCH second', 'PATCH third']);
  });

  it('a refused second create: the first object is deleted with its uid as precondition, the namespace failed with the refusal', async () => {
    const { api, deps } = setup();
    api.rejectWhen = (o) => (o.metadata.name === 'second' ? 'data: Invalid value' : undefined);
    api.put(tpl('base', [cm('first'), cm('second')]));
    api.put(tpl('fine', [cm('other'), cm('another')]));
    const r = await reconcileNamespace(deps, 'team-a');
    expect(r.result).toBe('failed');
    expect(api.requests.filter(isDryRun)).toEqual([]);
    const deletes = objectWrites(api).filter((w) => w.method === 'DELETE');
    expect(deletes.map((d) => [d.path, d.body])).toEqual([['/api/v1/namespaces/team-a/configmaps/first', { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid: 'uid-first' } }]]);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'first')).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'team-a', 'second')).toBeUndefined();
    // The other template is untouched by the rollback.
    expect(api.get('v1', 'ConfigMap', 'team-a', 'other')).toBeDefined();
    expect(api.get('v1', 'ConfigMap', 'team-a', 'another')).toBeDefined();
    // Reported as a refusal always was: phase, reason, one Warning Event; nothing of `base` held or counted.
    expect(namespaceOf(api).metadata.labels?.[KEY.phase]).toBe('failed');
    expect(namespaceOf(api).metadata.annotations?.[KEY.failure]).toBe('template base: /ConfigMap/team-a/second: Invalid (HTTP 422): data: Invalid value');
    expect(api.all('Event').filter((e) => e.type === 'Warning')).toHaveLength(1);
    expect(ownedKeys(api)).toEqual(['/ConfigMap/team-a/another', '/ConfigMap/team-a/other']);
    expect([parentSays(api, KEY.appliedTemplates), parentSays(api, KEY.failedTemplates)]).toEqual(['fine', 'base']);
    expect(r.outcome?.applied).toBe(2);
    // The failed template is dry-run from now on: a resync while it still fails writes nothing.
    const writes = api.writes().length;
    await reconcileNamespace(deps, 'team-a');
    expect(api.writes().length).toBe(writes);
    expect(api.requests.filter(isDryRun).length).toBeGreaterThan(0);
    // Fixed, it is applied whole.
    api.rejectWhen = undefined;
    expect((await reconcileNamespace(deps, 'team-a')).result).toBe('converged');
    expect(api.get('v1', 'ConfigMap', 'team-a', 'first')).toBeDefined();
  });

  it('a CreateOnly object this reconcile created is rolled back too; one that existed (409) is not touched', async () => {
    const { api, deps } = setup();
    api.put({ ...cm('existing', { user: 'kept' }), metadata: { name: 'existing', namespace: 'team-a' } });
    api.rejectWhen = (o) => (o.metadata.name === 'bad' ? 'data: Invalid value' : undefined);
    api.put(tpl('once', [cm('existing'), cm('made'), cm('bad')], { mode: 'CreateOnly' }));
    expect((await reconcileNamespace(deps, 'team-a')).result).toBe('failed');
    expect(objectWrites(api).filter((w) => w.method === 'DELETE').map((d) => d.path.split('/').pop())).toEqual(['made']);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'made')).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'team-a', 'existing')?.data).toEqual({ user: 'kept' });
  });

  it('an object replaced by someone else since it was created is left alone (the uid precondition answers 409)', async () => {
    const late: { api?: MemoryApi } = {};
    const replace: FaultHook = (req) => {
      if (req.method === 'PATCH' && req.path.endsWith('/configmaps/second')) late.api!.put({ ...cm('first', { someone: 'else' }), metadata: { name: 'first', namespace: 'team-a', uid: 'someone-elses' } });
      return undefined;
    };
    const s = setup(replace);
    const api = (late.api = s.api);
    api.rejectWhen = (o) => (o.metadata.name === 'second' ? 'data: Invalid value' : undefined);
    api.put(tpl('base', [cm('first'), cm('second')]));
    expect((await reconcileNamespace(s.deps, 'team-a')).result).toBe('failed');
    expect(api.get('v1', 'ConfigMap', 'team-a', 'first')?.metadata.uid).toBe('someone-elses');
    expect(namespaceOf(api).metadata.annotations?.[KEY.failure]).toMatch(/^template base: \/ConfigMap\/team-a\/second: Invalid/);
  });

  it('a rollback the server refuses is reported with the template\'s failure; the object stays Furnish\'s, so a later reconcile still prunes it', async () => {
    let forbid = true;
    const { api, deps } = setup((req) => (forbid && req.method === 'DELETE' ? { status: 403, reason: 'Forbidden', error: 'deletes forbidden' } : undefined));
    api.rejectWhen = (o) => (o.metadata.name === 'second' ? 'data: Invalid value' : undefined);
    api.put(tpl('base', [cm('first'), cm('second')]));
    const r = await reconcileNamespace(deps, 'team-a');
    expect(r.result).toBe('failed');
    expect(r.outcome?.failures.map((f) => [f.key, f.status, f.message])).toEqual([
      ['/ConfigMap/team-a/second', 422, 'data: Invalid value'],
      ['/ConfigMap/team-a/first', 403, 'created, then not rolled back after its template failed: deletes forbidden'],
    ]);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'first')).toBeDefined();
    expect(ownedKeys(api)).toEqual(['/ConfigMap/team-a/first']);
    expect(parentSays(api, KEY.applySetGroupKinds)).toBe('ConfigMap');
    const events = api.all('Event').filter((e) => e.type === 'Warning');
    expect(events).toHaveLength(1);
    // The namespace's reason names the refusal (its template's first failure); the Event counts the object left behind.
    expect(events[0]!.message).toMatch(/second: Invalid .*\(and 1 more\)$/);
    // The template goes and deletes are allowed again: what was left behind is pruned.
    forbid = false;
    api.all('NamespaceTemplate').forEach((t) => api.put({ ...t, metadata: { ...t.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }));
    expect((await reconcileNamespace(deps, 'team-a')).outcome?.pruned).toBe(1);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'first')).toBeUndefined();
  });

  it('a transient failure of the rollback fails the delivery (TransientError), so the next one tries again', async () => {
    const { api, deps } = setup((req) => (req.method === 'DELETE' ? { status: 503, error: 'injected 503' } : undefined));
    api.rejectWhen = (o) => (o.metadata.name === 'second' ? 'data: Invalid value' : undefined);
    api.put(tpl('base', [cm('first'), cm('second')]));
    await expect(reconcileNamespace(deps, 'team-a')).rejects.toThrow(/roll back template base/);
    expect(namespaceOf(api).metadata.labels?.[KEY.phase]).toBe('pending');
  });

  it('a transient failure of one write rolls its template back before the delivery fails', async () => {
    const { api, deps } = setup(refuseWrite('second', 503));
    api.put(tpl('base', [cm('first'), cm('second')]));
    await expect(reconcileNamespace(deps, 'team-a')).rejects.toBeInstanceOf(TransientError);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'first')).toBeUndefined();
  });
});

describe('a template that changes live objects: dry-run first', () => {
  it('an update of an existing object still dry-runs every write of its template, and a refusal sends none', async () => {
    const { api, deps } = setup();
    api.put(tpl('base', [cm('first'), cm('second')]));
    await reconcileNamespace(deps, 'team-a');
    api.requests.length = 0;
    api.rejectWhen = (o) => (o.metadata.name === 'second' ? 'data: Invalid value' : undefined);
    api.put(tpl('base', [cm('first', { owner: 'changed' }), cm('second', { owner: 'changed' })]));
    expect((await reconcileNamespace(deps, 'team-a')).result).toBe('failed');
    expect(objectWrites(api).map((r) => `${r.path.split('/').pop()} ${isDryRun(r) ? 'dry run' : 'write'}`)).toEqual(['first dry run', 'second dry run']);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'first')?.data).toEqual({ owner: 'alice' });
  });

  it('a write refused after its dry run passed: what the template created is still deleted again', async () => {
    const { api, deps } = setup(refuseWrite('third'));
    api.put(tpl('base', [cm('first')]));
    await reconcileNamespace(deps, 'team-a');
    api.put(tpl('base', [cm('first', { owner: 'changed' }), cm('new'), cm('third')]));
    expect((await reconcileNamespace(deps, 'team-a')).result).toBe('failed');
    expect(api.requests.filter(isDryRun).map((r) => r.path.split('/').pop())).toEqual(['first', 'new', 'third']);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'new')).toBeUndefined();
    // An update cannot be undone by a rollback: that is why such a template is dry-run first.
    expect(api.get('v1', 'ConfigMap', 'team-a', 'first')?.data).toEqual({ owner: 'changed' });
  });
});
