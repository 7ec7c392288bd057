// The README's promise, end to end: `npm start`'s stack (webhooks over HTTPS registered in
// kube-sim, relay, the real Pub/Sub emulator with push subscriptions to the local reconcilers),
// and a user running kubectl. As alice, `kubectl create namespace` ends furnished and ready.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { spawn } from 'node:child_process';
import { KEY } from '../../shared/keys.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { jsonLogger, silentLogger } from '../../shared/reconcile/log.ts';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { requireTool } from '../support/tools.ts';
import { startPubSubEmulator, type PubSubEmulator } from '../support/pubsub-emulator.ts';
import { applyTemplate, clientFor, CONFIGMAP, examples, get, managers, NETPOL, ROLEBINDING, waitFor, waitReady } from '../integration/helpers.ts';

let cluster: SimCluster;
const haveKubectl = requireTool('kubectl', 'the end-to-end tests run the user\'s own kubectl');
const haveGcloud = requireTool('gcloud', 'the Pub/Sub emulator runs through `gcloud beta emulators pubsub`', ['--version']);
const ready = haveKubectl && haveGcloud;
let emulator: PubSubEmulator;
let stack: LocalStack;
let admin: KubeClient;

/** kubectl as a user; asynchronous, because kube-sim answers from this very process. */
function kubectl(user: 'alice' | 'bob' | 'admin', args: string[], input?: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn('kubectl', ['--kubeconfig', cluster.kubeconfigPath, '--context', cluster.users[user]!.context, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (status) => resolve({ status, stdout, stderr }));
    p.stdin.end(input);
  });
}

beforeAll(async () => {
  if (!ready) return;
  cluster = await startCluster();
  emulator = await startPubSubEmulator('furnish-e2e');
  admin = await clientFor(cluster.kubeconfigPath, cluster.users.admin!.context);
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context: cluster.users.admin!.context, pubsubEmulatorHost: emulator.host, pubsubProject: emulator.project, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log: process.env.FURNISH_TEST_LOG ? jsonLogger('e2e', (l) => process.stderr.write(l), 'DEBUG') : silentLogger });
  for (const t of examples()) await applyTemplate(admin, t);
  // What a platform team grants developers: creating namespaces (Furnish furnishes them).
  const rbac = [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'namespace-creator' }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get', 'list', 'watch'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'dev-namespace-creator' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'namespace-creator' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'dev' }] },
  ];
  for (const o of rbac) {
    const plural = o.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings';
    const r = await admin.call({ method: 'POST', path: `/apis/rbac.authorization.k8s.io/v1/${plural}`, body: o });
    if (!r.ok) throw new Error(`create ${o.kind}: ${r.status} ${r.error}`);
  }
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await emulator?.stop();
  admin?.close();
  await cluster?.stop();
});

describe('kubectl create namespace, as alice', () => {
  it('ends with the examples\' objects, applied by furnish for alice, and phase=ready', async () => {
    if (!ready) return;
    const created = await kubectl('alice', ['create', 'namespace', 'team-e2e']);
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    await waitReady(admin, 'team-e2e', 60_000);
    const ns = await get(admin, '/api/v1/namespaces/team-e2e');
    expect(ns?.metadata.annotations?.[KEY.creator]).toBe('alice');
    const rb = await get(admin, ROLEBINDING('team-e2e', 'namespace-admin'));
    expect((rb?.subjects as { name: string }[])[0]!.name).toBe('alice');
    expect(managers(rb)).toContain('furnish');
    expect(managers(await get(admin, NETPOL('team-e2e', 'default-deny')))).toContain('furnish');
    const out = await kubectl('alice', ['get', 'namespace', 'team-e2e', '-o', 'jsonpath={.metadata.labels.furnish\\.dev/phase}']);
    expect(out.stdout).toBe('ready');
  }, 90_000);

  it('an organization namespace also gets the CreateOnly starter settings', async () => {
    if (!ready) return;
    const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'org-e2e', labels: { [KEY.organization]: 'acme' } } });
    const r = await kubectl('alice', ['create', '-f', '-'], manifest);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    await waitFor('starter settings', async () => (await get(admin, CONFIGMAP('org-e2e', 'team-settings')))?.data, 60_000);
    await waitReady(admin, 'org-e2e', 60_000);
  }, 90_000);
});
