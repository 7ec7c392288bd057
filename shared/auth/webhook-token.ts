// Who is calling a webhook, decided from the request line and headers alone (before any body is
// read): either a path credential (`.../c/<cluster>/<credential>`, see path-credential.ts) or a
// bearer JWT whose `sub` names the cluster, verified with that cluster's key (HS256 shared secret,
// inline JWKS or a JWKS URL), with the function's URL as audience and an `exp` (a token that never
// expires is refused). No credential, a bad one or an unknown cluster: not authenticated, no decision.
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { JWTVerifyGetKey, JSONWebKeySet } from 'jose';
import type { ClusterConfig } from '../config/types.ts';
import { bearerToken } from './bearer.ts';
import { credentialMatches, pathCredentialOf } from './path-credential.ts';

export type AuthResult = { ok: true; cluster: ClusterConfig } | { ok: false; message: string };

/** What authentication may look at: the request path and the Authorization header, never the body. */
export interface WebhookCall {
  path: string;
  authorization: string | undefined;
}

export interface WebhookAuthenticator {
  authenticate(call: WebhookCall): Promise<AuthResult>;
  /** The answer without waiting: a path credential, a token verified recently (the hot path), a refusal; else undefined. */
  cached(call: WebhookCall): AuthResult | undefined;
}

export interface AuthenticatorOptions {
  /** How long a verified token is remembered (never past its `exp`). kube-apiserver sends the same token every call. */
  cacheTtlMs?: number;
  maxCached?: number;
  clockToleranceSec?: number;
  now?: () => number;
}

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

type Key = Uint8Array | JWTVerifyGetKey;

function keyOf(cluster: ClusterConfig): { key: Key; algorithms: string[] } | undefined {
  const { jwt } = cluster;
  if (!jwt) return undefined;
  if (jwt.secret !== undefined) return { key: new TextEncoder().encode(jwt.secret), algorithms: ['HS256'] };
  if (jwt.jwks !== undefined) return { key: createLocalJWKSet(jwt.jwks as unknown as JSONWebKeySet), algorithms: ASYMMETRIC };
  return { key: createRemoteJWKSet(new URL(jwt.jwksUrl!), { timeoutDuration: 2000, cooldownDuration: 30_000 }), algorithms: ASYMMETRIC };
}

export function createWebhookAuthenticator(clusters: readonly ClusterConfig[], audience: string, options: AuthenticatorOptions = {}): WebhookAuthenticator {
  const byId = new Map(clusters.map((c) => [c.id, { cluster: c, key: keyOf(c) }]));
  const ttl = options.cacheTtlMs ?? 60_000;
  const max = options.maxCached ?? 256;
  const now = options.now ?? Date.now;
  const verified = new Map<string, { until: number; cluster: ClusterConfig }>();

  async function verify(token: string): Promise<AuthResult> {
    let sub: unknown;
    try {
      sub = decodeJwt(token).sub;
    } catch {
      return { ok: false, message: 'bearer token is not a JWT' };
    }
    if (typeof sub !== 'string') return { ok: false, message: 'bearer token has no sub claim naming the cluster' };
    const entry = byId.get(sub);
    if (!entry) return { ok: false, message: `bearer token names unknown cluster ${JSON.stringify(sub)}` };
    if (!entry.key) return { ok: false, message: `cluster ${JSON.stringify(sub)} authenticates with a path credential, not a bearer token` };
    try {
      const { key, algorithms } = entry.key;
      const opts = {
        audience, subject: entry.cluster.id, issuer: entry.cluster.jwt!.issuer, algorithms, requiredClaims: ['exp'],
        clockTolerance: options.clockToleranceSec ?? 30, currentDate: new Date(now()),
      };
      const { payload } = typeof key === 'function' ? await jwtVerify(token, key, opts) : await jwtVerify(token, key, opts);
      const until = Math.min(now() + ttl, payload.exp! * 1000);
      if (verified.size >= max) verified.delete(verified.keys().next().value!);
      verified.set(token, { until, cluster: entry.cluster });
      return { ok: true, cluster: entry.cluster };
    } catch (e) {
      return { ok: false, message: `bearer token for cluster ${JSON.stringify(sub)} rejected: ${(e as Error).message}` };
    }
  }

  /** Never names the credential itself: only which cluster it claimed. */
  function byPath(cluster: string, credential: string): AuthResult {
    const entry = byId.get(cluster);
    if (entry && entry.cluster.pathCredentials.length > 0 && credentialMatches(credential, entry.cluster.pathCredentials)) return { ok: true, cluster: entry.cluster };
    return { ok: false, message: `the path credential for cluster ${JSON.stringify(cluster.slice(0, 63))} is not valid` };
  }

  function cached({ path, authorization }: WebhookCall): AuthResult | undefined {
    const inPath = pathCredentialOf(path);
    if (inPath) return byPath(inPath.cluster, inPath.credential);
    if (!authorization) return { ok: false, message: 'no credential: every webhook call must carry the cluster\'s path credential (.../c/<cluster>/<credential>) or Authorization: Bearer <cluster JWT>' };
    const token = bearerToken(authorization);
    if (!token) return { ok: false, message: 'Authorization header is not "Bearer <token>"' };
    const hit = verified.get(token);
    if (hit && now() < hit.until) return { ok: true, cluster: hit.cluster };
    if (hit) verified.delete(token);
    return undefined;
  }

  return {
    cached,
    async authenticate(call) {
      return cached(call) ?? verify(bearerToken(call.authorization)!);
    },
  };
}
