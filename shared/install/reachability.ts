// Whether `furnish install` reaches a function's URL from where it runs, and if not, at which layer
// it fails (DNS, TCP, TLS, HTTP status), judged purely from what one GET of the function's liveness
// path saw; reach.ts does the request. kube-apiserver calls the same host and port with the same CA
// bundle, so a layer that fails here most likely fails there too, and the install says so before
// it writes anything rather than after its in-cluster probes time out.
import { pathCredentialOf } from '../auth/path-credential.ts';

export type Layer = 'dns' | 'tcp' | 'tls' | 'http';

/** How far the request got: nothing yet, the host resolved, a TCP connection, a TLS session. */
export type Stage = 'start' | 'resolved' | 'connected' | 'secured';

/** What one GET of a liveness URL saw. */
export interface Attempt {
  /** The URL requested (it never holds a credential: livenessUrl drops it). */
  url: string;
  stage: Stage;
  /** The HTTP status, when an answer came. */
  status?: number;
  /** The error that ended the request (Node's `code`, e.g. ENOTFOUND, ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT). */
  error?: { code?: string; message: string };
  /** Set when the request was abandoned after this many milliseconds at `stage`. */
  timedOutMs?: number;
  /** The certificate was checked against the registrations' CA bundle (else the public CAs). */
  caBundle: boolean;
}

export type Reachability = { reachable: true } | { reachable: false; layer: Layer; problem: string };

/**
 * What GET answers for a function's liveness (shared/webhooks/http.ts withLiveness: `…/healthz`,
 * no credential needed): the registration's URL without its query and without its path
 * credential (never sent where it is not needed, never shown), then `/healthz`.
 */
export function livenessUrl(registrationUrl: string): string {
  const u = new URL(registrationUrl);
  const segments = u.pathname.split('/').filter(Boolean);
  const path = pathCredentialOf(u.pathname) ? segments.slice(0, -3) : segments;
  return `${u.origin}/${[...path, 'healthz'].join('/')}`;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
const TCP_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ENETDOWN']);

/** The layer an error belongs to: by its code where the code says, else by how far the request got. */
function failedLayer(a: Attempt): Layer {
  const code = a.error?.code ?? '';
  if (DNS_CODES.has(code)) return 'dns';
  if (TCP_CODES.has(code)) return 'tcp';
  return ({ start: 'dns', resolved: 'tcp', connected: 'tls', secured: 'http' } as const)[a.stage];
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
const detail = (a: Attempt) => (a.error ? `${a.error.code ? `${a.error.code}: ` : ''}${a.error.message}` : '');

/** What an HTTP status from a function's liveness path means for kube-apiserver's calls. */
function statusMeaning(status: number): string {
  if (status === 404) return 'no function at this URL: is it deployed, and is --url (FURNISH_FUNCTIONS_URL) the base its functions are served under?';
  if (status === 401 || status === 403) return 'refused without credentials: kube-apiserver calls a webhook with no Google identity, so the function must allow unauthenticated invocations (it checks the cluster\'s own credential itself)';
  if (status >= 300 && status < 400) return 'a redirect, which kube-apiserver does not follow: give the URL it redirects to';
  if (status >= 500) return 'the function fails or is not ready (its logs say why)';
  return 'expected 200 from the function\'s liveness path';
}

function problem(layer: Layer, a: Attempt): string {
  const { host, port, protocol } = new URL(a.url);
  const at = `${host.replace(/:\d+$/, '')}:${port || (protocol === 'https:' ? 443 : 80)}`;
  const waited = a.timedOutMs === undefined ? undefined : seconds(a.timedOutMs);
  switch (layer) {
    case 'dns':
      if (waited) return `DNS: no address for ${new URL(a.url).hostname} within ${waited}`;
      return `DNS: ${new URL(a.url).hostname} does not resolve (${detail(a)})${a.error?.code === 'EAI_AGAIN' ? ': the resolver failed or timed out, retry or check this machine\'s DNS' : ''}`;
    case 'tcp':
      if (waited) return `TCP: no connection to ${at} within ${waited} (a firewall drops it, or nothing is at that address)`;
      return `TCP: no connection to ${at} (${detail(a)}${a.error?.code === 'ECONNREFUSED' ? ': nothing listens there' : ''})`;
    case 'tls':
      if (waited) return `TLS: no handshake with ${at} within ${waited}`;
      return `TLS: the handshake with ${at} failed (${detail(a)}); its certificate is checked against ${a.caBundle ? 'the CA bundle of the registrations (--ca-bundle, FURNISH_CA_BUNDLE)' : 'the public CAs (no CA bundle given)'} and must name the host, as kube-apiserver checks it`;
    case 'http':
      if (a.status !== undefined) return `HTTP ${a.status} from GET ${a.url}: ${statusMeaning(a.status)}`;
      if (waited) return `HTTP: no answer to GET ${a.url} within ${waited}`;
      return `HTTP: the connection to ${at} ended before an answer to GET ${a.url} (${detail(a)})`;
  }
}

/** Reachable when the liveness path answered 2xx; otherwise the layer that failed and what to check. */
export function reachabilityOf(a: Attempt): Reachability {
  if (a.status !== undefined && a.status >= 200 && a.status < 300 && !a.error && a.timedOutMs === undefined) return { reachable: true };
  const layer = a.status !== undefined ? 'http' : failedLayer(a);
  return { reachable: false, layer, problem: problem(layer, a) };
}

export interface CalledFunction {
  /** The function's name: the last segment of its URL's path (the credential aside). */
  name: string;
  /** Where GET answers for it (livenessUrl). */
  url: string;
  /** PEM of the CA bundle its registration carries; absent: the public CAs, as kube-apiserver then uses. */
  ca?: string;
}

interface ClientConfig {
  url?: string;
  caBundle?: string;
}

/** The functions webhook configurations call, each once (a configuration may call one URL from several webhooks). */
export function calledFunctions(configurations: readonly object[]): CalledFunction[] {
  const byUrl = new Map<string, CalledFunction>();
  for (const c of configurations) {
    for (const { clientConfig } of (c as { webhooks?: { clientConfig?: ClientConfig }[] }).webhooks ?? []) {
      if (clientConfig?.url === undefined) continue;
      const url = livenessUrl(clientConfig.url);
      const ca = clientConfig.caBundle ? Buffer.from(clientConfig.caBundle, 'base64').toString('utf8') : undefined;
      if (!byUrl.has(url)) byUrl.set(url, { name: new URL(url).pathname.split('/').at(-2) ?? url, url, ...(ca ? { ca } : {}) });
    }
  }
  return [...byUrl.values()];
}
