import { describe, it, expect } from '@jest/globals';
import { KEY, LEGACY_KEY } from '../../../shared/keys.ts';
import { ResourceResolver } from '../../../shared/kube/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { TransientError } from '../../../shared/kube/errors.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { reconcileNamespace, type NamespaceDeps } from '../../../shared/reconcile/namespace.ts';
import type { FaultHook } from '../../../shared/kube/client.ts';
import { memoryApi, type MemoryApi } from './memory-api.ts';

function ns(name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.phase]: 'pending', ...labels }, annotations: { [KEY.creator]: 'alice', ...annotations } } };
}

function tpl(name: string, objects: KubeObject[], spec: Partial<NamespaceTemplate['spec']> = {}): NamespaceTemplate {
  return { apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: { namespaces: { labelSelector: {} }, templates: objects, deletionPolicy: 'Delete', mode: 'Enforce', ...spec } };
}

const cm = (name: string, data: Record<string, string> = { owner: '$(CREATOR)' }): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const rb: KubeObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'creator' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'User', name: '$(CREATOR)' }] };

function setup(faults?: FaultHook): { api: MemoryApi; deps: NamespaceDeps; log: ReturnType<typeof collectingLogger> } {
  const api = memoryApi(faults);
  const log = collectingLogger();
  return { api, log, deps: { kube: api.client, resolver: new ResourceResolver(api.client), log, now: () => new Date('2026-01-01T00:00:00Z') } };
}

