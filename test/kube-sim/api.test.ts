// kube-sim over HTTPS: the verbs and their answers, as a raw client sees them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { call, CONFIGMAP, watch } from './helpers.ts';

let cluster: SimCluster;
const NS = '/api/v1/namespaces';
const cm = (ns: string, name = ''): string => `${NS}/${ns}/configmaps${name ? `/${name}` : ''}`;

async function namespace(name: string, labels: Record<string, string> = {}): Promise<void> {
  const reply = await call(cluster, 'POST', NS, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } } });
  expect(reply.status).toBe(201);
}

beforeAll(async () => {
  cluster = await startCluster({ namespaceDefaultObjects: false });
});
afterAll(() => cluster.stop());

describe('authentication', () => {
  it('answers 401 Unauthorized without or with a wrong token', async () => {
    for (const token of [null, 'nope']) {
      const reply = await call(cluster, 'GET', NS, { token });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    }
  });

  it('lets admin impersonate, and forbids impersonation without the impersonate verb', async () => {
    const asAlice = await call(cluster, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, headers: { 'Impersonate-User': 'alice', 'Impersonate-Group': 'dev' },
    });
    expect(asAlice.body.status.userInfo).toEqual({ username: 'alice', groups: ['dev', 'system:authenticated'] });
    const denied = await call(cluster, 'GET', NS, { user: 'mallory', headers: { 'Impersonate-User': 'admin' } });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe('users "admin" is forbidden: User "mallory" cannot impersonate resource "users" in API group "" at the cluster scope');
  });
});

