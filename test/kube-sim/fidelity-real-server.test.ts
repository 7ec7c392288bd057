// kube-sim against answers captured from the real control plane (kube-apiserver 1.26.3,
// test/fixtures/kube-apiserver-1.26/api) where the two used to differ: quantities in canonical
// form (and refused where they do not parse: 400, 500 or 422 by the write), custom resources with
// their keys sorted, RBAC subject validation, the text of a webhook's error answer, and the OpenAPI
// v3 document of authorization.k8s.io/v1.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parse } from 'yaml';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { canonicalQuantity } from '../support/kube-sim/quantity.ts';
import { call, fixture } from './helpers.ts';

let cluster: SimCluster;
const post = (path: string, body: unknown) => call(cluster, 'POST', `${path}?fieldManager=kubectl-create`, { body });

beforeAll(async () => {
  cluster = await startCluster({ namespaceDefaultObjects: false });
  await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', parse(readFileSync('infra/crds/namespacetemplates.yaml', 'utf8')));
});
afterAll(() => cluster.stop());

/** The request body the fixture was captured with, for the same request to kube-sim. */
const QUOTA = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'spelt' }, spec: { hard: { 'requests.cpu': '1000m', 'requests.memory': '1024Mi', 'limits.cpu': '0.5', 'limits.memory': '2048Mi', pods: '10', 'requests.storage': '1.5Gi', 'count/configmaps': '1e3' } } };
const MORE = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'more' }, spec: { hard: { cpu: '0.0001', memory: '1.5', 'requests.cpu': '0.1m', 'limits.cpu': '1.5e3', 'requests.memory': '500Ki', 'limits.memory': '1025Ki', 'requests.storage': '0.5Ki', 'requests.ephemeral-storage': '1500000k', 'limits.ephemeral-storage': '2E', 'ephemeral-storage': '12000', pods: 10, 'count/x': '1536' } } };
const LIMITS = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'spelt' }, spec: { limits: [{ type: 'Container', default: { cpu: 0.5, memory: '512Mi' }, defaultRequest: { cpu: '100m', memory: '0.25Gi' }, max: { cpu: '2000m', memory: '1073741824' } }] } };

describe('quantities are stored in canonical form', () => {
  it.each([['quantity-resourcequota', QUOTA], ['quantity-more', MORE]])('ResourceQuota spec.hard (%s)', async (name, body) => {
    const reply = await post('/api/v1/namespaces/team-a/resourcequotas', body);
    const real = fixture(name);
    expect(reply.status).toBe(real.status);
    expect(reply.body.spec).toEqual(real.body.spec);
  });

  it('LimitRange limits', async () => {
    const reply = await post('/api/v1/namespaces/team-a/limitranges', LIMITS);
    expect(reply.status).toBe(201);
    expect(reply.body.spec).toEqual(fixture('quantity-limitrange').body.spec);
  });

  it('a Pod\'s container resources and a quota written by server-side apply', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team-a' }, spec: { containers: [{ name: 'web', image: 'nginx', resources: { requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: 0.5 } } }] } };
    const applied = await call(cluster, 'PATCH', '/api/v1/namespaces/team-a/pods/web?fieldManager=furnish', { contentType: 'application/apply-patch+yaml', body: pod });
    expect(applied.body.spec.containers[0].resources).toEqual({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '500m' } });
    const quota = await call(cluster, 'PATCH', '/api/v1/namespaces/team-a/resourcequotas/applied?fieldManager=furnish', { contentType: 'application/apply-patch+yaml', body: { ...QUOTA, metadata: { name: 'applied', namespace: 'team-a' } } });
    expect(quota.body.spec).toEqual(fixture('quantity-resourcequota').body.spec);
  });

  it('canonical form, value by value (the rules behind the fixtures)', () => {
    expect(['1000m', '1024Mi', '0.5', '0.25Gi', '1.5Gi', '1e3', '1.5e3', '0.0001', '12000', '1023Ki', '1073741824', '0'].map(canonicalQuantity))
      .toEqual(['1', '1Gi', '500m', '256Mi', '1536Mi', '1e3', '1500', '1m', '12k', '1023Ki', '1073741824', '0']);
    expect(canonicalQuantity('ten')).toBeNull();
  });
});

describe('a quantity that does not parse is refused, in the words of where decoding failed', () => {
  const LOTS = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'lots' }, spec: { hard: { pods: 'lots' } } };

  it('a create: 400 BadRequest', async () => {
    const reply = await post('/api/v1/namespaces/team-a/resourcequotas', LOTS);
    const real = fixture('quantity-invalid-create');
    expect([reply.status, reply.body]).toEqual([real.status, real.body]);
  });

  it('a server-side apply: 500 without a reason, the conversion of the applied object', async () => {
    const reply = await call(cluster, 'PATCH', '/api/v1/namespaces/team-a/resourcequotas/lots?fieldManager=furnish&force=true', { body: LOTS, contentType: 'application/apply-patch+yaml' });
    const real = fixture('quantity-invalid-apply');
    expect([reply.status, reply.body]).toEqual([real.status, real.body]);
  });

  it('a merge patch: 422 Invalid on the patched object', async () => {
    expect((await post('/api/v1/namespaces/team-a/resourcequotas', { ...LOTS, metadata: { name: 'fine' }, spec: { hard: { pods: '5' } } })).status).toBe(201);
    const reply = await call(cluster, 'PATCH', '/api/v1/namespaces/team-a/resourcequotas/fine?fieldManager=kubectl-edit', { body: { spec: { hard: { pods: 'lots' } } }, contentType: 'application/merge-patch+json' });
    const real = fixture('quantity-invalid-merge-patch');
    expect(reply.status).toBe(real.status);
    // The message quotes the whole patched object (uid, managedFields, times): compared around it.
    const around = (b: { message: string; reason: string; details: { causes: { field: string; reason: string }[] } }) => ({ start: b.message.slice(0, b.message.indexOf('{')), end: b.message.slice(b.message.lastIndexOf('}"')), reason: b.reason, field: b.details.causes[0]!.field, causeReason: b.details.causes[0]!.reason });
    expect(around(reply.body)).toEqual(around(real.body));
  });
});

