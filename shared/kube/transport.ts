// The one Kubernetes transport: every request Furnish sends to an API server (webhooks, reconcilers,
// the relay) is built and its answer parsed here. It never throws: a network error, a timeout or
// bad credentials come back as status 0 with `error`. node:https rather than fetch so that a
// cluster's own CA and client certificate need no extra dependency, loaded with
// process.getBuiltinModule when the first request goes out: an ES `import` of node:http builds its
// whole namespace, whose lazy getters load Node's bundled undici, http2 and worker_threads (~40 ms
// of every cold start). Retries, rate limits, metrics and fault injection are the client's
// (client.ts), on top of this.
import type { Agent as HttpAgent, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { statusMessage, statusReason } from './errors.ts';
import { parseRetryAfter } from './retry.ts';

export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type Query = Record<string, string | number | boolean | undefined>;

export interface TransportRequest {
  method: Verb;
  /** Path without query, e.g. /api/v1/namespaces/team-a */
  path: string;
  query?: Query;
  body?: unknown;
  /** Default application/json; SSA uses application/apply-patch+yaml, merge patches application/merge-patch+json. */
  contentType?: string;
  /** 0: no limit (watches). Default: the transport's. */
  timeoutMs?: number;
}

export interface TransportAnswer<T = unknown> {
  ok: boolean;
  /** HTTP status; 0 when no answer arrived (network error, timeout, credentials). */
  status: number;
  /** The parsed JSON body; the text when it is not JSON. */
  data: T | undefined;
  /** metav1.Status reason on failure (`Invalid`, `Forbidden`, `AlreadyExists`, ...). */
  reason?: string;
  /** Why the call failed, for messages. */
  error?: string;
  retryAfterSeconds?: number;
  headers?: IncomingHttpHeaders;
}

/** TLS material for the API server: what its certificate must chain to, and our client certificate. */
export interface TlsOptions {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** false: insecure-skip-tls-verify. */
  rejectUnauthorized?: boolean;
  servername?: string;
}

export interface TransportTarget {
  /** API server URL, e.g. https://10.0.0.1:6443 (a path prefix is kept). */
  server: string;
  tls?: TlsOptions;
  /** A ready agent (a proxied cluster's, a test's); else a keep-alive agent is made from `tls` on first use. */
  agent?: HttpAgent | HttpsAgent;
  /** Headers of every request (credentials), asked for per request so that rotating tokens are fresh. */
  headers?: () => Promise<Record<string, string>> | Record<string, string>;
  userAgent?: string;
  timeoutMs: number;
  maxSockets?: number;
}

export interface Transport {
  send<T = unknown>(req: TransportRequest): Promise<TransportAnswer<T>>;
  /**
   * Streams newline-delimited JSON (a watch), handing each object to `onObject`; resolves when the
   * stream ends (status of the response, or 0 and `error`). `onOpen` receives the way to end it.
   */
  stream(req: TransportRequest, onObject: (obj: unknown) => void, onOpen?: (abort: () => void) => void): Promise<TransportAnswer<undefined>>;
  /** Ends the keep-alive connections. */
  close(): void;
}

export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const parts = Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** What an answer of `status` with (parsed) `data` means: on failure, the server's reason and message. */
export function answerOfData<T>(status: number, data: unknown, extra: { error?: string; retryAfterSeconds?: number; headers?: IncomingHttpHeaders } = {}): TransportAnswer<T> {
  const ok = status >= 200 && status < 300;
  if (ok) return { ok, status, data: data as T, headers: extra.headers };
  return { ok, status, data: data as T, reason: statusReason(data), error: extra.error ?? statusMessage(data, `HTTP ${status}`), retryAfterSeconds: extra.retryAfterSeconds, headers: extra.headers };
}

/** What an answer of `status` with body `text` means: the JSON body (the text when it is not JSON). */
export function answerOf<T>(status: number, text: string, headers: IncomingHttpHeaders = {}): TransportAnswer<T> {
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  return answerOfData<T>(status, data, { retryAfterSeconds: parseRetryAfter(headers['retry-after']), headers });
}

export const noAnswer = (error: string): TransportAnswer<never> => ({ ok: false, status: 0, data: undefined, error });

export function createTransport(target: TransportTarget): Transport {
  const base = new URL(target.server);
  const secure = base.protocol === 'https:';
  const prefix = base.pathname.replace(/\/$/, '');
  let agent = target.agent;
  let send: typeof import('node:http').request | undefined;

  function sender(): typeof import('node:http').request {
    if (send) return send;
    const http = process.getBuiltinModule('node:http');
    const https = process.getBuiltinModule('node:https');
    agent ??= secure ? new https.Agent({ keepAlive: true, maxSockets: target.maxSockets ?? 64, ...target.tls }) : new http.Agent({ keepAlive: true, maxSockets: target.maxSockets ?? 64 });
    send = (secure ? https.request : http.request) as typeof import('node:http').request;
    return send;
  }

  /** Sends one request; `onResponse` reads the response and settles through `finish`. */
  async function exchange<T>(req: TransportRequest, onResponse: (res: IncomingMessage, finish: (a: TransportAnswer<T>) => void) => void, onOpen?: (abort: () => void) => void): Promise<TransportAnswer<T>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (target.userAgent) headers['user-agent'] = target.userAgent;
    try {
      Object.assign(headers, await target.headers?.());
    } catch (e) {
      return noAnswer(`credentials: ${(e as Error).message}`);
    }
    const payload = req.body === undefined ? undefined : Buffer.from(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
    if (payload) {
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const timeoutMs = req.timeoutMs ?? target.timeoutMs;
    const request = sender();
    return new Promise<TransportAnswer<T>>((resolve) => {
      let settled = false;
      const finish = (a: TransportAnswer<T>) => {
        if (settled) return;
        settled = true;
        resolve(a);
      };
      const r = request({ protocol: base.protocol, hostname: base.hostname, port: base.port, path: prefix + req.path + queryString(req.query), method: req.method, headers, agent, timeout: timeoutMs }, (res) => onResponse(res, finish));
      r.on('timeout', () => r.destroy(new Error(`no answer from ${base.host} within ${timeoutMs} ms`)));
      r.on('error', (e) => finish(noAnswer(e.message)));
      onOpen?.(() => r.destroy());
      r.end(payload);
    });
  }

  function readAll<T>(res: IncomingMessage, finish: (a: TransportAnswer<T>) => void): void {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', (e) => finish(noAnswer(e.message)));
    res.on('end', () => finish(answerOf<T>(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), res.headers)));
  }

  return {
    send: <T>(req: TransportRequest) => exchange<T>(req, readAll),
    stream(req, onObject, onOpen) {
      return exchange<undefined>(
        req,
        (res, finish) => {
          if ((res.statusCode ?? 0) >= 300) return readAll(res, finish);
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            let nl: number;
            while ((nl = buffer.indexOf('\n')) >= 0) {
              const line = buffer.slice(0, nl).trim();
              buffer = buffer.slice(nl + 1);
              if (line === '') continue;
              try {
                onObject(JSON.parse(line));
              } catch (e) {
                finish(noAnswer(`bad watch line: ${(e as Error).message}`));
                res.destroy();
                return;
              }
            }
          });
          res.on('error', (e) => finish(noAnswer(e.message)));
          const ended = () => finish({ ok: true, status: res.statusCode ?? 200, data: undefined, headers: res.headers });
          res.on('close', ended);
          res.on('end', ended);
        },
        onOpen,
      );
    },
    close() {
      agent?.destroy();
    },
  };
}