describe('create, get, update', () => {
  beforeAll(() => namespace('crud'));

  it('creates with uid, resourceVersion, creationTimestamp and generateName', async () => {
    const created = await call(cluster, 'POST', cm('crud'), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' }, data: { a: '1' } } });
    expect(created.status).toBe(201);
    expect(created.headers['content-type']).toBe('application/json');
    expect(created.body.metadata).toMatchObject({ namespace: 'crud', uid: expect.any(String), resourceVersion: expect.any(String), creationTimestamp: expect.any(String) });
    expect(created.body.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    const got = await call(cluster, 'GET', cm('crud', created.body.metadata.name));
    expect(got.body).toEqual(created.body);
  });

  it('refuses a duplicate (409 AlreadyExists), a bad name (422) and a missing namespace (404)', async () => {
    await call(cluster, 'POST', cm('crud'), { body: CONFIGMAP('dup', 'crud') });
    const dup = await call(cluster, 'POST', cm('crud'), { body: CONFIGMAP('dup', 'crud') });
    expect([dup.status, dup.body.reason, dup.body.message]).toEqual([409, 'AlreadyExists', 'configmaps "dup" already exists']);
    const bad = await call(cluster, 'POST', cm('crud'), { body: CONFIGMAP('Bad_Name', 'crud') });
    expect([bad.status, bad.body.reason, bad.body.details.causes[0].field]).toEqual([422, 'Invalid', 'metadata.name']);
    const missing = await call(cluster, 'POST', cm('nope'), { body: CONFIGMAP('x', 'nope') });
    expect([missing.status, missing.body.message]).toEqual([404, 'namespaces "nope" not found']);
  });

  it('updates with optimistic concurrency and bumps resourceVersion only on change', async () => {
    const created = (await call(cluster, 'POST', cm('crud'), { body: CONFIGMAP('occ', 'crud') })).body;
    const updated = await call(cluster, 'PUT', cm('crud', 'occ'), { body: { ...created, data: { a: '2' } } });
    expect(updated.status).toBe(200);
    expect(Number(updated.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    const stale = await call(cluster, 'PUT', cm('crud', 'occ'), { body: { ...created, data: { a: '3' } } });
    expect([stale.status, stale.body.reason]).toEqual([409, 'Conflict']);
    expect(stale.body.message).toBe('Operation cannot be fulfilled on configmaps "occ": the object has been modified; please apply your changes to the latest version and try again');
    const same = await call(cluster, 'PUT', cm('crud', 'occ'), { body: updated.body });
    expect(same.body.metadata.resourceVersion).toBe(updated.body.metadata.resourceVersion);
  });

  it('does nothing for dryRun=All', async () => {
    const before = cluster.sim.store.currentResourceVersion();
    const dry = await call(cluster, 'POST', `${cm('crud')}?dryRun=All`, { body: CONFIGMAP('dry', 'crud') });
    expect(dry.status).toBe(201);
    expect(dry.body.metadata.uid).toEqual(expect.any(String));
    expect((await call(cluster, 'GET', cm('crud', 'dry'))).status).toBe(404);
    expect(cluster.sim.store.currentResourceVersion()).toBe(before);
  });
});

describe('namespaces', () => {
  it('labels namespaces with kubernetes.io/metadata.name and keeps it', async () => {
    await namespace('labelled');
    const patched = await call(cluster, 'PATCH', `${NS}/labelled`, {
      contentType: 'application/merge-patch+json', body: { metadata: { labels: { 'kubernetes.io/metadata.name': null, team: 'blue' } } },
    });
    expect(patched.body.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'labelled', team: 'blue' });
    expect(patched.body.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(patched.body.status).toEqual({ phase: 'Active' });
  });

  it('deletes a namespace with its contents: Terminating first, gone after', async () => {
    // Long enough that the create below lands while the namespace is Terminating, even under load.
    cluster.sim.options.namespaceDeletionDelayMs = 1000;
    await namespace('doomed');
    await call(cluster, 'POST', cm('doomed'), { body: CONFIGMAP('inside', 'doomed') });
    const stream = watch(cluster, `${cm('doomed')}?watch=true&resourceVersion=${cluster.sim.store.currentResourceVersion()}`);
    expect(await stream.status).toBe(200);
    const deleted = await call(cluster, 'DELETE', `${NS}/doomed`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.status.phase).toBe('Terminating');
    expect(deleted.body.metadata.deletionTimestamp).toEqual(expect.any(String));
    const refused = await call(cluster, 'POST', cm('doomed'), { body: CONFIGMAP('late', 'doomed') });
    expect([refused.status, refused.body.reason]).toEqual([403, 'Forbidden']);
    await stream.waitFor(1);
    expect(stream.events[0]).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'inside' } } });
    stream.close();
    expect((await call(cluster, 'GET', `${NS}/doomed`)).status).toBe(404);
    cluster.sim.options.namespaceDeletionDelayMs = 0;
  });

  it('a finalizer of someone else\'s holds an emptied namespace Terminating; removing it deletes the namespace', async () => {
    await namespace('held');
    await call(cluster, 'POST', cm('held'), { body: CONFIGMAP('inside', 'held') });
    await call(cluster, 'PATCH', `${NS}/held`, { contentType: 'application/merge-patch+json', body: { metadata: { finalizers: ['example.com/hold'] } } });
    expect((await call(cluster, 'DELETE', `${NS}/held`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    expect((await call(cluster, 'GET', cm('held'))).body.items).toEqual([]);
    expect((await call(cluster, 'GET', `${NS}/held`)).body.status.phase).toBe('Terminating');
    const released = await call(cluster, 'PATCH', `${NS}/held`, { contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } });
    expect(released.status).toBe(200);
    expect((await call(cluster, 'GET', `${NS}/held`)).status).toBe(404);
  });

  it('refuses to delete default', async () => {
    const reply = await call(cluster, 'DELETE', `${NS}/default`);
    expect([reply.status, reply.body.message]).toEqual([403, 'namespaces "default" is forbidden: this namespace may not be deleted']);
  });
});

describe('list', () => {
  beforeAll(async () => {
    await namespace('listing');
    for (const [name, tier] of [['a', 'web'], ['b', 'db'], ['c', 'web'], ['d', 'cache']] as const) {
      await call(cluster, 'POST', cm('listing'), { body: { ...CONFIGMAP(name, 'listing'), metadata: { name, labels: { tier } } } });
    }
  });

  const names = (reply: { body: { items: Array<{ metadata: { name: string } }> } }): string[] => reply.body.items.map((i) => i.metadata.name);

  it('selects by label, set-based too, and by field', async () => {
    expect(names(await call(cluster, 'GET', `${cm('listing')}?labelSelector=tier%3Dweb`))).toEqual(['a', 'c']);
    expect(names(await call(cluster, 'GET', `${cm('listing')}?labelSelector=${encodeURIComponent('tier in (db,cache)')}`))).toEqual(['b', 'd']);
    expect(names(await call(cluster, 'GET', `${cm('listing')}?labelSelector=${encodeURIComponent('tier notin (web),!missing')}`))).toEqual(['b', 'd']);
    expect(names(await call(cluster, 'GET', `${cm('listing')}?fieldSelector=metadata.name%3Dc`))).toEqual(['c']);
    const bad = await call(cluster, 'GET', `${cm('listing')}?fieldSelector=spec.x%3D1`);
    expect([bad.status, bad.body.message]).toEqual([400, 'field label not supported: spec.x']);
  });

  it('pages with limit and continue', async () => {
    const first = await call(cluster, 'GET', `${cm('listing')}?limit=3`);
    expect(first.body.kind).toBe('ConfigMapList');
    expect(names(first)).toEqual(['a', 'b', 'c']);
    expect(first.body.metadata.remainingItemCount).toBe(1);
    const second = await call(cluster, 'GET', `${cm('listing')}?limit=3&continue=${first.body.metadata.continue}`);
    expect(names(second)).toEqual(['d']);
    expect(second.body.metadata.continue).toBeUndefined();
  });
});

describe('watch', () => {
  beforeAll(() => namespace('watching'));

  it('starts with the current state and follows changes, selector-aware', async () => {
    await call(cluster, 'POST', cm('watching'), { body: { ...CONFIGMAP('w1', 'watching'), metadata: { name: 'w1', labels: { watched: 'yes' } } } });
    const stream = watch(cluster, `${cm('watching')}?watch=true&labelSelector=watched%3Dyes`);
    await stream.waitFor(1);
    await call(cluster, 'PATCH', cm('watching', 'w1'), { contentType: 'application/merge-patch+json', body: { data: { a: '2' } } });
    await call(cluster, 'PATCH', cm('watching', 'w1'), { contentType: 'application/merge-patch+json', body: { metadata: { labels: { watched: 'no' } } } });
    await stream.waitFor(3);
    expect(stream.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    stream.close();
  });

  it('resumes from a resourceVersion, sends bookmarks, ends at timeoutSeconds', async () => {
    const from = cluster.sim.store.currentResourceVersion();
    await call(cluster, 'POST', cm('watching'), { body: CONFIGMAP('w2', 'watching') });
    const stream = watch(cluster, `${cm('watching')}?watch=true&resourceVersion=${from}&allowWatchBookmarks=true&timeoutSeconds=1`);
    await stream.waitFor(1);
    expect(stream.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'w2' } } });
    await stream.ended;
  });

  it('answers a too old resourceVersion with a 410 Expired ERROR event', async () => {
    const old = await startCluster({ watchHistory: 2, namespaceDefaultObjects: false });
    try {
      for (const n of ['x1', 'x2', 'x3']) await call(old, 'POST', cm('default'), { body: CONFIGMAP(n, 'default') });
      const stream = watch(old, `${cm('default')}?watch=true&resourceVersion=1`);
      await stream.ended;
      expect(stream.events).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) }]);
      expect(stream.events[0]!.object.message).toMatch(/^too old resource version: 1 \(\d+\)$/);
    } finally {
      await old.stop();
    }
  });
});

