// `kubectl describe ns` shows no Furnish JSON (issue 26): a namespace alice creates through the
// webhooks, furnished by a template until ready (organizations as the stack defaults them), carries
// Furnish annotations that are all plain text: none parses as a JSON object or array.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startLocalStack, type LocalStack } from '../../scripts/start/stack.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { applyTemplate, clientFor, deleteTemplate, get, waitFor, waitReady } from './helpers.ts';

const suffix = Math.random().toString(36).slice(2, 7);
const NS = `describe-${suffix}`;
/** A namespace an earlier version furnished: its creator identity recorded as JSON, its record of what was applied on it. */
const EARLIER = `describe-earlier-${suffix}`;
const TEMPLATE = `describe-${suffix}`;
const CREATOR = `describe-creator-${suffix}`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let cluster: TestCluster;
let admin: KubeClient;
let alice: KubeClient;
let stack: LocalStack;

/** Whether a value is a JSON object or array (`true`, `3` or `"x"` are plain text to a reader). */
function isJsonStructure(value: string): boolean {
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null;
  } catch {
    return false;
  }
}

/** Furnish's annotations (furnish.dev/… and any *.furnish.dev/… key) whose value is a JSON object or array. */
function furnishJson(annotations: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).filter(([key, value]) => /(^|\.)furnish\.dev\//.test(key) && isJsonStructure(value)));
}

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  admin = await clientFor(cluster.kubeconfigPath, context);
  alice = await clientFor(cluster.kubeconfigPath, cluster.users.alice!.context);
  await admin.call({ method: 'PATCH', path: `${RBAC}/clusterroles/${CREATOR}`, query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: CREATOR }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get'] }] } });
  await admin.call({ method: 'PATCH', path: `${RBAC}/clusterrolebindings/${CREATOR}`, query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: CREATOR }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CREATOR }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] } });
  // Written before the webhooks are registered, as an earlier version left it.
  const earlier = await admin.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: EARLIER, annotations: {
    'furnish.dev/creator': 'alice', 'furnish.dev/creator-identity': '{"groups":["dev","system:authenticated"],"username":"alice"}', 'furnish.dev/applied': '{"templates":{}}',
  } } } });
  if (!earlier.ok) throw new Error(`could not create ${EARLIER}: ${earlier.status} ${earlier.error}`);
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log: silentLogger, env: { FURNISH_WATCH_TIMEOUT_SECONDS: '5' } });
  await applyTemplate(admin, {
    apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name: TEMPLATE },
    spec: { namespaces: { labelSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [NS, EARLIER] }] } }, templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'describe' }, data: { owner: '$(CREATOR)' } }] },
  } as NamespaceTemplate);
  const created = await alice.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  if (!created.ok) throw new Error(`alice could not create ${NS}: ${created.status} ${created.error}`);
  await waitReady(admin, NS, 60_000);
}, 120_000);

afterAll(async () => {
  if (cluster && !cluster.isSimulated && admin) {
    await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` });
    await admin.call({ method: 'DELETE', path: `/api/v1/namespaces/${EARLIER}` });
    await deleteTemplate(admin, TEMPLATE);
    await admin.call({ method: 'DELETE', path: `${RBAC}/clusterrolebindings/${CREATOR}` });
    await admin.call({ method: 'DELETE', path: `${RBAC}/clusterroles/${CREATOR}` });
  }
  await stack?.stop();
  alice?.close();
  admin?.close();
  await cluster?.stop();
});

describe('a furnished namespace, as kubectl describe ns shows it', () => {
  it('holds no Furnish JSON: every furnish.dev annotation, the creator identity included, is plain text', async () => {
    const ns = await get(admin, `/api/v1/namespaces/${NS}`);
    const annotations = ns?.metadata.annotations ?? {};
    // Not vacuous: the webhook recorded the creator and its identity, and the template was applied.
    expect(annotations).toMatchObject({ 'furnish.dev/creator': 'alice', 'furnish.dev/creator-identity': expect.any(String) });
    expect((await get(admin, `/api/v1/namespaces/${NS}/configmaps/describe`))?.data).toEqual({ owner: 'alice' });
    expect(furnishJson(annotations)).toEqual({});
    expect(new URLSearchParams(annotations['furnish.dev/creator-identity']).get('user')).toBe('alice');
  });

  it('an earlier version\'s namespace loses its JSON at its next reconcile: the record of what was applied removed, the creator identity re-spelled as the same identity', async () => {
    // The stack's first reconcile of the namespace may come before the template exists (it upgrades the
    // annotations then) and the template's fan-out after it: wait for both, in either order.
    const annotations = await waitFor('the earlier namespace upgraded and furnished', async () => {
      const a = (await get(admin, `/api/v1/namespaces/${EARLIER}`))?.metadata.annotations ?? {};
      const upgraded = a['furnish.dev/applied'] === undefined && !isJsonStructure(a['furnish.dev/creator-identity'] ?? '{}');
      return upgraded && (await get(admin, `/api/v1/namespaces/${EARLIER}/configmaps/describe`)) ? a : undefined;
    }, 60_000);
    expect(annotations['furnish.dev/creator-identity']).toBe('user=alice&group=dev&group=system%3Aauthenticated');
    expect(annotations['furnish.dev/creator']).toBe('alice');
    expect(furnishJson(annotations)).toEqual({});
    expect((await get(admin, `/api/v1/namespaces/${EARLIER}/configmaps/describe`))?.data).toEqual({ owner: 'alice' });
  });
});
