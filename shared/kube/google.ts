// Reaching a GKE cluster with the function's own Google service account, no Kubernetes token:
// GKE takes a Google OAuth access token as the bearer and authenticates it as the user
// `<account>@<project>.iam.gserviceaccount.com` (RBAC then decides, `furnish install` binds that
// user). The token comes from the runtime's metadata server (Cloud Functions, GCE, GKE), which
// keeps it fresh; GCE_METADATA_HOST points elsewhere (tests run a fake one on 127.0.0.1).
// Reconcilers ask through google-auth-library (Application Default Credentials: also a user's
// gcloud login or a workload identity federation file); the webhooks ask the metadata server
// directly, since importing google-auth-library costs a cold webhook ~140 ms and ~23 MB.
import { createTransport, type Transport } from './transport.ts';

/** A cluster reached with a Google identity: its API server and, for an IP endpoint, the cluster CA (a DNS endpoint is publicly trusted). */
export interface GoogleTarget {
  server: string;
  caPem?: string;
}

/** Hands out a current access token; throws with the reason when there is none. */
export type AccessTokens = () => Promise<string>;

/** The scope GKE accepts (the metadata server of Cloud Functions gives cloud-platform anyway). */
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** google-auth-library's Application Default Credentials, loaded on first use; it caches and refreshes the token. */
export function applicationDefaultTokens(): AccessTokens {
  let auth: Promise<{ getAccessToken(): Promise<string | null | undefined> }> | undefined;
  return async () => {
    auth ??= import('google-auth-library').then(({ GoogleAuth }) => new GoogleAuth({ scopes: [SCOPE] }));
    const token = await (await auth).getAccessToken();
    if (!token) throw new Error('Google Application Default Credentials gave no access token');
    return token;
  };
}

/** Where the metadata server is, as gcp-metadata (google-auth-library) finds it. */
export function metadataServer(env: Record<string, string | undefined>): string {
  const host = env.GCE_METADATA_IP || env.GCE_METADATA_HOST || '169.254.169.254';
  return /^https?:\/\//.test(host) ? host : `http://${host}`;
}

export const METADATA_TOKEN_PATH = '/computeMetadata/v1/instance/service-accounts/default/token';

/** A token is renewed this long before it expires (the metadata server hands out a new one 5 min before). */
const RENEW_BEFORE_MS = 4 * 60_000;

/**
 * Access tokens straight from the metadata server, one request per hour or so: cached until
 * shortly before they expire, one request in flight however many callers wait.
 */
export function metadataTokens(env: Record<string, string | undefined> = process.env, now: () => number = Date.now, timeoutMs = 2000): AccessTokens {
  let transport: Transport | undefined;
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;
  const fetchToken = async (): Promise<string> => {
    const server = metadataServer(env);
    transport ??= createTransport({ server, timeoutMs, headers: () => ({ 'metadata-flavor': 'Google' }), maxSockets: 1 });
    const a = await transport.send<{ access_token?: unknown; expires_in?: unknown }>({ method: 'GET', path: METADATA_TOKEN_PATH });
    const token = a.data?.access_token;
    if (!a.ok || typeof token !== 'string' || token === '') throw new Error(`metadata server ${server}: no access token (${a.error ?? `HTTP ${a.status}`})`);
    const seconds = typeof a.data?.expires_in === 'number' ? a.data.expires_in : 0;
    cached = { token, renewAt: now() + seconds * 1000 - RENEW_BEFORE_MS };
    return token;
  };
  return async () => {
    if (cached && now() < cached.renewAt) return cached.token;
    pending ??= fetchToken().finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

/** Headers carrying the current token, asked for per request. */
export function googleHeaders(tokens: AccessTokens): () => Promise<Record<string, string>> {
  return async () => ({ authorization: `Bearer ${await tokens()}` });
}
