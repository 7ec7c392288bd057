// kube-sim's answers against what a real kube-apiserver 1.26 answered to the same requests
// (test/fixtures/kube-apiserver-1.26/api): status, content type, Status reason and message, and
// object shape. Values that differ from run to run (uids, resourceVersions, times, ports,
// continue tokens) are masked on both sides.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { KubeObject, ObjectMeta } from '../../shared/kube/types.ts';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { call, CONFIGMAP, fixture, watch, type Reply } from './helpers.ts';

let cluster: SimCluster;
const VOLATILE = new Set(['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'time', 'continue', 'serverAddress', 'storageVersionHash']);

/** managedFields are ordered by time first: entries written in different seconds sort differently. */
const byManager = (entries: Array<{ manager: string; operation: string }>): unknown[] =>
  [...entries].sort((a, b) => `${a.operation}/${a.manager}`.localeCompare(`${b.operation}/${b.manager}`));

function mask(value: unknown, key = ''): unknown {
  if (key === 'managedFields' && Array.isArray(value)) return byManager(value).map((v) => mask(v));
  if (Array.isArray(value)) return value.map((v) => mask(v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, VOLATILE.has(k) && v !== null ? '<masked>' : mask(v, k)]));
  }
  return value;
}

function expectLike(reply: Reply, name: string): void {
  const real = fixture(name);
  expect(reply.status).toBe(real.status);
  expect(reply.headers['content-type']).toBe(real.headers['content-type']);
  if (real.headers['x-content-type-options']) expect(reply.headers['x-content-type-options']).toBe(real.headers['x-content-type-options']);
  expect(mask(reply.body)).toEqual(mask(real.body));
}

const rbac = (kind: string, body: { metadata: ObjectMeta; [field: string]: unknown }): KubeObject => ({ ...body, apiVersion: 'rbac.authorization.k8s.io/v1', kind });
const apply = (path: string, body: unknown, manager: string, force = false): Promise<Reply> => call(cluster, 'PATCH',
  `${path}?fieldManager=${manager}${force ? '&force=true' : ''}`, { contentType: 'application/apply-patch+yaml', body });

beforeAll(async () => {
  cluster = await startCluster({ namespaceDefaultObjects: false });
  await call(cluster, 'POST', '/api/v1/namespaces?fieldManager=kubectl-create', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } } });
  cluster.sim.seed(rbac('RoleBinding', { metadata: { name: 'alice-ca', namespace: 'team-a' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] }));
  cluster.sim.seed(rbac('ClusterRole', { metadata: { name: 'tpl-user' }, rules: [{ apiGroups: ['furnish.dev'], resources: ['namespacetemplates'], resourceNames: ['privileged'], verbs: ['use'] }] }));
  cluster.sim.seed(rbac('ClusterRoleBinding', { metadata: { name: 'bob-tpl' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'tpl-user' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }] }));
});
afterAll(() => cluster.stop());

describe('errors', () => {
  const cms = '/api/v1/namespaces/team-a/configmaps';

  it('401, 403, 404', async () => {
    expectLike(await call(cluster, 'GET', '/api/v1/namespaces', { token: 'wrong' }), 'unauthorized');
    expectLike(await call(cluster, 'GET', '/api/v1/namespaces/kube-system/secrets', { user: 'alice' }), 'forbidden');
    expectLike(await call(cluster, 'GET', `${cms}/nope`), 'get-missing');
    expectLike(await call(cluster, 'POST', '/api/v1/namespaces/nope/configmaps', { body: CONFIGMAP('x', 'nope') }), 'create-in-missing-ns');
  });

  it('409 and 422 on create', async () => {
    await call(cluster, 'POST', cms, { body: CONFIGMAP('app-config', 'team-a') });
    expectLike(await call(cluster, 'POST', cms, { body: CONFIGMAP('app-config', 'team-a') }), 'create-conflict');
    expectLike(await call(cluster, 'POST', cms, { body: CONFIGMAP('Bad_Name', 'team-a') }), 'create-invalid');
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'team-a.5hppk', namespace: 'team-a' }, involvedObject: { kind: 'Namespace', name: 'team-a' }, reason: 'Test', message: 'm' };
    expectLike(await call(cluster, 'POST', '/api/v1/namespaces/team-a/events', { body: event }), 'event-create');
  });

  it('409 on a stale update', async () => {
    const ns = (await call(cluster, 'GET', '/api/v1/namespaces/team-a')).body;
    await call(cluster, 'PATCH', '/api/v1/namespaces/team-a', { contentType: 'application/merge-patch+json', body: { metadata: { labels: { touched: 'yes' } } } });
    expectLike(await call(cluster, 'PUT', '/api/v1/namespaces/team-a', { body: ns }), 'update-stale');
    await call(cluster, 'PATCH', '/api/v1/namespaces/team-a', { contentType: 'application/merge-patch+json', body: { metadata: { labels: { touched: null } } } });
  });
});

