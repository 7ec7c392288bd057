// The README's and the templates guide's promise, end to end: `npm start`'s stack (webhooks over HTTPS registered in the
// test cluster, relay, the real Pub/Sub emulator with push subscriptions to the local reconcilers),
// and a user running kubectl. As alice, `kubectl create namespace` ends furnished and ready.
//
// The test cluster is kube-sim, or the real cluster FURNISH_TEST_KUBECONFIG names. That kubeconfig
// needs two contexts: its current context, allowed everything (the stack registers webhooks and a
// CRD, the suite creates a ClusterRole and binding), and one named `alice`, any user without
// cluster-admin (the suite grants it namespace creation; `kubectl auth whoami` says who it is, so
// the cluster must serve SelfSubjectReview, Kubernetes 1.28 or later). `npm start` serves the
// webhooks on https://127.0.0.1: the API server must reach this host's loopback (an API server on
// this host's network, e.g. k3s or minikube --driver=none; not kind or a cloud cluster).
import { it, expect, beforeAll, afterAll } from '@jest/globals';
import { KEY } from '../../shared/keys.ts';
import { ORGANIZATIONS_PATH } from '../../shared/org/source.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { jsonLogger, silentLogger } from '../../shared/log.ts';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { organization } from '../support/organizations.ts';
import { describeWithTools } from '../support/tools.ts';
import { runKubectl } from '../support/kubectl.ts';
import { startPubSubEmulator, type PubSubEmulator } from '../support/pubsub-emulator.ts';
import { applyTemplate, clientFor, CONFIGMAP, deleteTemplate, examples, get, managers, NETPOL, ROLEBINDING, waitFor, waitReady } from '../integration/helpers.ts';

let cluster: TestCluster;
const describeWithBoth = describeWithTools([
  { command: 'kubectl', why: 'the end-to-end tests run the user\'s own kubectl' },
  { command: 'gcloud', why: 'the Pub/Sub emulator runs through `gcloud beta emulators pubsub`', versionArgs: ['--version'] },
]);
let emulator: PubSubEmulator;
let stack: LocalStack;
let admin: KubeClient;
/** alice as the API server knows her (`kubectl auth whoami`): `alice` on kube-sim. */
let aliceName = '';
/** Namespace names: unique per run, so that a real cluster can run the suite again. */
const suffix = process.env.FURNISH_TEST_KUBECONFIG ? `-${Date.now().toString(36).slice(-5)}` : '';
const TEAM = `team-e2e${suffix}`;
const ORG = `org-e2e${suffix}`;
/** The Organization alice's organization namespace names (she is a member). */
const ACME = `acme-e2e${suffix}`;

/** kubectl as a user; asynchronous, because kube-sim answers from this very process. */
const kubectl = (user: 'alice', args: string[], input?: string) => runKubectl(cluster.kubeconfigPath, cluster.users[user]!.context, args, input);

beforeAll(async () => {
  cluster = await useTestCluster();
  if (!cluster.users.alice) throw new Error(`the kubeconfig ${cluster.kubeconfigPath} has no context named alice (see the top of this file)`);
  const whoami = await kubectl('alice', ['auth', 'whoami', '-o', 'json']);
  if (whoami.status !== 0) throw new Error(`kubectl auth whoami as alice: ${whoami.stderr}`);
  aliceName = (JSON.parse(whoami.stdout) as { status: { userInfo: { username: string } } }).status.userInfo.username;
  emulator = await startPubSubEmulator('furnish-e2e');
  // kube-sim: admin's context; a real cluster: its current context.
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, pubsubEmulatorHost: emulator.host, pubsubProject: emulator.project, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log: process.env.FURNISH_TEST_LOG ? jsonLogger('e2e', (l) => process.stderr.write(l), 'DEBUG') : silentLogger });
  for (const t of examples()) await applyTemplate(admin, t);
  // What a platform team grants developers (on kube-sim, group dev; elsewhere, whoever alice is):
  // creating namespaces (Furnish furnishes them). Applied, so that a real cluster can run it again.
  const developers = cluster.isSimulated ? { kind: 'Group', name: 'dev' } : { kind: 'User', name: aliceName };
  const rbac = [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'namespace-creator' }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get', 'list', 'watch'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'dev-namespace-creator' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'namespace-creator' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...developers }] },
  ];
  for (const o of rbac) {
    const plural = o.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings';
    const r = await admin.call({ method: 'PATCH', path: `/apis/rbac.authorization.k8s.io/v1/${plural}/${o.metadata.name}`, query: { fieldManager: 'furnish-e2e', force: true }, contentType: 'application/apply-patch+yaml', body: o });
    if (!r.ok) throw new Error(`apply ${o.kind}: ${r.status} ${r.error}`);
  }
}, 120_000);

