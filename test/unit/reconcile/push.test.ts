import { describe, it, expect, beforeAll } from '@jest/globals';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { createPushVerifier, type PushVerifier } from '../../../shared/auth/oidc.ts';
import type { PushAuthSettings } from '../../../shared/reconcile/config.ts';
import { apiError, PermanentError, TransientError } from '../../../shared/kube/errors.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { encodeMessage, type ReconcileMessage } from '../../../shared/bus/envelope.ts';
import { handleEnvelope, handlePush, type MessageHandler } from '../../../shared/reconcile/push.ts';
import type { Cause } from '../../../shared/kube/cause.ts';
import { createKubeClient } from '../../../shared/kube/client.ts';

const settings: PushAuthSettings = { mode: 'oidc', issuer: 'https://accounts.google.com', audience: 'https://reconcile.example/push', jwksUrl: 'https://unused.invalid', serviceAccountEmail: 'pusher@p.iam.gserviceaccount.com' };
let verify: PushVerifier;
let sign: (claims: Record<string, unknown>, opts?: { audience?: string; issuer?: string; expiresIn?: string }) => Promise<string>;

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'test', alg: 'RS256' };
  verify = createPushVerifier(settings, createLocalJWKSet({ keys: [jwk] }));
  sign = (claims, opts = {}) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test' }).setIssuer(opts.issuer ?? 'https://accounts.google.com').setAudience(opts.audience ?? settings.audience).setSubject('1234').setIssuedAt().setExpirationTime(opts.expiresIn ?? '5m').sign(privateKey);
});

const good = { email: 'pusher@p.iam.gserviceaccount.com', email_verified: true };

describe('Pub/Sub push OIDC verification', () => {
  it('accepts a Google-style token for our audience from the push service account', async () => {
    expect(await verify(`Bearer ${await sign(good)}`)).toMatchObject({ ok: true, email: good.email });
  });

  it.each([
    ['no header', async () => undefined, 401, 'missing bearer token'],
    ['wrong audience', async () => `Bearer ${await sign(good, { audience: 'https://other' })}`, 401, 'invalid token'],
    ['wrong issuer', async () => `Bearer ${await sign(good, { issuer: 'https://evil.example' })}`, 401, 'invalid token'],
    ['expired', async () => `Bearer ${await sign(good, { expiresIn: '-10m' })}`, 401, 'invalid token'],
    ['another service account', async () => `Bearer ${await sign({ ...good, email: 'x@y.z' })}`, 403, 'is not the push service account'],
    ['unverified e-mail', async () => `Bearer ${await sign({ ...good, email_verified: false })}`, 403, 'is not the push service account'],
  ])('refuses %s', async (_what, header, status, reason) => {
    const r = await verify(await header());
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.status).toBe(status);
      expect(r.reason).toContain(reason);
    }
  });

  it('mode off accepts anything (local stack and emulator only)', async () => {
    expect((await createPushVerifier({ ...settings, mode: 'off' })(undefined)).ok).toBe(true);
  });
});

describe('handlePush: the status code is the ack', () => {
  const msg: ReconcileMessage = { v: 1, cluster: 'local', kind: 'Namespace', name: 'team-a', type: 'ADDED' };
  const envelope = (m: unknown = msg) => ({ message: { data: Buffer.from(JSON.stringify(m)).toString('base64'), messageId: '1', attributes: encodeMessage(msg).attributes }, subscription: 'projects/p/subscriptions/s' });
  const run = async (handle: MessageHandler, body: unknown = envelope(), auth?: string) => handlePush({ verify, accept: 'Namespace', handle, log: collectingLogger() }, auth ?? `Bearer ${await sign(good)}`, body);

  it('200 when the reconcile finished (converged or a permanent failure reported)', async () => {
    const seen: string[] = [];
    const r = await run(async (m) => {
      seen.push(m.name);
      return { result: 'converged' };
    });
    expect(r).toEqual({ status: 200, body: { acknowledged: true, result: 'converged' } });
    expect(seen).toEqual(['team-a']);
  });

  it('503 on a transient failure so Pub/Sub redelivers, 500 on a crash', async () => {
    expect((await run(async () => { throw new TransientError('api down', { status: 503 }); })).status).toBe(503);
    expect((await run(async () => { throw new Error('bug'); })).status).toBe(500);
  });

  it('200 (acknowledged, reported) on a permanent failure: retrying cannot help, so no redelivery to the dead-letter limit', async () => {
    const r = await run(async () => { throw apiError('get template t', { status: 403, reason: 'Forbidden', message: 'no' }); });
    expect(r).toEqual({ status: 200, body: { acknowledged: true, error: 'get template t: HTTP 403 Forbidden: no' } });
    expect(apiError('x', { status: 503 })).toBeInstanceOf(TransientError);
    expect(apiError('x', { status: 404 })).toBeInstanceOf(PermanentError);
  });

  it('400 for a body that is not a push envelope; 204 (ack, logged) for undecodable data', async () => {
    const handle: MessageHandler = async () => ({});
    expect((await run(handle, { hello: 1 })).status).toBe(400);
    expect((await run(handle, { message: { data: 'bm90IGpzb24=' } })).status).toBe(204);
    expect((await run(handle, envelope({ ...msg, kind: 'NamespaceTemplate' }))).status).toBe(204);
  });

  it('401 before anything is decoded when the token is missing', async () => {
    let called = false;
    const r = await handlePush({ verify, accept: 'Namespace', handle: async () => ((called = true), {}), log: collectingLogger() }, undefined, envelope());
    expect(r.status).toBe(401);
    expect(called).toBe(false);
  });
});

