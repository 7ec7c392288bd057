// LNamespace admission end to end: `npm start`'s stack with its webhooks registered in the test
// cluster (kube-sim, or the real one FURNISH_TEST_KUBECONFIG names: it must reach this host's
// loopback, and have contexts `alice` and `bob`, users without cluster-admin), and users running
// kubectl. Any signed-in user may ask for an LNamespace (infra/lnamespaces); mutate-lnamespace
// records who did, keeps it, and refuses what the reconciler could not honour.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { silentLogger } from '../../shared/log.ts';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { describeWithTool } from '../support/tools.ts';
import { clientFor, get, waitFor } from '../integration/helpers.ts';

const describeKubectl = describeWithTool('kubectl', 'the end-to-end tests run the user\'s own kubectl');
const ROOT = join(import.meta.dirname, '..', '..');
const run = `${process.pid % 1000}${Date.now().toString(36).slice(-4)}`;
const LNS = (name: string) => `/apis/furnish.dev/v1alpha1/lnamespaces/${name}`;
let cluster: TestCluster;
let stack: LocalStack;
let admin: KubeClient;
const access = parseAllDocuments(readFileSync(join(ROOT, 'infra', 'lnamespaces', 'access.yaml'), 'utf8')).map((d) => d.toJS() as KubeObject);
const created: string[] = [];

function kubectl(user: string, args: string[], input: string): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = execFile('kubectl', ['--kubeconfig', cluster.kubeconfigPath, '--context', user, ...args], { encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ status: error ? Number(error.code ?? -1) : 0, stdout: stdout.trim(), stderr: stderr.trim() });
    });
    p.stdin?.end(input);
  });
}

/** `kubectl sudo --context <user> ...` with bin/ on PATH, as a user installs it. */
function sudo(user: string, args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // KUBECONFIG, not --kubeconfig: kubectl accepts no flag before a plugin's name.
    execFile('kubectl', ['sudo', '--context', user, ...args], { encoding: 'utf8', env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath, PATH: `${join(ROOT, 'bin')}:${process.env.PATH ?? ''}` } }, (error, stdout, stderr) => {
      resolve({ status: error ? Number(error.code ?? -1) : 0, stdout: stdout.trim(), stderr: stderr.trim() });
    });
  });
}

const yaml = (name: string, spec: string, annotations = '') => `apiVersion: furnish.dev/v1alpha1\nkind: LNamespace\nmetadata:\n  name: ${name}\n${annotations}spec: ${spec}\n`;

async function applyAll(objs: KubeObject[]): Promise<void> {
  for (const o of objs) {
    const plural = o.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings';
    const res = await admin.call({ method: 'PATCH', path: `/apis/rbac.authorization.k8s.io/v1/${plural}/${encodeURIComponent(o.metadata.name!)}`, query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml', body: o });
    if (!res.ok) throw new Error(`apply ${o.kind} ${o.metadata.name}: ${res.status} ${res.error}`);
  }
}

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log: silentLogger, env: { FURNISH_WATCH_TIMEOUT_SECONDS: '5' } });
  await applyAll(access);
}, 60_000);

afterAll(async () => {
  if (admin) for (const n of created) await admin.call({ method: 'DELETE', path: LNS(n) });
  await stack?.stop();
  admin?.close();
  await cluster?.stop();
});