describe('patch', () => {
  beforeAll(() => namespace('patching'));

  it('applies JSON patch, merge patch and strategic merge patch', async () => {
    await call(cluster, 'POST', cm('patching'), { body: CONFIGMAP('p', 'patching', { a: '1', b: '2' }) });
    const json = await call(cluster, 'PATCH', cm('patching', 'p'), { contentType: 'application/json-patch+json', body: [{ op: 'replace', path: '/data/a', value: 'x' }] });
    expect(json.body.data).toEqual({ a: 'x', b: '2' });
    const merge = await call(cluster, 'PATCH', cm('patching', 'p'), { contentType: 'application/merge-patch+json', body: { data: { b: null, c: '3' } } });
    expect(merge.body.data).toEqual({ a: 'x', c: '3' });
    const strategic = await call(cluster, 'PATCH', cm('patching', 'p'), { contentType: 'application/strategic-merge-patch+json', body: { data: { d: '4' } } });
    expect(strategic.body.data).toEqual({ a: 'x', c: '3', d: '4' });
    const failing = await call(cluster, 'PATCH', cm('patching', 'p'), { contentType: 'application/json-patch+json', body: [{ op: 'test', path: '/data/a', value: 'no' }] });
    expect([failing.status, failing.body.reason]).toEqual([422, 'Invalid']);
  });

  it('merges keyed lists strategically (pod containers by name)', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pod', namespace: 'patching' }, spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] } };
    await call(cluster, 'POST', `${NS}/patching/pods`, { body: pod });
    const reply = await call(cluster, 'PATCH', `${NS}/patching/pods/pod`, {
      contentType: 'application/strategic-merge-patch+json', body: { spec: { containers: [{ name: 'b', image: 'b:2' }, { name: 'c', image: 'c:1' }] } },
    });
    expect(reply.body.spec.containers).toEqual([{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:2' }, { name: 'c', image: 'c:1' }]);
  });
});

describe('server-side apply', () => {
  beforeAll(() => namespace('ssa'));
  const apply = (body: unknown, manager: string, force = false): ReturnType<typeof call> => call(cluster, 'PATCH',
    `${cm('ssa', 'cfg')}?fieldManager=${manager}${force ? '&force=true' : ''}`, { contentType: 'application/apply-patch+yaml', body });

  it('creates, re-applies as a no-op, conflicts, forces and prunes', async () => {
    const created = await apply(CONFIGMAP('cfg', 'ssa', { a: '1', b: '1' }), 'furnish');
    expect(created.status).toBe(201);
    expect(created.body.metadata.managedFields).toEqual([expect.objectContaining({ manager: 'furnish', operation: 'Apply', fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } } })]);
    const again = await apply(CONFIGMAP('cfg', 'ssa', { a: '1', b: '1' }), 'furnish');
    expect(again.status).toBe(200);
    expect(again.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    expect(again.body.metadata.managedFields).toEqual(created.body.metadata.managedFields);

    const conflict = await apply(CONFIGMAP('cfg', 'ssa', { a: '2' }), 'someone-else');
    expect(conflict.status).toBe(409);
    expect(conflict.body.message).toBe('Apply failed with 1 conflict: conflict with "furnish": .data.a');
    expect(conflict.body.details.causes).toEqual([{ reason: 'FieldManagerConflict', message: 'conflict with "furnish"', field: '.data.a' }]);

    const forced = await apply(CONFIGMAP('cfg', 'ssa', { a: '2' }), 'someone-else', true);
    expect(forced.body.data).toEqual({ a: '2', b: '1' });
    expect(forced.body.metadata.managedFields.map((m: { manager: string }) => m.manager)).toEqual(['furnish', 'someone-else']);

    const pruned = await apply(CONFIGMAP('cfg', 'ssa', {}), 'furnish');
    expect(pruned.body.data).toEqual({ a: '2' }); // b was furnish's alone; a now belongs to someone-else
  });

  it('reports conflicts with update managers and requires a fieldManager', async () => {
    await call(cluster, 'PATCH', `${cm('ssa', 'cfg')}?fieldManager=kubectl-edit`, { contentType: 'application/merge-patch+json', body: { data: { e: '1' } } });
    const conflict = await apply(CONFIGMAP('cfg', 'ssa', { e: '2' }), 'furnish');
    expect(conflict.body.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.e');
    const noManager = await call(cluster, 'PATCH', cm('ssa', 'cfg'), { contentType: 'application/apply-patch+yaml', body: CONFIGMAP('cfg', 'ssa') });
    expect([noManager.status, noManager.body.details.kind]).toEqual([422, 'PatchOptions']);
  });

  it('accepts YAML bodies', async () => {
    const reply = await call(cluster, 'PATCH', `${cm('ssa', 'yaml')}?fieldManager=yaml`, {
      contentType: 'application/apply-patch+yaml', body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml\ndata:\n  k: v\n',
    });
    expect([reply.status, reply.body.data]).toEqual([201, { k: 'v' }]);
  });
});

describe('custom resources', () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.dev' },
    spec: {
      group: 'example.dev', scope: 'Namespaced', names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
      versions: [{
        name: 'v1', served: true, storage: true, subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', properties: {
          spec: { type: 'object', properties: { size: { type: 'integer' }, mode: { type: 'string', enum: ['A', 'B'], default: 'A' } } },
          status: { type: 'object', properties: { ready: { type: 'boolean' } } },
        } } },
      }],
    },
  };
  const widgets = '/apis/example.dev/v1/namespaces/crs/widgets';

  beforeAll(async () => {
    await namespace('crs');
    expect((await call(cluster, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status).toBe(201);
  });

  it('serves the kind at once, in discovery too, with defaults, pruning and validation', async () => {
    const discovery = await call(cluster, 'GET', '/apis/example.dev/v1');
    expect(discovery.body.resources.map((r: { name: string }) => r.name)).toEqual(['widgets', 'widgets/status']);
    const created = await call(cluster, 'POST', widgets, { body: { apiVersion: 'example.dev/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1, junk: true }, status: { ready: true } } });
    expect(created.status).toBe(201);
    expect(created.body.spec).toEqual({ size: 1, mode: 'A' });
    expect(created.body.status).toBeUndefined();
    expect(created.body.metadata.generation).toBe(1);
    const invalid = await call(cluster, 'POST', widgets, { body: { apiVersion: 'example.dev/v1', kind: 'Widget', metadata: { name: 'bad' }, spec: { mode: 'C' } } });
    expect([invalid.status, invalid.body.reason]).toEqual([422, 'Invalid']);
  });

  it('bumps generation on spec writes, not on status writes', async () => {
    const status = await call(cluster, 'PATCH', `${widgets}/w/status`, { contentType: 'application/merge-patch+json', body: { status: { ready: true }, spec: { size: 99 } } });
    expect(status.body.status).toEqual({ ready: true });
    expect(status.body.spec.size).toBe(1);
    expect(status.body.metadata.generation).toBe(1);
    const spec = await call(cluster, 'PATCH', `${widgets}/w`, { contentType: 'application/merge-patch+json', body: { spec: { size: 2 }, status: { ready: false } } });
    expect(spec.body.metadata.generation).toBe(2);
    expect(spec.body.status).toEqual({ ready: true });
    const strategic = await call(cluster, 'PATCH', `${widgets}/w`, { contentType: 'application/strategic-merge-patch+json', body: { spec: { size: 3 } } });
    expect(strategic.status).toBe(415);
  });

  it('removes the kind and its objects with the CRD', async () => {
    await call(cluster, 'DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.dev');
    expect((await call(cluster, 'GET', widgets)).status).toBe(404);
  });
});

describe('garbage collection', () => {
  it('deletes dependents whose owners are all gone', async () => {
    await namespace('gc');
    const owner = (await call(cluster, 'POST', cm('gc'), { body: CONFIGMAP('owner', 'gc') })).body;
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid };
    await call(cluster, 'POST', cm('gc'), { body: { ...CONFIGMAP('dependent', 'gc'), metadata: { name: 'dependent', ownerReferences: [ref] } } });
    await call(cluster, 'DELETE', cm('gc', 'owner'));
    await new Promise((r) => setTimeout(r, 20));
    expect((await call(cluster, 'GET', cm('gc', 'dependent'))).status).toBe(404);
  });
});

describe('discovery and version', () => {
  it('serves /version, /api, /apis and resource lists', async () => {
    expect((await call(cluster, 'GET', '/version')).body.gitVersion).toMatch(/^v1\.\d+/);
    expect((await call(cluster, 'GET', '/api')).body.versions).toEqual(['v1']);
    const groups = (await call(cluster, 'GET', '/apis')).body.groups.map((g: { name: string }) => g.name);
    expect(groups).toEqual(expect.arrayContaining(['rbac.authorization.k8s.io', 'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'networking.k8s.io']));
    const core = (await call(cluster, 'GET', '/api/v1')).body.resources.map((r: { name: string }) => r.name);
    expect(core).toEqual(expect.arrayContaining(['namespaces', 'namespaces/status', 'configmaps', 'secrets', 'serviceaccounts', 'resourcequotas', 'limitranges', 'events', 'pods']));
    expect((await call(cluster, 'GET', '/apis/nope.dev/v1')).status).toBe(404);
  });
});
