// Label selectors are atomic (`+structType=atomic`): a server-side apply owns a NetworkPolicy's
// spec.podSelector and a Deployment's spec.selector whole (`f:podSelector: {}`), empty or not, the
// same on kube-sim and on a real kube-apiserver 1.26 (FURNISH_TEST_KUBECONFIG). Drift judged by the
// fields Furnish's apply owns would otherwise see an empty `podSelector: {}` as unowned and rewrite
// the policy on every resync (kube-sim only: the population bench's no-op resync wrote each one).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor, createNamespace, NETPOL, tearDown } from '../integration/helpers.ts';

let cluster: TestCluster;
let kube: KubeClient;
const NS = `atomic-${Math.random().toString(36).slice(2, 7)}`;

beforeAll(async () => {
  cluster = await useTestCluster();
  kube = await clientFor(cluster.kubeconfigPath, 'admin');
  await createNamespace(kube, NS);
});

afterAll(() => tearDown({ cluster, admin: kube, created: { namespaces: [NS], templates: [] } }));

/** The `spec` of what manager `x`'s apply of `body` at `path` owns. */
async function ownedSpec(path: string, body: KubeObject): Promise<unknown> {
  const r = await kube.call<KubeObject>({ method: 'PATCH', path, query: { fieldManager: 'x', force: true }, contentType: 'application/apply-patch+yaml', body });
  expect([r.ok, r.error]).toEqual([true, undefined]);
  const entry = (r.data!.metadata.managedFields as Array<{ manager: string; fieldsV1: { 'f:spec'?: unknown } }>).find((e) => e.manager === 'x');
  return entry?.fieldsV1['f:spec'];
}

it.each([
  ['empty', {}],
  ['with labels', { matchLabels: { app: 'web' } }],
])('a NetworkPolicy\'s podSelector (%s) is owned whole', async (_, podSelector) => {
  const name = `deny-${Object.keys(podSelector).length}`;
  const body = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: NS }, spec: { podSelector, policyTypes: ['Ingress', 'Egress'] } };
  expect(await ownedSpec(NETPOL(NS, name), body)).toEqual({ 'f:podSelector': {}, 'f:policyTypes': {} });
});

it('a Deployment\'s selector is owned whole', async () => {
  const body = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: NS }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } } };
  const spec = await ownedSpec(`/apis/apps/v1/namespaces/${NS}/deployments/web`, body) as Record<string, unknown>;
  expect(spec['f:selector']).toEqual({});
});