describeKubectl('mutate-lnamespace through the API server', () => {
  it('any signed-in user may ask for one; the creator is recorded and cannot be changed', async () => {
    const shop = `shop-${run}`;
    created.push(shop);
    const made = await kubectl('alice', ['apply', '-f', '-'], yaml(shop, '{users: [{kind: User, name: bob}], managers: [{kind: User, name: alice}]}'));
    expect(made).toMatchObject({ status: 0, stdout: `lnamespace.furnish.dev/${shop} created` });
    const lns = await get(admin, LNS(shop));
    expect(lns?.metadata.annotations?.['furnish.dev/creator']).toBe('alice');
    await waitFor('namespace created for alice', async () => (await get(admin, `/api/v1/namespaces/${shop}`))?.metadata.annotations?.['furnish.dev/requester'] === 'alice');

    // alice manages it; changing the creator is put back.
    const patched = await kubectl('alice', ['annotate', '--overwrite', 'lns', shop, 'furnish.dev/creator=bob'], '');
    expect(patched.status).toBe(0);
    expect((await get(admin, LNS(shop)))?.metadata.annotations?.['furnish.dev/creator']).toBe('alice');
    // bob is a user, not a manager: the API server refuses him before any webhook.
    const bob = await kubectl('bob', ['patch', 'lns', shop, '--type', 'merge', '-p', '{"spec":{"managers":[{"kind":"User","name":"bob"}]}}'], '');
    expect(bob.stderr).toMatch(/^Error from server \(Forbidden\): .*cannot patch resource "lnamespaces"/);
  }, 60_000);

  it('refuses at apply time what the reconciler could not honour, saying why', async () => {
    const bad = await kubectl('alice', ['apply', '-f', '-'], yaml(`kube-${run}`, '{sudoers: [{kind: ServiceAccount, name: ci}]}'));
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain(`admission webhook "mutate-lnamespace.furnish.dev" denied the request: LNamespace "kube-${run}" is invalid: metadata.name: "kube-${run}" is reserved (matches "kube-*"); spec.sudoers[0].namespace: is required for a ServiceAccount`);
    const taken = await kubectl('alice', ['apply', '-f', '-'], yaml('default', '{}'));
    expect(taken.stderr).toContain('"default" is reserved');
    const existing = `existing-${run}`;
    expect((await admin.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: existing } } })).ok).toBe(true);
    const adopt = await kubectl('alice', ['apply', '-f', '-'], yaml(existing, '{}', '  annotations: {furnish.dev/adopt-namespace: "true"}\n'));
    expect(adopt.stderr).toContain(`user "alice" may not take over namespace "${existing}": namespace "${existing}" already exists, which needs verb "adopt" on lnamespaces.furnish.dev, resourceName "${existing}"`);
    await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${existing}` });
  }, 60_000);

  it('a Group sudoer asked for with kubectl: its member elevates with `kubectl sudo`, and only with it', async () => {
    const lab = `lab-${run}`;
    created.push(lab);
    // alice asks for it as herself; bob is a member of group dev, not named anywhere.
    const made = await kubectl('alice', ['apply', '-f', '-'], yaml(lab, '{managers: [{kind: User, name: alice}], sudoers: [{kind: Group, name: dev}]}'));
    expect(made).toMatchObject({ status: 0, stdout: `lnamespace.furnish.dev/${lab} created` });
    await waitFor('namespace created', async () => (await get(admin, `/api/v1/namespaces/${lab}`)) !== undefined);
    const plain = await kubectl('bob', ['create', 'configmap', 'x', '-n', lab], '');
    expect(plain.stderr).toMatch(/forbidden/i);
    const elevated = await waitFor('bob elevates', async () => {
      const r = await sudo('bob', ['create', 'configmap', 'x', '-n', lab]);
      return r.status === 0 ? r : undefined;
    });
    expect(elevated.stdout).toBe('configmap/x created');
    expect((await sudo('mallory', ['get', 'configmaps', '-n', lab])).stderr).toMatch(/User "mallory" cannot impersonate/);
  }, 60_000);

  it('issue 25, finding 4: a user names her LNamespace after a group bound to cluster-admin; its sudo reaches only her namespace', async () => {
    const ops = `ops-${run}`;
    created.push(ops);
    const binding = `admins-${ops}`;
    const crb = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: binding }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `${ops}-sudoers` }] };
    expect((await admin.call({ method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', body: crb })).ok).toBe(true);
    try {
      // mallory, who may do nothing but ask for LNamespaces, asks for one named after the group and lists herself as sudoer.
      const made = await kubectl('mallory', ['apply', '-f', '-'], yaml(ops, '{sudoers: [{kind: User, name: mallory}]}'));
      expect(made).toMatchObject({ status: 0, stdout: `lnamespace.furnish.dev/${ops} created` });
      const inside = await waitFor('mallory is root inside', async () => {
        const r = await sudo('mallory', ['-n', ops, 'auth', 'can-i', 'delete', 'resourcequota']);
        return r.stdout === 'yes' ? r : undefined;
      });
      expect(inside.stdout).toBe('yes');
      expect((await sudo('mallory', ['-n', ops, 'auth', 'can-i', '*', '*', '-A'])).stdout).toBe('no');
      const squat = await kubectl('mallory', ['--as', 'mallory', '--as-group', `${ops}-sudoers`, 'auth', 'can-i', '*', '*', '-A'], '');
      expect(squat.stderr).toMatch(/User "mallory" cannot impersonate resource "groups"/);
    } finally {
      await admin.call({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${binding}` });
    }
  }, 60_000);
});
