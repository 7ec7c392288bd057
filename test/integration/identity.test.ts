// The local stack runs each component as it is deployed (issue 25, "Parity"): the reconcilers as
// furnish-system/furnish-reconciler, the webhooks' API calls as furnish-webhook, the relay as
// furnish-relay, with infra/'s RBAC; the admin's credentials only install. Users act (alice creates
// a namespace, the admin a template), the namespace becomes ready, and the API server's own record
// says who sent what: kube-sim's request log, or a real server's audit log (FURNISH_TEST_AUDIT_LOG,
// with .ci/run's policy, which logs the admin's and furnish-system's requests, reads included).
// Requests are told apart by User-Agent: the test's client `furnish-test`, the stack's installing
// client INSTALL_USER_AGENT, the reconcilers' and relay's USER_AGENT, the webhooks' none.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { INSTALL_USER_AGENT, startLocalStack, type LocalStack } from '../../scripts/start/stack.ts';
import { WATCHDOG_USER_AGENT } from '../../scripts/start/watchdog.ts';
import { COMPONENT_ACCOUNTS, serviceAccountUser } from '../../scripts/start/identities.ts';
import { connect, createKubeClient, USER_AGENT, type KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { testAuditLog, type AuditLog } from '../support/audit.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { applyTemplate, clientFor, deleteTemplate, waitReady } from './helpers.ts';

const suffix = Math.random().toString(36).slice(2, 7);
const NS = `identity-${suffix}`;
const TEMPLATE = `identity-${suffix}`;
const CREATOR = `identity-creator-${suffix}`;
const TEST_USER_AGENT = 'furnish-test';
const USERS = {
  reconciler: serviceAccountUser(COMPONENT_ACCOUNTS.reconciler),
  webhook: serviceAccountUser(COMPONENT_ACCOUNTS.webhook),
  relay: serviceAccountUser(COMPONENT_ACCOUNTS.relay),
};

/** One request as the API server recorded it. */
interface Seen { user: string; userAgent: string; verb: string; resource: string }

let cluster: TestCluster;
let admin: KubeClient;
let alice: KubeClient;
let stack: LocalStack;
let audit: AuditLog | undefined;
/** kube-sim: where the log stood when startLocalStack returned (what came before is installation). */
let installed = 0;

/** Every request since the stack started: kube-sim's request log, or the real server's audit log. */
function requests(): { install: Seen[]; running: Seen[] } {
  if (cluster.log) return { install: cluster.log.entries.slice(0, installed), running: cluster.log.entries.slice(installed) };
  if (!audit) throw new Error('on a real cluster this test reads the API server\'s audit log: set FURNISH_TEST_AUDIT_LOG (.ci/run starts the control plane with one, and with the policy this test needs)');
  // No order in the audit log worth trusting across stages: the install is told by its User-Agent alone here.
  return { install: [], running: audit.requestsSince() };
}

const describeRequest = (r: Seen) => `${r.user} (${r.userAgent || 'no User-Agent'}): ${r.verb} ${r.resource}`;

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  alice = await clientFor(cluster.kubeconfigPath, cluster.users.alice!.context);
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await admin.call({ method: 'PATCH', path: `${rbac}/clusterroles/${CREATOR}`, query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: CREATOR }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get'] }] } });
  await admin.call({ method: 'PATCH', path: `${rbac}/clusterrolebindings/${CREATOR}`, query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: CREATOR }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CREATOR }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] } });
  audit = cluster.isSimulated ? undefined : testAuditLog();
  audit?.mark();
  cluster.log?.reset();
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log: silentLogger, env: { FURNISH_WATCH_TIMEOUT_SECONDS: '5' } });
  installed = cluster.log?.entries.length ?? 0;
  const template: NamespaceTemplate = {
    apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: TEMPLATE },
    spec: { namespaces: { labelSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'identity' }, data: { owner: '$(CREATOR)' } }] },
  } as NamespaceTemplate;
  await applyTemplate(admin, template);
  const created = await alice.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  if (!created.ok) throw new Error(`alice could not create ${NS}: ${created.status} ${created.error}`);
  await waitReady(admin, NS, 60_000);
  // The audit log is written as requests complete.
  if (audit) await new Promise((r) => setTimeout(r, 1000));
}, 120_000);

