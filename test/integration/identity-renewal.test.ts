// The components' tokens are minted again before they expire (scripts/start/identities.ts), and
// each component carries on with its new one: the token files the reconcilers' and the relay's
// kubeconfigs name are rewritten, and the webhooks, which hold their token as a value, are built
// again with it. On kube-sim, whose token clock the test moves past the first tokens' expiry (a
// real server's tokens live 10 minutes at the least).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { startLocalStack, type LocalStack } from '../../scripts/start/stack.ts';
import { connect, createKubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { clientFor, waitFor } from './helpers.ts';

let cluster: SimCluster;
let stack: LocalStack;

beforeAll(async () => {
  cluster = await startCluster();
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context: 'admin', port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log: silentLogger, tokens: { seconds: 600, renewEveryMs: 300 } });
  cluster.sim.seed({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'ns-creator' }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get'] }] });
  cluster.sim.seed({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'alice-ns' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'ns-creator' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] });
}, 60_000);

afterAll(async () => {
  // The clock back: the reconcilers re-read their token file only every 60 s, and the stack waits for their deliveries as it stops.
  if (cluster) cluster.sim.serviceAccountTokens.now = Date.now;
  await stack?.stop();
  await cluster?.stop();
}, 60_000);

it('past the first tokens\' expiry, each component calls with a new token', async () => {
  const components = ['reconciler', 'webhook', 'relay'] as const;
  const first = Object.fromEntries(components.map((c) => [c, stack.identities[c].token()]));
  let rounds = 0;
  stack.identities.onRenew(() => rounds++);
  // Eleven minutes on: the first tokens (600 s) have expired. The round of mints under way may have
  // asked before the clock moved: the next one is all after it.
  cluster.sim.serviceAccountTokens.now = () => Date.now() + 660_000;
  const moved = rounds;
  await waitFor('two rounds of mints', async () => rounds >= moved + 2, 20_000);
  expect(components.filter((c) => stack.identities[c].token() === first[c])).toEqual([]);

  const as = async (credentials: Parameters<typeof connect>[0]) => createKubeClient(await connect(credentials), { retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 } });
  const old = await as({ kubeconfigYaml: stack.identities.relay.credentials.kubeconfigYaml!.replace(/tokenFile: .*/, `token: ${first.relay}`) });
  expect((await old.call({ method: 'GET', path: '/api/v1/namespaces' })).status).toBe(401);
  old.close();
  // The kubeconfig the reconcilers and the relay read names the rewritten token file.
  for (const c of ['reconciler', 'relay'] as const) {
    const client = await as(stack.identities[c].credentials);
    expect((await client.call({ method: 'GET', path: '/api/v1/namespaces' })).status).toBe(200);
    client.close();
  }
  // The webhooks ask with the new token: their calls authenticate (a 401 never reaches the log).
  // (Rebuilt as each round ends: the webhooks fail closed, 503, for as long as they hold an expired one.)
  cluster.log.reset();
  const alice = await clientFor(cluster.kubeconfigPath, 'alice');
  await waitFor('a namespace admitted', async () => (await alice.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after-renewal' } } })).status === 201, 10_000);
  alice.close();
  expect(cluster.log.count({ user: stack.identities.webhook.username })).toBeGreaterThan(0);
});
