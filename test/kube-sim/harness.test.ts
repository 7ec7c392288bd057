// What tests get from kube-sim besides the API: fast start-up, a child-process mode, the request
// log, fault injection, RBAC details, and useTestCluster() (simulated or from a kubeconfig).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { auditLog } from '../support/audit.ts';
import { useTestCluster } from '../support/cluster.ts';
import { call, CONFIGMAP, watch } from './helpers.ts';

let cluster: SimCluster;
beforeAll(async () => {
  cluster = await startCluster({ namespaceDefaultObjects: false });
});
afterAll(() => cluster.stop());

describe('start-up', () => {
  // How fast it starts is not asserted here (a timed test is flaky under load): a second cluster
  // beside the first starts on its own port and answers at once.
  it('starts a second cluster beside the first, on its own port, answering at once', async () => {
    const another = await startCluster();
    try {
      expect(another.server).not.toBe(cluster.server);
      expect((await call(another, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
    } finally {
      await another.stop();
    }
  });

  it('runs as a child process that prints its kubeconfig and server', async () => {
    const child = spawn(process.execPath, ['test/support/kube-sim/main.ts', '--user', 'carol:ops,dev']);
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start-up lines: ${output}`)), 10_000);
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (/^ready in \d+ ms/m.test(output)) { clearTimeout(timer); resolve(); }
      });
    });
    child.kill('SIGINT');
    await new Promise((resolve) => child.on('close', resolve));
    expect(output).toMatch(/^kubeconfig: \/.+\/kubeconfig$/m);
    expect(output).toMatch(/^server: https:\/\/127\.0\.0\.1:\d+$/m);
    expect(output).toMatch(/^users: admin:system:masters carol:ops,dev$/m);
  });
});

describe('request log', () => {
  it('counts requests by verb, resource, namespace and user; writes exclude dry runs', async () => {
    cluster.log.reset();
    await call(cluster, 'GET', '/api/v1/namespaces/default/configmaps');
    await call(cluster, 'POST', '/api/v1/namespaces/default/configmaps', { body: CONFIGMAP('logged', 'default') });
    await call(cluster, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: CONFIGMAP('dry', 'default') });
    await call(cluster, 'GET', '/api/v1/namespaces/default/configmaps/logged', { user: 'mallory' });
    expect(cluster.log.count({ verb: 'list', resource: 'configmaps' })).toBe(1);
    expect(cluster.log.count({ verb: 'create' })).toBe(2);
    expect(cluster.log.writes({ resource: 'configmaps', namespace: 'default' })).toBe(1);
    expect(cluster.log.entries.at(-1)).toEqual({ verb: 'get', resource: 'configmaps', namespace: 'default', name: 'logged', user: 'mallory', userAgent: 'kube-sim-test/1.0', status: 403, dryRun: false });
  });

  it('--audit-log writes each answered request as kube-apiserver audits it: the audit log reader counts the same writes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kube-sim-audit-'));
    const audited = await startCluster({ namespaceDefaultObjects: false, auditLog: join(dir, 'audit.log') });
    try {
      const log = auditLog(join(dir, 'audit.log'));
      log.mark();
      await call(audited, 'POST', '/api/v1/namespaces/default/configmaps', { body: CONFIGMAP('audited', 'default') });
      await call(audited, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: CONFIGMAP('dry', 'default') });
      await call(audited, 'PATCH', '/api/v1/namespaces/default/status', { body: { metadata: { labels: { a: 'b' } } }, contentType: 'application/merge-patch+json' });
      await call(audited, 'GET', '/api/v1/namespaces/default/configmaps/audited');
      expect(log.since().map((w) => [w.verb, w.resource, w.namespace, w.name, w.user, w.userAgent, w.code])).toEqual([
        ['create', 'configmaps', 'default', '', 'admin', 'kube-sim-test/1.0', 201],
        ['patch', 'namespaces/status', '', 'default', 'admin', 'kube-sim-test/1.0', 200],
      ]);
      expect(log.requestsSince().map((r) => r.verb)).toEqual(['create', 'create', 'patch', 'get']);
    } finally {
      await audited.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('faults', () => {
  it('injects 5xx and 429 with Retry-After, a limited number of times', async () => {
    const remove = cluster.faults.inject({ verb: 'list', resource: 'configmaps', status: 503, times: 1 });
    expect((await call(cluster, 'GET', '/api/v1/namespaces/default/configmaps')).status).toBe(503);
    expect((await call(cluster, 'GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
    remove();
    cluster.faults.inject({ verb: 'create', status: 429, retryAfterSeconds: 2 });
    const throttled = await call(cluster, 'POST', '/api/v1/namespaces/default/configmaps', { body: CONFIGMAP('t', 'default') });
    expect([throttled.status, throttled.headers['retry-after'], throttled.body.reason, throttled.body.details.retryAfterSeconds]).toEqual([429, '2', 'TooManyRequests', 2]);
    cluster.faults.clear();
    expect((await call(cluster, 'POST', '/api/v1/namespaces/default/configmaps', { body: CONFIGMAP('t', 'default') })).status).toBe(201);
  });

  it("answers as a filling watch cache does (kube-apiserver 1.31+), with the fault's message", async () => {
    cluster.faults.inject({ verb: 'list', resource: 'configmaps', status: 429, retryAfterSeconds: 1, message: 'storage is (re)initializing', times: 1 });
    const filling = await call(cluster, 'GET', '/api/v1/namespaces/default/configmaps');
    expect([filling.status, filling.headers['retry-after'], filling.body.reason, filling.body.message]).toEqual([429, '1', 'TooManyRequests', 'storage is (re)initializing']);
  });

  it('adds latency: a delayed get answers after an undelayed list sent after it', async () => {
    // Order, not elapsed time: the delay is long enough that the list, sent second, answers first.
    cluster.faults.inject({ verb: 'get', latencyMs: 1000, times: 1 });
    const order: string[] = [];
    const delayed = call(cluster, 'GET', '/api/v1/namespaces/default').then((r) => order.push(`get ${r.status}`));
    const plain = call(cluster, 'GET', '/api/v1/namespaces').then((r) => order.push(`list ${r.status}`));
    await Promise.all([delayed, plain]);
    expect(order).toEqual(['list 200', 'get 200']);
  });

  it('closes a watch after the delay, having streamed what it had (once: the next watch stays open)', async () => {
    cluster.faults.inject({ verb: 'watch', closeWatchAfterMs: 300, times: 1 });
    const namespaces = (await call(cluster, 'GET', '/api/v1/namespaces')).body.items.map((n: { metadata: { name: string } }) => n.metadata.name);
    const cut = watch(cluster, '/api/v1/namespaces?watch=true');
    await cut.ended;
    expect(await cut.status).toBe(200);
    expect(cut.events.map((e) => e.object.metadata.name)).toEqual(expect.arrayContaining(namespaces));
    // `times: 1`: the next watch is not cut; it stays open until it is closed.
    const open = watch(cluster, '/api/v1/namespaces?watch=true');
    await open.waitFor(namespaces.length);
    let ended = false;
    void open.ended.then(() => { ended = true; });
    await call(cluster, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after-the-cut' } } });
    await open.waitFor(namespaces.length + 1);
    expect([ended, open.events.at(-1)?.object.metadata.name]).toEqual([false, 'after-the-cut']);
    open.close();
  });
});

describe('RBAC', () => {
  const can = async (user: string, attributes: Record<string, string>): Promise<boolean> => (await call(cluster, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: ['dev'], resourceAttributes: attributes } },
  })).body.status.allowed;

  beforeAll(() => {
    cluster.sim.seed({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'furnish-edit', labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } },
      rules: [{ apiGroups: ['furnish.dev'], resources: ['namespacetemplates'], verbs: ['get'] }] });
    cluster.sim.seed({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'status-writer' },
      rules: [{ apiGroups: ['*'], resources: ['*/status'], verbs: ['update', 'optout'] }] });
    cluster.sim.seed({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'dev-edit', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'dev' }] });
    cluster.sim.seed({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'carl-status' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'status-writer' }, subjects: [{ kind: 'ServiceAccount', name: 'carl', namespace: 'ops' }] });
  });

  it('binds groups, aggregates ClusterRoles, matches */subresource and service accounts', async () => {
    expect(await can('anyone', { namespace: 'default', verb: 'create', resource: 'configmaps' })).toBe(true);
    expect(await can('anyone', { namespace: 'other', verb: 'create', resource: 'configmaps' })).toBe(false);
    expect(await can('anyone', { namespace: 'default', verb: 'get', group: 'furnish.dev', resource: 'namespacetemplates' })).toBe(true);
    expect(await can('system:serviceaccount:ops:carl', { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'status' })).toBe(true);
    expect(await can('system:serviceaccount:ops:carl', { verb: 'update', group: 'apps', resource: 'deployments' })).toBe(false);
  });

  it('answers 403 the way kube-apiserver words it, for named and cluster-scoped requests', async () => {
    const reply = await call(cluster, 'PUT', '/api/v1/namespaces/default/status', { user: 'mallory', body: {} });
    expect(reply.body.message).toBe('namespaces "default" is forbidden: User "mallory" cannot update resource "namespaces/status" in API group "" in the namespace "default"');
  });
});

describe('useTestCluster', () => {
  // These tests are about the harness choosing kube-sim (and set the variable themselves): a real
  // cluster named by the caller (npm run test:cluster) is put aside while they run.
  const outer = process.env.FURNISH_TEST_KUBECONFIG;
  beforeAll(() => void delete process.env.FURNISH_TEST_KUBECONFIG);
  afterAll(() => {
    if (outer !== undefined) process.env.FURNISH_TEST_KUBECONFIG = outer;
  });

  it('gives kube-sim with the default users, or the cluster of FURNISH_TEST_KUBECONFIG', async () => {
    const simulated = await useTestCluster({ metadataNameLabel: false });
    try {
      expect(simulated.isSimulated).toBe(true);
      expect(Object.keys(simulated.users)).toEqual(['admin', 'alice', 'bob', 'mallory']);
      expect(simulated.users.alice).toMatchObject({ name: 'alice', groups: ['dev'], context: 'alice', token: expect.any(String) });
      expect(simulated.webhookCredentials).toBe('none');
      process.env.FURNISH_TEST_KUBECONFIG = simulated.kubeconfigPath;
      const external = await useTestCluster();
      expect(external).toMatchObject({ isSimulated: false, server: simulated.server, caPem: simulated.caPem });
      expect([external.log, external.faults]).toEqual([undefined, undefined]);
      // A real API server's webhook credentials come from its own --admission-control-config-file.
      expect(external.webhookCredentials).toBe('api-server');
      expect(external.users.bob).toEqual({ name: 'bob', groups: [], context: 'bob', token: simulated.users.bob!.token });
      await external.stop();
    } finally {
      delete process.env.FURNISH_TEST_KUBECONFIG;
      await simulated.stop();
    }
  });

  it('hands kube-sim the admission kubeconfig', async () => {
    const authed = await useTestCluster({ admissionKubeconfig: { users: [{ name: '127.0.0.1:8443', user: { token: 'hook-token' } }] } });
    try {
      expect(authed.webhookCredentials).toBe('kube-sim');
      expect(authed.sim!.webhookAuth.credentialsFor(new URL('https://127.0.0.1:8443/mutate')).headers).toEqual({ Authorization: 'Bearer hook-token' });
    } finally {
      await authed.stop();
    }
  });

  it('acts like a cluster older than 1.22 when asked', async () => {
    const old = await useTestCluster({ metadataNameLabel: false });
    try {
      const reply = await call(old as unknown as SimCluster, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'unlabelled' } } });
      expect(reply.body.metadata.labels).toBeUndefined();
    } finally {
      await old.stop();
    }
  });
});
