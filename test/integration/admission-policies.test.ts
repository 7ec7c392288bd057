// ValidatingAdmissionPolicies and webhook matchConditions through the API, on kube-sim and on a
// real kube-apiserver alike (npm run test:cluster): a policy and binding created like any object
// refuse a write with the real server's status, reason and message (captured from 1.32 in
// test/fixtures/kube-apiserver-1.32/admission-policies); a webhook whose matchCondition is false
// is not called. On a server without them (1.26, or kube-sim with KUBE_SIM_ADMISSION_POLICIES=0),
// found by discovery: no policies served, and matchConditions dropped with a warning (the webhook
// is then called for every request its rules select).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeClient, KubeResponse } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { clientFor, waitFor } from './helpers.ts';

const GROUP_VERSION = '/apis/admissionregistration.k8s.io/v1';
const suffix = randomBytes(3).toString('hex');
const ns = `vap-${suffix}`;
const names = { policy: `sim-vap-${suffix}`, binding: `sim-vap-binding-${suffix}`, webhook: `sim-mc-${suffix}` };

let cluster: TestCluster;
let admin: KubeClient;
let alice: KubeClient;
let served: boolean;

/** Selects requests in this suite's namespace only (a real cluster may be shared). */
const inNamespace = { matchLabels: { 'kubernetes.io/metadata.name': ns } };

function configMap(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } };
}

