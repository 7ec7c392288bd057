// Namespace behaviours admission depends on (issue 9), the same on kube-sim and on a real
// kube-apiserver 1.26 (FURNISH_TEST_KUBECONFIG): label and annotation changes made through
// namespaces/status and namespaces/finalize are kept (so the webhooks must judge them), a
// generateName namespace gets its name and name label only after mutating admission, and the
// namespace controller removes a deleted namespace through namespaces/finalize, which admission
// may refuse (issue 29: the namespace stays Terminating while it does).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KEY } from '../../shared/keys.ts';
import { patchNamespaceStatus } from '../../shared/kube/api.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { withReadyCondition } from '../../shared/reconcile/phase.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor, waitFor } from '../integration/helpers.ts';

let cluster: TestCluster;
let kube: KubeClient;
const suffix = Math.random().toString(36).slice(2, 7);
const made: string[] = [];

beforeAll(async () => {
  cluster = await useTestCluster();
  kube = await clientFor(cluster.kubeconfigPath, 'admin');
});

afterAll(async () => {
  for (const name of made) await kube.call({ method: 'DELETE', path: `/api/v1/namespaces/${name}` });
  await cluster.stop();
});

async function namespace(name: string): Promise<KubeObject> {
  const res = await kube.call<KubeObject>({ method: 'GET', path: `/api/v1/namespaces/${name}` });
  expect(res.status).toBe(200);
  return res.data!;
}

async function created(name: string): Promise<KubeObject> {
  const res = await kube.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  expect(res.status).toBe(201);
  made.push(name);
  return res.data!;
}

describe('a namespace\'s status is the server\'s but through namespaces/status', () => {
  it('a create or an update of the namespace itself cannot set conditions (a forged Ready); namespaces/status can', async () => {
    const name = `status-${suffix}`;
    const forged = { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'forged' }] };
    const res = await kube.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: forged } });
    expect(res.status).toBe(201);
    made.push(name);
    expect((await namespace(name)).status).toEqual({ phase: 'Active' });
    await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${name}`, contentType: 'application/merge-patch+json', body: { status: forged } });
    expect((await namespace(name)).status).toEqual({ phase: 'Active' });
    const viaStatus = await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${name}/status`, contentType: 'application/strategic-merge-patch+json', body: { status: forged } });
    expect(viaStatus.status).toBe(200);
    expect((await namespace(name)).status).toMatchObject({ phase: 'Active', conditions: [expect.objectContaining({ type: 'Ready', status: 'True' })] });
  });
});

