// Google identities for tests, as GKE has them: a fake metadata server (what a Cloud Function's
// runtime offers: GET .../service-accounts/default/token, found through GCE_METADATA_HOST) hands
// out access tokens of one service account, and a token authenticator (a TokenReview webhook over
// HTTPS, what kube-apiserver's --authentication-token-webhook-config-file calls, and kube-sim's
// tokenWebhookConfigFile) accepts exactly those tokens and names their caller
// `<account>@<project>.iam.gserviceaccount.com`, as GKE does. Tokens are signed with a key fixed
// here, so a metadata server in a test process and an authenticator started beside a real control
// plane agree without talking: anything else (a forged, altered or expired token) is refused.
//
// Standalone, for a real control plane: `node test/support/google-identity.ts DIR [PORT]` writes
// DIR/token-webhook.kubeconfig, prints `token-webhook-config: <path>` and serves until SIGTERM;
// start kube-apiserver with EXTRA_APISERVER_FLAGS="--authentication-token-webhook-config-file=<path>
// --authentication-token-webhook-version=v1".
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { METADATA_TOKEN_PATH } from '../../shared/kube/google.ts';
import { createCertificateAuthority } from './kube-sim/pki.ts';

/** Test-only signing key of the fake access tokens: known to every test process and authenticator. */
const KEY = 'furnish-test-google-access-tokens';
const PREFIX = 'ya29.furnish-test.';
const SERVICE_ACCOUNT = /^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com$/;

const sign = (payload: string): string => createHmac('sha256', KEY).update(payload).digest('base64url');

/** An access token of `email`, valid `seconds` from `now`. */
export function mintTestAccessToken(email: string, seconds = 3600, now = Date.now()): string {
  const payload = Buffer.from(JSON.stringify({ email, exp: Math.floor(now / 1000) + seconds })).toString('base64url');
  return `${PREFIX}${payload}.${sign(payload)}`;
}

/** The service account a token was minted for, or why it is refused. */
export function verifyTestAccessToken(token: string, now = Date.now()): { email: string } | { error: string } {
  if (!token.startsWith(PREFIX)) return { error: 'not a Google access token' };
  const [payload = '', signature = ''] = token.slice(PREFIX.length).split('.');
  const expected = Buffer.from(sign(payload));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { error: 'invalid token signature' };
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { email?: unknown; exp?: unknown };
  if (typeof claims.email !== 'string' || !SERVICE_ACCOUNT.test(claims.email)) return { error: 'the token names no service account' };
  if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now) return { error: 'the token has expired' };
  return { email: claims.email };
}

export interface FakeMetadataServer {
  /** 127.0.0.1:PORT, for GCE_METADATA_HOST. */
  host: string;
  email: string;
  /** Tokens handed out so far. */
  issued: number;
  stop(): Promise<void>;
}

function reply(res: ServerResponse, status: number, body: string, type = 'text/plain'): void {
  res.writeHead(status, { 'content-type': type, 'metadata-flavor': 'Google' });
  res.end(body);
}

/**
 * The metadata server of a runtime that runs as `email`: the paths google-auth-library and
 * shared/kube/google.ts ask (availability, token, e-mail, project), only with `Metadata-Flavor: Google`.
 */
export async function startFakeMetadataServer(email: string, tokenSeconds = 3600): Promise<FakeMetadataServer> {
  if (!SERVICE_ACCOUNT.test(email)) throw new Error(`${email}: not a service account e-mail`);
  const project = email.split('@')[1]!.split('.')[0]!;
  const state = { issued: 0 };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://metadata').pathname;
    if (req.headers['metadata-flavor'] !== 'Google') return reply(res, 403, 'Missing Metadata-Flavor: Google header');
    if (path === METADATA_TOKEN_PATH) {
      state.issued += 1;
      return reply(res, 200, JSON.stringify({ access_token: mintTestAccessToken(email, tokenSeconds), expires_in: tokenSeconds, token_type: 'Bearer' }), 'application/json');
    }
    const text: Record<string, string> = {
      '/computeMetadata/v1/instance': 'attributes/\nservice-accounts/\n',
      '/computeMetadata/v1/instance/service-accounts/default/email': email,
      '/computeMetadata/v1/project/project-id': project,
    };
    return path in text ? reply(res, 200, text[path]!) : reply(res, 404, 'Not Found');
  });
  const port = await listen(server, 0);
  return {
    host: `127.0.0.1:${port}`,
    email,
    get issued() {
      return state.issued;
    },
    stop: () => close(server),
  };
}

export interface TokenAuthenticator {
  /** The kubeconfig-format file for --authentication-token-webhook-config-file (and kube-sim's tokenWebhookConfigFile). */
  configFile: string;
  url: string;
  /** TokenReviews answered, and how many authenticated. */
  reviews: { total: number; authenticated: number };
  stop(): Promise<void>;
}

/** The TokenReview answer for a review request: the token's service account as the user, or unauthenticated with why. */
export function reviewToken(review: unknown, now = Date.now()): Record<string, unknown> {
  const r = (review ?? {}) as { apiVersion?: string; spec?: { token?: unknown } };
  const token = typeof r.spec?.token === 'string' ? r.spec.token : '';
  const verdict = verifyTestAccessToken(token, now);
  const status = 'email' in verdict ? { authenticated: true, user: { username: verdict.email, uid: `google-${verdict.email}`, groups: [] } } : { authenticated: false, error: verdict.error };
  return { apiVersion: r.apiVersion ?? 'authentication.k8s.io/v1', kind: 'TokenReview', status };
}

/** The TokenReview webhook over HTTPS (a CA made here), and its kubeconfig-format config file in `dir`. */
export async function startTokenAuthenticator(dir: string, port = 0): Promise<TokenAuthenticator> {
  const ca = createCertificateAuthority('furnish-test-token-webhook-ca');
  const serving = ca.issue(['127.0.0.1'], 'furnish-test-token-webhook');
  const reviews = { total: 0, authenticated: 0 };
  const server = createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end('not JSON');
        return;
      }
      const answer = reviewToken(body);
      reviews.total += 1;
      if ((answer.status as { authenticated: boolean }).authenticated) reviews.authenticated += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  const bound = await listen(server, port);
  const url = `https://127.0.0.1:${bound}/authenticate`;
  mkdirSync(dir, { recursive: true });
  const configFile = join(dir, 'token-webhook.kubeconfig');
  writeFileSync(configFile, stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'google-tokens', cluster: { server: url, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } }],
    users: [{ name: 'kube-apiserver', user: {} }],
    contexts: [{ name: 'webhook', context: { cluster: 'google-tokens', user: 'kube-apiserver' } }],
    'current-context': 'webhook',
  }));
  return { configFile, url, reviews, stop: () => close(server) };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

if (import.meta.main) {
  const [dir, port] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: node test/support/google-identity.ts DIR [PORT]');
    process.exit(2);
  }
  const authn = await startTokenAuthenticator(dir, Number(port ?? 0));
  console.log(`token-webhook-config: ${authn.configFile}`);
  const stop = () => void authn.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