function createConfigMap(client: KubeClient, obj: KubeObject, dryRun = false): Promise<KubeResponse<KubeObject & { message?: string }>> {
  return client.call({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps${dryRun ? '?dryRun=All' : ''}`, body: obj });
}

const policy = {
  apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: names.policy },
  spec: {
    matchConstraints: {
      namespaceSelector: inNamespace,
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }],
    },
    variables: [{ name: 'labels', expression: "has(object.metadata.labels) ? object.metadata.labels : {}" }],
    validations: [
      { expression: "!('deny' in variables.labels)" },
      { expression: "!('forbid' in variables.labels)", reason: 'Forbidden', messageExpression: "'forbid set by ' + request.userInfo.username" },
      // What namespaceObject and request hold (kube-apiserver declares only some fields: no uid, kind or managedFields there).
      {
        expression: "!('probe' in variables.labels)",
        messageExpression: "'labels=' + string(has(namespaceObject.metadata.labels)) + ' annotations=' + string(has(namespaceObject.metadata.annotations)) + ' phase=' + namespaceObject.status.phase + ' finalizers=' + string(has(namespaceObject.spec.finalizers)) + ' options=' + string(has(request.options)) + ' subResource=' + string(has(request.subResource)) + ' extra=' + string(has(request.userInfo.extra)) + ' uid=' + string(has(request.userInfo.uid)) + ' name=' + request.name + ' namespace=' + request.namespace",
      },
      { expression: "!('role-binders' in variables.labels) || authorizer.group('rbac.authorization.k8s.io').resource('rolebindings').namespace(request.namespace).check('create').allowed()", message: 'only role binders' },
    ],
  },
};

const binding = {
  apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: names.binding },
  spec: { policyName: names.policy, validationActions: ['Deny'] },
};

const webhook = {
  apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: names.webhook },
  webhooks: [{
    name: 'mc.sim.furnish.dev',
    // Nothing listens there: a call fails the write (failurePolicy Fail), so a write that passes was never sent to it.
    clientConfig: { url: 'https://127.0.0.1:1/never' },
    rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
    namespaceSelector: inNamespace,
    failurePolicy: 'Fail', sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 2,
    matchConditions: [{ name: 'asks-for-a-call', expression: "has(object.metadata.labels) && 'call' in object.metadata.labels" }],
  }],
};

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, 'admin');
  alice = await clientFor(cluster.kubeconfigPath, 'alice');
  const discovery = await admin.call<{ resources: { name: string }[] }>({ method: 'GET', path: GROUP_VERSION });
  served = discovery.data!.resources.some((r) => r.name === 'validatingadmissionpolicies');
  expect((await admin.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
  // alice may create ConfigMaps there (edit), not RoleBindings (admin): the authorizer check tells her from admin.
  const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'alice-edit', namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] };
  expect((await admin.call({ method: 'POST', path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, body: role })).status).toBe(201);
});

afterAll(async () => {
  for (const path of [`${GROUP_VERSION}/validatingwebhookconfigurations/${names.webhook}`, `${GROUP_VERSION}/validatingadmissionpolicybindings/${names.binding}`,
    `${GROUP_VERSION}/validatingadmissionpolicies/${names.policy}`, `/api/v1/namespaces/${ns}`]) {
    await admin?.call({ method: 'DELETE', path });
  }
  admin?.close();
  alice?.close();
  await cluster?.stop();
});

describe('ValidatingAdmissionPolicies', () => {
  it('refuse a write with kube-apiserver 1.32\'s status, reason and message (a server without them serves none)', async () => {
    const created = await admin.call({ method: 'POST', path: `${GROUP_VERSION}/validatingadmissionpolicies`, body: policy });
    if (!served) {
      expect(created.status).toBe(404);
      expect((await createConfigMap(admin, configMap('denied', { deny: 'yes' }))).status).toBe(201);
      return;
    }
    expect(created.status).toBe(201);
    expect((await admin.call({ method: 'POST', path: `${GROUP_VERSION}/validatingadmissionpolicybindings`, body: binding })).status).toBe(201);
    // The real server takes a moment to see a new policy (its informers): wait until a dry run is refused.
    await waitFor('the policy to take effect', async () => (await createConfigMap(admin, configMap('probe', { deny: 'yes' }), true)).status === 422);

    const denied = await createConfigMap(admin, configMap('denied', { deny: 'yes' }));
    const text = `ValidatingAdmissionPolicy '${names.policy}' with binding '${names.binding}' denied request: failed expression: !('deny' in variables.labels)`;
    expect([denied.status, denied.reason]).toEqual([422, 'Invalid']);
    expect(denied.data).toMatchObject({ message: `configmaps "denied" is forbidden: ${text}`, details: { name: 'denied', kind: 'configmaps', causes: [{ message: text }] } });

    const forbidden = await createConfigMap(alice, configMap('forbidden', { forbid: 'yes' }));
    expect([forbidden.status, forbidden.reason, forbidden.data?.message])
      .toEqual([403, 'Forbidden', `configmaps "forbidden" is forbidden: ValidatingAdmissionPolicy '${names.policy}' with binding '${names.binding}' denied request: forbid set by alice`]);

    expect((await createConfigMap(admin, configMap('probe', { probe: 'yes' }))).data?.message)
      .toContain(`denied request: labels=true annotations=false phase=Active finalizers=true options=true subResource=false extra=false uid=true name=probe namespace=${ns}`);

    // The authorizer answers as RBAC does: admin may create RoleBindings there, alice (edit) may not.
    expect((await createConfigMap(admin, configMap('binders-admin', { 'role-binders': 'yes' }))).status).toBe(201);
    expect((await createConfigMap(alice, configMap('binders-alice', { 'role-binders': 'yes' }))).data?.message).toContain('denied request: only role binders');
    expect((await createConfigMap(alice, configMap('plain'))).status).toBe(201);
  });
});

describe('webhook matchConditions', () => {
  it('a false condition keeps the request from the webhook; a true one sends it (1.26 drops them: always sent)', async () => {
    const created = await admin.call<KubeObject>({ method: 'POST', path: `${GROUP_VERSION}/validatingwebhookconfigurations`, body: webhook });
    expect(created.status).toBe(201);
    const stored = (created.data!.webhooks as { matchConditions?: unknown }[])[0]!;
    // Wait until the webhook is in force (the real server's informers): a request it is sent fails.
    const called = await waitFor('the webhook to be called', async () => {
      const r = await createConfigMap(admin, configMap(`call-${randomBytes(2).toString('hex')}`, { call: 'yes' }), true);
      return r.status === 500 ? r : undefined;
    });
    expect(called.data?.message).toMatch(/^Internal error occurred: failed calling webhook "mc.sim.furnish.dev": failed to call webhook: Post "https:\/\/127.0.0.1:1\/never\?timeout=2s": dial tcp 127.0.0.1:1: connect: connection refused$/);
    const uncalled = await createConfigMap(admin, configMap('no-call'));
    if (served) {
      expect(stored.matchConditions).toEqual(webhook.webhooks[0]!.matchConditions);
      expect(uncalled.status).toBe(201);
    } else {
      expect(stored.matchConditions).toBeUndefined();
      expect(created.headers?.warning).toContain('unknown field \\"webhooks[0].matchConditions\\"');
      expect(uncalled.status).toBe(500);
    }
  });
});
