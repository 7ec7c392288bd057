// An Organization created while the organization rules are off is accepted and decides nothing
// (issue 28): its status says so, through `npm start`'s stack, as deployed (relay, bus,
// reconcile-organization under furnish-reconciler's identity). With the rules off a non-member
// puts a namespace into it unrefused, and the Organization carries Enforced=False (RulesOff,
// naming the setting); the same Organization under a stack with the rules on turns Enforced=True.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startLocalStack, type LocalStack } from '../../scripts/start/stack.ts';
import { KEY } from '../../shared/keys.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import { ENFORCED } from '../../shared/org/enforced.ts';
import { ORGANIZATIONS_PATH } from '../../shared/org/source.ts';
import type { Organization, OrganizationCondition } from '../../shared/org/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor, waitFor } from './helpers.ts';

const suffix = Math.random().toString(36).slice(2, 7);
const ORG = `rules-${suffix}`;
const NS = `rules-ns-${suffix}`;
const CREATOR = `rules-creator-${suffix}`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let cluster: TestCluster;
let admin: KubeClient;
let bob: KubeClient;
let stack: LocalStack | undefined;
let context: string | undefined;

const apply = (path: string, body: object) => admin.call({ method: 'PATCH', path, query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml', body });

const start = (rules: string) => startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log: silentLogger, env: { FURNISH_ORGANIZATIONS: rules, FURNISH_WATCH_TIMEOUT_SECONDS: '5' } });

async function enforced(): Promise<OrganizationCondition | undefined> {
  const r = await admin.call<Organization>({ method: 'GET', path: `${ORGANIZATIONS_PATH}/${ORG}` });
  return r.data?.status?.conditions?.find((c) => c.type === ENFORCED);
}

beforeAll(async () => {
  cluster = await useTestCluster();
  context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  bob = await clientFor(cluster.kubeconfigPath, cluster.users.bob!.context);
  await apply(`${RBAC}/clusterroles/${CREATOR}`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: CREATOR }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get'] }] });
  await apply(`${RBAC}/clusterrolebindings/${CREATOR}`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: CREATOR }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CREATOR }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }] });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  if (cluster && !cluster.isSimulated && admin) {
    await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` });
    await waitFor(`${NS} gone`, async () => (await admin.call({ method: 'GET', path: `/api/v1/namespaces/${NS}` })).status === 404, 60_000, 500).catch(() => undefined);
    await admin.call({ method: 'DELETE', path: `${ORGANIZATIONS_PATH}/${ORG}` });
    await admin.call({ method: 'DELETE', path: `${RBAC}/clusterrolebindings/${CREATOR}` });
    await admin.call({ method: 'DELETE', path: `${RBAC}/clusterroles/${CREATOR}` });
  }
  bob?.close();
  admin?.close();
  await cluster?.stop();
}, 90_000);

describe('an Organization says whether the organization rules apply', () => {
  it('rules off (FURNISH_ORGANIZATIONS=false): a non-member is not refused, and the Organization carries Enforced=False, RulesOff', async () => {
    stack = await start('false');
    const org = await admin.call({ method: 'POST', path: ORGANIZATIONS_PATH, body: { apiVersion: 'furnish.dev/v1alpha1', kind: 'Organization', metadata: { name: ORG }, spec: { members: [{ kind: 'User', name: 'alice', default: true }], namespaceQuota: 1 } } });
    expect(org.ok).toBe(true);
    const created = await bob.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { [KEY.organization]: ORG } } } });
    expect(created.ok).toBe(true);
    const condition = await waitFor('the Enforced condition', enforced, 30_000, 100);
    expect(condition).toMatchObject({ status: 'False', reason: 'RulesOff', message: expect.stringContaining('FURNISH_ORGANIZATIONS') });
    const status = (await admin.call<Organization>({ method: 'GET', path: `${ORGANIZATIONS_PATH}/${ORG}` })).data?.status;
    expect(status?.namespaces).toBe(1);
    await stack.stop();
    stack = undefined;
  }, 90_000);

  it('the same Organization under a stack with the rules on turns Enforced=True, RulesOn', async () => {
    stack = await start('true');
    const condition = await waitFor('Enforced=True', async () => ((await enforced())?.status === 'True' ? enforced() : undefined), 30_000, 100);
    expect(condition).toMatchObject({ reason: 'RulesOn' });
  }, 90_000);
});