describe('several Ready conditions (written before furnish-phase-and-ready judged them all)', () => {
  it('the reconciler\'s patch collapses them into one and keeps the other conditions', async () => {
    const name = `ready-twice-${suffix}`;
    await created(name);
    const two = [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'forged' }, { type: 'Other', status: 'True', reason: 'O', message: 'kept' }, { type: 'Ready', status: 'False', reason: 'Pending', message: 'being furnished' }];
    expect((await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${name}/status`, contentType: 'application/json-patch+json', body: [{ op: 'add', path: '/status/conditions', value: two }] })).status).toBe(200);
    const patch = withReadyCondition(await namespace(name), { metadata: { labels: { [KEY.phase]: 'pending' } } }, new Date('2026-11-27T10:00:00Z'))!;
    expect((await patchNamespaceStatus(kube, name, patch)).status).toBe(200);
    const conditions = ((await namespace(name)).status as { conditions: Array<{ type: string; message: string }> }).conditions;
    expect(conditions.filter((c) => c.type === 'Ready')).toEqual([expect.objectContaining({ status: 'False', reason: 'Pending', message: 'being furnished' })]);
    expect(conditions.filter((c) => c.type === 'Other')).toEqual([expect.objectContaining({ message: 'kept' })]);
  });
});

describe('namespace subresources keep metadata changes', () => {
  for (const sub of ['status', 'finalize']) {
    it(`PUT namespaces/${sub} keeps a changed label and annotation`, async () => {
      const name = `sub-${sub}-${suffix}`;
      const ns = await created(name);
      ns.metadata.labels = { ...ns.metadata.labels, 'furnish.dev/phase': 'ready' };
      ns.metadata.annotations = { 'furnish.dev/creator': 'mallory' };
      const res = await kube.call<KubeObject>({ method: 'PUT', path: `/api/v1/namespaces/${name}/${sub}`, body: ns });
      expect(res.status).toBe(200);
      const after = await namespace(name);
      expect(after.metadata.labels?.['furnish.dev/phase']).toBe('ready');
      expect(after.metadata.annotations?.['furnish.dev/creator']).toBe('mallory');
    });
  }
});

describe('generateName', () => {
  it('a generated name, and the name label set to it', async () => {
    const res = await kube.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { generateName: `gen-${suffix}-` } } });
    expect(res.status).toBe(201);
    const name = res.data!.metadata.name!;
    made.push(name);
    expect(name).toMatch(new RegExp(`^gen-${suffix}-[a-z0-9]{5}$`));
    expect(res.data!.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': name });
  });
});

describe('spec.finalizers', () => {
  it('an update of the namespace itself keeps them; namespaces/finalize changes them', async () => {
    const name = `finalizers-${suffix}`;
    const ns = await created(name);
    const res = await kube.call<KubeObject>({ method: 'PUT', path: `/api/v1/namespaces/${name}`, body: { ...ns, spec: { finalizers: [] } } });
    expect(res.status).toBe(200);
    expect((await namespace(name)).spec).toEqual({ finalizers: ['kubernetes'] });
    const fin = await kube.call<KubeObject>({ method: 'PUT', path: `/api/v1/namespaces/${name}/finalize`, body: { ...(await namespace(name)), spec: { finalizers: ['kubernetes', 'example.com/kept'] } } });
    expect(fin.status).toBe(200);
    expect((await namespace(name)).spec).toEqual({ finalizers: ['kubernetes', 'example.com/kept'] });
  });
});

describe("the namespace controller's namespaces/finalize goes through admission", () => {
  // A validating webhook on namespaces/finalize that never answers (nothing listens on port 1) and
  // fails closed, for this namespace only (objectSelector), as a stopped Furnish's would.
  const name = `finalize-held-${suffix}`;
  const webhooks = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
  const registration = `furnish-test-${name}`;
  afterAll(async () => {
    await kube.call({ method: 'DELETE', path: `${webhooks}/${registration}` });
  });

  it('refused, the namespace stays Terminating (its content gone, the deletion conditions written); admitted later, it goes', async () => {
    const res = await kube.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'furnish-test/finalize-held': suffix } } } });
    expect(res.status).toBe(201);
    made.push(name);
    expect((await kube.call({ method: 'POST', path: `/api/v1/namespaces/${name}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'inside' } } })).status).toBe(201);
    const registered = await kube.call({ method: 'POST', path: webhooks, body: {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: registration },
      webhooks: [{
        name: 'finalize-held.furnish.dev', admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Fail', timeoutSeconds: 2,
        clientConfig: { url: 'https://127.0.0.1:1/finalize' },
        objectSelector: { matchLabels: { 'furnish-test/finalize-held': suffix } },
        rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces/finalize'] }],
      }],
    } });
    expect(registered.status).toBe(201);
    // The API server's webhook configuration cache takes a moment to see it.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await kube.call({ method: 'DELETE', path: `/api/v1/namespaces/${name}` })).status).toBe(200);

    // The controller got as far as namespaces/finalize: content deleted, conditions written; then refused.
    const terminating = await waitFor('the deletion conditions', async () => {
      const ns = await namespace(name);
      const conditions = (ns.status as { conditions?: { type: string; status: string; reason: string }[] }).conditions ?? [];
      return conditions.some((c) => c.type === 'NamespaceContentRemaining' && c.status === 'False') ? ns : undefined;
    }, 60_000, 200);
    expect((await kube.call<{ items: unknown[] }>({ method: 'GET', path: `/api/v1/namespaces/${name}/configmaps` })).data?.items).toEqual([]);
    expect((terminating.status as { conditions: { type: string; status: string; reason: string }[] }).conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered'],
      ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions'],
      ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted'],
      ['NamespaceContentRemaining', 'False', 'ContentRemoved'],
      ['NamespaceFinalizersRemaining', 'False', 'ContentHasNoFinalizers'],
    ]);
    // The controller retries meanwhile; the namespace stays.
    await new Promise((r) => setTimeout(r, 3000));
    const held = await namespace(name);
    expect([(held.status as { phase?: string }).phase, held.spec]).toEqual(['Terminating', { finalizers: ['kubernetes'] }]);

    // Admitted (the webhook gone), the next retry finalizes it: kube-controller-manager backs off up to 60 s, kube-sim 5 s.
    expect((await kube.call({ method: 'DELETE', path: `${webhooks}/${registration}` })).status).toBe(200);
    await waitFor(`namespace ${name} gone`, async () => (await kube.call({ method: 'GET', path: `/api/v1/namespaces/${name}` })).status === 404, 90_000, 250);
  }, 180_000);
});