describe('every API call a delivery makes carries its cause (shared/kube/cause.ts)', () => {
  const envelopeOf = (m: ReconcileMessage) => ({ message: { data: Buffer.from(JSON.stringify(m)).toString('base64'), messageId: m.name } });
  const batch = (name: string, template: string): ReconcileMessage => ({ v: 1, cluster: 'local', kind: 'Namespace', name, type: 'FANOUT', cause: `template/${template}@7` });

  it('a delivery past its time for calls sends none, not even a retry of one sent before: they answer unsent and transient (503)', async () => {
    const sent: string[] = [];
    const kube = createKubeClient({ server: 'http://127.0.0.1:1', headers: async () => ({}) }, {
      // The backoff outlasts the delivery's time.
      sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 60))),
      transport: async (req) => {
        sent.push(req.path);
        return req.path === '/busy' ? { status: 503, data: {} } : { status: 200, data: {} };
      },
    });
    const handle: MessageHandler = async () => {
      await kube.call({ method: 'GET', path: '/first' });
      const retried = await kube.call({ method: 'GET', path: '/busy' });
      expect(retried).toMatchObject({ ok: false, status: 0, unsent: true, attempts: 2 });
      const late = await kube.call({ method: 'PATCH', path: '/late' });
      if (!late.ok) throw apiError('patch /late', { status: late.status, message: late.error });
      return {};
    };
    const answer = await handleEnvelope({ accept: 'Namespace', handle, log: collectingLogger(), callsUntil: performance.now() + 30 }, envelopeOf(batch('a', 'quotas')));
    expect(answer).toEqual({ status: 503, body: { error: "patch /late: no response (network or timeout): not sent: Namespace/a's delivery is past its time for calls, and is retried" } });
    expect(sent).toEqual(['/first', '/busy']);
    expect(kube.metrics.failures).toBe(2);
  });

  it('interleaved deliveries keep their own, through awaits, timers and retries; calls outside a delivery have none', async () => {
    const seen: { path: string; attempt: number; cause?: Cause }[] = [];
    let failOnce = true;
    const kube = createKubeClient({ server: 'http://127.0.0.1:1', headers: async () => ({}) }, {
      sleep: async () => undefined,
      faults: (req, attempt) => {
        seen.push({ path: req.path, attempt, cause: req.cause });
        // The first call of all fails once: its retry must keep the cause.
        if (failOnce) {
          failOnce = false;
          return { status: 503 };
        }
        return undefined;
      },
      transport: async () => ({ status: 200, data: {} }),
    });
    const gate = () => {
      let open = () => {};
      return { promise: new Promise<void>((r) => (open = r)), resolve: () => open() };
    };
    const gates = { a: gate(), b: gate() };
    const handle: MessageHandler = async (m) => {
      await kube.call({ method: 'GET', path: `/first/${m.name}` });
      await gates[m.name as 'a' | 'b'].promise;
      await new Promise((r) => setTimeout(r, 1));
      await kube.call({ method: 'GET', path: `/second/${m.name}` });
      return {};
    };
    const deliver = (m: ReconcileMessage) => handleEnvelope({ accept: 'Namespace', handle, log: collectingLogger() }, envelopeOf(m));
    const a = deliver(batch('a', 'quotas'));
    const b = deliver({ v: 1, cluster: 'local', kind: 'Namespace', name: 'b', type: 'MODIFIED' });
    // b's second call goes first, while a waits.
    gates.b.resolve();
    await b;
    gates.a.resolve();
    expect((await a).status).toBe(200);
    await kube.call({ method: 'GET', path: '/outside' });
    expect(seen).toEqual([
      { path: '/first/a', attempt: 1, cause: { kind: 'Namespace', name: 'a', by: 'template/quotas@7' } },
      { path: '/first/b', attempt: 1, cause: { kind: 'Namespace', name: 'b' } },
      { path: '/first/a', attempt: 2, cause: { kind: 'Namespace', name: 'a', by: 'template/quotas@7' } },
      { path: '/second/b', attempt: 1, cause: { kind: 'Namespace', name: 'b' } },
      { path: '/second/a', attempt: 1, cause: { kind: 'Namespace', name: 'a', by: 'template/quotas@7' } },
      { path: '/outside', attempt: 1, cause: undefined },
    ]);
  });
});