/** Every key path of a JSON value, in the order the keys appear. */
function keyOrder(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keyOrder(v, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => [`${path}.${k}`, ...keyOrder(v, `${path}.${k}`)]);
}

describe('custom resources', () => {
  it('come back with their keys sorted, at every level', async () => {
    // Written deliberately out of order, as the fixture's request was.
    const body = { kind: 'NamespaceTemplate', apiVersion: 'furnish.dev/v1alpha1', metadata: { name: 'sorted-keys', labels: { z: '1', a: '2' } }, spec: { templates: [{ metadata: { name: 'x' }, kind: 'ConfigMap', apiVersion: 'v1', data: { zeta: '1', alpha: '2' } }], mode: 'Enforce', namespaces: { labelSelector: {} } } };
    const reply = await post('/apis/furnish.dev/v1alpha1/namespacetemplates', body);
    const real = fixture('cr-sorted-keys');
    expect(reply.status).toBe(real.status);
    const { managedFields: _a, ...meta } = reply.body.metadata;
    const { managedFields: _b, ...realMeta } = real.body.metadata;
    expect(keyOrder({ ...reply.body, metadata: meta })).toEqual(keyOrder({ ...real.body, metadata: realMeta }));
  });
});

describe('RBAC subjects', () => {
  const binding = (name: string, subjects: unknown[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' }, subjects });
  const path = '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings';

  it('an empty subject name is refused (422 Required value), as $(CREATOR) renders in a namespace without a creator', async () => {
    const reply = await post(path, binding('creator', [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: '' }]));
    const real = fixture('rolebinding-empty-subject');
    expect(reply.status).toBe(real.status);
    expect(reply.body).toEqual(real.body);
  });

  it('several invalid subjects are reported together, an unknown kind among them', async () => {
    const reply = await post(path, binding('creator', [{ kind: 'ServiceAccount', name: '' }, { kind: 'Group', name: 'devs' }, { kind: 'Robot', name: 'r2' }]));
    expect(reply.body).toEqual(fixture('rolebinding-invalid-subjects').body);
  });

  it('User and Group subjects get their apiGroup', async () => {
    const body = { ...binding('ok', [{ kind: 'ServiceAccount', name: 'default', namespace: 'team-a' }, { kind: 'User', name: 'alice' }]), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' } };
    const reply = await post(path, body);
    expect(reply.status).toBe(201);
    expect(reply.body.subjects).toEqual(fixture('rolebinding-defaulted').body.subjects);
  });
});

describe('a webhook that answers with an error status', () => {
  let server: https.Server;
  let url = '';
  beforeAll(async () => {
    const { certPem, keyPem } = cluster.issueCertificate(['127.0.0.1']);
    server = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url?.startsWith('/status')) {
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'missing or invalid webhook credentials', reason: 'Unauthorized', code: 401 }));
        } else {
          res.writeHead(401, { 'content-type': 'text/plain' });
          res.end('nope');
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fidelity', labels: { fidelity: 'yes' } } });
    for (const w of ['status', 'plain']) {
      await post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
        apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: `fidelity-${w}` },
        webhooks: [{ name: `${w}.fidelity.furnish.dev`, admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Fail', timeoutSeconds: 5,
          clientConfig: { url: `${url}/${w}`, caBundle: Buffer.from(cluster.caPem).toString('base64') },
          rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE'] }],
          namespaceSelector: { matchLabels: { fidelity: w === 'status' ? 'yes' : 'plain' } } }],
      });
    }
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('names the webhook and quotes the message of its Status (500 InternalError)', async () => {
    const reply = await post('/api/v1/namespaces/fidelity/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } });
    const real = fixture('webhook-401-status');
    expect(reply.status).toBe(real.status);
    expect(reply.body).toEqual(real.body);
  });

  it('without a Status body, says what client-go says for the code', async () => {
    await call(cluster, 'PATCH', '/api/v1/namespaces/fidelity', { contentType: 'application/merge-patch+json', body: { metadata: { labels: { fidelity: 'plain' } } } });
    const reply = await post('/api/v1/namespaces/fidelity/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } });
    expect(reply.body).toEqual(fixture('webhook-401-plain').body);
  });
});

describe('OpenAPI v3', () => {
  it('serves authorization.k8s.io/v1 as kube-apiserver does, listed in the root with its hash', async () => {
    const real = fixture('openapi-v3-authorization');
    const root = await call(cluster, 'GET', '/openapi/v3');
    const ref = root.body.paths['apis/authorization.k8s.io/v1'].serverRelativeURL as string;
    expect(ref).toMatch(/^\/openapi\/v3\/apis\/authorization\.k8s\.io\/v1\?hash=[0-9A-F]{128}$/);
    const doc = await call(cluster, 'GET', ref);
    expect(doc.status).toBe(200);
    expect(doc.body).toEqual(real.body);
    expect(Object.keys(doc.body.paths)).toContain('/apis/authorization.k8s.io/v1/subjectaccessreviews');
    expect(doc.body.components.schemas['io.k8s.api.authorization.v1.SubjectAccessReviewSpec']).toBeDefined();
  });
});
