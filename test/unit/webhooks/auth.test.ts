import { describe, expect, it } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { bearerToken } from '../../../shared/auth/bearer.ts';
import { createWebhookAuthenticator } from '../../../shared/auth/webhook-token.ts';
import { configFrom } from '../../../shared/config/load.ts';
import { mintToken, TEST_PUBLIC_URL, TEST_SECRET } from '../../support/fixtures.ts';

const audience = `${TEST_PUBLIC_URL}/mutate-namespace`;

async function rsaCluster() {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' };
  const sign = (sub: string) => new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject(sub).setAudience(audience).setExpirationTime('5m').sign(privateKey);
  return { jwk, sign };
}

describe('webhook bearer tokens', () => {
  const config = configFrom({
    clusters: [
      { id: 'test-cluster', jwt: { secret: TEST_SECRET } },
      { id: 'other', jwt: { secret: 'another-secret-of-at-least-32-bytes!!', issuer: 'terraform' } },
    ],
  });
  const auth = createWebhookAuthenticator(config.clusters, audience);

  it('accept a token signed with the cluster\'s secret for this function, naming the cluster', async () => {
    const result = await auth.authenticate(`Bearer ${await mintToken()}`);
    expect(result).toMatchObject({ ok: true, cluster: { id: 'test-cluster' } });
    const other = await mintToken({ cluster: 'other', secret: 'another-secret-of-at-least-32-bytes!!', audience, issuer: 'terraform' });
    expect(await auth.authenticate(`Bearer ${other}`)).toMatchObject({ ok: true, cluster: { id: 'other' } });
  });

  it('refuse, saying why: no token, not bearer, not a JWT, unknown cluster, wrong key, audience, issuer, expired', async () => {
    const cases: [string | undefined, RegExp][] = [
      [undefined, /^no bearer token/],
      ['Basic YWxpY2U6eA==', /not "Bearer <token>"/],
      ['Bearer not-a-jwt', /not a JWT/],
      [`Bearer ${await mintToken({ cluster: 'nope' })}`, /unknown cluster "nope"/],
      [`Bearer ${await mintToken({ secret: 'x'.repeat(40) })}`, /rejected: signature verification failed/],
      [`Bearer ${await mintToken({ audience: `${TEST_PUBLIC_URL}/guard-initializing` })}`, /rejected: unexpected "aud" claim value/],
      [`Bearer ${await mintToken({ cluster: 'other', secret: 'another-secret-of-at-least-32-bytes!!', audience })}`, /rejected: missing required "iss" claim/],
      [`Bearer ${await mintToken({ expiresIn: '-1h' })}`, /rejected: "exp" claim timestamp check failed/],
    ];
    for (const [header, message] of cases) {
      const result = await auth.authenticate(header);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.message).toMatch(message);
    }
  });

  it('a token for one cluster cannot pass as another (the key is the named cluster\'s)', async () => {
    const forged = await mintToken({ cluster: 'other', secret: TEST_SECRET, audience, issuer: 'terraform' });
    expect(await auth.authenticate(`Bearer ${forged}`)).toMatchObject({ ok: false });
  });

  it('verify asymmetric tokens against an inline JWKS', async () => {
    const { jwk, sign } = await rsaCluster();
    const rsa = createWebhookAuthenticator(configFrom({ clusters: [{ id: 'rsa', jwt: { jwks: { keys: [jwk] } } }] }).clusters, audience);
    expect(await rsa.authenticate(`Bearer ${await sign('rsa')}`)).toMatchObject({ ok: true, cluster: { id: 'rsa' } });
    // alg confusion: an HS256 token "signed" with the public key is refused.
    const confused = await mintToken({ cluster: 'rsa', secret: JSON.stringify(jwk), audience });
    expect(await rsa.authenticate(`Bearer ${confused}`)).toMatchObject({ ok: false });
  });

  it('remember a verified token for at most the TTL and never past exp', async () => {
    let t = Date.now();
    const cached = createWebhookAuthenticator(config.clusters, audience, { cacheTtlMs: 60_000, clockToleranceSec: 0, now: () => t });
    const token = await mintToken({ expiresIn: '10s' });
    expect(await cached.authenticate(`Bearer ${token}`)).toMatchObject({ ok: true });
    t += 9_000;
    expect(await cached.authenticate(`Bearer ${token}`)).toMatchObject({ ok: true });
    t += 2_000; // past exp, though within the TTL: verified again, and refused
    expect(await cached.authenticate(`Bearer ${token}`)).toMatchObject({ ok: false, message: expect.stringContaining('"exp" claim timestamp check failed') });
    expect(bearerToken(`Bearer ${token}`)).toBe(token);
  });
});
