import { describe, expect, it } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { bearerToken } from '../../../shared/auth/bearer.ts';
import { createWebhookAuthenticator } from '../../../shared/auth/webhook-token.ts';
import { credentialMatches, credentialPath, pathCredentialOf } from '../../../shared/auth/path-credential.ts';
import { configFrom } from '../../../shared/config/load.ts';
import { mintToken, TEST_PUBLIC_URL, TEST_SECRET } from '../../support/fixtures.ts';

const audience = `${TEST_PUBLIC_URL}/mutate-namespace`;
/** A call to the function root carrying only this Authorization header. */
const bearer = (authorization: string | undefined) => ({ path: '/', authorization });

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
    const result = await auth.authenticate(bearer(`Bearer ${await mintToken()}`));
    expect(result).toMatchObject({ ok: true, cluster: { id: 'test-cluster' } });
    const other = await mintToken({ cluster: 'other', secret: 'another-secret-of-at-least-32-bytes!!', audience, issuer: 'terraform' });
    expect(await auth.authenticate(bearer(`Bearer ${other}`))).toMatchObject({ ok: true, cluster: { id: 'other' } });
  });

  it('refuse, saying why: no token, not bearer, not a JWT, unknown cluster, wrong key, audience, issuer, expired, no exp', async () => {
    const cases: [string | undefined, RegExp][] = [
      [undefined, /^no credential/],
      ['Basic YWxpY2U6eA==', /not "Bearer <token>"/],
      ['Bearer not-a-jwt', /not a JWT/],
      [`Bearer ${await mintToken({ cluster: 'nope' })}`, /unknown cluster "nope"/],
      [`Bearer ${await mintToken({ secret: 'x'.repeat(40) })}`, /rejected: signature verification failed/],
      [`Bearer ${await mintToken({ audience: `${TEST_PUBLIC_URL}/guard-initializing` })}`, /rejected: unexpected "aud" claim value/],
      [`Bearer ${await mintToken({ cluster: 'other', secret: 'another-secret-of-at-least-32-bytes!!', audience })}`, /rejected: missing required "iss" claim/],
      [`Bearer ${await mintToken({ expiresIn: '-1h' })}`, /rejected: "exp" claim timestamp check failed/],
      [`Bearer ${await mintToken({ expiresIn: null })}`, /rejected: missing required "exp" claim/],
    ];
    for (const [header, message] of cases) {
      const result = await auth.authenticate(bearer(header));
      expect(result.ok).toBe(false);
      expect(!result.ok && result.message).toMatch(message);
    }
  });

  it('a token for one cluster cannot pass as another (the key is the named cluster\'s)', async () => {
    const forged = await mintToken({ cluster: 'other', secret: TEST_SECRET, audience, issuer: 'terraform' });
    expect(await auth.authenticate(bearer(`Bearer ${forged}`))).toMatchObject({ ok: false });
  });

  it('verify asymmetric tokens against an inline JWKS', async () => {
    const { jwk, sign } = await rsaCluster();
    const rsa = createWebhookAuthenticator(configFrom({ clusters: [{ id: 'rsa', jwt: { jwks: { keys: [jwk] } } }] }).clusters, audience);
    expect(await rsa.authenticate(bearer(`Bearer ${await sign('rsa')}`))).toMatchObject({ ok: true, cluster: { id: 'rsa' } });
    // alg confusion: an HS256 token "signed" with the public key is refused.
    const confused = await mintToken({ cluster: 'rsa', secret: JSON.stringify(jwk), audience });
    expect(await rsa.authenticate(bearer(`Bearer ${confused}`))).toMatchObject({ ok: false });
  });

  it('remember a verified token for at most the TTL and never past exp', async () => {
    let t = Date.now();
    const cached = createWebhookAuthenticator(config.clusters, audience, { cacheTtlMs: 60_000, clockToleranceSec: 0, now: () => t });
    const token = await mintToken({ expiresIn: '10s' });
    expect(await cached.authenticate(bearer(`Bearer ${token}`))).toMatchObject({ ok: true });
    t += 9_000;
    expect(await cached.authenticate(bearer(`Bearer ${token}`))).toMatchObject({ ok: true });
    t += 2_000; // past exp, though within the TTL: verified again, and refused
    expect(await cached.authenticate(bearer(`Bearer ${token}`))).toMatchObject({ ok: false, message: expect.stringContaining('"exp" claim timestamp check failed') });
    expect(bearerToken(`Bearer ${token}`)).toBe(token);
  });
});

describe('path credentials (managed control planes)', () => {
  const current = 'a'.repeat(20) + 'current-credential-0123';
  const next = 'b'.repeat(20) + 'next-credential-456789';
  const config = configFrom({
    clusters: [
      { id: 'gke-prod', pathCredentials: [current, next] },
      { id: 'jwt-only', jwt: { secret: TEST_SECRET } },
    ],
  });
  const auth = createWebhookAuthenticator(config.clusters, audience);
  const at = (cluster: string, credential: string, authorization?: string) => ({ path: `/mutate-namespace${credentialPath(cluster, credential)}`, authorization });

  it('accept either of the two valid credentials (a rotation), without a bearer token', () => {
    expect(auth.cached(at('gke-prod', current))).toMatchObject({ ok: true, cluster: { id: 'gke-prod' } });
    expect(auth.cached(at('gke-prod', next))).toMatchObject({ ok: true, cluster: { id: 'gke-prod' } });
  });

  it('refuse a wrong credential, another cluster\'s, or a cluster without path credentials, never repeating the credential', () => {
    for (const call of [at('gke-prod', 'x'.repeat(40)), at('gke-prod', current.slice(0, -1)), at('jwt-only', current), at('nope', current)]) {
      const result = auth.cached(call);
      expect(result).toMatchObject({ ok: false });
      expect(JSON.stringify(result)).not.toContain(current.slice(20));
    }
    // A path credential that fails is not rescued by a bearer token: the path decides.
    expect(auth.cached(at('gke-prod', 'y'.repeat(40), 'Bearer abc'))).toMatchObject({ ok: false });
  });

  it('find the credential only at the end of the path, after /c/<cluster>/', () => {
    expect(pathCredentialOf('/mutate-namespace/c/prod/secret')).toEqual({ cluster: 'prod', credential: 'secret' });
    expect(pathCredentialOf('/c/prod/secret?timeout=5s')).toEqual({ cluster: 'prod', credential: 'secret' });
    expect(pathCredentialOf('/mutate-namespace')).toBeUndefined();
    expect(pathCredentialOf('/c/prod/secret/extra')).toBeUndefined();
  });

  it('compare in constant time against every valid value', () => {
    expect(credentialMatches(current, [next, current])).toBe(true);
    expect(credentialMatches(current, [])).toBe(false);
    expect(credentialMatches('', [current])).toBe(false);
  });

  it('configuration: at most two, each long and URL-safe, and a cluster needs jwt or path credentials', () => {
    expect(() => configFrom({ clusters: [{ id: 'a', pathCredentials: [current, next, current] }] })).toThrow(/at most two/);
    expect(() => configFrom({ clusters: [{ id: 'a', pathCredentials: ['short'] }] })).toThrow(/clusters\[0\]\.pathCredentials\[0\]: must be 32 to 256/);
    expect(() => configFrom({ clusters: [{ id: 'a' }] })).toThrow(/jwt: is required .* unless pathCredentials/);
    const fromEnv = configFrom({ clusters: [{ id: 'a', pathCredentialsEnv: 'CREDS' }] }, { CREDS: `${current},${next}` });
    expect(fromEnv.clusters[0]!.pathCredentials).toEqual([current, next]);
  });
});