describe('server-side apply', () => {
  const path = '/api/v1/namespaces/team-a/configmaps/furnished';

  it('create, no-op, conflict, force', async () => {
    const created = await apply(path, CONFIGMAP('furnished', 'team-a'), 'furnish');
    expectLike(created, 'ssa-create');
    const noop = await apply(path, CONFIGMAP('furnished', 'team-a'), 'furnish');
    expectLike(noop, 'ssa-noop');
    expect(noop.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    expectLike(await apply(path, CONFIGMAP('furnished', 'team-a', { a: '2' }), 'someone-else'), 'ssa-conflict');
    expectLike(await apply(path, CONFIGMAP('furnished', 'team-a', { a: '2' }), 'someone-else', true), 'ssa-force');
  });

  it('JSON body, and no field manager', async () => {
    expectLike(await apply('/api/v1/namespaces/team-a/configmaps/furnished-json', JSON.stringify(CONFIGMAP('furnished-json', 'team-a')), 'furnish'), 'ssa-json-body');
    expectLike(await call(cluster, 'PATCH', path, { contentType: 'application/apply-patch+yaml', body: CONFIGMAP('furnished', 'team-a') }), 'ssa-no-manager');
  });
});

describe('SubjectAccessReview', () => {
  const sar = (spec: Record<string, unknown>): Promise<Reply> => call(cluster, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    headers: { 'User-Agent': 'curl/8.0.1' }, body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
  });

  it('allowed by a RoleBinding and by a ClusterRoleBinding with resourceNames and a custom verb', async () => {
    expectLike(await sar({ resourceAttributes: { namespace: 'team-a', verb: 'create', resource: 'configmaps' }, user: 'alice', groups: ['dev'] }), 'sar-allowed');
    expectLike(await sar({ resourceAttributes: { verb: 'use', group: 'furnish.dev', resource: 'namespacetemplates', name: 'privileged' }, user: 'bob' }), 'sar-denied');
  });

  it('denied without a matching rule', async () => {
    const reply = await sar({ resourceAttributes: { verb: 'use', group: 'furnish.dev', resource: 'namespacetemplates', name: 'other' }, user: 'bob' });
    expect(reply.body.status).toEqual({ allowed: false });
  });
});

describe('namespaces', () => {
  it('get after create, label and annotate by different managers', async () => {
    await call(cluster, 'PATCH', '/api/v1/namespaces/team-a?fieldManager=kubectl-label', { contentType: 'application/merge-patch+json', body: { metadata: { labels: { capture: 'yes', team: 'blue' } } } });
    await call(cluster, 'PATCH', '/api/v1/namespaces/team-a?fieldManager=kubectl-annotate', { contentType: 'application/merge-patch+json', body: { metadata: { annotations: { 'furnish.dev/creator': 'mallory' } } } });
    expectLike(await call(cluster, 'GET', '/api/v1/namespaces/team-a'), 'get-namespace');
  });

  it('list pages', async () => {
    const page = await call(cluster, 'GET', '/api/v1/namespaces?limit=2');
    const real = fixture('list-namespaces-page').body;
    expect(Object.keys(page.body.metadata).sort()).toEqual(Object.keys(real.metadata).sort());
    expect(page.body.kind).toBe(real.kind);
    expect(Object.keys(page.body.items[0]).sort()).toEqual(Object.keys(real.items[0]).sort());
  });

  it('delete answers with the Terminating namespace', async () => {
    await call(cluster, 'POST', '/api/v1/namespaces?fieldManager=kubectl-create', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-c' } } });
    expectLike(await call(cluster, 'DELETE', '/api/v1/namespaces/team-c'), 'delete-ns');
  });

  it('watch events have the shape of a real watch', async () => {
    const stream = watch(cluster, '/api/v1/namespaces?watch=true');
    await stream.waitFor(1);
    stream.close();
    const realLine = JSON.parse(String(fixture('watch-bookmarks').body).split('\n')[0]!);
    expect(Object.keys(stream.events[0]!)).toEqual(Object.keys(realLine));
    expect(Object.keys(stream.events[0]!.object).sort()).toEqual(Object.keys(realLine.object).sort());
  });
});

describe('discovery and version', () => {
  it('matches /version and /api', async () => {
    const version = await call(cluster, 'GET', '/version');
    expect(Object.keys(version.body).sort()).toEqual(Object.keys(fixture('version').body).sort());
    expectLike(await call(cluster, 'GET', '/api'), 'discovery-api');
  });

  it('describes the built-in kinds as kube-apiserver does', async () => {
    const real = fixture('discovery-core-v1').body.resources as Array<Record<string, unknown>>;
    const ours = (await call(cluster, 'GET', '/api/v1')).body.resources as Array<Record<string, unknown>>;
    for (const resource of ours) {
      const counterpart = real.find((r) => r.name === resource.name);
      expect(counterpart).toBeDefined();
      const { singularName: _a, storageVersionHash: _b, ...rest } = resource;
      const { singularName: _c, storageVersionHash: _d, ...realRest } = counterpart!;
      expect(rest).toEqual(realRest);
    }
  });

  it('serves a CRD group like kube-apiserver', async () => {
    const crd = parse(readFileSync('infra/crds/namespacetemplates.yaml', 'utf8'));
    expect((await call(cluster, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status).toBe(201);
    expectLike(await call(cluster, 'GET', '/apis/furnish.dev/v1alpha1'), 'discovery-furnish');
    const groups = (await call(cluster, 'GET', '/apis')).body;
    expect(groups.groups.find((g: { name: string }) => g.name === 'furnish.dev')).toEqual(fixture('discovery-apis').body.groups.find((g: { name: string }) => g.name === 'furnish.dev'));
  });
});
