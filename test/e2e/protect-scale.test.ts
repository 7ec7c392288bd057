// Protected objects through their scale subresource (issue 25 finding 12), end to end: `npm
// start`'s stack registered in the test cluster, a NamespaceTemplate with `spec.protect: true`
// furnishing a Deployment, and a tenant running `kubectl scale`. The request kube-apiserver sends
// for deployments/scale carries an autoscaling/v1 Scale without the Deployment's labels, so
// protect-objects' objectSelector never matches it: webhook protect-scale (no objectSelector,
// namespaces Furnish governs) reads the Deployment and judges the scale as its update.
// Runs on kube-sim, or on the real cluster FURNISH_TEST_KUBECONFIG names (context alice for a user
// without cluster-admin; the API server must reach this host's loopback). Names carry a per-run suffix.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { jsonLogger, silentLogger } from '../../shared/log.ts';
import { startLocalStack, type LocalStack } from '../../scripts/start.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { toolGate } from '../support/tools.ts';
import { runKubectl, whoAmI } from '../support/kubectl.ts';
import { applyTemplate, clientFor, createNamespace, deleteTemplate, get, managers, waitFor, waitReady } from '../integration/helpers.ts';

const kubectlGate = toolGate([{ command: 'kubectl', why: 'the protected-scale end-to-end suite runs the tenant\'s own kubectl scale' }]);
const haveKubectl = kubectlGate.available;
const run = Date.now().toString(36).slice(-5);
const TEMPLATE = `protected-scale-${run}`;
const TEAM = `team-scale-${run}`;
const ROLE = `scaler-${run}`;
const RECONCILER_ROLE = `e2e-reconciler-deployments-${run}`;
const DEPLOYMENT = (ns: string, name: string) => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;

let cluster: TestCluster;
let stack: LocalStack;
let admin: KubeClient;
let aliceName = '';

const kubectl = (args: string[], input?: string) => runKubectl(cluster.kubeconfigPath, cluster.users.alice!.context, args, input);
const replicas = async (name: string) => ((await get(admin, DEPLOYMENT(TEAM, name)))?.spec as { replicas?: number } | undefined)?.replicas;

function deployment(name: string, count: number): KubeObject {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { replicas: count, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9' }] } } },
  } as KubeObject;
}

const TEMPLATE_OBJECT: NamespaceTemplate = {
  apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: TEMPLATE },
  spec: { namespaces: { labelSelector: { matchLabels: { 'scale-e2e': run } } }, protect: true, templates: [deployment('agent', 2)] },
};

async function apply(o: KubeObject, path: string): Promise<void> {
  const r = await admin.call({ method: 'PATCH', path, query: { fieldManager: 'furnish-e2e', force: true }, contentType: 'application/apply-patch+yaml', body: o });
  if (!r.ok) throw new Error(`apply ${o.kind} ${o.metadata.name}: ${r.status} ${r.error}`);
}

beforeAll(async () => {
  if (!haveKubectl) return;
  cluster = await useTestCluster();
  if (!cluster.users.alice) throw new Error(`the kubeconfig ${cluster.kubeconfigPath} has no context named alice`);
  aliceName = await whoAmI(cluster.kubeconfigPath, cluster.users.alice.context);
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  const log = process.env.FURNISH_TEST_LOG ? jsonLogger('e2e', (l) => process.stderr.write(l), 'DEBUG') : silentLogger;
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log });
  // As docs/design/population.md's reconciler RBAC says: extend it with every kind your templates use (here Deployments).
  const rbac = 'rbac.authorization.k8s.io/v1';
  await apply({ apiVersion: rbac, kind: 'ClusterRole', metadata: { name: RECONCILER_ROLE }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'create', 'patch', 'delete'] }] } as KubeObject, `/apis/${rbac}/clusterroles/${RECONCILER_ROLE}`);
  await apply({ apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name: RECONCILER_ROLE }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: RECONCILER_ROLE }, subjects: [{ kind: 'ServiceAccount', name: 'furnish-reconciler', namespace: 'furnish-system' }] } as KubeObject, `/apis/${rbac}/clusterrolebindings/${RECONCILER_ROLE}`);
  await applyTemplate(admin, TEMPLATE_OBJECT);
  await createNamespace(admin, TEAM, { 'scale-e2e': run });
  await waitReady(admin, TEAM, 60_000);
  // What a namespace admin may do to Deployments, scale included, granted to alice in her namespace.
  await apply({ apiVersion: rbac, kind: 'Role', metadata: { name: ROLE, namespace: TEAM }, rules: [{ apiGroups: ['apps'], resources: ['deployments', 'deployments/scale'], verbs: ['get', 'list', 'create', 'update', 'patch'] }] } as KubeObject, `/apis/${rbac}/namespaces/${TEAM}/roles/${ROLE}`);
  await apply({ apiVersion: rbac, kind: 'RoleBinding', metadata: { name: ROLE, namespace: TEAM }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ROLE }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: aliceName }] } as KubeObject, `/apis/${rbac}/namespaces/${TEAM}/rolebindings/${ROLE}`);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (cluster && !cluster.isSimulated && admin) {
    await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${TEAM}` });
    await deleteTemplate(admin, TEMPLATE);
    for (const kind of ['clusterrolebindings', 'clusterroles']) await admin.call({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/${kind}/${RECONCILER_ROLE}` });
  }
  admin?.close();
  await cluster?.stop();
}, 60_000);

kubectlGate.describe('kubectl scale of a protected Deployment', () => {
  it('the template\'s Deployment is furnished, applied by furnish, and protect-scale is registered without an objectSelector', async () => {
    await waitFor('the template\'s Deployment', async () => managers(await get(admin, DEPLOYMENT(TEAM, 'agent'))).includes('furnish'), 30_000);
    expect(await replicas('agent')).toBe(2);
    const registered = await get(admin, '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/furnish-protect-objects');
    const scale = (registered?.webhooks as Array<{ name: string; objectSelector?: unknown }>).find((w) => w.name === 'protect-scale.furnish.dev');
    // The API server stores an absent selector as the empty one (matches everything).
    expect(scale?.objectSelector ?? {}).toEqual({});
  }, 45_000);

  it('refuses the tenant\'s kubectl scale, naming the template; the replicas stay', async () => {
    const result = await kubectl(['scale', 'deployment', 'agent', '--replicas=5', '-n', TEAM]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`admission webhook "protect-scale.furnish.dev" denied the request: user "${aliceName}" may not scale Deployment "agent" in namespace "${TEAM}": `
      + `it belongs to NamespaceTemplate "${TEMPLATE}", which protects its objects (spec.protect: true)`);
    expect(await replicas('agent')).toBe(2);
  });

  it('lets the tenant scale her own Deployment in the same namespace', async () => {
    const created = await kubectl(['apply', '-n', TEAM, '-f', '-'], JSON.stringify(deployment('mine', 1)));
    expect(created.stderr).toBe('');
    const scaled = await kubectl(['scale', 'deployment', 'mine', '--replicas=3', '-n', TEAM]);
    expect(scaled.stderr).toBe('');
    expect(scaled.status).toBe(0);
    expect(await replicas('mine')).toBe(3);
  });

  it('the reconciler still changes the replicas when the template does', async () => {
    await applyTemplate(admin, { ...TEMPLATE_OBJECT, spec: { ...TEMPLATE_OBJECT.spec, templates: [deployment('agent', 3)] } });
    await waitFor('the reconciler to apply replicas 3', async () => (await replicas('agent')) === 3, 30_000);
  }, 45_000);
});