afterAll(async () => {
  if (cluster && !cluster.isSimulated && admin) {
    await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` });
    await deleteTemplate(admin, TEMPLATE);
    await admin.call({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${CREATOR}` });
    await admin.call({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${CREATOR}` });
  }
  await stack?.stop();
  alice?.close();
  admin?.close();
  await cluster?.stop();
});

describe('each component calls the API server as its own ServiceAccount', () => {
  it('no component calls as the admin: after installation, the admin\'s requests are the test\'s own', () => {
    const { install, running } = requests();
    // npm start's watchdog (scripts/start/watchdog.ts) is not a component: it uninstalls for the
    // admin who ran npm start, and touches nothing but webhook registrations and, where the server
    // has them, the in-tree policies and their bindings (ADR 0011).
    const admission = (resource: string) => /(webhookconfigurations|validatingadmissionpolicies|validatingadmissionpolicybindings)$/.test(resource);
    expect(running.filter((r) => r.userAgent === WATCHDOG_USER_AGENT && !admission(r.resource)).map(describeRequest)).toEqual([]);
    const admins = running.filter((r) => r.user === 'admin' && r.userAgent !== TEST_USER_AGENT && r.userAgent !== WATCHDOG_USER_AGENT);
    // On a real server the install's requests are in the same log: told by the installing client's User-Agent.
    const notInstall = cluster.isSimulated ? admins : admins.filter((r) => r.userAgent !== INSTALL_USER_AGENT);
    expect(notInstall.map(describeRequest)).toEqual([]);
    if (cluster.isSimulated) {
      // Installation: the admin's installing client only (and the test's set-up).
      expect(install.filter((r) => r.user === 'admin' && ![INSTALL_USER_AGENT, TEST_USER_AGENT, WATCHDOG_USER_AGENT].includes(r.userAgent)).map(describeRequest)).toEqual([]);
      expect(install.some((r) => r.user === 'admin' && r.userAgent === INSTALL_USER_AGENT && r.resource === 'serviceaccounts/token')).toBe(true);
    }
  });

  it('the reconcilers and the relay (User-Agent furnish) call as furnish-reconciler and furnish-relay', () => {
    // The relay lists before the stack is up: every request since the stack started.
    const { install, running } = requests();
    const furnish = [...install, ...running].filter((r) => r.userAgent === USER_AGENT);
    expect(furnish.filter((r) => r.user !== USERS.reconciler && r.user !== USERS.relay).map(describeRequest)).toEqual([]);
    // The reconciler furnished the namespace: it applied the ConfigMap and set the phase.
    expect(furnish.some((r) => r.user === USERS.reconciler && r.verb === 'patch' && r.resource === 'configmaps')).toBe(true);
    expect(furnish.some((r) => r.user === USERS.reconciler && r.verb === 'patch' && (r.resource === 'namespaces' || r.resource === 'namespaces/status'))).toBe(true);
    // The relay lists what it watches.
    expect(furnish.some((r) => r.user === USERS.relay && r.verb === 'list' && r.resource === 'namespaces')).toBe(true);
  });

  it('the webhooks ask the API server as furnish-webhook', () => {
    const running = requests().running;
    const asWebhook = running.filter((r) => r.user === USERS.webhook);
    expect(asWebhook.length).toBeGreaterThan(0);
    // Their client sends no User-Agent of Furnish's: nothing else without one came from the admin.
    expect(running.filter((r) => r.userAgent === '' && r.user === 'admin').map(describeRequest)).toEqual([]);
  });
});

describe('the components hold exactly infra/\'s RBAC, not the admin\'s', () => {
  const as = async (component: 'reconciler' | 'webhook' | 'relay') => createKubeClient(await connect(stack.identities[component].credentials), { retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 }, userAgent: TEST_USER_AGENT });

  it('the relay reads but may not write; the webhooks may not patch namespaces; the reconciler may not delete them', async () => {
    const relay = await as('relay');
    const webhook = await as('webhook');
    const reconciler = await as('reconciler');
    try {
      expect((await relay.call({ method: 'GET', path: '/api/v1/namespaces', query: { limit: 1 } })).status).toBe(200);
      expect((await relay.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `relay-${suffix}` } } })).status).toBe(403);
      expect((await webhook.call({ method: 'PATCH', path: `/api/v1/namespaces/${NS}`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { x: 'y' } } } })).status).toBe(403);
      expect((await reconciler.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` })).status).toBe(403);
    } finally {
      relay.close();
      webhook.close();
      reconciler.close();
    }
  });
});
