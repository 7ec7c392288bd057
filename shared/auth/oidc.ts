// Pub/Sub push authentication: the push request carries a Google-signed OIDC token
// (Authorization: Bearer). Verified with jose against a configurable issuer, audience and JWKS
// location (tests sign their own); the token's e-mail must be verified and, when configured,
// be the push subscription's service account.
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { PushAuthSettings } from '../config/types.ts';
import { bearerToken } from './bearer.ts';

export type PushAuthResult = { ok: true; subject: string; email?: string } | { ok: false; status: 401 | 403; reason: string };

export type PushVerifier = (authorization: string | undefined) => Promise<PushAuthResult>;

/** `keys` overrides the remote JWKS (tests hand in a local key set). */
export function createPushVerifier(settings: PushAuthSettings, keys?: JWTVerifyGetKey): PushVerifier {
  if (settings.mode === 'off') return async () => ({ ok: true, subject: 'anonymous (push auth off)' });
  const jwks = keys ?? createRemoteJWKSet(new URL(settings.jwksUrl), { cacheMaxAge: 10 * 60_000, cooldownDuration: 30_000 });
  const issuers = settings.issuer === 'https://accounts.google.com' ? ['https://accounts.google.com', 'accounts.google.com'] : [settings.issuer];
  return async (authorization) => {
    const token = bearerToken(authorization);
    if (!token) return { ok: false, status: 401, reason: 'missing bearer token' };
    let payload;
    try {
      ({ payload } = await jwtVerify(token, jwks, { issuer: issuers, audience: settings.audience, algorithms: ['RS256', 'ES256'], clockTolerance: 30 }));
    } catch (e) {
      return { ok: false, status: 401, reason: `invalid token: ${(e as Error).message}` };
    }
    const email = typeof payload.email === 'string' ? payload.email : undefined;
    if (settings.serviceAccountEmail) {
      if (payload.email_verified !== true || email !== settings.serviceAccountEmail) {
        return { ok: false, status: 403, reason: `token e-mail ${email ?? '(none)'} is not the push service account` };
      }
    }
    return { ok: true, subject: payload.sub ?? '', email };
  };
}
