// The registered Functions Framework entries: the HTTP push function verifies the OIDC token and
// answers with the ack status; the CloudEvent variant throws (nacks) on a transient failure.
import { describe, it, expect, beforeAll } from '@jest/globals';
import request from 'supertest';
import { getFunction, getTestServer } from '@google-cloud/functions-framework/testing';
import type { CloudEventFunction } from '@google-cloud/functions-framework';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createPushVerifier } from '../../../shared/auth/oidc.ts';
import { createMemoryBus } from '../../../shared/bus/memory.ts';
import { KEY } from '../../../shared/keys.ts';
import { reconcileConfig } from '../../../shared/reconcile/config.ts';
import { useRuntime } from '../../../shared/reconcile/functions.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { createRuntime } from '../../../shared/reconcile/runtime.ts';
import { memoryApi } from './memory-api.ts';
import '../../../functions/reconcile-namespace/index.ts';

const AUDIENCE = 'https://furnish.example/reconcile-namespace';
let token: string;
let failPatches = 0;
/** API calls made while a node:domain was active (the framework's; the reconciler leaves it, shared/functions/outside-domain.ts). */
let callsInDomain = 0;
const api = memoryApi((req) => {
  if ((process as { domain?: unknown }).domain) callsInDomain += 1;
  return req.method === 'PATCH' && failPatches-- > 0 ? { status: 500 } : undefined;
});

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const config = reconcileConfig({ FURNISH_PUSH_AUDIENCE: AUDIENCE, FURNISH_PUSH_SERVICE_ACCOUNT: 'push@p.iam.gserviceaccount.com' });
  const verify = createPushVerifier(config.push, createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'RS256' }] }));
  useRuntime('reconcile-namespace', createRuntime({ config, log: collectingLogger(), bus: async () => createMemoryBus(), kubeFor: async () => api.client, verify }));
  token = await new SignJWT({ email: 'push@p.iam.gserviceaccount.com', email_verified: true }).setProtectedHeader({ alg: 'RS256', kid: 'k' }).setIssuer('https://accounts.google.com').setAudience(AUDIENCE).setIssuedAt().setExpirationTime('5m').sign(privateKey);
  api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { [KEY.phase]: 'pending' }, annotations: { [KEY.creator]: 'alice' } } });
});

const push = (name: string) => ({ message: { data: Buffer.from(JSON.stringify({ v: 1, cluster: 'local', kind: 'Namespace', name, type: 'ADDED' })).toString('base64'), messageId: '1' }, subscription: 'projects/p/subscriptions/reconcile-namespace' });

describe('reconcile-namespace (Functions Framework)', () => {
  it('refuses a push without a valid OIDC token', async () => {
    const res = await request(getTestServer('reconcile-namespace')).post('/').send(push('team-a'));
    expect(res.status).toBe(401);
    expect(api.writes()).toEqual([]);
  });

  it('reconciles an authenticated push and acknowledges it', async () => {
    const res = await request(getTestServer('reconcile-namespace')).post('/').set('authorization', `Bearer ${token}`).send(push('team-a'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ acknowledged: true, result: 'converged', namespace: 'team-a' });
    expect(api.get('v1', 'Namespace', undefined, 'team-a')?.metadata.labels?.[KEY.phase]).toBe('ready');
    // Every call of the reconcile was made outside the framework's domain.
    expect(api.requests.length).toBeGreaterThan(3);
    expect(callsInDomain).toBe(0);
  });

  it('the CloudEvent entry nacks (throws) on a transient failure and acks otherwise', async () => {
    const fn = getFunction('reconcile-namespace-event') as CloudEventFunction<unknown>;
    api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b', labels: { [KEY.phase]: 'pending' } } });
    failPatches = 100;
    await expect(Promise.resolve(fn({ specversion: '1.0', id: '1', source: 's', type: 'google.cloud.pubsub.topic.v1.messagePublished', data: push('team-b') } as never))).rejects.toThrow(/HTTP 500|transient/);
    failPatches = 0;
    await fn({ specversion: '1.0', id: '2', source: 's', type: 'google.cloud.pubsub.topic.v1.messagePublished', data: push('team-b') } as never);
    expect(api.get('v1', 'Namespace', undefined, 'team-b')?.metadata.labels?.[KEY.phase]).toBe('ready');
  });

  it('sends no call once a delivery is past its time for calls, and answers 503 so that Pub/Sub retries it, never beside its redelivery', async () => {
    // 3 s for the delivery, 100 ms per call and 2 s for the answer: 900 ms for calls.
    const config = reconcileConfig({ FURNISH_PUSH_AUTH: 'off', FURNISH_DELIVERY_TIMEOUT_SECONDS: '3', FURNISH_KUBE_TIMEOUT_MS: '100' });
    const slow = memoryApi();
    slow.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-c', labels: { [KEY.phase]: 'pending' }, annotations: { [KEY.creator]: 'alice' } } });
    // The first read answers after the window: everything after it would be sent too late.
    let held = false;
    slow.hold = async () => {
      if (held) return;
      held = true;
      await new Promise((r) => setTimeout(r, 1000));
    };
    useRuntime('reconcile-namespace', createRuntime({ config, log: collectingLogger(), bus: async () => createMemoryBus(), kubeFor: async () => slow.client }));
    const late = await request(getTestServer('reconcile-namespace')).post('/').send(push('team-c'));
    expect(late.status).toBe(503);
    expect(late.body.error).toMatch(/not sent: Namespace\/team-c's delivery is past its time for calls/);
    expect(slow.requests).toHaveLength(1);
    expect(slow.get('v1', 'Namespace', undefined, 'team-c')?.metadata.labels?.[KEY.phase]).toBe('pending');
    // Its redelivery has the whole window again.
    const again = await request(getTestServer('reconcile-namespace')).post('/').send(push('team-c'));
    expect(again.status).toBe(200);
    expect(slow.get('v1', 'Namespace', undefined, 'team-c')?.metadata.labels?.[KEY.phase]).toBe('ready');
  });
});