afterAll(async () => {
  if (cluster && !cluster.isSimulated && admin) {
    for (const n of [TEAM, ORG]) await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${n}` });
    // An Organization left behind would put the next suites' namespaces under the organization rules;
    // one with a live namespace may not be deleted.
    await waitFor(`namespace ${ORG} gone`, async () => (await admin.call({ method: 'GET', path: `/api/v1/namespaces/${ORG}` })).status === 404, 60_000).catch(() => undefined);
    await admin.call({ method: 'DELETE', path: `${ORGANIZATIONS_PATH}/${ACME}` });
    for (const t of examples()) await deleteTemplate(admin, t.metadata.name!);
  }
  await stack?.stop();
  await emulator?.stop();
  admin?.close();
  await cluster?.stop();
}, 120_000);

describeWithBoth('kubectl create namespace, as alice', () => {
  it('ends with the examples\' objects, applied by furnish for alice, and phase=ready', async () => {
    const created = await kubectl('alice', ['create', 'namespace', TEAM]);
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    await waitReady(admin, TEAM, 60_000);
    const ns = await get(admin, `/api/v1/namespaces/${TEAM}`);
    expect(ns?.metadata.annotations?.[KEY.creator]).toBe(aliceName);
    const rb = await get(admin, ROLEBINDING(TEAM, 'namespace-admin'));
    expect((rb?.subjects as { name: string }[])[0]!.name).toBe(aliceName);
    expect(managers(rb)).toContain('furnish');
    expect(managers(await get(admin, NETPOL(TEAM, 'default-deny')))).toContain('furnish');
    const out = await kubectl('alice', ['get', 'namespace', TEAM, '-o', 'jsonpath={.metadata.labels.furnish\\.dev/phase}']);
    expect(out.stdout).toBe('ready');
  }, 90_000);

  it('kubectl wait --for=condition=Ready answers once it is ready, and kubectl describe shows the condition', async () => {
    const waited = await kubectl('alice', ['wait', '--for=condition=Ready', `namespace/${TEAM}`, '--timeout=60s']);
    expect(waited.stderr).toBe('');
    expect(waited.status).toBe(0);
    expect(waited.stdout).toBe(`namespace/${TEAM} condition met\n`);
    const described = await kubectl('alice', ['describe', 'namespace', TEAM]);
    expect(described.status).toBe(0);
    expect(described.stdout).toMatch(/Conditions:\n\s+Type\s+Status\s+LastTransitionTime\s+Reason\s+Message\n\s+-+.*\n\s+Ready\s+True\s+.*\s+Ready\s+every matching NamespaceTemplate is applied/);
  }, 90_000);

  it('an organization namespace also gets the CreateOnly starter settings', async () => {
    const acme = await admin.call({ method: 'POST', path: ORGANIZATIONS_PATH, body: organization(ACME, [{ kind: 'User', name: aliceName }]) });
    expect(acme.error ?? '').toBe('');
    const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ORG, labels: { [KEY.organization]: ACME } } });
    const r = await kubectl('alice', ['create', '-f', '-'], manifest);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    await waitFor('starter settings', async () => (await get(admin, CONFIGMAP(ORG, 'team-settings')))?.data, 60_000);
    await waitReady(admin, ORG, 60_000);
  }, 90_000);
});
