// The TokenRequest API the local stack mints its components' credentials with (scripts/start/identities.ts),
// the same on kube-sim and on a real kube-apiserver 1.26 (FURNISH_TEST_KUBECONFIG): the answer's
// shape, who the token is (SelfSubjectReview), 404 for a missing ServiceAccount, 403 without
// `create serviceaccounts/token`, 422 for a too short duration, 401 once the ServiceAccount is
// deleted. Expiry (10 minutes at the least) is checked on kube-sim with its clock moved.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';
import { call, type Endpoint } from './helpers.ts';

let cluster: TestCluster;
const ns = `tokens-${Math.random().toString(36).slice(2, 7)}`;
const sa = (name: string) => `/api/v1/namespaces/${ns}/serviceaccounts/${name}`;

beforeAll(async () => {
  cluster = await useTestCluster();
  expect((await call(cluster, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
  for (const name of ['bot', 'gone']) {
    expect((await call(cluster, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } } })).status).toBe(201);
  }
});

afterAll(async () => {
  await call(cluster, 'DELETE', `/api/v1/namespaces/${ns}`);
  await cluster.stop();
});

const tokenRequest = (spec: Record<string, unknown> = {}) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec });

/** SelfSubjectReview: v1 from 1.28, alpha (behind a feature gate) in 1.26. */
async function whoIs(endpoint: Endpoint, token: string): Promise<{ status: number; userInfo?: { username: string; uid?: string; groups: string[] } }> {
  let last = 0;
  for (const version of ['v1', 'v1beta1', 'v1alpha1']) {
    const res = await call(endpoint, 'POST', `/apis/authentication.k8s.io/${version}/selfsubjectreviews`, { token, body: { apiVersion: `authentication.k8s.io/${version}`, kind: 'SelfSubjectReview' } });
    if (res.status === 201) return { status: 201, userInfo: res.body.status.userInfo };
    last = res.status;
    if (res.status === 401) break;
  }
  return { status: last };
}

describe('TokenRequest', () => {
  it('answers 201 with the token, its expiry and the spec defaulted', async () => {
    const before = Date.now();
    const res = await call(cluster, 'POST', `${sa('bot')}/token`, { body: tokenRequest({ expirationSeconds: 3600 }) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1',
      metadata: { name: 'bot', namespace: ns },
      spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600, boundObjectRef: null },
    });
    // Stamped with the request's time, and one managedFields entry of the caller (its User-Agent) for what it sent.
    expect(Date.parse(res.body.metadata.creationTimestamp)).toBeGreaterThanOrEqual(before - 2000);
    expect(res.body.metadata.managedFields).toEqual([{
      manager: 'kube-sim-test', operation: 'Update', apiVersion: 'authentication.k8s.io/v1', time: res.body.metadata.creationTimestamp,
      fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:expirationSeconds': {} } }, subresource: 'token',
    }]);
    expect(typeof res.body.status.token).toBe('string');
    const expires = Date.parse(res.body.status.expirationTimestamp);
    expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 2000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000 + 2000);
  });

  it('authenticates as the ServiceAccount, with its uid and the service-account groups', async () => {
    const uid = (await call(cluster, 'GET', sa('bot'))).body.metadata.uid;
    const token = (await call(cluster, 'POST', `${sa('bot')}/token`, { body: tokenRequest() })).body.status.token as string;
    const me = await whoIs(cluster, token);
    expect(me.status).toBe(201);
    // kube-apiserver 1.30+ (ServiceAccountTokenJTI) also names the token itself in extra; 1.26 and kube-sim do not.
    const credential = (me.userInfo as { extra?: unknown } | undefined)?.extra ? { extra: { 'authentication.kubernetes.io/credential-id': [expect.stringMatching(/^JTI=[0-9a-f-]{36}$/)] } } : {};
    expect(me.userInfo).toEqual({ username: `system:serviceaccount:${ns}:bot`, uid, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'], ...credential });
    // The token grants what RBAC grants the ServiceAccount: nothing here.
    const refused = await call(cluster, 'GET', '/api/v1/namespaces', { token });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe(`namespaces is forbidden: User "system:serviceaccount:${ns}:bot" cannot list resource "namespaces" in API group "" at the cluster scope`);
  });

  it('is 404 for a ServiceAccount that does not exist', async () => {
    const res = await call(cluster, 'POST', `${sa('nobody')}/token`, { body: tokenRequest() });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'serviceaccounts "nobody" not found', details: { name: 'nobody', kind: 'serviceaccounts' } });
  });

  it('is 403 without create on serviceaccounts/token, naming the subresource', async () => {
    const res = await call(cluster, 'POST', `${sa('bot')}/token`, { user: 'mallory', body: tokenRequest() });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(`serviceaccounts "bot" is forbidden: User "mallory" cannot create resource "serviceaccounts/token" in API group "" in the namespace "${ns}"`);
  });

  it('is 422 for a duration under 10 minutes', async () => {
    const res = await call(cluster, 'POST', `${sa('bot')}/token`, { body: tokenRequest({ expirationSeconds: 599 }) });
    expect(res.status).toBe(422);
    expect(res.body.reason).toBe('Invalid');
    expect(res.body.message).toContain('spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes');
  });

  it('a token whose ServiceAccount was deleted is 401', async () => {
    const token = (await call(cluster, 'POST', `${sa('gone')}/token`, { body: tokenRequest() })).body.status.token as string;
    expect((await whoIs(cluster, token)).status).toBe(201);
    expect((await call(cluster, 'DELETE', sa('gone'))).status).toBe(200);
    let status = 0;
    // The real server's token cache may answer from memory for up to 10 s after the delete.
    for (let i = 0; i < 60 && status !== 401; i++) {
      status = (await whoIs(cluster, token)).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 500));
    }
    expect(status).toBe(401);
  });
});

describe('kube-sim: expiry', () => {
  let sim: SimCluster;
  beforeAll(async () => {
    sim = await startCluster();
    await call(sim, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' } } });
  });
  afterAll(() => sim.stop());

  it('a token past its expirationTimestamp is 401', async () => {
    const res = await call(sim, 'POST', '/api/v1/namespaces/default/serviceaccounts/bot/token', { body: tokenRequest({ expirationSeconds: 600 }) });
    const token = res.body.status.token as string;
    expect((await whoIs(sim, token)).status).toBe(201);
    const expires = Date.parse(res.body.status.expirationTimestamp);
    sim.sim.serviceAccountTokens.now = () => expires - 1;
    expect((await whoIs(sim, token)).status).toBe(201);
    sim.sim.serviceAccountTokens.now = () => expires;
    expect((await whoIs(sim, token)).status).toBe(401);
    expect((await call(sim, 'GET', '/api/v1/namespaces', { token })).body).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('a token of a ServiceAccount deleted and created again (another uid) is 401', async () => {
    const token = (await call(sim, 'POST', '/api/v1/namespaces/default/serviceaccounts/bot/token', { body: tokenRequest() })).body.status.token as string;
    sim.sim.serviceAccountTokens.now = Date.now;
    await call(sim, 'DELETE', '/api/v1/namespaces/default/serviceaccounts/bot');
    await call(sim, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' } } });
    expect((await whoIs(sim, token)).status).toBe(401);
  });
});
