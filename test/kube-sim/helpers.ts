// A raw HTTPS client for kube-sim's tests: exact status codes, headers and bodies, no library
// in between. Also a tiny HTTPS webhook server for the admission tests.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SimCluster } from '../support/kube-sim/index.ts';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
  text: string;
}

export interface CallOptions {
  user?: string;
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  token?: string | null;
}

/** What `call` and `watch` need: kube-sim, or a real server (a TestCluster of test/support/cluster.ts). */
export type Endpoint = Pick<SimCluster, 'server' | 'caPem'> & { users: Record<string, { token: string }> };

export function call(cluster: Endpoint, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const token = options.token === undefined ? cluster.users[options.user ?? 'admin']!.token : options.token;
  const payload = options.body === undefined ? undefined
    : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const request = https.request(`${cluster.server}${path}`, {
      method,
      ca: cluster.caPem,
      agent: false,
      headers: {
        Accept: 'application/json',
        'User-Agent': 'kube-sim-test/1.0',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(payload !== undefined ? { 'Content-Type': options.contentType ?? 'application/json' } : {}),
        ...options.headers,
      },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try { body = JSON.parse(text); } catch { /* not JSON: keep the text */ }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body, text });
      });
    });
    request.on('error', reject);
    request.end(payload);
  });
}

export interface WatchStream {
  events: Array<{ type: string; object: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  status: Promise<number>;
  ended: Promise<void>;
  /** Resolves once `count` events have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

export function watch(cluster: Endpoint, path: string, user = 'admin'): WatchStream {
  const events: WatchStream['events'] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let resolveStatus!: (s: number) => void;
  let resolveEnded!: () => void;
  const status = new Promise<number>((r) => { resolveStatus = r; });
  const ended = new Promise<void>((r) => { resolveEnded = r; });
  const request = https.request(`${cluster.server}${path}`, {
    ca: cluster.caPem, agent: false, headers: { Authorization: `Bearer ${cluster.users[user]!.token}` },
  }, (response) => {
    resolveStatus(response.statusCode ?? 0);
    let buffer = '';
    response.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim()) events.push(JSON.parse(line));
      }
      for (const w of waiters.filter((w) => events.length >= w.count)) w.resolve();
    });
    response.on('end', () => resolveEnded());
    response.on('close', () => resolveEnded());
  });
  request.on('error', () => resolveEnded());
  request.end();
  return {
    events, status, ended,
    waitFor(count, timeoutMs = 5000) {
      if (events.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${events.length} of ${count} watch events: ${JSON.stringify(events.map((e) => e.type))}`)), timeoutMs);
        waiters.push({ count, resolve: () => { clearTimeout(timer); resolve(); } });
      });
    },
    close: () => request.destroy(),
  };
}

export interface WebhookServer {
  url: string;
  reviews: Array<{ path: string; headers: Record<string, unknown>; review: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  close(): Promise<void>;
}

/** An HTTPS server answering AdmissionReviews with `decide(review, path)` (a response without uid). */
export async function webhookServer(
  cluster: SimCluster,
  decide: (review: any, path: string) => Record<string, unknown> | Promise<Record<string, unknown>>, // eslint-disable-line @typescript-eslint/no-explicit-any
): Promise<WebhookServer> {
  const { certPem, keyPem } = cluster.issueCertificate(['127.0.0.1']);
  const reviews: WebhookServer['reviews'] = [];
  const server = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        reviews.push({ path: req.url ?? '', headers: req.headers, review });
        const response = await decide(review, (req.url ?? '').split('?')[0]!);
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, ...response } }));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    reviews,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const FIXTURES = fileURLToPath(new URL('../fixtures/kube-apiserver-1.26', import.meta.url));

/** A captured exchange: status code, headers (lower-cased) and the JSON body; `folder` under the fixtures (api/, tables/). */
export function fixture(name: string, folder = 'api'): { status: number; headers: Record<string, string>; body: any } { // eslint-disable-line @typescript-eslint/no-explicit-any
  const text = readFileSync(join(FIXTURES, folder, `${name}.http`), 'utf8');
  const [head, ...rest] = text.split(/\r?\n\r?\n/);
  const [statusLine, ...headerLines] = head!.split(/\r?\n/);
  const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const bodyText = rest.join('\n\n').trim();
  let body: unknown = bodyText;
  try { body = JSON.parse(bodyText); } catch { /* watch streams: keep the text */ }
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

export function admissionFixture(file: string): { path: string; headers: Record<string, string>; review: any } { // eslint-disable-line @typescript-eslint/no-explicit-any
  return JSON.parse(readFileSync(join(FIXTURES, 'admission', file), 'utf8'));
}

export const CONFIGMAP = (name: string, namespace: string, data: Record<string, string> = { a: '1' }): Record<string, unknown> => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data,
});