describe('reconcileNamespace', () => {
  it('applies every object with field manager furnish, $(CREATOR) replaced, then sets phase=ready', async () => {
    const { api, deps } = setup();
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('owner'), rb]));
    const r = await reconcileNamespace(deps, 'team-a');
    expect(r.result).toBe('converged');
    expect(api.get('v1', 'ConfigMap', 'team-a', 'owner')?.data).toEqual({ owner: 'alice' });
    expect((api.get('rbac.authorization.k8s.io/v1', 'RoleBinding', 'team-a', 'creator')?.subjects as { name: string }[])[0]!.name).toBe('alice');
    expect(api.get('v1', 'Namespace', undefined, 'team-a')?.metadata.labels?.[KEY.phase]).toBe('ready');
    const applies = api.writes().filter((w) => w.contentType === 'application/apply-patch+yaml');
    expect(applies.every((w) => w.query?.fieldManager === 'furnish' && w.query?.force === true)).toBe(true);
    const parent = api.get('v1', 'ConfigMap', 'team-a', 'furnish-applyset')!;
    expect(parent.metadata.annotations?.[KEY.appliedTemplates]).toBe('base');
    const events = api.all('Event');
    expect(events).toHaveLength(1);
    expect(events[0]!.reason).toBe('Populated');
    expect(events[0]!.message).toContain('applied 2');
  });

  it('a second run, a duplicated message or a resync writes nothing', async () => {
    const { api, deps } = setup();
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('owner'), rb]));
    await reconcileNamespace(deps, 'team-a');
    const before = api.writes().length;
    const again = await reconcileNamespace(deps, 'team-a');
    await reconcileNamespace(deps, 'team-a');
    expect(again.writes).toBe(0);
    expect(api.writes().length).toBe(before);
  });

  it('prunes an object removed from the template, and the parent stops naming its kind', async () => {
    const { api, deps } = setup();
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('owner'), rb]));
    await reconcileNamespace(deps, 'team-a');
    api.put(tpl('base', [cm('owner')]));
    const r = await reconcileNamespace(deps, 'team-a');
    expect(r.outcome?.pruned).toBe(1);
    expect(api.get('rbac.authorization.k8s.io/v1', 'RoleBinding', 'team-a', 'creator')).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'team-a', 'furnish-applyset')?.metadata.annotations?.[KEY.applySetGroupKinds]).toBe('ConfigMap');
    // Only the first population leaves an Event: a template change costs one write per changed object.
    expect(api.all('Event').map((e) => e.reason)).toEqual(['Populated']);
  });

  it('an invalid object: the template applies nothing, phase=failed with the reason, one Warning Event, no loop', async () => {
    const { api, deps } = setup();
    api.rejectWhen = (o) => (o.metadata.name === 'bad' ? 'data: Invalid value' : undefined);
    api.put(ns('team-a'));
    api.put(tpl('broken', [cm('bad'), cm('good')]));
    api.put(tpl('fine', [cm('other')]));
    const first = await reconcileNamespace(deps, 'team-a');
    expect(first.result).toBe('failed');
    // All or nothing: the server refused `bad`, so `good` of the same template was deleted again (rollback.test.ts).
    expect(api.get('v1', 'ConfigMap', 'team-a', 'good')).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'team-a', 'other')).toBeDefined();
    const namespace = api.get('v1', 'Namespace', undefined, 'team-a')!;
    expect(namespace.metadata.labels?.[KEY.phase]).toBe('failed');
    expect(namespace.metadata.annotations?.[KEY.failure]).toMatch(/^template broken: \/ConfigMap\/team-a\/bad: Invalid \(HTTP 422\): data: Invalid value$/);
    const after = api.writes().length;
    await reconcileNamespace(deps, 'team-a');
    await reconcileNamespace(deps, 'team-a');
    expect(api.writes().length).toBe(after);
    const warnings = api.all('Event').filter((e) => e.type === 'Warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('Invalid');
    // Template status has one writer, reconcile-template: the namespace reconciler never writes it.
    expect(api.writes().filter((w) => w.path.includes('namespacetemplates'))).toEqual([]);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'furnish-applyset')?.metadata.annotations?.[KEY.failedTemplates]).toBe('broken');
    // Fixed: the next reconcile applies the template and the namespace is ready, the reason gone.
    api.rejectWhen = undefined;
    expect((await reconcileNamespace(deps, 'team-a')).result).toBe('converged');
    const fixed = api.get('v1', 'Namespace', undefined, 'team-a')!;
    expect(fixed.metadata.labels?.[KEY.phase]).toBe('ready');
    expect(fixed.metadata.annotations?.[KEY.failure]).toBeUndefined();
  });

  it('a token that renders empty (no creator) sends nothing of its template and says why', async () => {
    const { api, deps } = setup();
    api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'old', labels: {} } });
    api.put(tpl('base', [cm('plain', { a: 'b' }), rb]));
    const r = await reconcileNamespace(deps, 'old');
    expect(r.result).toBe('failed');
    expect(api.writes().filter((w) => w.path.includes('rolebindings') || w.path.endsWith('/configmaps/plain'))).toEqual([]);
    expect(api.requests.filter((w) => w.path.includes('rolebindings') && w.method !== 'GET')).toEqual([]);
    expect(api.get('v1', 'Namespace', undefined, 'old')?.metadata.annotations?.[KEY.failure]).toContain('subjects[0].name: RenderFailed (HTTP 422): "$(CREATOR)" renders empty here: the namespace has no furnish.dev/creator annotation');
  });

  it('a kind that cannot be listed (403) stays named by the parent and nothing of it is released, so its objects are still pruned later', async () => {
    let forbid = false;
    const { api, deps } = setup((req) => (forbid && req.method === 'GET' && req.path.endsWith('/namespaces/team-a/rolebindings') ? { status: 403, error: 'forbidden' } : undefined));
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('kept'), rb]));
    await reconcileNamespace(deps, 'team-a');
    api.put(tpl('base', [cm('kept')]));
    forbid = true;
    await reconcileNamespace(deps, 'team-a');
    const kinds = () => api.get('v1', 'ConfigMap', 'team-a', 'furnish-applyset')?.metadata.annotations?.[KEY.applySetGroupKinds];
    expect(kinds()).toBe('ConfigMap,RoleBinding.rbac.authorization.k8s.io');
    expect(api.get('rbac.authorization.k8s.io/v1', 'RoleBinding', 'team-a', 'creator')).toBeDefined();
    forbid = false;
    expect((await reconcileNamespace(deps, 'team-a')).outcome?.pruned).toBe(1);
    expect(api.get('rbac.authorization.k8s.io/v1', 'RoleBinding', 'team-a', 'creator')).toBeUndefined();
    expect(kinds()).toBe('ConfigMap');
  });

  it('transient API errors are retried inside the seam and converge', async () => {
    let failures = 0;
    const { api, deps } = setup((req) => (req.method === 'PATCH' && failures++ < 3 ? { status: 503, error: 'injected' } : undefined));
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('owner')]));
    expect((await reconcileNamespace(deps, 'team-a')).result).toBe('converged');
    expect(api.client.metrics.retries).toBe(3);
  });

  it('transient errors that outlast the retries fail the delivery (TransientError) so Pub/Sub redelivers', async () => {
    const { api, deps } = setup((req) => (req.method === 'PATCH' ? { status: 429, retryAfterSeconds: 0 } : undefined));
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('owner')]));
    await expect(reconcileNamespace(deps, 'team-a')).rejects.toBeInstanceOf(TransientError);
    expect(api.get('v1', 'Namespace', undefined, 'team-a')?.metadata.labels?.[KEY.phase]).toBe('pending');
  });

  describe('the parent written after the objects (a template starts matching a ready namespace)', () => {
    /** team-a holds template u; template t (same kind: the parent is written after the objects) starts matching it while `parentAnswer` answers the parent's write. */
    async function startMatching(parentAnswer: { status: number; reason?: string; error?: string; retryAfterSeconds?: number }, readyDespiteFailures = false) {
      let failParent = true;
      const { api, deps: base } = setup((req) => (failParent && req.method === 'PATCH' && req.path.endsWith('/configmaps/furnish-applyset') ? parentAnswer : undefined));
      const deps = { ...base, readyDespiteFailures };
      failParent = false;
      api.put(ns('team-a'));
      api.put(tpl('u', [cm('cm-u')]));
      api.put(tpl('t', [cm('cm-t')], { namespaces: { labelSelector: { matchLabels: { tier: 'gold' } } } }));
      expect((await reconcileNamespace(deps, 'team-a')).result).toBe('converged');
      const ready = api.get('v1', 'Namespace', undefined, 'team-a')!;
      api.put({ ...ready, metadata: { ...ready.metadata, labels: { ...ready.metadata.labels, tier: 'gold' } } });
      failParent = true;
      const second = await reconcileNamespace(deps, 'team-a').catch((e: unknown) => e);
      failParent = false;
      return { api, deps, second };
    }
    const namesOf = (api: MemoryApi) => api.get('v1', 'ConfigMap', 'team-a', 'furnish-applyset')?.metadata.annotations?.[KEY.appliedTemplates];

    it('a transient failure of its write fails the delivery, and the redelivery writes it: the parent never misses objects a later prune must find', async () => {
      const { api, deps, second } = await startMatching({ status: 429, retryAfterSeconds: 0 });
      expect(second).toBeInstanceOf(TransientError);
      expect(api.get('v1', 'ConfigMap', 'team-a', 'cm-t')).toBeDefined();
      expect(namesOf(api)).toBe('u');
      expect((await reconcileNamespace(deps, 'team-a')).result).toBe('converged');
      expect(namesOf(api)).toBe('t,u');
    });

    it.each([false, true])('a refused write of it fails the namespace, saying so (readyDespiteFailures: %s)', async (readyDespiteFailures) => {
      const { api, second } = await startMatching({ status: 403, reason: 'Forbidden', error: 'configmaps "furnish-applyset" is forbidden' }, readyDespiteFailures);
      expect(second).toMatchObject({ result: 'failed' });
      const after = api.get('v1', 'Namespace', undefined, 'team-a')!;
      expect(after.metadata.labels?.[KEY.phase]).toBe('failed');
      expect(after.metadata.annotations?.[KEY.failure]).toContain('forbidden');
    });
  });

  it('opt-out applies nothing but still marks the namespace ready', async () => {
    const { api, deps } = setup();
    api.put(ns('team-a', {}, { [KEY.optOut]: 'true' }));
    api.put(tpl('base', [cm('owner')]));
    await reconcileNamespace(deps, 'team-a');
    expect(api.get('v1', 'ConfigMap', 'team-a', 'owner')).toBeUndefined();
    expect(api.get('v1', 'Namespace', undefined, 'team-a')?.metadata.labels?.[KEY.phase]).toBe('ready');
  });

  it('system namespaces and vanished namespaces are acknowledged without a write', async () => {
    const { api, deps } = setup();
    api.put(ns('kube-system'));
    expect((await reconcileNamespace(deps, 'kube-system')).result).toBe('skipped');
    expect((await reconcileNamespace(deps, 'nope')).result).toBe('gone');
    expect(api.writes()).toEqual([]);
  });

  it('CreateOnly leaves an existing object as the user changed it', async () => {
    const { api, deps } = setup();
    api.put(ns('team-a'));
    api.put(tpl('seed', [cm('seed')], { mode: 'CreateOnly' }));
    await reconcileNamespace(deps, 'team-a');
    const seed = api.get('v1', 'ConfigMap', 'team-a', 'seed')!;
    api.put({ ...seed, data: { owner: 'changed by user' } });
    api.put(tpl('seed', [cm('seed', { owner: 'new default' })], { mode: 'CreateOnly' }));
    const r = await reconcileNamespace(deps, 'team-a');
    expect(r.writes).toBe(0);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'seed')?.data).toEqual({ owner: 'changed by user' });
  });
  it('a first population writes the parent, each object, the namespace status and one Event; the namespace carries no Furnish JSON', async () => {
    const { api, deps } = setup();
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('owner'), rb]));
    const r = await reconcileNamespace(deps, 'team-a');
    expect(r.writes).toBe(5);
    expect(api.writes().map((w) => `${w.method} ${w.path}`).sort()).toEqual([
      'PATCH /api/v1/namespaces/team-a/configmaps/furnish-applyset',
      'PATCH /api/v1/namespaces/team-a/configmaps/owner',
      'PATCH /api/v1/namespaces/team-a/status',
      'PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/creator',
      'POST /api/v1/namespaces/team-a/events',
    ]);
    const annotations = api.get('v1', 'Namespace', undefined, 'team-a')!.metadata.annotations ?? {};
    expect(Object.entries(annotations).filter(([k, v]) => k.startsWith('furnish.dev/') && v.trim().startsWith('{'))).toEqual([]);
  });

  it('an object someone edited is applied again at the next resync, and only it; a label someone added beside ours is left alone', async () => {
    const { api, deps } = setup();
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('owner'), rb]));
    await reconcileNamespace(deps, 'team-a');
    const path = '/api/v1/namespaces/team-a/configmaps/owner';
    const patch = (body: unknown, fieldManager: string) => api.client.call({ method: 'PATCH', path, query: { fieldManager }, contentType: 'application/merge-patch+json', body });
    expect((await patch({ metadata: { labels: { team: 'blue' } } }, 'kubectl-label')).ok).toBe(true);
    expect((await reconcileNamespace(deps, 'team-a')).writes).toBe(0);
    expect((await patch({ data: { owner: 'mallory' } }, 'kubectl-edit')).ok).toBe(true);
    const before = api.writes().length;
    const r = await reconcileNamespace(deps, 'team-a');
    expect([r.writes, r.outcome?.applied, r.outcome?.unchanged]).toEqual([1, 1, 1]);
    expect(api.writes().slice(before).map((w) => w.path)).toEqual([path]);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'owner')?.data).toEqual({ owner: 'alice' });
    expect(api.get('v1', 'ConfigMap', 'team-a', 'owner')?.metadata.labels?.team).toBe('blue');
    expect((await reconcileNamespace(deps, 'team-a')).writes).toBe(0);
  });

  it('a namespace populated by an earlier version loses its furnish.dev/applied record in one write, then a resync writes nothing', async () => {
    const { api, deps } = setup();
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('owner')]));
    await reconcileNamespace(deps, 'team-a');
    const live = api.get('v1', 'Namespace', undefined, 'team-a')!;
    api.put({ ...live, metadata: { ...live.metadata, annotations: { ...live.metadata.annotations, [LEGACY_KEY.applied]: '{"objects":{"/ConfigMap/team-a/owner":{"template":"base"}}}' } } });
    const before = api.writes().length;
    expect((await reconcileNamespace(deps, 'team-a')).writes).toBe(1);
    expect(api.writes().slice(before).map((w) => w.path)).toEqual(['/api/v1/namespaces/team-a/status']);
    expect(api.get('v1', 'Namespace', undefined, 'team-a')?.metadata.annotations?.[LEGACY_KEY.applied]).toBeUndefined();
    expect((await reconcileNamespace(deps, 'team-a')).writes).toBe(0);
  });

  it('a message naming a template change newer than the last list lists the templates again; one the list already covers does not', async () => {
    const { api, deps } = setup();
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('owner', { v: '1' })]));
    await reconcileNamespace(deps, 'team-a');
    const lists = () => api.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/namespacetemplates')).length;
    const covered = api.get('furnish.dev/v1alpha1', 'NamespaceTemplate', undefined, 'base')!.metadata.resourceVersion;
    // The list the population planned from is older than the writes it made: the next reconcile lists once more, then no more.
    const first = lists();
    expect((await reconcileNamespace(deps, 'team-a', { resourceVersion: covered })).writes).toBe(0);
    expect(lists()).toBe(first + 1);
    const before = lists();
    expect((await reconcileNamespace(deps, 'team-a', { resourceVersion: covered })).writes).toBe(0);
    expect(lists()).toBe(before);
    api.put(tpl('base', [cm('owner', { v: '2' })]));
    const newer = api.get('furnish.dev/v1alpha1', 'NamespaceTemplate', undefined, 'base')!.metadata.resourceVersion;
    expect((await reconcileNamespace(deps, 'team-a', { resourceVersion: newer })).outcome?.applied).toBe(1);
    expect(lists()).toBe(before + 1);
    expect(api.get('v1', 'ConfigMap', 'team-a', 'owner')?.data).toEqual({ v: '2' });
  });

  it('an instance still holding an older list of the templates never puts that version back over a newer one another instance applied', async () => {
    const { api, deps } = setup();
    api.put(ns('team-a'));
    api.put(tpl('base', [cm('owner', { v: '1' })]));
    await reconcileNamespace(deps, 'team-a');
    // v2 is applied here: this instance's last list now holds v2.
    api.put(tpl('base', [cm('owner', { v: '2' })]));
    const v2 = api.get('furnish.dev/v1alpha1', 'NamespaceTemplate', undefined, 'base')!.metadata.resourceVersion;
    await reconcileNamespace(deps, 'team-a', { resourceVersion: v2 });
    expect(api.get('v1', 'ConfigMap', 'team-a', 'owner')?.data).toEqual({ v: '2' });
    // v3 is applied by another instance (its own list).
    api.put(tpl('base', [cm('owner', { v: '3' })]));
    const other = api.newClient();
    await reconcileNamespace({ ...deps, kube: other, resolver: new ResourceResolver(other) }, 'team-a');
    expect(api.get('v1', 'ConfigMap', 'team-a', 'owner')?.data).toEqual({ v: '3' });
    // v2's message is delivered again here: its list is recent enough for v2, but older than the object v3 wrote.
    const r = await reconcileNamespace(deps, 'team-a', { resourceVersion: v2 });
    expect(api.get('v1', 'ConfigMap', 'team-a', 'owner')?.data).toEqual({ v: '3' });
    expect(r.writes).toBe(0);
  });
});

