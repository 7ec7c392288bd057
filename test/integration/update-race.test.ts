// Fidelity: an update that waits in admission (a slow webhook) while another update of the same
// object commits must not overwrite it. kube-apiserver's GuaranteedUpdate compares the
// resourceVersion when it writes (etcd compare-and-swap): the client's stale resourceVersion
// gets 409 Conflict. kube-sim must do the same, on kube-sim and on a real API server alike.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { createCertificateAuthority } from '../support/kube-sim/pki.ts';
import { clientFor } from './helpers.ts';

const NS = `race-${Date.now().toString(36).slice(-5)}`;
const HOOK = `furnish-test-slow-${NS}`;
let cluster: TestCluster;
let admin: KubeClient;
let server: Server;
const calls: string[] = [];

/** Allows everything; a ConfigMap whose data has `slow` is answered after 500 ms. */
function slowWebhook(): Promise<{ url: string; caBundle: string }> {
  const ca = createCertificateAuthority('race-ca');
  const cert = ca.issue(['127.0.0.1']);
  server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const review = JSON.parse(body) as { request: { uid: string; object?: { data?: Record<string, string> } } };
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
      calls.push(review.request.object?.data?.v ?? '');
      if (review.request.object?.data?.slow) setTimeout(answer, 500);
      else answer();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`, caBundle: Buffer.from(ca.certPem).toString('base64') })));
}

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, cluster.isSimulated ? cluster.users.admin!.context : undefined);
  const hook = await slowWebhook();
  await admin.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  const r = await admin.call({ method: 'POST', path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', body: {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: HOOK },
    webhooks: [{
      name: 'slow.furnish.dev', admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Ignore', timeoutSeconds: 5,
      clientConfig: { url: hook.url, caBundle: hook.caBundle },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['UPDATE'], scope: 'Namespaced' }],
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
    }],
  } });
  if (!r.ok) throw new Error(`register webhook: ${r.status} ${r.error}`);
  // A real API server takes a moment to start calling a new webhook: update a probe until it does.
  await admin.call({ method: 'POST', path: `/api/v1/namespaces/${NS}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' } } });
  for (let i = 0; !calls.includes('probe') && i < 200; i++) {
    await admin.call({ method: 'PATCH', path: `/api/v1/namespaces/${NS}/configmaps/probe`, contentType: 'application/merge-patch+json', body: { data: { v: 'probe', n: String(i) } } });
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  calls.length = 0;
}, 60_000);

afterAll(async () => {
  await admin?.call({ method: 'DELETE', path: `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${HOOK}` });
  await admin?.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` });
  admin?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await cluster?.stop();
});

describe('an update waiting in admission while another commits', () => {
  it('gets 409 Conflict for its stale resourceVersion; the other update is kept', async () => {
    const path = `/api/v1/namespaces/${NS}/configmaps/shared`;
    const created = await admin.call<KubeObject>({ method: 'POST', path: `/api/v1/namespaces/${NS}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared' }, data: { v: '0' } } });
    const rv = created.data!.metadata.resourceVersion;
    const once = { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 };
    const put = (data: Record<string, string>) => admin.call<KubeObject & { reason?: string }>({ method: 'PUT', path, retry: once, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared', resourceVersion: rv }, data } });
    const slow = put({ v: 'slow', slow: 'true' });
    await new Promise((r) => setTimeout(r, 150));
    const fast = await put({ v: 'fast' });
    expect(fast.status).toBe(200);
    const late = await slow;
    expect(calls).toEqual(['slow', 'fast']);
    expect(late.status).toBe(409);
    expect(late.data?.reason).toBe('Conflict');
    expect((await admin.call<KubeObject>({ method: 'GET', path })).data?.data).toEqual({ v: 'fast' });
  });
});