describe('reconcileNamespace bookkeeping', () => {
  it('a namespace no template matches gets phase=ready and nothing else', async () => {
    const { api, deps } = setup();
    api.put(ns('plain', { tier: 'none' }));
    api.put(tpl('gold', [cm('x')], { namespaces: { labelSelector: { matchLabels: { tier: 'gold' } } } }));
    const r = await reconcileNamespace(deps, 'plain');
    expect(r.writes).toBe(1);
    expect(api.writes().map((w) => w.path)).toEqual(['/api/v1/namespaces/plain/status']);
  });

  it('keeps a Ready condition beside the phase, in the same write, for kubectl wait --for=condition=Ready', async () => {
    const { api, deps } = setup();
    api.put(ns('waited', { tier: 'gold' }));
    api.put(tpl('gold', [cm('x')], { namespaces: { labelSelector: { matchLabels: { tier: 'gold' } } } }));
    await reconcileNamespace(deps, 'waited');
    const ready = api.get('v1', 'Namespace', undefined, 'waited')!;
    expect(ready.metadata.labels?.[KEY.phase]).toBe('ready');
    expect((ready.status as { conditions: unknown[] }).conditions).toEqual([{ type: 'Ready', status: 'True', reason: 'Ready', message: 'every matching NamespaceTemplate is applied and every initializer is done', lastTransitionTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) }]);
    const namespaceWrites = api.writes().filter((w) => w.path.startsWith('/api/v1/namespaces/waited') && !w.path.includes('/configmaps/') && !w.path.endsWith('/events'));
    expect(namespaceWrites.map((w) => `${w.method} ${w.path}`)).toEqual(['PATCH /api/v1/namespaces/waited/status']);
    // A template that can no longer apply: False, reason Failed, the failure as message.
    api.rejectWhen = (o) => (o.kind === 'ConfigMap' && o.metadata.name === 'x' ? 'data: Invalid value' : undefined);
    api.put({ ...api.get('furnish.dev/v1alpha1', 'NamespaceTemplate', undefined, 'gold')!, spec: { namespaces: { labelSelector: { matchLabels: { tier: 'gold' } } }, templates: [cm('x', { changed: 'yes' })] } });
    await reconcileNamespace(deps, 'waited');
    const failed = api.get('v1', 'Namespace', undefined, 'waited')!;
    expect(failed.metadata.labels?.[KEY.phase]).toBe('failed');
    expect((failed.status as { conditions: Array<Record<string, string>> }).conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'False', reason: 'Failed', message: failed.metadata.annotations![KEY.failure] })]);
  });
});
